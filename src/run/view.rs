//! What a run is at each moment, kept once by the hub (and by a replay, from saved
//! records) and handed to every sink with each event: per drive its label, plan, running
//! step, steps finished, last result and end; whether the run is paused; whose the event
//! at hand is. A sink answers each event with a [`SinkFlow`]: going on, or ending the run.

use std::sync::Arc;
use std::time::Instant;

use super::event::{FinishedStep, RunEvent};
use crate::outcome::RunOutcome;
use crate::plan::{Plan, PlanPhase, PlanStep};

/// What a sink says after an event: go on, or end the run (a headless printer whose
/// output is gone); the hub stops it as a signal does, its session saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkFlow {
    Continue,
    Stop,
}

/// The step a drive runs (or ran last), and its rate (`None`: closed loop).
#[derive(Debug, Clone)]
pub struct StepNow {
    pub step: Arc<PlanStep>,
    pub target_iops: Option<f64>,
}

/// One drive's part of the run.
#[derive(Debug, Clone, Default)]
pub struct DriveView {
    pub label: String,
    /// Its plan, once it started.
    pub plan: Option<Arc<Plan>>,
    pub step: Option<StepNow>,
    /// Steps finished so far, and the last.
    pub done: u32,
    pub last: Option<Arc<FinishedStep>>,
    /// How it ended, once it has.
    pub ended: Option<RunOutcome>,
}

impl DriveView {
    /// The steps of its plan (0 before it starts).
    pub fn steps(&self) -> usize {
        self.plan.as_ref().map_or(0, |p| p.steps.len())
    }

    /// The running step's phase, and its name.
    pub fn phase(&self) -> Option<&PlanPhase> {
        self.plan
            .as_ref()?
            .phases
            .get(self.step.as_ref()?.step.phase)
    }

    pub fn phase_name(&self) -> &str {
        self.phase().map_or("", |p| p.name.as_str())
    }
}

/// The run as the sinks see it.
#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub drives: Vec<DriveView>,
    /// The drive the event at hand is of, in a run of several (`None`: the run's own, or
    /// any event of a run of one).
    pub drive: Option<usize>,
    /// Since when the user's pause holds the run.
    pub paused_since: Option<Instant>,
}

impl RunView {
    /// The view of a run on the drives labelled `labels` (a run of one: one unnamed drive
    /// when none are named).
    pub fn new(labels: impl IntoIterator<Item = String>) -> Self {
        let drive = |label| DriveView {
            label,
            ..DriveView::default()
        };
        let mut drives: Vec<_> = labels.into_iter().map(drive).collect();
        if drives.is_empty() {
            drives.push(DriveView::default());
        }
        RunView {
            drives,
            ..RunView::default()
        }
    }

    /// A run of several drives.
    pub fn many(&self) -> bool {
        self.drives.len() > 1
    }

    /// Drive `drive`; `None`: the run's own, which in a run of one is its drive's.
    pub fn of(&self, drive: Option<usize>) -> Option<&DriveView> {
        self.drives.get(drive.or((!self.many()).then_some(0))?)
    }

    fn of_mut(&mut self, drive: Option<usize>) -> Option<&mut DriveView> {
        let d = drive.or((!self.many()).then_some(0))?;
        self.drives.get_mut(d)
    }

    /// Drive `drive` (`None`: the run of one) starts `plan`.
    pub fn start(&mut self, drive: Option<usize>, plan: Arc<Plan>) {
        if let Some(v) = self.of_mut(drive) {
            let label = std::mem::take(&mut v.label);
            *v = DriveView {
                label,
                plan: Some(plan),
                ..DriveView::default()
            };
        }
    }

    /// The view after event `ev` of drive `drive` (`None`: the run's own).
    pub fn update(&mut self, drive: Option<usize>, ev: &RunEvent) {
        self.drive = drive.filter(|_| self.many());
        if let RunEvent::Started { run, .. } = ev {
            return self.start(drive, Arc::new(run.plan.clone()));
        }
        let Some(v) = self.of_mut(drive) else { return };
        match ev {
            RunEvent::StepStarted {
                step, target_iops, ..
            } => {
                let (step, target_iops) = (step.clone(), *target_iops);
                v.step = Some(StepNow { step, target_iops })
            }
            RunEvent::StepFinished(r) => (v.done, v.last) = (v.done + 1, Some(r.clone())),
            RunEvent::Ended { outcome, .. } => v.ended = Some(outcome.clone()),
            _ => {}
        }
    }
}
