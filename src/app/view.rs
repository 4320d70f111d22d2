//! View models: what the dashboard shows about things it does not own (presets, targets,
//! the drive, plan steps, telemetry, events). The runtime that owns the real data maps it
//! into these; the app never reaches into the engine, the preset loader or the telemetry
//! poller itself.
//!
//! Times (`started_s`, `t_s`) are seconds since the start of the run, so intervals,
//! telemetry samples and events share one time axis.

use std::path::PathBuf;

pub use crate::test_target::TargetKind;

/// One preset the user can start.
#[derive(Debug, Clone, PartialEq)]
pub struct PresetEntry {
    /// Stable id passed back in [`Effect::StartRun`](super::Effect::StartRun).
    pub id: String,
    pub name: String,
    pub description: String,
    /// Phase names, in order.
    pub phases: Vec<String>,
    /// Estimated run time as the preset loader puts it ("about 2 min").
    pub estimate: String,
    /// The preset writes: a device needs its typed name before it starts (a read-only
    /// preset starts at once).
    pub writes: bool,
    /// An fio job file from the user's preset folder, run as it is (its targets its own).
    pub fio_job: Option<PathBuf>,
}

/// One target the user can pick: a test file or a block device.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetEntry {
    pub path: PathBuf,
    /// Short name shown in lists ("scratch file", "nvme1n1 Micron 7400").
    pub label: String,
    pub kind: TargetKind,
    /// Size in bytes, when known.
    pub size: Option<u64>,
    /// What the safety guard found: `None` means writes are allowed (after typed
    /// confirmation for a block device), `Some(reason)` means writes will be refused.
    pub safety: Option<String>,
    /// The file is not there yet: starting a run creates it, `size` bytes long (the
    /// picker and the header say so until a run has started on it).
    pub creates: bool,
}

impl TargetEntry {
    /// A write to this target destroys data the user must confirm by typing its name.
    pub fn needs_typed_confirmation(&self) -> bool {
        self.kind == TargetKind::BlockDevice && self.safety.is_none()
    }

    /// The name the user types to confirm: the last path component (`nvme1n1`).
    pub fn confirm_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

/// The drive's identity, as far as it is known.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DriveView {
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    /// "NVMe", "SATA", "virtio", ...
    pub transport: Option<String>,
    /// A zoned drive's zones (NVMe ZNS, SMR).
    pub zones: Option<crate::drive::Zones>,
}

/// A step of the running plan has started.
#[derive(Debug, Clone, PartialEq)]
pub struct StepInfo {
    /// 0-based index of the step in the plan.
    pub index: usize,
    /// Number of steps in the plan.
    pub count: usize,
    pub name: String,
    pub phase_name: String,
    /// When the step started, seconds since the run started.
    pub started_s: f64,
    /// Expected length of the step, when it ends by time.
    pub expected_s: Option<f64>,
    /// Expected length of the whole plan.
    pub plan_expected_s: Option<f64>,
    pub rate_limited: bool,
    pub target_iops: Option<f64>,
    /// The engine that runs the step and its ring options (shown when not plain io_uring).
    pub engine: crate::workload::EngineKind,
    pub engine_options: crate::workload::EngineOptions,
}

/// One finished step: a point of the latency-vs-IOPS curve, on its workload's series.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// The workload it measured ([`Workload::shape`](crate::workload::Workload::shape)):
    /// points of one series are joined, points of different ones never.
    pub series: String,
    pub target_iops: Option<f64>,
    pub iops: f64,
    /// The curve's latency, from each I/O's submission (service), µs: mean, p99, p99.9.
    pub mean_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Mean latency from the I/Os' scheduled times when the step was paced, µs.
    pub response_mean_us: Option<f64>,
}

impl CurvePoint {
    /// A paced step that achieved under
    /// [`MISSED_BELOW`](crate::session::results::MISSED_BELOW) of its target.
    pub fn missed(&self) -> bool {
        crate::session::results::missed(self.iops, self.target_iops)
    }

    /// The curve point of a finished step on series `series`, from the engine's summary.
    pub fn new(series: String, s: &crate::stats::StepSummary) -> Self {
        CurvePoint {
            series,
            target_iops: s.target_iops,
            iops: s.iops,
            mean_us: s.service_lat().mean,
            p99_us: s.service_lat().p99,
            p999_us: s.service_lat().p99_9,
            response_mean_us: s.response_from_schedule().map(|l| l.mean),
        }
    }
}

