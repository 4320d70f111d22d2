//! The command line (clap derive): the dashboard by default, and the subcommands.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

pub use crate::engine::EngineKind;
use crate::workload::{parse_duration_arg, parse_rw, parse_size_arg, RwMode};

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
    pub dashboard: crate::commands::dashboard::DashboardArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workload headless: one line (or JSON object) per interval, then a summary.
    Run(Box<RunArgs>),
    /// Presets: list them, show one resolved, validate files, or write an equivalent fio job.
    Presets(crate::commands::presets::PresetsArgs),
    /// List block devices: model, size, transport, in use, telemetry sources that work.
    Devices(crate::commands::devices::DevicesArgs),
    /// One SMART / temperature / power reading of a drive (or a saved smartctl JSON file).
    Smart(crate::commands::smart::SmartArgs),
    /// Charts, CSV and one self-contained HTML page from a saved session.
    Report(crate::commands::report::ReportArgs),
    /// Replay a saved session in the dashboard: [ and ] move through time.
    Open(crate::commands::open::OpenArgs),
    /// Several sessions overlaid: a table here, SVG charts and an HTML page.
    Compare(crate::commands::compare::CompareArgs),
}

fn parse_bool01(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => Err(format!("'{other}' is not 0 or 1")),
    }
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(10) {
        return Err(format!("interval '{s}' is outside 100ms to 10s"));
    }
    Ok(d)
}

fn parse_autosave(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_millis(100) {
        return Err(format!("autosave period '{s}' is under 100ms"));
    }
    Ok(d)
}

fn parse_snapshot_every(s: &str) -> Result<Duration, String> {
    let d = parse_duration_arg(s).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(1) {
        return Err(format!("snapshot period '{s}' is under 1s"));
    }
    Ok(d)
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches("iops")
        .parse()
        .map_err(|_| format!("'{s}' is not an IOPS figure"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("rate '{s}' must be above 0"));
    }
    Ok(v)
}

pub fn parse_time_scale(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1000.0 => Ok(v),
        _ => Err(format!(
            "time scale '{s}' is not a number above 0 and at most 1000"
        )),
    }
}

fn parse_mix(s: &str) -> Result<u8, String> {
    let v: u8 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage from 0 to 100"))?;
    if v > 100 {
        return Err(format!("'{s}' is not a percentage from 0 to 100"));
    }
    Ok(v)
}

/// `drivescope run`: fio's option names where fio has one.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// File or block device to test. Default: the built-in scratch file (see README).
    #[arg(long, short = 't')]
    pub target: Option<PathBuf>,
    /// Run a preset (id, or a YAML file) instead of one workload: one line per step as it
    /// ends, plus the intervals.
    #[arg(long, conflicts_with_all = ["rw", "rwmixread", "bs", "bssplit", "iodepth", "jobs", "duration", "ramp", "rate_iops", "offset"])]
    pub preset: Option<String>,
    /// Run the preset in this YAML file (same as --preset PATH).
    #[arg(long, conflicts_with = "preset")]
    pub preset_file: Option<PathBuf>,
    /// Multiply every duration and round length of the preset by F (demos, tests).
    #[arg(long, value_parser = parse_time_scale, default_value = "1")]
    pub time_scale: f64,
    /// Access pattern: read, write, randread, randwrite, rw, randrw.
    #[arg(long, value_parser = parse_rw, default_value = "randread")]
    pub rw: RwMode,
    /// Read share of mixed patterns, percent.
    #[arg(long, value_parser = parse_mix, default_value = "50")]
    pub rwmixread: u8,
    /// Block size, e.g. 4k, 128KiB.
    #[arg(long, value_parser = parse_size_arg, default_value = "4k")]
    pub bs: u64,
    /// Block size split, fio syntax: 4k/60:8k/30:64k/10 (overrides --bs).
    #[arg(long)]
    pub bssplit: Option<String>,
    /// I/Os in flight per job.
    #[arg(long, default_value_t = 32)]
    pub iodepth: u32,
    /// Parallel jobs, each a thread with its own ring.
    #[arg(long, alias = "numjobs", default_value_t = 1)]
    pub jobs: u32,
    /// Measured run time, after the ramp.
    #[arg(long, alias = "runtime", value_parser = parse_duration_arg, default_value = "10s")]
    pub duration: Duration,
    /// Warm-up time, run but left out of the summary.
    #[arg(long, alias = "ramp_time", value_parser = parse_duration_arg, default_value = "0s")]
    pub ramp: Duration,
    /// Size of the region to test (a new test file is created this large). Default: the
    /// whole target from --offset, or 1GiB for a new file.
    #[arg(long, value_parser = parse_size_arg)]
    pub size: Option<u64>,
    /// Start of the region in the target.
    #[arg(long, value_parser = parse_size_arg, default_value = "0")]
    pub offset: u64,
    /// Target rate for the whole run, split across jobs (IOPS). Default: as fast as it goes.
    #[arg(long, alias = "rate_iops", value_parser = parse_rate)]
    pub rate_iops: Option<f64>,
    /// O_DIRECT (1) or the page cache (0).
    #[arg(long, value_parser = parse_bool01, default_value = "1", action = clap::ArgAction::Set)]
    pub direct: bool,
    /// Seed of the offset and data generators.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Reporting interval, 100ms to 10s.
    #[arg(long, value_parser = parse_interval, default_value = "1s")]
    pub interval: Duration,
    /// I/O engine.
    #[arg(long, value_enum, default_value = "io_uring")]
    pub engine: EngineKind,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Confirms that a write to this block device or existing file may destroy its data;
    /// must name the target itself.
    #[arg(long, value_name = "TARGET")]
    pub destroy_data: Option<PathBuf>,
    /// Where the session (YAML) is saved. Default: a dated file in the sessions folder,
    /// $XDG_DATA_HOME/drivescope/sessions/ (~/.local/share/drivescope/sessions/).
    #[arg(long, value_name = "PATH")]
    pub session: Option<PathBuf>,
    /// How often new records are appended to the session while the run goes on; a crash
    /// loses at most this much.
    #[arg(long, value_parser = parse_autosave, default_value = "5s")]
    pub autosave: Duration,
    /// Export a snapshot this often (e.g. 10m): the session so far as YAML, SVG charts,
    /// a CSV of intervals and an HTML page, in SESSION-snapshot/ beside the session.
    #[arg(long, value_parser = parse_snapshot_every, value_name = "DURATION")]
    pub snapshot_every: Option<Duration>,
    /// Also save every interval's latency histograms (HdrHistogram interval log,
    /// SESSION.hlog), so any percentile of any span can be recomputed
    /// (`drivescope report SESSION --span 10m..20m`).
    #[arg(long)]
    pub histograms: bool,
}
