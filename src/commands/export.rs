//! `drivescope export SESSION --format csv|json [-o FILE]`: the session's steps (one
//! record per step and drive), or a power-cut record's cycles, for spreadsheets, on stdout
//! or into a new file.

use super::error::ReportCmdError;
use crate::cli::{ExportArgs, ExportFormat};
use crate::output::{err_line, Output, Stream};
use crate::report::{self, steps};
use crate::session;

/// Runs the command: load warnings on stderr, the steps on stdout or into `--out`.
pub fn run(a: &ExportArgs) -> Result<(), ReportCmdError> {
    let text = if report::power_loss::is_record_file(&a.session) {
        // A power-cut record: its cycles.
        let r = crate::run::power_cut::load_record(&a.session)?;
        match a.format {
            ExportFormat::Csv => report::power_loss::cycles_csv(&r),
            ExportFormat::Json => report::power_loss::record_json(&r),
        }
    } else {
        let loaded = session::load(&a.session)?;
        for w in &loaded.warnings {
            err_line(&format!("warning: {w}"));
        }
        let results = session::step_results(&loaded.session);
        match a.format {
            ExportFormat::Csv => steps::csv(&results),
            ExportFormat::Json => steps::json(&results),
        }
    };
    match &a.out {
        Some(p) => report::write_new(p, text.as_bytes())?,
        None => Output::default().text(Stream::Out, &text),
    }
    Ok(())
}
