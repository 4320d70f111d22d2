//! The session's data model: what one run records, under the top-level keys the file
//! holds (`schema_version`, `host`, `drive`, `target`, `preset`, `plan`, `intervals`,
//! `steps`, `telemetry`, `events`, `summary`).
//!
//! The drive identity is a type of the session's ([`DriveIdentity`], the drive layer's keys);
//! the preset and plan, whose types are the plans layer's, are kept as the documents they
//! were written as (`legacy::Document`: written back key for key, read as a type), and
//! telemetry samples as the mappings the telemetry layer measured.

use serde::{Deserialize, Serialize};

use super::host::Host;
use super::identity::DriveIdentity;
use super::kind::EventKind;
use super::legacy::Document;
use super::sample::Sample;
use super::setup::{PlanInfo, PresetInfo};
use crate::stats::{IntervalReport, LatSummary, StepSummary};
use crate::workload::Workload;

/// The version of the layout below; a reader refuses files with a larger one. Version 2
/// adds many drives in one session (`drives`, and a `drive` index on each record); a
/// session of one drive is written as version 1, as before, and reads the same.
pub const SCHEMA_VERSION: u32 = 2;

/// The version a session of one drive is written as: the layout of version 1 exactly.
pub const ONE_DRIVE_SCHEMA_VERSION: u32 = 1;

/// One drive of a session of several: its label, target and identity. Its records carry
/// its index in `drives` as their `drive`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DriveEntry {
    /// What the drive is called in tables, legends and `--json` lines (the targets file's
    /// label, else the target's path).
    pub label: String,
    pub target: TargetInfo,
    /// Drive identity, as the session's `drive` is for one drive (`null`: none known).
    #[serde(deserialize_with = "super::legacy::identity")]
    pub identity: Option<DriveIdentity>,
}

/// Where the run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Still running, or the process died before the final save (the file is the autosave).
    #[default]
    Running,
    /// Ran to its planned end.
    Complete,
    /// Stopped early by the user (a signal, a key).
    Stopped,
    /// Ended by an error.
    Failed,
}

/// What kind of target: the session's words `file`, `block_device`, `nvme_generic`, `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    File,
    BlockDevice,
    /// An NVMe generic character device (`/dev/ngXnY`), for passthrough commands; prepared
    /// (sized, guarded) as the block namespace behind it.
    NvmeGeneric,
    /// No target at all: the nop engine.
    None,
}

impl TargetKind {
    /// As the session records it.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block_device",
            TargetKind::NvmeGeneric => "nvme_generic",
            TargetKind::None => "none",
        }
    }
}

impl std::fmt::Display for TargetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session's word for a `T`, or a word this drivescope does not know (or none, in an
/// older file), written back as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Word<T> {
    Known(T),
    Unknown(String),
}

impl<T> Default for Word<T> {
    fn default() -> Self {
        Word::Unknown(String::new())
    }
}

impl<T: std::fmt::Display> std::fmt::Display for Word<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Word::Known(t) => t.fmt(f),
            Word::Unknown(s) => f.write_str(s),
        }
    }
}

/// The target as the session records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetInfo {
    pub path: String,
    pub kind: Word<TargetKind>,
    pub size_bytes: u64,
    /// O_DIRECT alignment (logical block size), bytes.
    pub align_bytes: u64,
    /// The host the target is on (`[USER@]HOST[:PORT]`), when it is not the one that ran
    /// drivescope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The results were taken through the page cache (a step without O_DIRECT:
    /// `--direct 0`, a job file's `direct=0`): they are the cache's as much as the drive's.
    /// Absent (false) in older sessions.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub page_cache: bool,
}

/// Latency figures of one interval, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatPoint {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
    pub max: f64,
}

impl LatPoint {
    pub fn from_summary(l: &LatSummary) -> LatPoint {
        LatPoint {
            min: l.min,
            mean: round(l.mean, 3),
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            p99_9: l.p99_9,
            p99_99: l.p99_99,
            max: l.max,
        }
    }
}

