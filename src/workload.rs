//! What one engine step does: the access pattern (fio's `rw`, `rwmixread`, `bs`/`bssplit`),
//! the queue shape (`iodepth` × `jobs`), the region of the target, an optional rate and how
//! the step ends. Presets and plans produce these; the engine consumes them.

mod access;
pub use access::{Access, AccessError};

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units;

/// fio's `rw=` access patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `rw=rw`, alias `readwrite`).
    Rw,
    /// Random mixed reads and writes (fio `rw=randrw`).
    RandRw,
    /// Sequential trims (fio `rw=trim`): discards on a block device, punched holes in a file.
    Trim,
    /// Random trims (fio `rw=randtrim`).
    RandTrim,
    /// Sequential trims each followed by a write of the block it trimmed (fio `rw=trimwrite`):
    /// as many trims as writes.
    TrimWrite,
}

impl RwMode {
    pub const ALL: [RwMode; 9] = [
        RwMode::Read,
        RwMode::Write,
        RwMode::RandRead,
        RwMode::RandWrite,
        RwMode::Rw,
        RwMode::RandRw,
        RwMode::Trim,
        RwMode::RandTrim,
        RwMode::TrimWrite,
    ];

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim
        )
    }

    /// Every I/O is a trim. A trim destroys data as a write does: its read share is 0, so
    /// everything that asks whether a step writes (the write guard, the open mode) counts it.
    pub fn is_trim(self) -> bool {
        matches!(self, RwMode::Trim | RwMode::RandTrim)
    }

    /// Some of its I/Os are trims: every one ([`RwMode::is_trim`]) or every other
    /// (`trimwrite`).
    pub fn trims(self) -> bool {
        self.is_trim() || self == RwMode::TrimWrite
    }

    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::Rw | RwMode::RandRw)
    }

    /// Share of reads in percent for this mode, given fio's `rwmixread` for mixed modes.
    pub fn read_percent(self, rwmixread: u8) -> u8 {
        match self {
            RwMode::Read | RwMode::RandRead => 100,
            RwMode::Write
            | RwMode::RandWrite
            | RwMode::Trim
            | RwMode::RandTrim
            | RwMode::TrimWrite => 0,
            RwMode::Rw | RwMode::RandRw => rwmixread.min(100),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::Rw => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
            RwMode::TrimWrite => "trimwrite",
        }
    }
}

impl fmt::Display for RwMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RwMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" => Ok(RwMode::Read),
            "write" => Ok(RwMode::Write),
            "randread" => Ok(RwMode::RandRead),
            "randwrite" => Ok(RwMode::RandWrite),
            "rw" | "readwrite" => Ok(RwMode::Rw),
            "randrw" => Ok(RwMode::RandRw),
            "trim" => Ok(RwMode::Trim),
            "randtrim" => Ok(RwMode::RandTrim),
            "trimwrite" => Ok(RwMode::TrimWrite),
            other => Err(format!(
                "'{other}' is not an access pattern (read, write, randread, randwrite, rw, \
                 randrw, trim, randtrim, trimwrite)"
            )),
        }
    }
}

/// Block sizes with weights (fio `bssplit`); a single size is one entry of weight 100.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizes {
    /// (block size in bytes, weight in percent); weights add up to 100.
    pub split: Vec<(u64, u32)>,
}

impl BlockSizes {
    pub fn single(bs: u64) -> Self {
        BlockSizes {
            split: vec![(bs, 100)],
        }
    }

    /// Parses fio's `bssplit` syntax: `4k/60:8k/30:64k/10`. Weights must add up to 100.
    pub fn parse_split(s: &str) -> Result<Self, String> {
        let mut split = Vec::new();
        for part in s.split(':') {
            let (bs, w) = part
                .split_once('/')
                .ok_or_else(|| format!("'{part}' in bssplit '{s}' is not SIZE/PERCENT"))?;
            let bs = units::parse_size(bs).map_err(|e| format!("bssplit '{s}': {e}"))?;
            let w: u32 =
                w.trim().trim_end_matches('%').parse().map_err(|_| {
                    format!("bssplit '{s}': weight '{w}' is not a whole percentage")
                })?;
            if bs == 0 {
                return Err(format!("bssplit '{s}': block size 0"));
            }
            if w > 0 {
                split.push((bs, w));
            }
        }
        let total: u32 = split.iter().map(|(_, w)| *w).sum();
        if total != 100 {
            return Err(format!(
                "bssplit '{s}': weights add up to {total}%, not 100%"
            ));
        }
        Ok(BlockSizes { split })
    }

