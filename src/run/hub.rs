//! The pipeline's side of a run: the [`Hub`] records what each drive's worker says in the
//! one session (under its drive when there are several), keeps the one [`RunView`] of the
//! run and hands each event with it to the [`Sink`]s (the printer, the dashboard, the
//! metrics); a sink that answers [`SinkFlow::Stop`] stops the run. It takes the run's
//! commands meant for the session (pause, resume, snapshot), says how each drive and the
//! run ended, and makes the final save.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::control::RunControl;
use super::error::RunError;
use super::event::RunEvent;
use super::record::record;
use super::request::Prepared;
use super::tally::Tally;
use super::view::{RunView, SinkFlow};
use super::worker::WorkerMessage;
use crate::outcome::RunOutcome;
use crate::session::{EventKind, RunEnd, SessionRecorder, SessionState};
use crate::thermal::SoakLog;

/// Anything that shows a run as it goes: each event with the run's view after it (whose
/// drive the event is of: [`RunView::drive`]); [`SinkFlow::Stop`] ends the run.
pub trait Sink {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow;
}

/// How a run that started ended.
#[derive(Debug)]
pub struct Finished {
    /// The run's outcome, or the error that broke it off after the session was created.
    pub result: Result<RunOutcome, RunError>,
    pub tally: Tally,
    /// Where the final save wrote the session (`None` when it failed).
    pub saved: Option<PathBuf>,
}

/// The session state an outcome is saved as.
fn state_of(r: &Result<RunOutcome, RunError>) -> SessionState {
    match r {
        Ok(RunOutcome::Completed { .. }) => SessionState::Complete,
        Ok(RunOutcome::Stopped(_)) => SessionState::Stopped,
        Ok(RunOutcome::Failed { .. }) | Err(_) => SessionState::Failed,
    }
}

/// The pipeline's side: the session and the sinks, fed by the drives' workers.
pub(super) struct Hub<'a, 's> {
    pub(super) runs: &'a [Prepared],
    rec: SessionRecorder,
    sinks: &'a mut [&'s mut dyn Sink],
    view: RunView,
    /// Per drive whose plan ends steps on the temperature: its soak so far.
    soak: Vec<Option<SoakLog>>,
    /// The run's control: a sink's stop sets its stop flag, as a signal does.
    ctl: &'a RunControl,
}