/// One interval of the run, as saved: one line of the file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalRecord {
    /// End of the interval, seconds since the session started.
    pub t: f64,
    /// Length of the interval, seconds.
    pub dt: f64,
    /// Index of the step (in `steps`) the interval belongs to.
    pub step: u32,
    /// Warm-up interval, left out of the step's summary.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ramp: bool,
    /// Seconds of it the process was suspended (left out of the figures).
    #[serde(skip_serializing_if = "is_zero")]
    pub suspended_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// MB/s (10^6 bytes per second).
    pub read_mbps: f64,
    pub write_mbps: f64,
    /// Trims (an fio job file's trim jobs): absent from the file when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_iops: f64,
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_mbps: f64,
    pub lat_us: LatPoint,
    pub errors: u64,
    /// The drive (its index in `drives`) of a session of several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<u32>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

/// Rounds to `digits` decimals (keeps saved numbers short without losing meaning).
pub fn round(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    let r = (x * m).round() / m;
    if r.is_finite() {
        r
    } else {
        x
    }
}

impl IntervalRecord {
    /// The record of `r`, a report of step `step` that started `step_start_s` into the
    /// session.
    pub fn from_report(step: u32, step_start_s: f64, r: &IntervalReport) -> IntervalRecord {
        IntervalRecord {
            t: round(step_start_s + r.end_s, 6),
            dt: round(r.end_s - r.start_s, 6),
            step,
            ramp: r.ramp,
            suspended_s: round(r.suspended_s, 3),
            read_iops: round(r.read_iops, 2),
            write_iops: round(r.write_iops, 2),
            read_mbps: round(r.read_bw_bytes / 1e6, 4),
            write_mbps: round(r.write_bw_bytes / 1e6, 4),
            trim_iops: round(r.trim_iops, 2),
            trim_mbps: round(r.trim_bw_bytes / 1e6, 4),
            lat_us: LatPoint::from_summary(&r.lat_us),
            errors: r.errors,
            drive: None,
        }
    }

    /// Every direction's rate: reads, writes and trims.
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops + self.trim_iops
    }

    pub fn mbps(&self) -> f64 {
        self.read_mbps + self.write_mbps + self.trim_mbps
    }
}

/// One step of the plan once it ran: its place in the plan and its summary (a point of
/// the latency-vs-IOPS curve).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepRecord {
    pub index: u32,
    /// What the step is, for tables and legends ("randread 4KiB QD32", "50% of max").
    #[serde(default)]
    pub label: String,
    /// A preset's step: its place in the plan (phase, round, sweep point, rate, run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<super::point::StepPoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// Start and end, seconds since the session started.
    #[serde(default)]
    pub start_s: f64,
    #[serde(default)]
    pub end_s: f64,
    pub summary: StepSummary,
    /// The drive (its index in `drives`) of a session of several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<u32>,
}

impl StepRecord {
    /// The step prepared the drive for the test (a phase of `preparation: true`, SNIA's
    /// WIPC, or a round's pre-write): never a headline, four-corners or best-of figure.
    pub fn prepares(&self) -> bool {
        self.point.is_some_and(|p| p.prepares())
    }

    /// The curve series the step belongs to: its workload's shape (`idle (no I/O)` for a
    /// pause), or its label where no workload was recorded. An fio job file's step is its
    /// jobs' shapes as fio ran them (never one workload standing for jobs of several).
    pub fn series(&self) -> String {
        let jobs: Vec<crate::stats::JobShape> = self
            .summary
            .fio_series
            .iter()
            .flat_map(|s| s.jobs.iter().cloned())
            .collect();
        if !jobs.is_empty() {
            return crate::stats::JobShape::summary(&jobs);
        }
        self.workload
            .as_ref()
            .map_or_else(|| self.label.clone(), |w| w.shape_on(self.summary.engine))
    }
}

/// Something that happened: a note from the engine, a step boundary, a signal, a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the session started.
    #[serde(default)]
    pub t: f64,
    #[serde(default = "EventKind::unknown")]
    pub kind: EventKind,
    #[serde(default)]
    pub message: String,
    /// What the event's kind records beside its message (none for most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Document>,
    /// The drive (its index in `drives`) of a session of several; none: the whole run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive: Option<u32>,
}

impl Event {
    /// Its data as its kind's type (a `thermal` event's `ThermalEvent`, a `resumed` one's
    /// [`ResumedData`](super::ResumedData)); none when it holds none of that
    /// shape.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        self.data.as_ref()?.read()
    }
}

