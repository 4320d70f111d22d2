//! `drivescope export SESSION --format csv|json [-o FILE]`: the session's steps (one
//! record per step and drive) for spreadsheets, on stdout or into a new file.

use super::error::ReportCmdError;
use crate::cli::{ExportArgs, ExportFormat};
use crate::output::{err_line, Output, Stream};
use crate::report::{self, steps};
use crate::session;

/// Runs the command: load warnings on stderr, the steps on stdout or into `--out`.
pub fn run(a: &ExportArgs) -> Result<(), ReportCmdError> {
    let loaded = session::load(&a.session)?;
    for w in &loaded.warnings {
        err_line(&format!("warning: {w}"));
    }
    let results = session::step_results(&loaded.session);
    let text = match a.format {
        ExportFormat::Csv => steps::csv(&results),
        ExportFormat::Json => steps::json(&results),
    };
    match &a.out {
        Some(p) => report::write_new(p, text.as_bytes())?,
        None => Output::default().text(Stream::Out, &text),
    }
    Ok(())
}