impl<'a, 's> Hub<'a, 's> {
    /// The hub of `runs`, recording in `rec`, showing on `sinks`, stopped through `ctl`.
    pub(super) fn new(
        runs: &'a [Prepared],
        rec: SessionRecorder,
        sinks: &'a mut [&'s mut dyn Sink],
        ctl: &'a RunControl,
    ) -> Self {
        let soak = runs
            .iter()
            .map(|r| r.plan.needs_temperature().then(SoakLog::default))
            .collect();
        Hub {
            runs,
            rec,
            sinks,
            view: RunView::new(runs.iter().map(|r| r.label.clone())),
            soak,
            ctl,
        }
    }

    /// Hands an event of drive `drive` (`None`: the run's own) to the sinks.
    pub(super) fn show(&mut self, drive: Option<usize>, ev: &RunEvent) {
        self.view.update(drive, ev);
        self.tell(ev);
    }

    /// Hands `ev` to the sinks with the view after it; a sink's stop stops the run as a
    /// signal does.
    fn tell(&mut self, ev: &RunEvent) {
        let view = &self.view;
        let flows = self.sinks.iter_mut().map(|s| s.event(view, ev));
        let stops = flows.filter(|f| *f == SinkFlow::Stop);
        if stops.count() > 0 {
            self.ctl.flags().stop.store(true, Ordering::Relaxed);
        }
    }

    /// Records an event of drive `drive` (its step as the view has it) and shows it; the drive's soak, when it has one,
    /// takes what the session recorded of it (its times and figures as recorded).
    pub(super) fn emit(&mut self, drive: usize, ev: &RunEvent) {
        self.rec.set_current_drive(Some(drive as u32));
        self.view.update(Some(drive), ev);
        let soaked = record(
            &mut self.rec,
            &self.runs[drive],
            &self.view.drives[drive],
            ev,
        );
        if let (Some(log), Some(input)) =
            (self.soak.get_mut(drive).and_then(Option::as_mut), soaked)
        {
            input.into_log(log);
        }
        self.tell(ev);
    }

    /// What the recorder wants shown (an autosave that failed, a snapshot written).
    fn tick(&mut self) {
        self.rec.set_current_drive(None);
        for n in self.rec.tick() {
            self.show(None, &RunEvent::SessionNotice(n));
        }
    }

    /// The user paused (`true`) or resumed the run: an event of the session, once per
    /// change (a resume says how long the pause held).
    pub(super) fn paused(&mut self, pause: bool) {
        self.rec.set_current_drive(None);
        match (pause, self.view.paused_since) {
            (true, None) => {
                self.view.paused_since = Some(std::time::Instant::now());
                self.rec.push_event(EventKind::Paused, "paused");
            }
            (false, Some(at)) => {
                self.view.paused_since = None;
                let s = crate::session::round(at.elapsed().as_secs_f64(), 3);
                self.rec.push_event_data(
                    EventKind::Resumed,
                    format!("resumed after {s:.1} s paused"),
                    crate::session::ResumedData { paused_s: s },
                );
            }
            _ => {}
        }
    }

    /// The user's note, recorded at the time it came (the run's, not a drive's).
    pub(super) fn user_note(&mut self, text: &str) {
        self.rec.set_current_drive(None);
        self.rec.push_event(EventKind::UserNote, text);
    }

    /// A power-cut run cut the power now (the run's, not a drive's).
    pub(super) fn power_cut(&mut self, d: crate::session::PowerCutData) {
        self.rec.set_current_drive(None);
        self.rec.push_event_data(
            EventKind::PowerCut,
            format!(
                "power cut {} (epoch {}, {} blocks in flight)",
                d.cycle, d.epoch, d.blocks_in_flight
            ),
            d,
        );
    }

    pub(super) fn snapshot(&mut self) {
        self.rec.set_current_drive(None);
        match self.rec.snapshot_by_hand() {
            Ok(dir) => self.show(None, &RunEvent::Snapshot(dir)),
            Err(e) => {
                let n = format!(
                    "snapshot not taken: no new folder beside {}: {e}",
                    self.rec.snapshot_dir().display()
                );
                self.show(None, &RunEvent::SessionNotice(n));
            }
        }
    }

    /// What drive `d`'s worker said (all but its end).
    pub(super) fn said(&mut self, d: usize, said: WorkerMessage) {
        match said {
            // The run starts this far into the session (after the fill).
            WorkerMessage::Event(RunEvent::Started { run, session, .. }) => {
                let at_s = self.rec.elapsed_s();
                self.emit(d, &RunEvent::Started { run, session, at_s });
            }
            WorkerMessage::Event(ev) => {
                self.emit(d, &ev);
                if let RunEvent::Interval { .. } = ev {
                    self.tick();
                }
            }
            WorkerMessage::Show(n) => self.show(Some(d), &RunEvent::Note(n)),
            WorkerMessage::Record {
                kind,
                message,
                data,
            } => {
                self.rec.set_current_drive(Some(d as u32));
                self.rec.push_event_data(kind, message, data);
            }
            WorkerMessage::Snapshot => self.snapshot(),
            WorkerMessage::Done(_) => {}
        }
    }

    /// What the run says of itself before it starts (`notes`: the caller's, then the
    /// retired verify states), as the run's own notes; then what each drive's telemetry
    /// says, as the drive's.
    pub(super) fn notes(&mut self, notes: &[String], feeds: &[&[String]]) {
        for n in notes {
            self.rec.set_current_drive(None);
            self.rec.push_event(EventKind::Note, n.clone());
            self.show(None, &RunEvent::Note(n.clone()));
        }
        for (d, said) in feeds.iter().enumerate() {
            for n in said.iter() {
                self.emit(d, &RunEvent::Note(n.clone()));
            }
        }
    }

    /// Drive `d` ended: in a run of several, its own end is kept in its summary and shown
    /// on its own, and a failed drive says so in the session.
    pub(super) fn drive_ended(&mut self, d: usize, r: &Result<(RunOutcome, Tally), RunError>) {
        if self.runs.len() < 2 {
            return;
        }
        let label = self.runs[d].label.clone();
        let end = match r {
            Ok((o, _)) => RunEnd::Outcome(o.clone()),
            Err(e) => RunEnd::Error(e.to_string()),
        };
        self.rec.set_drive_ended(d, end.clone());
        let failed = match r {
            Ok((o @ RunOutcome::Failed { .. }, _)) => Some(o.to_string()),
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        };
        if let Some(why) = failed {
            self.rec.set_current_drive(Some(d as u32));
            self.rec
                .push_event(EventKind::Error, format!("drive {label} failed: {why}"));
        }
        let (outcome, tally) = match r {
            Ok((outcome, tally)) => (outcome.clone(), tally.clone()),
            // The sinks learn of a drive that broke off too (the printer stops waiting for
            // it before an "all" line).
            Err(_) => (end.outcome(), Tally::default()),
        };
        self.show(
            Some(d),
            &RunEvent::Ended {
                outcome,
                tally: Box::new(tally),
            },
        );
    }

    /// The run is over (each drive's result in `results`): its outcome said in the session
    /// and shown with each drive's soak, and the final save made.
    pub(super) fn wrap_up(
        mut self,
        results: Vec<Result<(RunOutcome, Tally), RunError>>,
    ) -> Finished {
        let (result, tally) = overall(self.runs, results);
        self.rec.set_current_drive(None);
        // A run of several has said each drive's error under the drive already.
        if let (Err(e), 1) = (&result, self.runs.len()) {
            self.rec.push_event(EventKind::Error, e.to_string());
        }
        let soaks: Vec<_> = self
            .soak
            .iter()
            .map(|log| log.as_ref().and_then(SoakLog::summary))
            .collect();
        for (d, sum) in soaks.into_iter().enumerate() {
            if let Some(sum) = sum {
                self.show(Some(d), &RunEvent::Soak(Box::new(sum)));
            }
        }
        if let Ok(outcome) = &result {
            self.show(
                None,
                &RunEvent::Ended {
                    outcome: outcome.clone(),
                    tally: Box::new(tally.clone()),
                },
            );
        }
        let ended_by = match &result {
            Ok(o) => RunEnd::Outcome(o.clone()),
            Err(e) => RunEnd::Error(e.to_string()),
        };
        let Hub {
            rec,
            sinks,
            mut view,
            ..
        } = self;
        let (result, saved) = finish(rec, result, &ended_by, sinks, &mut view);
        Finished {
            result,
            tally,
            saved,
        }
    }
}

