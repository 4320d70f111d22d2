//! What a run is at each moment, kept once by the hub (and by a replay, from saved
//! records) and handed to every sink with each event: per drive its label, plan, running
//! step, steps finished, last result and end; whether the run is paused; whose the event
//! at hand is. A sink answers each event with a [`SinkFlow`]: going on, or ending the run.

use std::sync::Arc;
use std::time::Instant;

use super::event::{FinishedStep, RunEvent};
use crate::outcome::RunOutcome;
use crate::plan::{Plan, PlanStep};

/// What a sink says after an event: go on, or end the run (a headless printer whose
/// output is gone); the hub stops it as a signal does, its session saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkFlow {
    Continue,
    Stop,
}

/// The step a drive runs (or ran last): its index in the plan, the step, its rate
/// (`None`: closed loop).
#[derive(Debug, Clone)]
pub struct StepNow {
    pub index: usize,
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

    /// The name of the running step's phase.
    pub fn phase_name(&self) -> &str {
        match (&self.plan, &self.step) {
            (Some(p), Some(s)) => p.phases.get(s.step.phase).map_or("", |p| p.name.as_str()),
            _ => "",
        }
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
    /// The view of a run on the drives labelled `labels`.
    pub fn new(labels: impl IntoIterator<Item = String>) -> Self {
        let drives = labels
            .into_iter()
            .map(|label| DriveView {
                label,
                ..DriveView::default()
            })
            .collect();
        RunView {
            drives,
            ..RunView::default()
        }
    }

    /// A run of several drives.
    pub fn many(&self) -> bool {
        self.drives.len() > 1
    }

    /// The drive whose figures an event of `drive` (`None`: the run's own) changes: that
    /// drive, or the one drive of a run of one.
    fn index(&self, drive: Option<usize>) -> Option<usize> {
        drive.or((!self.many()).then_some(0))
    }

    /// The drive that `drive` (an index, or the run of one) is.
    pub fn of(&self, drive: Option<usize>) -> Option<&DriveView> {
        self.drives.get(self.index(drive)?)
    }

    fn slot(&mut self, d: usize) -> &mut DriveView {
        if self.drives.len() <= d {
            self.drives.resize_with(d + 1, DriveView::default);
        }
        &mut self.drives[d]
    }

    /// Drive `drive` (`None`: the run of one) starts `plan`.
    pub fn start(&mut self, drive: Option<usize>, plan: Arc<Plan>) {
        let Some(d) = self.index(drive) else { return };
        let v = self.slot(d);
        *v = DriveView {
            label: std::mem::take(&mut v.label),
            plan: Some(plan),
            ..DriveView::default()
        };
    }

    /// The view after event `ev` of drive `drive` (`None`: the run's own).
    pub fn update(&mut self, drive: Option<usize>, ev: &RunEvent) {
        self.drive = drive.filter(|_| self.many());
        let Some(d) = self.index(drive) else { return };
        match ev {
            RunEvent::Started { run, .. } => {
                self.start(Some(d), Arc::new(run.plan.clone()));
                let v = self.slot(d);
                if v.label.is_empty() {
                    v.label = run.label.clone();
                }
            }
            RunEvent::StepStarted {
                index,
                step,
                target_iops,
            } => {
                self.slot(d).step = Some(StepNow {
                    index: *index,
                    step: step.clone(),
                    target_iops: *target_iops,
                })
            }
            RunEvent::StepFinished(r) => {
                let v = self.slot(d);
                v.done += 1;
                v.last = Some(r.clone());
            }
            RunEvent::Ended { outcome, .. } => self.slot(d).ended = Some(outcome.clone()),
            _ => {}
        }
    }
}
