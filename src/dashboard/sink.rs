//! The dashboard as a sink of the run pipeline: each [`RunEvent`], with the run's view
//! after it (the drive's plan, running step and steps finished), becomes the messages the
//! app's state machine takes; in a run of several drives, each drive's become messages of
//! that drive ([`Msg::OnDrive`]). It is the one translator: a replay ([`super::replay`])
//! feeds it a saved session's records, and the view made of them, on the records' clock.

use std::path::Path;
use std::time::Instant;

use tokio::sync::mpsc::UnboundedSender;

use crate::app::{CurvePoint, EventCategory, EventView, Msg, SteadyView, StepInfo};
use crate::plan::{PlanStep, SteadyVerdict};
use crate::run::{happening_record, DriveView, RunEvent, RunView, Sink, SinkFlow};
use crate::session::{grid_of, Document, EventKind, GridRun, StepResult};
use crate::stats::StepSummary;
use crate::telemetry::WearSpan;
use crate::workload::{RunOf, Workload};

use super::method::{self, method_of};
use super::views::telemetry_view;

/// The sink's clock: seconds since the run's start (live), or the time of the record a
/// replay feeds it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Clock {
    Since(Instant),
    At(f64),
}

impl Clock {
    /// A live clock set to the session's, which is `at_s` now (the fill runs on it before
    /// the run starts), so that the panels' times are the session's records'.
    fn on_session(self, at_s: f64) -> Clock {
        match self {
            Clock::Since(_) => {
                let now = Instant::now();
                let ago = std::time::Duration::try_from_secs_f64(at_s).unwrap_or_default();
                Clock::Since(now.checked_sub(ago).unwrap_or(now))
            }
            Clock::At(t) => Clock::At(t),
        }
    }

    fn now(self) -> f64 {
        match self {
            Clock::Since(t0) => t0.elapsed().as_secs_f64(),
            Clock::At(t) => t,
        }
    }
}

/// Sends a run's events to the app.
pub(super) struct DashboardSink {
    msgs: UnboundedSender<Msg>,
    /// The events' time axis.
    clock: Clock,
    /// The finished runs of a test whose runs make one figure (a diskmark test), with
    /// their drive's: each drive's grid so far.
    grid_runs: Vec<(Option<usize>, RunOf, Workload, StepSummary)>,
    /// The drive of the record at hand, in a run of several.
    drive: Option<usize>,
}

impl DashboardSink {
    /// The sink of a live run that started at `t0`.
    pub(super) fn new(msgs: UnboundedSender<Msg>, t0: Instant) -> Self {
        Self::on(msgs, Clock::Since(t0))
    }

    pub(super) fn on(msgs: UnboundedSender<Msg>, clock: Clock) -> Self {
        DashboardSink {
            msgs,
            clock,
            grid_runs: Vec::new(),
            drive: None,
        }
    }

    fn send(&self, m: Msg) {
        let m = match self.drive {
            Some(d) => Msg::OnDrive(d, Box::new(m)),
            None => m,
        };
        let _ = self.msgs.send(m);
    }

    /// A finished run (`of`, at workload `w`) of a test whose runs make one figure: the
    /// grid so far, made as the headless run's and the report's are ([`grid_of`]).
    fn grid_run(&mut self, of: RunOf, w: Workload, summary: &StepSummary) {
        self.grid_runs.push((self.drive, of, w, summary.clone()));
        let runs = self.grid_runs.iter().filter(|r| r.0 == self.drive);
        let runs = runs.filter_map(|(_, of, w, s)| GridRun::new(*of, w, s, None));
        self.send(Msg::Grid(grid_of(runs, |_| None)));
    }

    fn show(&self, kind: &EventKind, text: String) {
        self.send(Msg::Event(EventView {
            t_s: self.clock.now(),
            kind: EventCategory::from(kind),
            text,
        }));
    }

    /// A replay's sink takes its next record, of drive `drive` of several, at `t_s` on
    /// the session's clock.
    pub(super) fn at(&mut self, t_s: f64, drive: Option<usize>) {
        self.clock = Clock::At(t_s);
        self.drive = drive;
    }

    /// The run `name` of `steps` starts on `target`, recording its session to `session` (a
    /// replay: none).
    pub(super) fn start(
        &mut self,
        steps: &[PlanStep],
        name: &str,
        target: &Path,
        session: Option<&Path>,
    ) {
        self.send(Msg::RunStarted {
            preset_id: name.to_string(),
            target: target.to_path_buf(),
        });
        // Said once, by the run's first drive when there are several.
        if let (Some(session), 0) = (session, self.drive.unwrap_or(0)) {
            let _ = self.msgs.send(Msg::Event(EventView {
                t_s: 0.0,
                kind: EventCategory::from(&EventKind::Saved),
                text: format!("recording the session to {}", session.display()),
            }));
        }
        self.send(Msg::PlanSteps(
            steps.iter().map(|s| s.name.clone()).collect(),
        ));
    }