/// The run's outcome from its drives': one drive's is the run's; of several, a failed
/// drive fails the run (the others ran on), a stop stops it, errors add up.
fn overall(
    runs: &[Prepared],
    results: Vec<Result<(RunOutcome, Tally), RunError>>,
) -> (Result<RunOutcome, RunError>, Tally) {
    if results.len() == 1 {
        return match results.into_iter().next() {
            Some(Ok((o, t))) => (Ok(o), t),
            Some(Err(e)) => (Err(e), Tally::default()),
            None => (Err(RunError::NoTargets), Tally::default()),
        };
    }
    let mut tally = Tally::default();
    let mut failed = None;
    let mut stopped = None;
    let mut first_err = None;
    for (run, r) in runs.iter().zip(results) {
        match r {
            Ok((o, t)) => {
                tally.steps += t.steps;
                tally.steps_run += t.steps_run;
                tally.errors += t.errors;
                tally.findings += t.findings;
                tally.verify_unsaved = tally.verify_unsaved.take().or(t.verify_unsaved);
                if tally.first_error.is_none() {
                    tally.first_error = t.first_error.map(|e| format!("{}: {e}", run.label));
                }
                match o {
                    RunOutcome::Failed { step, ended_by } if failed.is_none() => {
                        let at = match step {
                            Some(s) => format!("drive {}, {s}", run.label),
                            None => format!("drive {}", run.label),
                        };
                        failed = Some(RunOutcome::Failed {
                            step: Some(at),
                            ended_by,
                        });
                    }
                    RunOutcome::Stopped(by) => stopped = Some(by),
                    _ => {}
                }
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    let outcome = if let Some(f) = failed {
        f
    } else if let Some(e) = first_err {
        return (Err(e), tally);
    } else if let Some(by) = stopped {
        RunOutcome::Stopped(by)
    } else {
        RunOutcome::Completed {
            errors: tally.errors,
            first_error: tally.first_error.clone(),
        }
    };
    (Ok(outcome), tally)
}

/// The final save, whatever the result. A failed save turns a good run into an error (the
/// autosaved stream is still there, and the message says where).
fn finish(
    rec: SessionRecorder,
    result: Result<RunOutcome, RunError>,
    ended_by: &RunEnd,
    sinks: &mut [&mut dyn Sink],
    view: &mut RunView,
) -> (Result<RunOutcome, RunError>, Option<PathBuf>) {
    let path = rec.path().to_path_buf();
    // The run is over: a sink's stop has nothing left to stop.
    let mut say = |sinks: &mut [&mut dyn Sink], ev: RunEvent| {
        view.update(None, &ev);
        for s in sinks.iter_mut() {
            s.event(view, &ev);
        }
    };
    match rec.finalize_keeping(state_of(&result), ended_by) {
        Ok((p, session)) => {
            say(
                sinks,
                RunEvent::Saved {
                    path: p.clone(),
                    session: Arc::new(session),
                },
            );
            (result, Some(p))
        }
        Err(e) if result.is_ok() => (Err(e.into()), None),
        Err(e) => {
            let n = format!("{e} (the autosaved session is in {})", path.display());
            say(sinks, RunEvent::Note(n));
            (result, None)
        }
    }
}