    pub fn max(&self) -> u64 {
        self.split.iter().map(|(b, _)| *b).max().unwrap_or(0)
    }

    pub fn min(&self) -> u64 {
        self.split.iter().map(|(b, _)| *b).min().unwrap_or(0)
    }

    pub fn is_single(&self) -> bool {
        self.split.len() == 1
    }

    /// Weighted mean block size in bytes.
    pub fn mean(&self) -> f64 {
        let total: u32 = self.split.iter().map(|(_, w)| *w).sum();
        if total == 0 {
            return 0.0;
        }
        self.split
            .iter()
            .map(|(b, w)| *b as f64 * f64::from(*w))
            .sum::<f64>()
            / f64::from(total)
    }
}

impl fmt::Display for BlockSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_single() {
            return f.write_str(&units::format_size(self.max()));
        }
        let parts: Vec<String> = self
            .split
            .iter()
            .map(|(b, w)| format!("{}/{w}", units::format_size(*b)))
            .collect();
        f.write_str(&parts.join(":"))
    }
}

/// How a paced step's I/Os arrive: evenly spaced, or as a Poisson process (vdbench's
/// default `distribution=exponential`, fio's `rate_process=poisson`). Closed-loop steps have
/// no arrivals to shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    /// I/O *i* is due at *i / rate* (fio's default `rate_process=linear`).
    #[default]
    Uniform,
    /// Seeded exponential inter-arrival times on the same absolute schedule.
    Poisson,
}

impl Arrivals {
    pub const ALL: [Arrivals; 2] = [Arrivals::Uniform, Arrivals::Poisson];

    pub fn as_str(self) -> &'static str {
        match self {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == Arrivals::default()
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Arrivals {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Arrivals::ALL
            .into_iter()
            .find(|a| a.as_str() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("'{s}' is not an arrival process (uniform, poisson)"))
    }
}

impl Serialize for Arrivals {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Arrivals {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How the runs of a repeated step make one figure (`runs.pick` of a preset's phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPick {
    /// The run of the highest throughput, as CrystalDiskMark keeps its best score.
    Best,
    /// The mean of the runs, as KDiskMark's default profile averages them.
    Mean,
}

/// Which of a repeated step's runs a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOf {
    /// From 1.
    pub n: u32,
    /// How many runs the step has.
    pub of: u32,
    /// How the runs make one figure; none when each run stands alone (SNIA HIR's bursts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<RunPick>,
}

/// What part of the region each job of a sequential workload streams over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobRegion {
    /// Each job its own disjoint slice (the jobs together cover the region once).
    #[default]
    Slice,
    /// Each job the whole region, as fio's jobs do with `size=100%` and no
    /// `offset_increment` (8 jobs move 8x the region).
    Whole,
}

impl JobRegion {
    pub fn is_default(&self) -> bool {
        *self == JobRegion::default()
    }
}

/// The part of the target a step works on, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    pub offset: u64,
    pub len: u64,
}

/// One step's I/O pattern, resolved to bytes and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub rw: RwMode,
    /// Read share for mixed modes, percent (fio `rwmixread`).
    pub rwmixread: u8,
    /// Trim share of a mixed mode, percent of all its I/Os (drivescope's own: fio has no
    /// trim share); the rest split by `rwmixread`.
    #[serde(default, skip_serializing_if = "no_trims")]
    pub rwmixtrim: u8,
    pub bs: BlockSizes,
    pub iodepth: u32,
    pub jobs: u32,
    pub region: Region,
    /// Total target rate across all jobs; `None` runs closed-loop (as fast as it goes).
    pub rate_iops: Option<f64>,
    /// How paced I/Os arrive; ignored when `rate_iops` is `None`.
    #[serde(default, skip_serializing_if = "Arrivals::is_default")]
    pub arrivals: Arrivals,
    pub seed: u64,
    pub direct: bool,
    /// Sequential patterns: each job on a slice of the region, or on all of it.
    #[serde(default, skip_serializing_if = "JobRegion::is_default")]
    pub job_region: JobRegion,
    /// Random patterns: where the offsets fall (uniform, or fio's zoned access ranges).
    #[serde(default, skip_serializing_if = "Access::is_uniform")]
    pub access: Access,
    /// Sequential writes on a zoned NVMe namespace through passthrough (the uring-cmd
    /// engine): each write is an NVMe Zone Append to the zone its offset falls in, which
    /// the device places at that zone's write pointer and says where; several may be in
    /// flight per zone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zone_append: bool,
}

