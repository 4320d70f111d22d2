//! What the dashboard keeps per drive: a [`DriveSlot`] holds one drive's identity, its
//! state in the run, its run figures ([`DriveRun`]) and its telemetry ([`TelemetryState`]).
//! A dashboard on one drive has one slot; a drives table has one per drive. The panels
//! draw the picked slot.

use std::path::PathBuf;

use super::history::{
    IntervalPoint, Ring, ThermalPoint, CURVE_HISTORY, INTERVAL_HISTORY, TELEMETRY_HISTORY,
};
use super::msg::RunEnd;
use super::view::{CurvePoint, DriveView, SteadyView, StepInfo, TargetEntry, TargetKind};
use crate::outcome::RunOutcome;
use crate::stats::IntervalReport;

/// A drive the dashboard opens with, as the runtime (or a replay) knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveSetup {
    /// What the drive is called in the table and the legends.
    pub label: String,
    pub target: TargetEntry,
    pub drive: Option<DriveView>,
    /// Writes to it were confirmed already (a targets file's `destroy_data` naming it).
    pub confirmed: bool,
}

/// Where one drive of the run is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum DriveState {
    #[default]
    Idle,
    Starting,
    Running,
    /// Asked to stop (this drive alone, or the whole run).
    Stopping,
    /// The drive ended on its own terms: completed, stopped, or failed (and why).
    Ended(RunOutcome),
    /// The run ended without this drive saying how it ended (it could not start, or the
    /// run broke off): the run's end.
    EndedWithRun(RunEnd),
}

impl DriveState {
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            DriveState::Starting | DriveState::Running | DriveState::Stopping
        )
    }
}

/// The last telemetry figures and the samples' history.
#[derive(Debug, Clone)]
pub struct TelemetryState {
    pub history: Ring<ThermalPoint>,
    pub last: Option<super::view::TelemetryView>,
    /// Run times at which throttle transitions went up.
    pub throttle_marks: Vec<f64>,
    /// Reasons telemetry is missing, each once, in arrival order.
    pub unavailable: Vec<String>,
}

impl TelemetryState {
    pub fn new() -> Self {
        TelemetryState {
            history: Ring::new(TELEMETRY_HISTORY),
            last: None,
            throttle_marks: Vec::new(),
            unavailable: Vec::new(),
        }
    }
}

impl Default for TelemetryState {
    fn default() -> Self {
        Self::new()
    }
}

/// One drive's figures of the run under way (or the last one); the run's own state is
/// `App::run`.
#[derive(Debug, Clone)]
pub struct DriveRun {
    pub target: Option<PathBuf>,
    pub step: Option<StepInfo>,
    pub steady: SteadyView,
    pub intervals: Ring<IntervalPoint>,
    /// The latest interval (histograms dropped), for the current figures and tables.
    pub last: Option<IntervalReport>,
    /// Finished steps of the run: the curve.
    pub curve: Ring<CurvePoint>,
    /// The diskmark grid so far (empty for a run of no such tests).
    pub grid: Vec<crate::session::GridCell>,
    /// Finished steps' results, in order (the Steps panel's rows).
    pub results: Vec<crate::session::StepResult>,
    /// The labels of the plan's steps, in order (known as the run starts).
    pub plan_steps: Vec<String>,
    /// The step of `step` is still running (it started and has not finished).
    pub step_open: bool,
    /// A PTS method's figure (HIR, XSR, DIRTH), when the plan has one.
    pub method: Option<crate::app::method::MethodState>,
    pub errors: u64,
    /// The run's thermal events (run clock), for a soak's live figures.
    pub thermal: Vec<(f64, crate::thermal::ThermalEvent)>,
    /// How long the user's pauses had held the run when this step started (its clock
    /// leaves out only the pauses since).
    pub paused_before_step_s: f64,
    /// The time of the drive's latest event: a later one is never shown as earlier (its
    /// clock restarts after a fill timed on its own).
    pub last_event_s: f64,
}

