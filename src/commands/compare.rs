//! `drivescope compare A.yaml B.yaml …`: the sessions' summaries as a table on stdout, and
//! their curves and throughput overlaid in SVG and one HTML page.

use std::path::PathBuf;

use super::error::ReportCmdError;
use crate::cli::CompareArgs;
use crate::output::{err_line, out_line, Output, Stream};
use crate::report::compare::{self, Entry};
use crate::session;

/// Runs the command: the table and the files written on stdout, load warnings on stderr.
pub fn run(a: &CompareArgs) -> Result<Vec<PathBuf>, ReportCmdError> {
    let inputs: Vec<_> = a
        .sessions
        .iter()
        .map(|p| (p.as_path(), "session"))
        .collect();
    crate::report::check_dir(&a.out, compare::COMPARE_FILES, a.force, &inputs)?;
    // A session of several drives is compared drive by drive.
    let mut loaded = Vec::with_capacity(a.sessions.len());
    let mut paths = Vec::with_capacity(a.sessions.len());
    for p in &a.sessions {
        let l = session::load(p)?;
        for w in &l.warnings {
            err_line(&format!("warning: {w}"));
        }
        for view in l.session.drive_views() {
            paths.push(p.as_path());
            loaded.push(view);
        }
    }
    let pairs: Vec<_> = paths.iter().copied().zip(loaded.iter()).collect();
    let entries: Vec<Entry<'_>> = compare::names(&pairs)
        .into_iter()
        .zip(&loaded)
        .map(|(name, session)| Entry { name, session })
        .collect();
    for d in compare::workload_differences(&entries) {
        err_line(&format!("warning: the sessions' workloads differ: {d}"));
    }
    Output::default().text(Stream::Out, &compare::text_table(&entries));
    let files = compare::write_compare(&entries, &a.out)?;
    for f in &files {
        out_line(&f.display().to_string());
    }
    Ok(files)
}
