//! The dashboard as a sink of the run pipeline: each [`RunEvent`] becomes the messages
//! the app's state machine takes; in a run of several drives, each drive's become
//! messages of that drive ([`Msg::OnDrive`]).

use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use crate::app::{CurvePoint, EventCategory, EventView, Msg, SteadyView, StepInfo};
use crate::plan::{PlanStep, SteadyVerdict};
use crate::run::{Prepared, RunEvent, SessionEvent, Sink};
use crate::session::{grid_of, EventKind, GridRun, StepResult};
use crate::stats::StepSummary;
use crate::workload::{RunOf, Workload};

use super::method::{self, method_of, MethodOf};
use super::views::telemetry_view;

/// Sends a run's events to the app.
pub(super) struct DashboardSink {
    msgs: UnboundedSender<Msg>,
    /// The run's start: the events' time axis.
    t0: Instant,
    /// Known once the run starts: steps, phase names, the plan's expected length.
    count: usize,
    phases: Vec<String>,
    plan_expected_s: Option<f64>,
    /// The running step's workload, the curve series its point goes on.
    series: String,
    /// The running step's run and workload, when it is a run of a test whose runs make one
    /// figure (a diskmark test): its figures go to the grid.
    grid_step: Option<(RunOf, Workload)>,
    /// The finished runs of such tests: the grid so far.
    grid_runs: Vec<(RunOf, Workload, StepSummary)>,
    /// Steps finished so far (this drive's): the next result's number is one more.
    done: u32,
    /// The plan's PTS method figure, and the running step for its point.
    method: Option<MethodOf>,
    step: Option<std::sync::Arc<PlanStep>>,
    /// The drive this sink speaks for, in a run of several.
    drive: Option<usize>,
    /// In a run of several: one sink per drive.
    drives: Vec<DashboardSink>,
}

impl DashboardSink {
    pub(super) fn new(msgs: UnboundedSender<Msg>, t0: Instant) -> Self {
        DashboardSink {
            msgs,
            t0,
            count: 0,
            phases: Vec::new(),
            plan_expected_s: None,
            series: String::new(),
            grid_step: None,
            grid_runs: Vec::new(),
            done: 0,
            method: None,
            step: None,
            drive: None,
            drives: Vec::new(),
        }
    }

    fn send(&self, m: Msg) {
        let m = match self.drive {
            Some(d) => Msg::OnDrive(d, Box::new(m)),
            None => m,
        };
        let _ = self.msgs.send(m);
    }

    /// A finished run of a test whose runs make one figure: the grid so far, made as the
    /// headless run's and the report's are ([`grid_of`]).
    fn grid_run(&mut self, summary: &StepSummary) {
        let Some((of, w)) = self.grid_step.take() else {
            return;
        };
        self.grid_runs.push((of, w, summary.clone()));
        let runs = self
            .grid_runs
            .iter()
            .filter_map(|(of, w, s)| GridRun::new(*of, w, s, None));
        self.send(Msg::Grid(grid_of(runs, |_| None)));
    }

    fn show(&self, kind: &EventKind, text: String) {
        self.send(Msg::Event(EventView {
            t_s: self.t0.elapsed().as_secs_f64(),
            kind: EventCategory::from(kind),
            text,
        }));
    }

    fn started(&self, run: &Prepared, session: &std::path::Path) {
        self.send(Msg::RunStarted {
            preset_id: run.name().to_string(),
            target: run.target.path.clone(),
        });
        // Said once, by the run's first drive when there are several.
        if self.drive.unwrap_or(0) == 0 {
            let _ = self.msgs.send(Msg::Event(EventView {
                t_s: 0.0,
                kind: EventCategory::from(&EventKind::Saved),
                text: format!("recording the session to {}", session.display()),
            }));
        }
    }
}

impl Sink for DashboardSink {
    fn drive_event(&mut self, drive: usize, ev: &RunEvent) {
        while self.drives.len() <= drive {
            let mut s = DashboardSink::new(self.msgs.clone(), self.t0);
            s.drive = Some(self.drives.len());
            self.drives.push(s);
        }
        self.drives[drive].event(ev);
    }