/// The kernel's view of the target's I/O (`/sys/block/X/stat` deltas per second).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KernelView {
    pub read_iops: f64,
    pub write_iops: f64,
    /// Bytes per second.
    pub read_bw: f64,
    pub write_bw: f64,
    pub util_pct: f64,
    pub in_flight: u64,
}

/// The host's load and drivescope's own share of it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostView {
    pub cpu_pct: f64,
    pub own_cpu_pct: f64,
    pub mem_used_bytes: u64,
    pub own_rss_bytes: u64,
}

/// One telemetry sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TelemetryView {
    pub t_s: f64,
    /// Composite temperature, °C.
    pub temperature_c: Option<f64>,
    /// Other temperature sensors, °C.
    pub sensors_c: Vec<f64>,
    pub warning_c: Option<f64>,
    pub critical_c: Option<f64>,
    /// NVMe host controlled thermal management temperatures in force, °C: where the drive
    /// starts light (TMT1) and heavy (TMT2) throttling.
    pub tmt1_c: Option<f64>,
    pub tmt2_c: Option<f64>,
    pub power_state: Option<u32>,
    /// Maximum power of the current power state, W.
    pub power_state_max_w: Option<f64>,
    /// Measured power, W.
    pub power_w: Option<f64>,
    /// Thermal throttle transitions since power-on (both levels together).
    pub throttle_transitions: Option<u64>,
    /// Seconds spent throttled since power-on.
    pub throttle_seconds: Option<u64>,
    /// The drive's health verdict and its reasons.
    pub health: crate::telemetry::Health,
    pub kernel: Option<KernelView>,
    pub host: Option<HostView>,
    /// Why some telemetry is missing ("no SMART: run as root"); shown once.
    pub unavailable: Vec<String>,
    /// A zoned drive's zones by condition, from its zone report.
    pub zones: Option<crate::drive::zones::ZoneStates>,
}

/// How the events panel shows an event (its colour and label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventCategory {
    Phase,
    SteadyState,
    Throttle,
    /// The drive's health changed.
    Health,
    Error,
    Save,
    Info,
    /// A note the user wrote during the run.
    Note,
}

impl EventCategory {
    pub fn label(self) -> &'static str {
        match self {
            EventCategory::Phase => "phase",
            EventCategory::SteadyState => "steady",
            EventCategory::Throttle => "throttle",
            EventCategory::Health => "health",
            EventCategory::Error => "error",
            EventCategory::Save => "saved",
            EventCategory::Info => "info",
            EventCategory::Note => "note",
        }
    }
}

impl From<&crate::session::EventKind> for EventCategory {
    /// The one mapping from what a run (or a saved session) says happened to how the
    /// panel shows it; the live dashboard and replay both use it.
    fn from(k: &crate::session::EventKind) -> Self {
        use crate::session::EventKind as K;
        match k {
            K::Phase => EventCategory::Phase,
            K::SteadyState => EventCategory::SteadyState,
            K::Errors
            | K::Error
            | K::IoError
            | K::StepIncomplete
            | K::VerifyFinding
            | K::VerifyUnsaved
            | K::DriveErrors => EventCategory::Error,
            K::Health | K::PowerCut => EventCategory::Health,
            K::Thermal => EventCategory::Throttle,
            K::Fill | K::Saved | K::Snapshot => EventCategory::Save,
            K::UserNote => EventCategory::Note,
            K::Note
            | K::Skip
            | K::Stopped
            | K::Verified
            | K::DriveWear
            | K::Paused
            | K::Resumed
            | K::Other(_) => EventCategory::Info,
        }
    }
}

/// A verified run's integrity: blocks written and verified, findings by kind, the last
/// finding's detail.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntegrityView {
    pub totals: crate::verify::VerifyTotals,
    pub last: Option<String>,
}

/// One entry of the events panel.
#[derive(Debug, Clone, PartialEq)]
pub struct EventView {
    pub t_s: f64,
    pub kind: EventCategory,
    pub text: String,
}

/// Steady-state detection of the running step.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SteadyView {
    /// The step has no steady-state rule.
    #[default]
    NotApplicable,
    /// Measuring; `detail` says how far ("round 3 of 5, range 12% of 20%").
    Tracking {
        detail: String,
    },
    Reached {
        detail: String,
    },
    NotReached {
        detail: String,
    },
}