fn no_trims(v: &u8) -> bool {
    *v == 0
}

/// Why a trim share does not fit a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrimShareProblem {
    #[error("a trim share applies only to rw and randrw, not {0}")]
    NotMixed(RwMode),
    #[error("a trim share of 100% trims every I/O: use trim or randtrim")]
    All,
    #[error(
"a trim share needs a read share below 100%: a mix of only reads and trims is not supported"
    )]
    NoWrites,
}

/// Whether a trim share of `rwmixtrim` percent fits `rw` with `rwmixread`: a mixed mode, less
/// than every I/O, and with a write share left (everything that asks whether a step writes
/// asks its read share).
pub fn trim_share_problem(rw: RwMode, rwmixread: u8, rwmixtrim: u8) -> Option<TrimShareProblem> {
    match rwmixtrim {
        0 => None,
        _ if !rw.is_mixed() => Some(TrimShareProblem::NotMixed(rw)),
        100.. => Some(TrimShareProblem::All),
        _ if rwmixread >= 100 => Some(TrimShareProblem::NoWrites),
        _ => None,
    }
}

/// Why a workload cannot write by zone append, whatever its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ZoneAppendProblem {
    #[error(
        "zone append writes each zone from its write pointer, sequentially: it needs rw \
         write, not {0}"
    )]
    NotSequentialWrite(RwMode),
    #[error(
        "zone append is an NVMe command sent through passthrough: it needs the uring-cmd \
         engine on the namespace's generic device (/dev/ngXnY), not the {0} engine"
    )]
    Engine(EngineKind),
    #[error(
        "zone append takes one block size (each append must end inside its zone, and \
         mixed sizes cross zone ends); give bs, not bssplit"
    )]
    SeveralBlockSizes,
}

/// Whether a workload of `rw` on `engine`, with one block size or several, may write by
/// zone append: sequential writes only, through NVMe passthrough, of one block size.
pub fn zone_append_problem(
    rw: RwMode,
    engine: EngineKind,
    one_block_size: bool,
) -> Option<ZoneAppendProblem> {
    if rw != RwMode::Write {
        return Some(ZoneAppendProblem::NotSequentialWrite(rw));
    }
    if engine != EngineKind::UringCmd {
        return Some(ZoneAppendProblem::Engine(engine));
    }
    if !one_block_size {
        return Some(ZoneAppendProblem::SeveralBlockSizes);
    }
    None
}

impl Workload {
    /// `rw` in blocks of `bs` at queue depth `iodepth` over `region`, seeded with `seed`:
    /// one job, unpaced, O_DIRECT, uniform offsets, no trims; a mix reads half its I/Os.
    pub fn new(rw: RwMode, bs: BlockSizes, iodepth: u32, region: Region, seed: u64) -> Workload {
        Workload {
            rw,
            rwmixread: rw.read_percent(50),
            rwmixtrim: 0,
            bs,
            iodepth,
            jobs: 1,
            region,
            rate_iops: None,
            arrivals: Arrivals::default(),
            seed,
            direct: true,
            job_region: JobRegion::default(),
            access: Access::default(),
            zone_append: false,
        }
    }

    /// Some of its I/Os are trims: a trim pattern, or a mix with a trim share.
    pub fn trims(&self) -> bool {
        self.rw.trims() || (self.rw.is_mixed() && self.rwmixtrim > 0)
    }

    /// The shape of a step run by `engine`, as tables and charts name it: an idle step (a
    /// pause between tests, a cool-down) does no I/O and reads [`IDLE_SHAPE`], not the
    /// placeholder fields of its workload (`read 512B QD1×1`).
    pub fn shape_on(&self, engine: EngineKind) -> String {
        if engine == EngineKind::Idle {
            IDLE_SHAPE.to_string()
        } else {
            self.shape()
        }
    }

