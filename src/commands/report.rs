//! `drivescope report SESSION.yaml [--out DIR]`: loads a session (what a crash or an
//! edit left of it too), then writes its charts, CSV and HTML page.

use std::path::PathBuf;

use clap::Args;
use thiserror::Error;

use crate::report::{self, ReportError};
use crate::session::{self, paths, SessionError};

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// The session file.
    pub session: PathBuf,
    /// Output folder. Default: SESSION-report/ beside the session.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Error)]
pub enum ReportCmdError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// Runs the command: warnings on stderr, the files written on stdout.
pub fn run(a: &ReportArgs) -> Result<Vec<PathBuf>, ReportCmdError> {
    let loaded = session::load(&a.session)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    let s = &loaded.session;
    if s.summary.is_none() {
        eprintln!(
            "note: {} has no final summary (the run did not end cleanly); reporting the {} intervals autosaved",
            a.session.display(),
            s.intervals.len()
        );
    }
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| paths::sibling(&a.session, "-report"));
    let files = report::write_report(s, &dir, &loaded.warnings)?;
    for f in &files {
        println!("{}", f.display());
    }
    Ok(files)
}
