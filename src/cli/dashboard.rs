//! The dashboard's arguments (`drivescope` with no subcommand) and `drivescope open`'s.

use std::path::PathBuf;

use clap::Args;

/// Options of the dashboard (`drivescope [--target X] [--preset Y]`).
#[derive(Debug, Clone, Default, Args)]
pub struct DashboardArgs {
    /// Open on this file or block device instead of the built-in test file; repeat it to
    /// run on several drives at once (a drives table, one row a drive).
    #[arg(long, short = 't')]
    pub target: Vec<PathBuf>,
    /// The drives to run on, from a YAML file: a list of {path, label, destroy_data,
    /// size, offset, host} (as `drivescope run --targets`).
    #[arg(long, value_name = "FILE", conflicts_with = "target")]
    pub targets: Option<PathBuf>,
    /// The size of a new test file for a --target that does not exist (without it, such a
    /// target is refused: a typo never becomes a test file). 10GB is 10^9 bytes, 10GiB and
    /// 10g 2^30 (as `run --size`).
    #[arg(long, value_parser = super::parse::parse_size_arg, requires = "target")]
    pub size: Option<u64>,
    /// The ssh command that reaches the targets file's hosts (default: $DRIVESCOPE_SSH,
    /// else `ssh`).
    #[arg(long, value_name = "COMMAND")]
    pub ssh_command: Option<String>,
    /// The drivescope to run on the hosts (default: `~/.local/bin/drivescope`, where `drivescope
    /// host install` puts it, else `drivescope` on the remote PATH).
    #[arg(long, value_name = "PATH")]
    pub remote_drivescope: Option<String>,
    /// Highlight this preset (id) in the picker.
    #[arg(long)]
    pub preset: Option<String>,
    /// Colour theme: dark, light, high-contrast, colorblind, or a user theme.
    #[arg(long)]
    pub theme: Option<String>,
    /// Let the mouse pick tabs and list entries.
    #[arg(long)]
    pub mouse: bool,
    /// What is tested, in your words (firmware, condition): kept in every session the
    /// dashboard's runs save, shown in their reports and in compare.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Multiply every duration of the presets by F (demos, tests).
    #[arg(long, value_parser = super::parse::parse_time_scale, default_value = "1")]
    pub time_scale: f64,
    /// Serve the dashboard's runs as live metrics for Prometheus at ADDR (as `run
    /// --metrics`: a PORT alone is 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct OpenArgs {
    /// The session file (YAML) to replay.
    pub session: PathBuf,
    /// Colour theme.
    #[arg(long)]
    pub theme: Option<String>,
}