impl Default for DriveRun {
    fn default() -> Self {
        DriveRun {
            target: None,
            step: None,
            steady: SteadyView::NotApplicable,
            intervals: Ring::new(INTERVAL_HISTORY),
            last: None,
            curve: Ring::new(CURVE_HISTORY),
            grid: Vec::new(),
            results: Vec::new(),
            plan_steps: Vec::new(),
            step_open: false,
            method: None,
            errors: 0,
            thermal: Vec::new(),
            paused_before_step_s: 0.0,
            last_event_s: 0.0,
        }
    }
}

/// The most thermal events a run keeps for its figures (a soak has a handful).
const THERMAL_EVENTS: usize = 256;

impl DriveRun {
    /// Keeps a thermal event, the first ones when there are too many (the onset matters).
    pub fn push_thermal(&mut self, t_s: f64, e: crate::thermal::ThermalEvent) {
        if self.thermal.len() < THERMAL_EVENTS {
            self.thermal.push((t_s, e));
        }
    }

    /// A soak's figures so far: from the thermal events, the intervals and the peak of
    /// the temperatures shown; `None` before any thermal event.
    pub fn soak(&self, temps: &[(f64, f64)]) -> Option<crate::thermal::SoakSummary> {
        if self.thermal.is_empty() {
            return None;
        }
        let loads: Vec<crate::thermal::Load> = self
            .intervals
            .iter()
            .map(|p| {
                let iops = p.iops();
                crate::thermal::Load {
                    t: p.t_s,
                    dt: p.dt_s,
                    iops,
                    mbps: p.bw() / 1e6,
                    loaded: !p.ramp && iops > 0.0,
                }
            })
            .collect();
        let events: Vec<_> = self.thermal.iter().map(|(t, e)| (*t, e)).collect();
        Some(crate::thermal::SoakSummary::build(temps, &loads, &events))
    }

    /// Seconds of the current step done, from the engine's own clock.
    pub fn step_elapsed_s(&self) -> f64 {
        self.last.as_ref().map(|r| r.end_s).unwrap_or(0.0)
    }

    /// Seconds since the run started, from the engine's clock.
    pub fn run_elapsed_s(&self) -> f64 {
        self.step.as_ref().map(|s| s.started_s).unwrap_or(0.0) + self.step_elapsed_s()
    }

    /// [`step_elapsed_s`](Self::step_elapsed_s) less the pauses that ended in the step
    /// (`held_s`: every pause of the run so far): the step's own time, for its clock.
    pub fn step_working_s(&self, held_s: f64) -> f64 {
        (self.step_elapsed_s() - (held_s - self.paused_before_step_s).max(0.0)).max(0.0)
    }

    /// [`run_elapsed_s`](Self::run_elapsed_s) less every pause so far: the plan's clock.
    pub fn run_working_s(&self, held_s: f64) -> f64 {
        (self.run_elapsed_s() - held_s).max(0.0)
    }
}

/// One drive: its setup (label, target, confirmation), its state, identity, run figures
/// and telemetry.
#[derive(Debug, Clone)]
pub struct DriveSlot {
    pub label: String,
    pub target: TargetEntry,
    pub confirmed: bool,
    pub state: DriveState,
    pub drive: Option<DriveView>,
    pub run: DriveRun,
    pub telemetry: TelemetryState,
}

impl DriveSlot {
    pub fn new(s: DriveSetup) -> Self {
        DriveSlot {
            label: s.label,
            target: s.target,
            confirmed: s.confirmed,
            state: DriveState::Idle,
            drive: s.drive,
            run: DriveRun::default(),
            telemetry: TelemetryState::new(),
        }
    }

    /// The one slot of a dashboard without a drives table: its target is the one picked
    /// in the targets list, so the slot names none.
    pub fn solo(drive: Option<DriveView>) -> Self {
        DriveSlot::new(DriveSetup {
            label: String::new(),
            target: TargetEntry {
                path: PathBuf::new(),
                label: String::new(),
                kind: TargetKind::File,
                size: None,
                safety: None,
                creates: false,
            },
            drive,
            confirmed: false,
        })
    }

    /// Forgets the run's figures and telemetry (a new run, or a replay moving back).
    pub fn reset(&mut self) {
        self.run = DriveRun::default();
        self.telemetry = TelemetryState::new();
    }
}
