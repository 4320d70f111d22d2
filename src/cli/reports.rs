//! `drivescope report`, `drivescope compare` and `drivescope export` arguments.

use std::path::PathBuf;

use clap::Args;

use super::parse::{parse_span, SpanArg};

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

#[derive(Debug, Args, Clone)]
pub struct CompareArgs {
    /// Session files, one per line of the table and per curve; their steps are matched
    /// with the first's (or the baseline's) by label and workload, drive by drive.
    #[arg(required = true, num_args = 1..)]
    pub sessions: Vec<PathBuf>,
    /// Gate the sessions against this one: exit 1 when a matched step's IOPS fell, or its
    /// response p99 latency (the worse direction's) rose, by more than --max-regression (the
    /// steps named on stderr), 0 otherwise, 2 for bad input. The charts are written only
    /// with --out.
    #[arg(long, value_name = "BASE.yaml")]
    pub baseline: Option<PathBuf>,
    /// How much worse a matched step may get before the baseline gate fails.
    #[arg(
        long,
        value_name = "PERCENT",
        default_value = "5%",
        value_parser = parse_percent_arg,
        requires = "baseline"
    )]
    pub max_regression: f64,
    /// Output folder for the SVG charts and the HTML page (default: drivescope-compare,
    /// none with --baseline).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace the files of an earlier comparison in the output folder (never anything
    /// drivescope did not write, nor one of the sessions).
    #[arg(long)]
    pub force: bool,
}

/// The folder a comparison writes into when no --out names one.
pub const DEFAULT_COMPARE_DIR: &str = "drivescope-compare";

fn parse_percent_arg(s: &str) -> Result<f64, String> {
    crate::units::parse_percent(s).map_err(|e| e.to_string())
}

/// What `drivescope export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Json,
}

#[derive(Debug, Args, Clone)]
pub struct ExportArgs {
    /// The session file.
    pub session: PathBuf,
    /// The steps as CSV (one row per step, per drive) or JSON.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Write into this new file (an existing one is refused); default: stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}
