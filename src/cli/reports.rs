//! `drivescope report` and `drivescope compare` arguments.

use std::path::PathBuf;

use clap::Args;

use super::parse::parse_span;

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// The session file.
    pub session: PathBuf,
    /// Output folder. Default: SESSION-report/ beside the session.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the files of an earlier report in the output folder (never anything
    /// drivescope did not write, nor the session itself).
    #[arg(long)]
    pub force: bool,
    /// Instead of the report, print the latency percentiles of a span of the run (times
    /// since its start, e.g. 10m..20m), recomputed from the histograms saved with
    /// `run --histograms`.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_span)]
    pub span: Option<SpanArg>,
}

/// A span of a session, seconds since its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanArg {
    pub from_s: f64,
    pub to_s: f64,
}

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Session files, one per line of the table and per curve.
    #[arg(required = true, num_args = 1..)]
    pub sessions: Vec<PathBuf>,
    /// Output folder for the SVG charts and the HTML page.
    #[arg(
        long,
        short = 'o',
        value_name = "DIR",
        default_value = "drivescope-compare"
    )]
    pub out: PathBuf,
    /// Replace the files of an earlier comparison in the output folder (never anything
    /// drivescope did not write, nor one of the sessions).
    #[arg(long)]
    pub force: bool,
}
