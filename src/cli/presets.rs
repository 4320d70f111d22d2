//! `drivescope presets` arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::parse::{parse_rate, parse_size_arg, parse_time_scale};

/// `drivescope presets`.
#[derive(Debug, Args, Clone)]
pub struct PresetsArgs {
    #[command(subcommand)]
    pub action: PresetsAction,
}

/// The target a preset is expanded for when no real target is at hand.
#[derive(Debug, Args, Clone, Copy)]
pub struct AssumedTarget {
    /// Capacity of the target the preset is expanded for.
    #[arg(long, value_parser = parse_size_arg, default_value = "1TiB")]
    pub capacity: u64,
    /// Logical block size of that target.
    #[arg(long, value_parser = parse_size_arg, default_value = "512")]
    pub logical_block_size: u64,
    /// Multiplies every duration (step lengths, ramps, steady-state windows).
    #[arg(long, value_parser = parse_time_scale, default_value = "1")]
    pub time_scale: f64,
}

#[derive(Debug, Subcommand, Clone)]
pub enum PresetsAction {
    /// Every preset: id, name and estimated duration for a stated capacity.
    List {
        #[command(flatten)]
        target: AssumedTarget,
        /// Throughput assumed for phases that end on an amount of data, per second.
        #[arg(long, value_parser = parse_size_arg, default_value = "1GiB")]
        assume_throughput: u64,
    },
    /// A preset (id or file) as resolved YAML, defaults filled in.
    Show {
        /// Preset id, or path to a preset file.
        preset: String,
        /// Also list the plan's steps for the assumed target.
        #[arg(long)]
        plan: bool,
        #[command(flatten)]
        target: AssumedTarget,
    },
    /// The expanded plan: every step with its phase, label, workload, arrival process,
    /// rate and end; a sweep point's target from --probe-iops.
    Plan {
        /// Preset id, or path to a preset file.
        preset: String,
        #[command(flatten)]
        target: AssumedTarget,
        /// The IOPS a probe would measure (and any phase a rate is a percentage of): each
        /// sweep point's target is computed from it as a run would.
        #[arg(long, value_parser = parse_rate, value_name = "N")]
        probe_iops: Option<f64>,
        /// One JSON object per step, one per line.
        #[arg(long)]
        json: bool,
    },
    /// Check preset files: parse, validate, and expand each for the assumed target.
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[command(flatten)]
        target: AssumedTarget,
    },
    /// An equivalent fio job file, for reproducing a result with fio.
    Fio {
        /// Preset id, or path to a preset file.
        preset: String,
        #[command(flatten)]
        target: AssumedTarget,
        /// The target is a zoned block device (NVMe ZNS, SMR): fio's `zonemode=zbd`, so
        /// that its writes go to each zone from the zone's write pointer.
        #[arg(long)]
        zoned: bool,
    },
}