/// How a run (or one drive of it) ended, as its summary keeps it: the outcome, or the error
/// that broke it off. Written as its text (`completed`, `stopped by a signal`, `error: …`)
/// and read back from it; a text of no outcome this drivescope knows reads as a failure
/// of that text (the outcome's own fallback), and is written back as it was.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    Outcome(crate::outcome::RunOutcome),
    /// The run broke off with this error (after its session was created).
    Error(String),
}

impl Default for RunEnd {
    fn default() -> Self {
        RunEnd::Outcome(crate::outcome::RunOutcome::parse(""))
    }
}

impl RunEnd {
    /// The end a summary's text says.
    pub fn parse(s: &str) -> RunEnd {
        match s.strip_prefix("error: ") {
            Some(e) => RunEnd::Error(e.to_string()),
            None => RunEnd::Outcome(crate::outcome::RunOutcome::parse(s)),
        }
    }

    /// The run's outcome (an error is a failure of its text).
    pub fn outcome(&self) -> crate::outcome::RunOutcome {
        match self {
            RunEnd::Outcome(o) => o.clone(),
            RunEnd::Error(e) => crate::outcome::RunOutcome::Failed {
                step: None,
                ended_by: crate::outcome::EndedBy::Other(format!("error: {e}")),
            },
        }
    }
}

impl std::fmt::Display for RunEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunEnd::Outcome(o) => write!(f, "{o}"),
            RunEnd::Error(e) => write!(f, "error: {e}"),
        }
    }
}

impl Serialize for RunEnd {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RunEnd {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(RunEnd::parse(&String::deserialize(d)?))
    }
}

/// The whole run in a few figures, written by the final save.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionSummary {
    /// When the final save happened (RFC 3339).
    pub ended: String,
    /// Why the run ended: "completed", "stopped", "error: …".
    pub ended_by: RunEnd,
    pub elapsed_s: f64,
    pub steps: u64,
    pub intervals: u64,
    /// Measured (non-ramp) time, seconds.
    pub measured_s: f64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    /// Trims (an fio job file's trim jobs): absent from the file when none.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub trim_bytes: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_iops: f64,
    #[serde(skip_serializing_if = "is_zero")]
    pub trim_mbps: f64,
    pub errors: u64,
    /// Latency of every measured I/O of the session (from the merged histograms).
    pub lat_us: LatSummary,
    /// A session of several drives: each drive's own summary, in `drives` order (the
    /// figures above are then all drives together: IOPS and MB/s added up).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drives: Vec<SessionSummary>,
}

/// One session: the header (identity of host, drive, target; preset and plan), the
/// records of the run and the final summary.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Session {
    pub schema_version: u32,
    pub drivescope_version: String,
    /// When the run started (RFC 3339, local time).
    pub started: String,
    pub state: SessionState,
    /// The command line that ran, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What was tested, in the user's words (`--note`: firmware, condition, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub host: Host,
    /// Drive identity (model, serial, firmware, capacity…), from the drive layer (`null`:
    /// none known).
    #[serde(deserialize_with = "super::legacy::identity")]
    pub drive: Option<DriveIdentity>,
    pub target: TargetInfo,
    /// A session of several drives: each one's label, target and identity (`drive` and
    /// `target` above are then the first drive's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drives: Vec<DriveEntry>,
    /// The resolved preset (null for a plain `drivescope run`), as the plans layer wrote
    /// it; [`Session::preset_info`] reads what the session's readers need of it.
    pub preset: Option<Document>,
    /// The resolved plan: the steps as planned, as the run wrote it; read as the plans
    /// layer's `Plan` with [`Session::plan_as`], or as [`Session::plan_info`].
    pub plan: Option<Document>,
    /// The HdrHistogram interval log beside the session, when recorded (a file name
    /// relative to the session's folder).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histograms: Option<String>,
    // The records and the summary are written each in its own way (`text`): a session
    // serializes as its header.
    #[serde(skip_serializing)]
    pub intervals: Vec<IntervalRecord>,
    #[serde(skip_serializing)]
    pub steps: Vec<StepRecord>,
    /// Telemetry samples, each a mapping with `t` (seconds since the start) and whatever
    /// the telemetry layer measured (`temperature_c`, `smart: {...}`, block stats…).
    #[serde(skip_serializing)]
    pub telemetry: Vec<Sample>,
    #[serde(skip_serializing)]
    pub events: Vec<Event>,
    #[serde(skip_serializing)]
    pub summary: Option<SessionSummary>,
}

