//! The command line (clap derive): the dashboard by default, and the subcommands. Argument
//! types live here, one file per command family; `commands/` turns them into library
//! calls, and nothing here depends on `commands/`.

mod dashboard;
mod drives;
pub mod generate;
mod host;
mod parse;
mod presets;
mod reports;
mod run;
mod verify;

use clap::{Parser, Subcommand};

pub use dashboard::{DashboardArgs, OpenArgs};
pub use drives::{DevicesArgs, SmartArgs};
pub use host::{HostAction, HostArgs, HostInstallArgs};
pub use parse::{parse_rate_iops, parse_time_scale, SpanArg};
pub use presets::{AssumedTarget, PresetsAction, PresetsArgs};
pub use reports::{CompareArgs, ExportArgs, ExportFormat, ReportArgs, DEFAULT_COMPARE_DIR};
pub use run::RunArgs;
pub use verify::{VerifyArgs, VerifyStateArgs};

/// The exit codes: `drivescope --help` ends with them and the man page's EXIT STATUS lists
/// them (one table for both).
pub const EXIT_CODES: &[(&str, &str)] = &[
    ("0", "done"),
    (
        "1",
        "the run saw I/O errors, failed on the device, or its verify state could not be saved",
    ),
    ("2", "bad input or a failed setup (nothing was written)"),
    (
        "3",
        "a verified run or `drivescope verify` read back wrong data",
    ),
    (
        "128+N",
        "stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP); the session is saved",
    ),
    (
        "141",
        "the output was closed (a pipe's reader gone); a run stops with its session saved",
    ),
    (
        "smart",
        "`drivescope smart` exits with smartctl's bit mask instead: see `drivescope smart --help`",
    ),
];

/// The exit status of `drivescope smart`: smartctl's bit mask (`man smartctl`, EXIT
/// STATUS), each bit set for what drivescope can tell; `drivescope smart --help` ends with
/// it and its man page lists it.
pub const SMART_EXIT_CODES: &[(&str, &str)] = &[
    (
        "0",
        "the readings show nothing wrong (--watch: its samples say the rest)",
    ),
    ("bit 0 (1)", "the command line did not parse"),
    (
        "bit 1 (2)",
        "the device, or the saved smartctl output, could not be read, or is not a reading of a device, or no source answered for a drive (health unknown, `source none answered`: a virtio or loop disk has no SMART)",
    ),
    (
        "bit 2 (4)",
        "smartctl said a SMART or other command to the device failed",
    ),
    (
        "bit 3 (8)",
        "SMART status FAILING: the self-assessment failed, an NVMe critical warning is set, or a SCSI drive reports an informational exception",
    ),
    (
        "bit 4 (16)",
        "a prefailure ATA attribute is at or below its threshold",
    ),
    (
        "bit 5 (32)",
        "an ATA attribute was at or below its threshold in the past (or a usage attribute is now)",
    ),
    (
        "bit 6 (64)",
        "the ATA error log holds errors (as smartctl, not NVMe error-log entries)",
    ),
    (
        "bit 7 (128)",
        "the self-test log holds errors not outdated by a newer passed extended test",
    ),
    ("141", "the output was closed (a pipe's reader gone)"),
];

fn codes_help(codes: &[(&str, &str)]) -> String {
    let mut s = String::from("Exit codes:");
    for (code, what) in codes {
        s.push_str(&format!("\n  {code:<11} {what}"));
    }
    s
}

fn exit_codes_help() -> String {
    codes_help(EXIT_CODES)
}

fn smart_exit_codes_help() -> String {
    codes_help(SMART_EXIT_CODES)
}

#[derive(Debug, Parser)]
#[command(
    name = "drivescope",
    version,
    about = "Live drive testing: an io_uring engine, presets from published methods, SMART telemetry",
    long_about = None,
    after_help = exit_codes_help()
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// With no subcommand: the dashboard's options.
    #[command(flatten)]
    pub dashboard: DashboardArgs,
    /// Colour on a terminal: auto (unless NO_COLOR is set), always, never. The dashboard
    /// without colour uses a monochrome theme.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t)]
    pub color: crate::output::ColorChoice,
}

impl Cli {
    /// The dashboard's options are refused beside a subcommand (`drivescope --target x run`):
    /// clap's `args_conflicts_with_subcommands` would refuse the global `--color` there too,
    /// so the rule is checked here, on what the command line gave.
    pub fn check_no_dashboard_args(m: &clap::ArgMatches) -> Result<(), clap::Error> {
        use clap::parser::ValueSource;
        let Some((sub, _)) = m.subcommand() else {
            return Ok(());
        };
        let given = m.ids().find(|id| {
            id.as_str() != "color" && m.value_source(id.as_str()) == Some(ValueSource::CommandLine)
        });
        match given {
            None => Ok(()),
            Some(id) => {
                use clap::CommandFactory;
                let mut cmd = Cli::command();
                let flag = cmd
                    .get_arguments()
                    .find(|a| a.get_id() == id)
                    .and_then(|a| a.get_long())
                    .unwrap_or(id.as_str())
                    .to_string();
                Err(cmd.error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!("the subcommand '{sub}' cannot be used with '--{flag}' (an option of the dashboard)"),
                ))
            }
        }
    }
}

/// `drivescope agent [--metrics ADDR]`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// Serve OpenMetrics on http://ADDR/metrics on this host while the agent runs: its
    /// drive's figures as the run's own endpoint has them (PORT alone is 127.0.0.1:PORT).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
}

/// `drivescope completions SHELL`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `drivescope man [COMMAND] [--dir DIR]`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// The command whose page to print (run, presets, devices, smart, report, open, compare, export,
    /// verify, host, completions, man); without it, drivescope's own page.
    pub command: Option<String>,
    /// Write every page into DIR as drivescope.1, drivescope-run.1, … (new files only; a
    /// name already there is refused), instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<std::path::PathBuf>,
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
    /// Exits with smartctl's bit mask of what it found.
    #[command(after_help = smart_exit_codes_help())]
    Smart(SmartArgs),
    /// Charts, CSV and one self-contained HTML page from a saved session.
    Report(ReportArgs),
    /// Replay a saved session in the dashboard: [ and ] move through time.
    Open(OpenArgs),
    /// Several sessions overlaid: a table here, their steps side by side with the change
    /// in percent, SVG charts and an HTML page; `--baseline` gates a run against another.
    Compare(CompareArgs),
    /// A session's steps for spreadsheets: one row per step (per drive) as CSV, or JSON.
    Export(ExportArgs),
    /// The far end of `--host`: speaks JSON lines on stdin and stdout with the drivescope
    /// that started it over ssh (prepares the target under this host's write guard,
    /// streams its telemetry, runs its steps). Not for use by hand.
    #[command(hide = true)]
    Agent(AgentArgs),
    /// Hosts for `--host`: `drivescope host install HOST` copies this drivescope there.
    Host(HostArgs),
    /// Print the completion script for a shell (bash, zsh, fish, elvish, powershell): e.g.
    /// `drivescope completions bash > ~/.local/share/bash-completion/completions/drivescope`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) of drivescope or of one command: `drivescope man run | man -l -`.
    Man(ManArgs),
    /// Check a target's data against its verify state (after `run --verify`, a crash or a
    /// power cut): every block of the region read once; exit code 3 on findings.
    Verify(VerifyArgs),
}