    fn event(&mut self, ev: &RunEvent) {
        let now = self.t0.elapsed().as_secs_f64();
        match ev {
            // A drive of several: its samples come through the run (each drive's worker
            // polls its own drive), and its end is its own.
            RunEvent::Telemetry(s) if self.drive.is_some() => {
                let t_s = s.t_ns as f64 / 1e9;
                self.send(Msg::Telemetry(Box::new(telemetry_view(s, t_s))));
            }
            RunEvent::Ended { outcome, .. } if self.drive.is_some() => {
                let _ = self.msgs.send(Msg::DriveEnded {
                    drive: self.drive.unwrap_or(0),
                    outcome: (*outcome).clone(),
                });
            }
            RunEvent::Started { run, session } => {
                self.plan_expected_s = Some(
                    run.plan
                        .estimate(crate::plan::ASSUMED_BYTES_PER_S as f64)
                        .max
                        .as_secs_f64(),
                );
                self.count = run.plan.steps.len();
                self.done = 0;
                self.phases = run.plan.phases.iter().map(|p| p.name.clone()).collect();
                self.method = method_of(&run.plan);
                self.started(run, session);
                self.send(Msg::PlanSteps(
                    run.plan.steps.iter().map(|s| s.name.clone()).collect(),
                ));
            }
            RunEvent::StepStarted {
                index,
                step,
                target_iops,
            } => {
                // An fio job file's step is named by its jobs' shapes, not one workload.
                self.series = if step.fio_file.is_some() {
                    step.name.clone()
                } else {
                    step.workload.shape_on(step.engine)
                };
                self.grid_step = step
                    .run
                    .filter(|r| r.pick.is_some())
                    .map(|r| (r, step.to_step_spec(*target_iops).workload));
                self.step = self.method.map(|_| step.clone());
                self.send(Msg::StepStarted(StepInfo {
                    index: *index,
                    count: self.count,
                    name: step.name.clone(),
                    phase_name: self.phases.get(step.phase).cloned().unwrap_or_default(),
                    started_s: now,
                    expected_s: step.end.duration.map(|d| (d + step.ramp).as_secs_f64()),
                    plan_expected_s: self.plan_expected_s,
                    rate_limited: target_iops.is_some(),
                    target_iops: *target_iops,
                    engine: step.engine,
                    engine_options: step.engine_options,
                }));
                self.send(Msg::SteadyState(if step.steady.is_some() {
                    SteadyView::Tracking {
                        detail: "fio-style rule on each interval".into(),
                    }
                } else {
                    SteadyView::NotApplicable
                }));
            }
            RunEvent::Interval { report, .. } => {
                self.send(Msg::Interval(Box::new(report.without_hists())))
            }
            RunEvent::StepFinished(r) => {
                for s in &r.summary.fio_series {
                    self.show(&EventKind::Note, s.to_string());
                }
                self.done += 1;
                let result = StepResult::from_summary(
                    &r.summary,
                    r.name.clone(),
                    self.series.clone(),
                    self.done,
                    None,
                );
                self.send(Msg::StepFinished(
                    CurvePoint::new(self.series.clone(), &r.summary),
                    Box::new(result),
                ));
                self.grid_run(&r.summary);
                if let (Some(m), Some(step)) = (self.method, &self.step) {
                    let phase = self.phases.get(step.phase).map_or("", String::as_str);
                    if let Some(p) = method::point(m, step, phase, now, &r.summary) {
                        self.send(Msg::Method(Box::new(p)));
                    }
                }
            }
            // The panels announce phases themselves from StepStarted.
            RunEvent::Happened(e) if matches!(e.what, SessionEvent::Phase { .. }) => {}
            RunEvent::Happened(e) => {
                if let SessionEvent::VerifyFinding(_) = &e.what {
                    self.send(Msg::IntegrityFinding(e.what.to_string()));
                }
                if let SessionEvent::Thermal(event) = &e.what {
                    self.send(Msg::Thermal {
                        t_s: e.t_s,
                        event: event.clone(),
                    });
                }
                if let SessionEvent::Steady { verdict, .. } = &e.what {
                    let detail = e.what.to_string();
                    self.send(Msg::SteadyState(match verdict {
                        SteadyVerdict::Reached { .. } => SteadyView::Reached { detail },
                        SteadyVerdict::NotReached { .. } | SteadyVerdict::Pending => {
                            SteadyView::NotReached { detail }
                        }
                    }));
                }
                self.show(&e.what.kind(), e.what.to_string());
            }
            RunEvent::Note(n) => self.show(&EventKind::Note, n.to_string()),
            RunEvent::SessionNotice(n) => self.send(Msg::Notice(n.to_string())),
            RunEvent::Snapshot(dir) => self.show(
                &EventKind::Snapshot,
                format!("snapshot being written to {}", dir.display()),
            ),
            // The telemetry thread shows samples itself; the run's end is sent by the
            // thread that ran it, with where the session went.
            // The panels make the soak's figures from the thermal events themselves.
            RunEvent::Telemetry(_)
            | RunEvent::Soak(_)
            | RunEvent::Ended { .. }
            | RunEvent::Saved { .. } => {}
            RunEvent::Verify(t) => self.send(Msg::Integrity(*t)),
            RunEvent::Wear(w) if w.step.is_none() => {
                if let Some(l) = crate::telemetry::wear_text::line(w) {
                    self.show(&EventKind::DriveWear, l);
                }
            }
            RunEvent::Wear(_) => {}
        }
    }
}
