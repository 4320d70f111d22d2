//! `drivescope run` arguments: fio's option names where fio has one.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use clap::Args;

use super::parse::{
    parse_arrivals, parse_autosave, parse_bool01, parse_bssplit, parse_cut_at, parse_duration_arg,
    parse_engine, parse_host, parse_interval, parse_io_size, parse_iodepth, parse_jobs, parse_mix,
    parse_rate, parse_rw, parse_size_arg, parse_snapshot_every, parse_time_scale,
    parse_verify_mode,
};
use crate::workload::{Arrivals, BlockSizes, EngineKind, EngineOptions, RwMode, SqPoll};

/// `drivescope run`: fio's option names where fio has one.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// File or block device to test; repeat it to test several drives at once, each with
    /// its own jobs. Default: the built-in scratch file (see README).
    #[arg(long, short = 't')]
    pub target: Vec<PathBuf>,
    /// The drives to test, from a YAML file: a list of {path, label, destroy_data, size,
    /// offset}, each write confirmation naming its own target.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["target", "destroy_data"])]
    pub targets: Option<PathBuf>,
    /// Run a preset (id, or a YAML file) instead of one workload: one line per step as it
    /// ends, plus the intervals.
    #[arg(long, conflicts_with_all = ["rw", "rwmixread", "rwmixtrim", "bs", "bssplit", "iodepth", "jobs", "duration", "io_size", "ramp", "rate_iops", "arrivals", "offset", "zone_append"])]
    pub preset: Option<String>,
    /// Run this fio job file live with the installed fio: jobs up to each `stonewall` are a
    /// step, each job (or group, with group_reporting) a series merged into the step's
    /// intervals. Its targets are its own `filename=`s, each checked by the write guard
    /// (--destroy-data names each file or device it writes).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["preset", "preset_file", "target", "targets", "rw", "rwmixread", "rwmixtrim", "bs", "bssplit", "iodepth", "jobs", "duration", "io_size", "ramp", "rate_iops", "arrivals", "offset", "size", "engine", "outstanding", "hipri", "sqpoll", "time_scale", "direct", "seed", "host", "ssh_command", "remote_drivescope", "host_metrics", "keep_going", "verify", "zone_append"])]
    pub fio_job: Option<PathBuf>,
    /// With --fio-job: the folder fio's logs go to (write_bw_log=, write_lat_log=,
    /// write_iops_log=, write_hist_log=, write_iolog=), each under the name its option
    /// gives, whatever folder the job names. Made when missing; one that is there must be
    /// an empty folder of yours. Default: a new folder beside the session,
    /// <session>-fio-logs/.
    #[arg(long, value_name = "DIR", requires = "fio_job")]
    pub fio_logs: Option<PathBuf>,
    /// Run the preset in this YAML file (same as --preset PATH).
    #[arg(long, conflicts_with = "preset")]
    pub preset_file: Option<PathBuf>,
    /// Run every step of the preset with N outstanding I/Os in all (jobs × iodepth): e.g. 512
    /// for StorageReview's published 4K random peaks, 64 for its 64K ones.
    #[arg(long, value_name = "N", value_parser = parse_iodepth)]
    pub outstanding: Option<u32>,
    /// Multiply every duration and round length of the preset by F (demos, tests).
    #[arg(long, value_parser = parse_time_scale, default_value = "1")]
    pub time_scale: f64,
    /// Access pattern: read, write, randread, randwrite, rw, randrw, trim, randtrim,
    /// trimwrite (a trim discards on a block device and punches holes in a file; it needs
    /// --destroy-data as a write does; trimwrite trims each block, then writes it).
    #[arg(long, value_parser = parse_rw, default_value = "randread")]
    pub rw: RwMode,
    /// Read share of mixed patterns, percent.
    #[arg(long, value_parser = parse_mix, default_value = "50")]
    pub rwmixread: u8,
    /// Trim share of mixed patterns, percent of all I/Os (the rest split by --rwmixread);
    /// drivescope's own, fio has none. Needs --destroy-data as a write does.
    #[arg(long, value_parser = parse_mix, default_value = "0")]
    pub rwmixtrim: u8,
    /// Block size, e.g. 4k, 128KiB.
    #[arg(long, value_parser = parse_size_arg, default_value = "4k")]
    pub bs: u64,
    /// Block size split, fio syntax: 4k/60:8k/30:64k/10 (overrides --bs).
    #[arg(long, value_parser = parse_bssplit)]
    pub bssplit: Option<BlockSizes>,
    /// I/Os in flight per job.
    #[arg(long, value_parser = parse_iodepth, default_value = "32")]
    pub iodepth: u32,
    /// Parallel jobs, each a thread with its own ring.
    #[arg(long, alias = "numjobs", value_parser = parse_jobs, default_value = "1")]
    pub jobs: u32,
    /// Measured run time, after the ramp.
    #[arg(long, alias = "runtime", value_parser = parse_duration_arg, default_value = "10s")]
    pub duration: Duration,
    /// End the run also once it has moved this many bytes, ramp included, whichever comes
    /// first (fio's io_size), e.g. `--size 2M --io-size 2M --duration 10m`: one sequential
    /// pass however slow the drive. Units as --size.
    #[arg(long, alias = "io_size", value_parser = parse_io_size)]
    pub io_size: Option<u64>,
    /// Warm-up time, run but left out of the summary.
    #[arg(long, alias = "ramp_time", value_parser = parse_duration_arg, default_value = "0s")]
    pub ramp: Duration,
    /// Size of the region to test (a new test file is created this large). Default: the
    /// whole target from --offset, or 1GiB for a new file. Units as vendors write them:
    /// 10GB and 2TB are 10^9 and 10^12 bytes (also kB/KB, MB); 10GiB and 2TiB are 2^30 and 2^40
    /// (also KiB, MiB); a bare letter is binary, as in fio (10g = 10GiB, 4k = 4096).
    #[arg(long, value_parser = parse_size_arg)]
    pub size: Option<u64>,
    /// Start of the region in the target.
    #[arg(long, value_parser = parse_size_arg, default_value = "0")]
    pub offset: u64,
    /// Target rate for the whole run, split across jobs (IOPS). Default: as fast as it goes.
    #[arg(long, alias = "rate_iops", value_parser = parse_rate)]
    pub rate_iops: Option<f64>,
    /// How the paced I/Os of --rate-iops arrive: uniform (evenly spaced, fio's default) or
    /// poisson (seeded exponential gaps on the same schedule, vdbench's default).
    #[arg(
        long,
        requires = "rate_iops",
        value_parser = clap::builder::PossibleValuesParser::new(["uniform", "poisson"]).try_map(parse_arrivals),
        default_value = "uniform"
    )]
    pub arrivals: Arrivals,
    /// Sequential writes as NVMe Zone Append commands: --rw write with the uring-cmd engine
    /// on a zoned namespace's generic device (/dev/ngXnY). Each write goes to the zone its
    /// offset falls in and the device places it at the zone's write pointer, so several may
    /// be in flight per zone (--iodepth); the zones are reset first.
    #[arg(long, conflicts_with = "preset_file")]
    pub zone_append: bool,
    /// O_DIRECT (1) or the page cache (0).
    #[arg(long, value_parser = parse_bool01, default_value = "1", action = clap::ArgAction::Set)]
    pub direct: bool,
    /// Seed of the offset and data generators.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Reporting interval, 100ms to 10s.
    #[arg(long, value_parser = parse_interval, default_value = "1s")]
    pub interval: Duration,
    /// I/O engine: io_uring, sync, nop (every I/O an io_uring NOP, no target: the engine's
    /// own ceiling), uring-cmd (NVMe passthrough on /dev/ngXnY; chosen by itself for such a
    /// target), or fio (the installed fio as a child process: its per-interval status dumps
    /// become the intervals).
    #[arg(
        long,
        value_parser = clap::builder::PossibleValuesParser::new(["io_uring", "sync", "nop", "uring-cmd", "fio"]).try_map(parse_engine),
        default_value = "io_uring"
    )]
    pub engine: EngineKind,
    /// Polled completions (IORING_SETUP_IOPOLL): NVMe devices with poll queues
    /// (nvme.poll_queues).
    #[arg(long)]
    pub hipri: bool,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    #[arg(long)]
    pub sqpoll: bool,
    /// How long the SQ thread spins idle before it sleeps, ms.
    #[arg(long, value_name = "MS", requires = "sqpoll", default_value_t = SqPoll::DEFAULT_IDLE_MS)]
    pub sqpoll_idle: u32,
    /// The CPU the SQ thread is bound to.
    #[arg(long, value_name = "N", requires = "sqpoll")]
    pub sqpoll_cpu: Option<u32>,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Serve live metrics for Prometheus (OpenMetrics text on /metrics) at ADDR: a PORT
    /// alone listens on 127.0.0.1, HOST:PORT where it says (0.0.0.0:9187 for every
    /// address). Read-only; updated once per interval.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Run on another host, over ssh ([USER@]HOST[:PORT]): its own drivescope (`drivescope
    /// agent`) prepares the target there, under that host's write guard, and runs its
    /// steps. Once for every --target, or once per --target in order; without --target,
    /// the built-in test file of each host.
    #[arg(long, value_name = "[USER@]HOST[:PORT]", value_parser = parse_host, conflicts_with = "targets")]
    pub host: Vec<crate::remote::Host>,
    /// The ssh command that reaches the hosts (default: $DRIVESCOPE_SSH, else `ssh`), e.g.
    /// 'ssh -F ~/.ssh/lab_config'; BatchMode is always on.
    #[arg(long, value_name = "COMMAND")]
    pub ssh_command: Option<String>,
    /// The drivescope to run on the hosts (default: `~/.local/bin/drivescope`, where `drivescope
    /// host install` puts it, else `drivescope` on the remote PATH).
    #[arg(long, value_name = "PATH")]
    pub remote_drivescope: Option<String>,
    /// Each host's agent serves its drive's OpenMetrics on http://ADDR/metrics there
    /// (`drivescope agent --metrics ADDR`; PORT alone is the host's 127.0.0.1:PORT; one
    /// agent a target, so one target a host at a given port).
    #[arg(long, value_name = "ADDR")]
    pub host_metrics: Option<String>,
    /// Start the run on the hosts that answer when some do not (each one left out is said,
    /// and recorded in the session); without it, one unreachable host refuses the run.
    #[arg(long)]
    pub keep_going: bool,
    /// Confirms that a write to this block device or existing file may destroy its data;
    /// must name the target itself. With several targets, one for each target written.
    #[arg(long, value_name = "TARGET")]
    pub destroy_data: Vec<PathBuf>,
    /// Where the session (YAML) is saved. Default: a dated file in the sessions folder,
    /// $XDG_DATA_HOME/drivescope/sessions/ (~/.local/share/drivescope/sessions/).
    #[arg(long, value_name = "PATH")]
    pub session: Option<PathBuf>,
    /// What is tested, in your words (firmware, condition: "FW 2.1, after a secure erase"):
    /// kept in the session, shown in its report and in compare.
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Replace an earlier session (and its histogram log) at --session; without it, a
    /// path holding one is refused.
    #[arg(long, requires = "session")]
    pub force: bool,
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
    /// Verify the data: every written sector carries a header (its address, the verify
    /// state's id, the block's generation, a CRC32C) and every read is checked against the
    /// generation map (`reads`, the default), or the region is read back after the run
    /// (`readback`). Exit code 3 on findings. io_uring engine only.
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "reads", require_equals = true, value_parser = parse_verify_mode)]
    pub verify: Option<crate::verify::VerifyMode>,
    #[command(flatten)]
    pub verify_state: super::VerifyStateArgs,
    /// Power-loss test: with --verify on one target, cut the drive's power with this
    /// command (run by `sh -c`: IPMI, a PDU, slot power, a device delete) at the moment
    /// --cut-at names, --cycles times. Each cycle records the cut's instant, the last
    /// completed flush epoch and the blocks in flight, waits for the same drive (size,
    /// serial, WWN) to come back, reads back every block written and judges it: lost
    /// after flush and torn blocks fail the test. The verify state and the sessions must
    /// be on another drive. A cut command that fails ends the run (exit 2) with its status.
    #[arg(long, value_name = "CMD", requires = "verify", conflicts_with_all = ["targets", "preset", "preset_file", "fio_job", "host", "session"])]
    pub power_cut: Option<String>,
    /// With --power-cut: the command that gives the power back after each cut.
    #[arg(long, value_name = "CMD", requires = "power_cut")]
    pub power_restore: Option<String>,
    /// With --power-cut: how many cuts.
    #[arg(long, value_name = "N", requires = "power_cut", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub cycles: u32,
    /// With --power-cut: when in each cycle the power is cut: `fixed 5s`, `random 2s..8s`
    /// (a seeded random moment in the window, after the workload starts), or `after 4
    /// epochs` (flush epochs, one every 250 ms). --duration must outlast it.
    #[arg(long, value_name = "WHEN", requires = "power_cut", default_value = "random 1s..3s", value_parser = parse_cut_at)]
    pub cut_at: crate::run::power_cut::CutAt,
    /// With --power-cut: the drive has power-loss protection, so a write acknowledged
    /// after the last flush and lost is a finding too (without it, only counted).
    #[arg(long, requires = "power_cut")]
    pub plp: bool,
    /// With --power-cut: how long the drive may take to come back after each cut.
    #[arg(long, value_name = "DURATION", requires = "power_cut", default_value = "120s", value_parser = parse_duration_arg)]
    pub ready_within: Duration,
    /// With --power-cut: the drive's atomic write unit on power fail, bytes (NVMe AWUPF,
    /// `nvme id-ctrl`'s awupf + 1 logical blocks): a unit mixing two writes is torn.
    /// Default: the logical block. At most the verify state's block.
    #[arg(long, value_name = "BYTES", requires = "power_cut", value_parser = parse_size_arg)]
    pub atomic_unit: Option<u64>,
}

impl RunArgs {
    /// The ring options asked for.
    pub fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            hipri: self.hipri,
            sqpoll: self.sqpoll.then_some(SqPoll {
                idle_ms: self.sqpoll_idle,
                cpu: self.sqpoll_cpu,
            }),
        }
    }
}