/// The items of `all` that `keep` takes.
fn kept<T: Clone>(all: &[T], keep: impl Fn(&T) -> bool) -> Vec<T> {
    all.iter().filter(|x| keep(x)).cloned().collect()
}

impl Session {
    /// The notes the user wrote while the run went on (the dashboard's note key), in
    /// order: (seconds since the start, the note).
    pub fn user_notes(&self) -> Vec<(f64, &str)> {
        self.events
            .iter()
            .filter(|e| e.kind == super::kind::EventKind::UserNote)
            .map(|e| (e.t, e.message.as_str()))
            .collect()
    }

    /// The spans the user's pause held the run, seconds since the start (from each
    /// `paused` event to the `resumed` after it; a pause never resumed lasts to the last
    /// interval).
    pub fn paused_spans(&self) -> Vec<(f64, f64)> {
        use super::kind::EventKind;
        // A pause never resumed lasts to the last record (interval or event).
        let end = self
            .intervals
            .last()
            .map(|r| r.t)
            .into_iter()
            .chain(self.events.iter().map(|e| e.t))
            .fold(0.0_f64, f64::max);
        let mut spans = Vec::new();
        let mut from: Option<f64> = None;
        for e in &self.events {
            match (&e.kind, from) {
                (EventKind::Paused, None) => from = Some(e.t),
                (EventKind::Resumed, Some(t0)) => {
                    spans.push((t0, e.t));
                    from = None;
                }
                _ => {}
            }
        }
        if let Some(t0) = from {
            spans.push((t0, end.max(t0)));
        }
        spans
    }

    /// Each drive's part as a session of its own (one drive: the session itself): its
    /// target, identity, records and summary, for reports and comparisons per drive.
    pub fn drive_views(&self) -> Vec<Session> {
        if self.drives.is_empty() {
            return vec![self.clone()];
        }
        let mine = |d: Option<u32>, i: usize| d.is_some_and(|d| d as usize == i);
        self.drives
            .iter()
            .enumerate()
            .map(|(i, entry)| Session {
                schema_version: self.schema_version,
                drivescope_version: self.drivescope_version.clone(),
                started: self.started.clone(),
                state: self.state,
                command: self.command.clone(),
                note: self.note.clone(),
                host: self.host.clone(),
                drive: entry.identity.clone(),
                target: entry.target.clone(),
                drives: Vec::new(),
                preset: self.preset.clone(),
                plan: self.plan.clone(),
                histograms: None,
                intervals: kept(&self.intervals, |r| mine(r.drive, i)),
                steps: kept(&self.steps, |r| mine(r.drive, i)),
                telemetry: kept(&self.telemetry, |r| mine(r.drive(), i)),
                // The run's own events (no drive) belong to every drive.
                events: kept(&self.events, |e| e.drive.is_none() || mine(e.drive, i)),
                summary: self.summary.as_ref().and_then(|s| s.drives.get(i).cloned()),
            })
            .collect()
    }

    /// The drives' labels, in order (one drive: the session's label).
    pub fn drive_labels(&self) -> Vec<String> {
        if self.drives.is_empty() {
            return vec![self.label()];
        }
        self.drives.iter().map(|d| d.label.clone()).collect()
    }

    /// What the session's readers need of its preset (all none for no preset).
    pub fn preset_info(&self) -> PresetInfo {
        self.preset
            .as_ref()
            .and_then(Document::read)
            .unwrap_or_default()
    }

    /// What the session's readers need of its plan (all none for no plan).
    pub fn plan_info(&self) -> PlanInfo {
        self.plan
            .as_ref()
            .and_then(Document::read)
            .unwrap_or_default()
    }

    /// The plan as a `T` (the plans layer's `Plan`); none when there is none or it is not
    /// of that shape (a plain run's, a job file's, an older release's).
    pub fn plan_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        self.plan.as_ref()?.read()
    }

    /// A name for legends and titles: the drive's model (its first disk's), else the
    /// target path.
    pub fn label(&self) -> String {
        let model = self.drive.as_ref().and_then(DriveIdentity::model);
        match model {
            Some(m) => m.to_string(),
            None if !self.target.path.is_empty() => self.target.path.clone(),
            None => "session".into(),
        }
    }
}
