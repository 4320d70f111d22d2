//! The hub's sink that keeps [`Figures`] for the metrics endpoint: each run event copied in
//! once, as it reaches the hub.

use std::sync::{Arc, Mutex, PoisonError};

use super::figures::{DriveFigures, Figures, RunState};
use super::server::MetricsServer;
use crate::outcome::RunOutcome;
use crate::run::{RunEvent, Sink};

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

    fn apply(&self, drive: usize, ev: &RunEvent) {
        let mut fig = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
        while fig.drives.len() <= drive {
            fig.drives.push(DriveFigures::default());
        }
        match ev {
            RunEvent::Started { run, .. } => {
                let host = run.host.name().unwrap_or_else(|| self.local_host.clone());
                let d = &mut fig.drives[drive];
                *d = DriveFigures::new(run.label.clone(), host);
                d.preset = run.plan.preset_id.clone();
                d.phase_names = run.plan.phases.iter().map(|p| p.name.clone()).collect();
                fig.state = RunState::Running;
            }
            RunEvent::StepStarted {
                step, target_iops, ..
            } => {
                let d = &mut fig.drives[drive];
                d.step = step.name.clone();
                d.phase = d.phase_names.get(step.phase).cloned().unwrap_or_default();
                d.target_iops = *target_iops;
            }
            RunEvent::Interval { report, .. } => fig.drives[drive].interval(report),
            RunEvent::Telemetry(t) => {
                if let Some(s) = &t.smart {
                    fig.drives[drive].smart = Some(s.clone());
                }
            }
            RunEvent::Ended { outcome, .. } => {
                fig.drives[drive].ended = Some(match outcome {
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
    fn event(&mut self, ev: &RunEvent) {
        self.apply(0, ev);
    }

    fn drive_event(&mut self, drive: usize, ev: &RunEvent) {
        self.apply(drive, ev);
    }
}
