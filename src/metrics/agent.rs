//! `drivescope agent --metrics ADDR`: the same endpoint on the target's host, fed from what
//! the agent sends its controller (an [`AgentWatch`]): the prepared target names the drive,
//! each interval adds its counts, rates and histograms, each telemetry sample its SMART
//! reading. The agent knows no preset, phase or step name (those are the controller's), so
//! `drivescope_step_info` is empty there; `drivescope_run_state` is `running` while a step
//! or fill runs, then how the agent's last step ended.

use std::sync::{Arc, Mutex, PoisonError};

use super::figures::{DriveFigures, Figures, RunState};
use super::server::MetricsServer;
use super::sink::local_host;
use crate::outcome::EndedBy;
use crate::remote::agent::AgentWatch;
use crate::remote::proto::{FromAgent, ToAgent};

/// Keeps the agent's one drive in the endpoint's figures.
#[derive(Debug)]
pub struct AgentMetrics {
    figures: Arc<Mutex<Figures>>,
    host: String,
}

impl AgentMetrics {
    pub fn new(server: &MetricsServer) -> AgentMetrics {
        AgentMetrics {
            figures: server.figures.clone(),
            host: local_host(),
        }
    }

    fn with(&self, f: impl FnOnce(&mut Figures)) {
        let mut fig = self.figures.lock().unwrap_or_else(PoisonError::into_inner);
        if fig.drives.is_empty() {
            fig.drives
                .push(DriveFigures::new(String::new(), self.host.clone()));
        }
        f(&mut fig);
    }
}

impl AgentWatch for AgentMetrics {
    fn request(&self, r: &ToAgent) {
        if matches!(r, ToAgent::Step { .. } | ToAgent::Fill { .. }) {
            self.with(|f| {
                f.drives[0].ended = None;
                f.state = RunState::Running;
            });
        }
    }

    fn record(&self, r: &FromAgent) {
        match r {
            FromAgent::Prepared(p) => self.with(|f| {
                let label = crate::ostext::escaped(p.target.path.as_os_str()).to_string();
                f.drives[0] = DriveFigures::new(label, self.host.clone());
                f.state = RunState::Starting;
            }),
            FromAgent::Interval(w) => {
                let report = w.as_ref().clone().into_report();
                self.with(|f| f.drives[0].interval(&report));
            }
            FromAgent::Telemetry { sample } => {
                if let Some(s) = &sample.smart {
                    self.with(|f| f.drives[0].smart = Some(s.clone()));
                }
            }
            FromAgent::StepDone { summary } => self.with(|f| {
                let end = match summary.ended_by {
                    EndedBy::Stopped => RunState::Stopped,
                    ref e if e.is_device_failure() => RunState::Failed,
                    _ => RunState::Completed,
                };
                f.drives[0].ended = Some(end);
                f.state = end;
            }),
            FromAgent::Filled { .. } => self.with(|f| f.state = RunState::Completed),
            _ => {}
        }
    }
}
