//! The hub's sink that keeps [`Figures`] for the metrics endpoint: each run event, and
//! the hub's view of the drive after it (its step, phase and end), copied in once.

use std::sync::{Arc, Mutex, PoisonError};

use super::figures::{DriveFigures, Figures, RunState};
use super::server::MetricsServer;
use crate::outcome::RunOutcome;
use crate::run::{RunEvent, RunView, Sink, SinkFlow};

/// Copies run events into the endpoint's figures.
#[derive(Debug, Clone)]
pub struct MetricsSink {
    figures: Arc<Mutex<Figures>>,
    /// This machine's name: the `host` label of a drive on it.
    local_host: String,
}

/// This machine's host name (the kernel's), or `localhost`.
pub(super) fn local_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

impl MetricsSink {
    pub fn new(server: &MetricsServer) -> MetricsSink {
        MetricsSink {
            figures: server.figures.clone(),
            local_host: local_host(),
        }
    }

    fn apply(&self, view: &RunView, ev: &RunEvent) {
        let Some((drive, now)) = view
            .drive
            .or((!view.many()).then_some(0))
            .zip(view.of(view.drive))
        else {
            return;
        };
        let mut fig = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
        while fig.drives.len() <= drive {
            fig.drives.push(DriveFigures::default());
        }
        let d = &mut fig.drives[drive];
        match ev {
            RunEvent::Started { run, .. } => {
                let host = run.host.name().unwrap_or_else(|| self.local_host.clone());
                *d = DriveFigures::new(run.label.clone(), host);
                d.preset = run.plan.preset_id.clone();
                fig.state = RunState::Running;
            }
            RunEvent::StepStarted {
                step, target_iops, ..
            } => {
                d.step = step.name.clone();
                d.phase = now.phase_name().to_string();
                d.target_iops = *target_iops;
            }
            RunEvent::Interval { report, .. } => d.interval(report),
            RunEvent::Telemetry(t) => {
                if let Some(s) = &t.smart {
                    d.smart = Some(s.clone());
                }
            }
            RunEvent::Ended { outcome, .. } => {
                d.ended = Some(match outcome {
                    RunOutcome::Completed { .. } => RunState::Completed,
                    RunOutcome::Stopped(_) => RunState::Stopped,
                    RunOutcome::Failed { .. } => RunState::Failed,
                });
                fig.state = RunState::of(&fig.drives);
            }
            _ => {}
        }
    }
}

impl Sink for MetricsSink {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        self.apply(view, ev);
        SinkFlow::Continue
    }
}
