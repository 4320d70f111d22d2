//! The command line (clap derive): the dashboard by default, and the subcommands. Argument
//! types live here, one file per command family; `commands/` turns them into library
//! calls, and nothing here depends on `commands/`.

mod dashboard;
mod drives;
mod parse;
mod presets;
mod reports;
mod run;
mod verify;

use clap::{Parser, Subcommand};

pub use dashboard::{DashboardArgs, OpenArgs};
pub use drives::{DevicesArgs, SmartArgs};
pub use parse::{parse_rate_iops, parse_time_scale};
pub use presets::{AssumedTarget, PresetsAction, PresetsArgs};
pub use reports::{CompareArgs, ReportArgs, SpanArg};
pub use run::RunArgs;
pub use verify::{VerifyArgs, VerifyStateArgs};

#[derive(Debug, Parser)]
#[command(
    name = "drivescope",
    version,
    about = "Live drive testing: an io_uring engine, presets from published methods, SMART telemetry",
    long_about = None
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: the dashboard's options.
    #[command(flatten)]
    pub dashboard: DashboardArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workload headless: one line (or JSON object) per interval, then a summary.
    Run(Box<RunArgs>),
    /// Presets: list them, show one resolved, validate files, or write an equivalent fio job.
    Presets(PresetsArgs),
    /// List block devices: model, size, transport, in use, telemetry sources that work.
    Devices(DevicesArgs),
    /// One SMART / temperature / power reading of a drive (or a saved smartctl JSON file).
    Smart(SmartArgs),
    /// Charts, CSV and one self-contained HTML page from a saved session.
    Report(ReportArgs),
    /// Replay a saved session in the dashboard: [ and ] move through time.
    Open(OpenArgs),
    /// Several sessions overlaid: a table here, SVG charts and an HTML page.
    Compare(CompareArgs),
    /// The far end of `--host`: speaks JSON lines on stdin and stdout with the drivescope
    /// that started it over ssh (prepares the target under this host's write guard,
    /// streams its telemetry, runs its steps). Not for use by hand.
    #[command(hide = true)]
    Agent,
    /// Check a target's data against its verify state (after `run --verify`, a crash or a
    /// power cut): every block of the region read once; exit code 3 on findings.
    Verify(VerifyArgs),
}
