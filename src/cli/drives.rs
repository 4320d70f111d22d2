//! `drivescope devices` and `drivescope smart` arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::parse::parse_period;

/// `drivescope devices`.
#[derive(Debug, Args, Clone)]
pub struct DevicesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `drivescope smart`.
#[derive(Debug, Args, Clone)]
pub struct SmartArgs {
    /// Drive, partition, NVMe controller (/dev/nvme0) or a file on the drive.
    /// Default: the drive under the default scratch file.
    pub device: Option<PathBuf>,
    /// Print JSON (one object; an array when the target spans several disks).
    #[arg(long, conflicts_with = "yaml")]
    pub json: bool,
    /// Print YAML.
    #[arg(long)]
    pub yaml: bool,
    /// Decode a saved `smartctl -j` output instead of reading a drive.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["device", "watch"])]
    pub smartctl_json: Option<PathBuf>,
    /// Run the telemetry poller for this many samples and print each (JSON: one per line).
    #[arg(long, value_name = "COUNT")]
    pub watch: Option<u32>,
    /// Poller period for --watch (at least 1s).
    #[arg(long, value_parser = parse_period, default_value = "2s")]
    pub period: Duration,
}