    /// What tells one workload from another on a curve: the pattern, a mix's read share,
    /// the block sizes and the queue (`randrw 70%read 4KiB QD8×8`). A sweep's probe and
    /// points share it; rates, regions and seeds do not enter it.
    pub fn shape(&self) -> String {
        let mix = if self.rw.is_mixed() {
            match self.rwmixtrim {
                0 => format!(" {}%read", self.rwmixread),
                t => format!(" {}%read {t}%trim", self.rwmixread),
            }
        } else {
            String::new()
        };
        let access = if self.access.is_uniform() {
            String::new()
        } else {
            format!(" {}", self.access)
        };
        let append = if self.zone_append { " append" } else { "" };
        format!(
            "{}{append}{mix} {} QD{}×{}{access}",
            self.rw, self.bs, self.iodepth, self.jobs
        )
    }
}

/// What an idle step's shape reads: no I/O.
pub const IDLE_SHAPE: &str = "idle (no I/O)";

/// How a step ends. The first condition met ends it; an external stop (Ctrl-C, steady state
/// decided by the caller) also ends it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct StepEnd {
    /// Measured time after the ramp.
    pub duration: Option<Duration>,
    /// Bytes transferred (reads plus writes, ramp included), e.g. 2× the region.
    pub bytes: Option<u64>,
}

/// Which I/O engine runs a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring with registered buffers and file (falls back to sync where unavailable).
    #[default]
    #[serde(rename = "io_uring")]
    IoUring,
    /// pread/pwrite, one I/O at a time per job (queue depth 1).
    Sync,
    /// The installed fio, as a child process: its status dumps become the intervals.
    Fio,
    /// Every I/O an io_uring NOP through the same rings, histograms and pacing: the
    /// engine's own ceiling on this CPU (fio's `ioengine=null`). Needs no target.
    Nop,
    /// NVMe passthrough: NVMe read and write commands as io_uring commands
    /// (IORING_OP_URING_CMD) on an NVMe generic character device (`/dev/ngXnY`).
    #[serde(rename = "uring-cmd")]
    UringCmd,
    /// No I/O at all: an idle phase (a cool-down) that reports empty intervals while the
    /// drive is watched. Chosen by `workload: idle`, never by `--engine`.
    Idle,
}

impl EngineKind {
    /// The engines `--engine` names.
    pub const ALL: [EngineKind; 5] = [
        EngineKind::IoUring,
        EngineKind::Sync,
        EngineKind::Nop,
        EngineKind::UringCmd,
        EngineKind::Fio,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Sync => "sync",
            EngineKind::Nop => "nop",
            EngineKind::UringCmd => "uring-cmd",
            EngineKind::Idle => "idle",
            EngineKind::Fio => "fio",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == EngineKind::default()
    }

    /// The engine needs no target (it does no I/O to one).
    pub fn targetless(self) -> bool {
        matches!(self, EngineKind::Nop)
    }

    /// The engine runs on io_uring rings (so polled I/O and SQPOLL apply).
    pub fn uses_rings(self) -> bool {
        matches!(
            self,
            EngineKind::IoUring | EngineKind::Nop | EngineKind::UringCmd
        )
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EngineKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s.trim())
            .ok_or_else(|| format!("'{s}' is not an engine (io_uring, sync, nop, uring-cmd, fio)"))
    }
}

/// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL): no `io_uring_enter`
/// to submit while it is awake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqPoll {
    /// How long the thread spins without work before it sleeps (ms).
    pub idle_ms: u32,
    /// The CPU it is bound to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u32>,
}

impl SqPoll {
    /// The kernel's default idle time when none is given (fio's too).
    pub const DEFAULT_IDLE_MS: u32 = 1000;
}

/// How the io_uring engines set up their rings, beyond the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EngineOptions {
    /// Polled completions (IORING_SETUP_IOPOLL): needs an NVMe device with poll queues.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hipri: bool,
    /// A kernel thread polls the submission queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll: Option<SqPoll>,
}

impl EngineOptions {
    pub fn is_default(&self) -> bool {
        *self == EngineOptions::default()
    }
}

impl fmt::Display for EngineOptions {
    /// `hipri, sqpoll (idle 1000ms, cpu 1)`; empty when none is set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.hipri {
            parts.push("hipri".to_string());
        }
        if let Some(p) = self.sqpoll {
            let cpu = p.cpu.map(|c| format!(", cpu {c}")).unwrap_or_default();
            parts.push(format!("sqpoll (idle {}ms{cpu})", p.idle_ms));
        }
        f.write_str(&parts.join(", "))
    }
}