    /// A happening as the session keeps it ([`happening_record`]), at `t_s`: live, made
    /// from the run's event; in a replay, read back from the session.
    pub(super) fn recorded(
        &mut self,
        t_s: f64,
        kind: &EventKind,
        text: &str,
        data: Option<&Document>,
    ) {
        match kind {
            // The panels announce phases themselves from StepStarted.
            EventKind::Phase => return,
            EventKind::VerifyFinding => self.send(Msg::IntegrityFinding(text.to_string())),
            EventKind::Verified => {
                if let Some(t) = data.and_then(Document::read) {
                    self.send(Msg::Integrity(t));
                }
            }
            EventKind::Thermal => {
                if let Some(event) = data.and_then(Document::read) {
                    self.send(Msg::Thermal { t_s, event });
                }
            }
            EventKind::SteadyState => {
                if let Some(verdict) = data.and_then(Document::read::<SteadyVerdict>) {
                    let detail = text.to_string();
                    self.send(Msg::SteadyState(match verdict {
                        SteadyVerdict::Reached { .. } => SteadyView::Reached { detail },
                        SteadyVerdict::NotReached { .. } | SteadyVerdict::Pending => {
                            SteadyView::NotReached { detail }
                        }
                    }));
                }
            }
            // What the run did to the drive is shown in a line of its figures.
            EventKind::DriveWear => {
                if let Some(w) = data.and_then(Document::read::<WearSpan>) {
                    self.wear(&w);
                }
                return;
            }
            _ => {}
        }
        self.show(kind, text.to_string());
    }

    /// What the run (not a step) did to the drive.
    fn wear(&self, w: &WearSpan) {
        if w.step.is_none() {
            if let Some(l) = crate::telemetry::wear_text::line(w) {
                self.show(&EventKind::DriveWear, l);
            }
        }
    }
}

impl Sink for DashboardSink {
    /// `ev` (of the view's drive, or the run's own) as the app's messages. The dashboard's
    /// quit is the user's stop, a command: never the sink's answer.
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        self.drive = view.drive;
        let now = self.clock.now();
        let none = DriveView::default();
        let mine = view.of(self.drive).unwrap_or(&none);
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
            RunEvent::Started { run, session, at_s } => {
                self.clock = self.clock.on_session(*at_s);
                self.start(&run.plan.steps, run.name(), &run.target.path, Some(session))
            }
            RunEvent::StepStarted {
                index,
                step,
                target_iops,
            } => {
                let plan = mine.plan.as_deref();
                let plan_expected_s = plan.map(|p| {
                    let bytes_per_s = crate::plan::ASSUMED_BYTES_PER_S as f64;
                    p.estimate(bytes_per_s).max.as_secs_f64()
                });
                self.send(Msg::StepStarted(StepInfo {
                    index: *index,
                    count: mine.steps(),
                    name: step.name.clone(),
                    phase_name: mine.phase_name().to_string(),
                    started_s: now,
                    expected_s: step.end.duration.map(|d| (d + step.ramp).as_secs_f64()),
                    plan_expected_s,
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
                // The curve series of the step that ran: its workload (an fio job file's
                // step is named by its jobs' shapes, not one workload).
                let step = mine.step.as_ref();
                let series = step.map_or(String::new(), |s| match s.step.fio_file {
                    Some(_) => s.step.name.clone(),
                    None => s.step.workload.shape_on(s.step.engine),
                });
                let result = StepResult::from_summary(
                    &r.summary,
                    r.name.clone(),
                    series.clone(),
                    mine.done,
                    None,
                );
                self.send(Msg::StepFinished(
                    CurvePoint::new(series, &r.summary),
                    Box::new(result),
                ));
                // A run of a test whose runs make one figure: its figures go to the grid.
                if let Some(s) = step {
                    if let Some(of) = s.step.run.filter(|r| r.pick.is_some()) {
                        let w = s.step.to_step_spec(s.target_iops).workload;
                        self.grid_run(of, w, &r.summary);
                    }
                }
                let method = mine.plan.as_deref().and_then(method_of);
                if let (Some(m), Some(s)) = (method, step) {
                    if let Some(p) = method::point(m, &s.step, mine.phase_name(), now, &r.summary) {
                        self.send(Msg::Method(Box::new(p)));
                    }
                }
            }
            RunEvent::Happened(e) => {
                let (kind, text, data) = happening_record(&e.what);
                self.recorded(e.t_s, &kind, &text, data.as_ref());
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
            RunEvent::Wear(w) => self.wear(w),
        }
        SinkFlow::Continue
    }
}