/// A file or device fio may touch in its cage: written, or only read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioTarget {
    pub path: std::path::PathBuf,
    #[serde(default)]
    pub writes: bool,
}

/// A step of an fio job file run by `--fio-job`: the file's text as drivescope read and
/// checked it (fio reads this text on its stdin, never the file again) and the jobs
/// (sections) this step runs, given to fio as `--section`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioFileStep {
    pub text: String,
    pub sections: Vec<String>,
    /// The threads fio numbers before this step's in a run of the whole file (the jobs of
    /// the steps above, each `numjobs` times): fio seeds a job's random numbers and names
    /// its logs by its thread number, so the step's run starts its numbering there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threads_before: u32,
    /// Every file and device the job file's jobs touch, as the guard judged them: fio's
    /// cage lets it write those that write and read those that do not, nothing else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<FioTarget>,
    /// The jobs' logs (`write_*_log`, `write_iolog`), each under the name its option
    /// gives: fio writes them in `log_dir`, never in a folder the job file names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<FioLog>,
    /// The folder drivescope made for the run's fio logs (given when the run starts: beside
    /// the session, or `--fio-logs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dir: Option<std::path::PathBuf>,
    /// The fio that checked the file (`fio-3.33`), said in each step's summary; not saved
    /// (the plan keeps it once).
    #[serde(skip)]
    pub version: String,
}

/// A log a job of a job file writes: fio makes it in the run's log folder, under the name
/// its option gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FioLog {
    /// The job (its section's name) and its section's line (1-based).
    pub job: String,
    pub line: usize,
    /// The option: `write_bw_log`, `write_lat_log`, `write_iops_log`, `write_hist_log` or
    /// `write_iolog`.
    pub key: String,
    /// The name it gives, without the folder it named: a prefix fio completes
    /// (`lat_clat.1.log`), or `write_iolog`'s file.
    pub name: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A step the engine runs: the workload, its warm-up and end, and the reporting interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// Which engine runs it.
    #[serde(default, skip_serializing_if = "EngineKind::is_default")]
    pub engine: EngineKind,
    /// How the engine sets up its rings (polled I/O, SQPOLL).
    #[serde(default, skip_serializing_if = "EngineOptions::is_default")]
    pub options: EngineOptions,
    pub workload: Workload,
    /// Warm-up time whose I/O is done but left out of the summary (fio `ramp_time`).
    pub ramp: Duration,
    pub end: StepEnd,
    pub interval: Duration,
    /// The jobs of an fio job file this step runs (the fio engine only); the workload then
    /// describes them, as far as one workload can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_file: Option<FioFileStep>,
    /// The fio engine: fio's version, found when the run was checked (`fio-3.33`); the
    /// engine asks fio only when it is not given (a remote host's own check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_version: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_parses_and_checks_weights() {
        let b = BlockSizes::parse_split("4k/60:8k/30:64k/10").unwrap();
        assert_eq!(b.split, vec![(4096, 60), (8192, 30), (65536, 10)]);
        assert_eq!(b.max(), 65536);
        assert_eq!(b.min(), 4096);
        assert!((b.mean() - (4096.0 * 0.6 + 8192.0 * 0.3 + 65536.0 * 0.1)).abs() < 1e-6);
        assert_eq!(b.to_string(), "4KiB/60:8KiB/30:64KiB/10");
        assert!(BlockSizes::parse_split("4k/60:8k/30")
            .unwrap_err()
            .contains("90%"));
        assert!(BlockSizes::parse_split("4k").is_err());
        assert!(BlockSizes::parse_split("4q/100").is_err());
    }

    #[test]
    fn arrivals_read_back_what_they_print() {
        for a in Arrivals::ALL {
            assert_eq!(a.as_str().parse::<Arrivals>(), Ok(a));
            let yaml = serde_yaml::to_string(&a).unwrap();
            assert_eq!(serde_yaml::from_str::<Arrivals>(&yaml).unwrap(), a);
        }
        assert_eq!(" Poisson".parse::<Arrivals>(), Ok(Arrivals::Poisson));
        let err = "exponential".parse::<Arrivals>().unwrap_err();
        assert!(err.contains("uniform, poisson"), "{err}");
        assert_eq!(Arrivals::default(), Arrivals::Uniform);
    }

    #[test]
    fn zone_append_takes_only_sequential_passthrough_writes_of_one_size() {
        use ZoneAppendProblem as P;
        let uc = EngineKind::UringCmd;
        assert_eq!(zone_append_problem(RwMode::Write, uc, true), None);
        for rw in RwMode::ALL.into_iter().filter(|&m| m != RwMode::Write) {
            assert_eq!(
                zone_append_problem(rw, uc, true),
                Some(P::NotSequentialWrite(rw))
            );
        }
        for e in [
            EngineKind::IoUring,
            EngineKind::Sync,
            EngineKind::Fio,
            EngineKind::Nop,
        ] {
            assert_eq!(
                zone_append_problem(RwMode::Write, e, true),
                Some(P::Engine(e))
            );
        }
        assert_eq!(
            zone_append_problem(RwMode::Write, uc, false),
            Some(P::SeveralBlockSizes)
        );
        let said = P::NotSequentialWrite(RwMode::RandWrite).to_string();
        assert!(said.contains("not randwrite"), "{said}");
        // A workload without zone append is written as before, and one with it reads back.
        let mut w: Workload = serde_yaml::from_str(
            "rw: write\nrwmixread: 0\nbs: {split: [[131072, 100]]}\niodepth: 4\njobs: 1\n\
             region: {offset: 0, len: 1048576}\nrate_iops: null\nseed: 1\ndirect: true\n",
        )
        .unwrap();
        assert!(!w.zone_append);
        assert!(!serde_yaml::to_string(&w).unwrap().contains("zone_append"));
        w.zone_append = true;
        assert_eq!(w.shape(), "write append 128KiB QD4×1");
        let back: Workload = serde_yaml::from_str(&serde_yaml::to_string(&w).unwrap()).unwrap();
        assert_eq!(back, w);
    }

    #[test]
    fn rw_modes() {
        assert_eq!("randrw".parse::<RwMode>().unwrap(), RwMode::RandRw);
        assert_eq!("readwrite".parse::<RwMode>().unwrap(), RwMode::Rw);
        assert!("random".parse::<RwMode>().is_err());
        assert_eq!(RwMode::RandRw.read_percent(70), 70);
        assert_eq!(RwMode::Write.read_percent(70), 0);
        assert_eq!(RwMode::TrimWrite.read_percent(70), 0);
        assert!(RwMode::TrimWrite.trims() && !RwMode::TrimWrite.is_trim());
        assert!(!RwMode::TrimWrite.is_random() && RwMode::RandTrim.trims());
        for m in RwMode::ALL {
            assert_eq!(m.as_str().parse::<RwMode>().unwrap(), m);
        }
    }

    #[test]
    fn a_trim_share_fits_only_a_mix_with_writes_and_old_workloads_load() {
        use TrimShareProblem as P;
        assert_eq!(trim_share_problem(RwMode::RandRw, 50, 20), None);
        assert_eq!(trim_share_problem(RwMode::RandRead, 100, 0), None);
        assert_eq!(
            trim_share_problem(RwMode::RandRead, 100, 20),
            Some(P::NotMixed(RwMode::RandRead))
        );
        assert_eq!(trim_share_problem(RwMode::Rw, 50, 100), Some(P::All));
        assert_eq!(trim_share_problem(RwMode::Rw, 100, 10), Some(P::NoWrites));
        // A workload written before the trim share loads with none, and one without a
        // trim share is written as before.
        let old = "rw: randrw\nrwmixread: 70\nbs: {split: [[4096, 100]]}\niodepth: 4\njobs: 1\n\
                   region: {offset: 0, len: 1048576}\nrate_iops: null\nseed: 1\ndirect: true\n";
        let mut w: Workload = serde_yaml::from_str(old).unwrap();
        assert_eq!(w.rwmixtrim, 0);
        assert!(!w.trims());
        assert!(!serde_yaml::to_string(&w).unwrap().contains("rwmixtrim"));
        w.rwmixtrim = 20;
        assert!(w.trims());
        assert_eq!(w.shape(), "randrw 70%read 20%trim 4KiB QD4×1");
        let back: Workload = serde_yaml::from_str(&serde_yaml::to_string(&w).unwrap()).unwrap();
        assert_eq!(back, w);
    }
}
