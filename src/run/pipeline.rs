//! The one pipeline every run goes through, headless or in the dashboard: the session is
//! created before any I/O, the test file filled before reads, the plan run by the runner,
//! and every [`RunEvent`] recorded in the session and handed to the sinks (the printer,
//! the dashboard); the session's final save happens on every way out.

use std::path::PathBuf;
use std::time::{Instant, SystemTime};

use super::control::RunControl;
use super::error::RunError;
use super::event::{Happening, RunEvent, Timed};
use super::record::{record, session_start};
use super::request::{Prepared, RunKind};
use super::runner::{run_plan, RunObserver};
use super::tally::Tally;
use super::telemetry::{no_temperature, Feed, TelemetrySource, FIRST_READING_WAIT};
use crate::dut::fill::fill_if_unwritten;
use crate::outcome::{RunOutcome, StopBy};
use crate::session::{paths, EventKind, RecorderOptions, SessionRecorder, SessionState};
use crate::telemetry::reading::SmartReading;
use crate::telemetry::{HealthWatch, TelemetrySample};

/// Anything that shows a run as it goes.
pub trait Sink {
    fn event(&mut self, ev: &RunEvent<'_>);
}

/// Where and how the session is saved.
#[derive(Debug, Clone, Default)]
pub struct SessionPlan {
    /// `None`: a dated file in the sessions folder, named for the preset or pattern.
    pub path: Option<PathBuf>,
    pub options: RecorderOptions,
    /// The command line, as the session records it.
    pub command: Option<String>,
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

struct Pipe<'a, 's> {
    run: &'a Prepared,
    rec: SessionRecorder,
    feed: Feed,
    /// The drive's health so far: a change is an event.
    health: HealthWatch,
    /// Readings not yet handed to the runner's thermal rules.
    readings: Vec<(f64, SmartReading)>,
    sinks: &'a mut [&'s mut dyn Sink],
}

impl Pipe<'_, '_> {
    fn emit(&mut self, ev: RunEvent<'_>) {
        record(&mut self.rec, self.run, &ev);
        for s in self.sinks.iter_mut() {
            s.event(&ev);
        }
    }

    /// A telemetry sample, and the drive's health change it brings.
    fn telemetry(&mut self, sample: &TelemetrySample) {
        self.emit(RunEvent::Telemetry(sample));
        let change = sample
            .smart
            .as_ref()
            .and_then(|r| self.health.observe(&r.health));
        if let Some(r) = &sample.smart {
            self.readings.push((sample.t_ns as f64 / 1e9, r.clone()));
        }
        if let Some(c) = change {
            let e = Timed {
                t_s: sample.t_ns as f64 / 1e9,
                what: Happening::Health(c),
            };
            self.emit(RunEvent::Happened(&e));
        }
    }

    /// Telemetry that arrived, and what the recorder wants shown.
    fn drain(&mut self) {
        for sample in self.feed.drain() {
            self.telemetry(&sample);
        }
        for n in self.rec.tick() {
            self.emit(RunEvent::SessionNotice(&n));
        }
    }

    /// Fills a never-written test file before reads, saying so.
    fn fill(&mut self, ctl: &RunControl) -> Result<(), RunError> {
        let mut notes = Vec::new();
        let t = &self.run.target;
        let sinks = &mut *self.sinks;
        let filled = fill_if_unwritten(t, ctl.flags(), &mut |n: &str| {
            for s in sinks.iter_mut() {
                s.event(&RunEvent::Note(n));
            }
            notes.push(n.to_string());
        })?;
        match filled {
            Some(s) => {
                let what = format!("filled {}", t.path.display());
                self.rec.push_event_data(EventKind::Fill, what, &s);
            }
            None => notes
                .into_iter()
                .for_each(|n| self.rec.push_event(EventKind::Note, n)),
        }
        Ok(())
    }

    fn go(&mut self, ctl: &RunControl) -> Result<(RunOutcome, Tally), RunError> {
        let (reads, _) = self.run.io();
        if reads {
            self.fill(ctl)?;
        }
        if ctl.stop_requested() {
            let why = "stopped by a signal before the run started";
            self.rec.push_event(EventKind::Stopped, why);
            return Ok((RunOutcome::Stopped(ctl.stopped_by()), Tally::default()));
        }
        let path = self.rec.path().to_path_buf();
        self.emit(RunEvent::Started {
            run: self.run,
            session: &path,
        });
        let target = self.run.step_target();
        let (outcome, tally) = run_plan(&self.run.plan, &target, ctl, self)?;
        let outcome = match (outcome, &self.run.kind) {
            // A plain run's failure is its one step's.
            (RunOutcome::Failed { ended_by, .. }, RunKind::Single { .. }) => RunOutcome::Failed {
                step: None,
                ended_by,
            },
            (o, _) => o,
        };
        if let RunOutcome::Stopped(by) = outcome {
            let why = match by {
                StopBy::Signal => "stopped by a signal",
                StopBy::User => "stopped by the user",
            };
            self.rec.push_event(EventKind::Stopped, why);
        }
        Ok((outcome, tally))
    }
}

impl RunObserver for Pipe<'_, '_> {
    fn event(&mut self, ev: RunEvent<'_>) {
        let interval = matches!(ev, RunEvent::Interval { .. });
        self.emit(ev);
        if interval {
            self.drain();
        }
    }

    fn readings(&mut self) -> Vec<(f64, SmartReading)> {
        std::mem::take(&mut self.readings)
    }

    fn snapshot(&mut self) {
        let dir = self.rec.snapshot_dir();
        self.rec.snapshot(&dir);
        for s in self.sinks.iter_mut() {
            s.event(&RunEvent::Snapshot(&dir));
        }
    }
}

/// Refuses, before anything is touched, a session path (or a file that goes beside it:
/// the histogram log, the snapshot folder's files) that drivescope may not write.
pub fn check_outputs(path: &std::path::Path, options: &RecorderOptions) -> Result<(), RunError> {
    let p = crate::session::check_session_paths(path, options)?;
    if let Some(dir) = &p.snapshots {
        let mut inputs = vec![(p.session.as_path(), "session")];
        if let Some(h) = &p.histograms {
            inputs.push((h.as_path(), "histogram log"));
        }
        crate::report::check_snapshot_dir(dir, &inputs)?;
    }
    Ok(())
}

/// The session file: the one asked for, or a dated file in the sessions folder, claimed
/// (created exclusively) so two runs started in the same second never share one.
fn session_path(plan: &SessionPlan, run: &Prepared) -> Result<PathBuf, RunError> {
    Ok(match &plan.path {
        Some(p) => p.clone(),
        None => paths::claim_session_file(&paths::sessions_dir(), SystemTime::now(), run.name())?,
    })
}

/// Runs a prepared run to its end, recording it in a session and showing it on `sinks`.
/// An error before the session exists (it cannot be created) is returned as such; after
/// that, [`Finished::result`] holds it and the session has its final save.
pub fn execute(
    run: &Prepared,
    session: SessionPlan,
    telemetry: TelemetrySource,
    ctl: &RunControl,
    sinks: &mut [&mut dyn Sink],
) -> Result<Finished, RunError> {
    let t0 = Instant::now();
    let feed = Feed::start(telemetry, &run.target.path, t0);
    // A plan that ends steps on the temperature says before it starts that it has none.
    let early = if run.plan.needs_temperature() {
        let samples = feed.wait_for_reading(FIRST_READING_WAIT);
        if let Some(why) = no_temperature(&samples, feed.notes()) {
            return Err(RunError::NoTemperature {
                target: run.target.path.clone(),
                why,
            });
        }
        samples
    } else {
        Vec::new()
    };
    let start = session_start(run, feed.drive(), session.command.clone());
    let path = session_path(&session, run)?;
    let mut options = session.options.clone();
    check_outputs(&path, &options)?;
    options
        .exporter
        .get_or_insert(crate::report::snapshot_exporter);
    let rec = SessionRecorder::create(&path, start, options)?;
    let mut pipe = Pipe {
        run,
        rec,
        feed,
        health: HealthWatch::default(),
        readings: Vec::new(),
        sinks,
    };
    for n in pipe.feed.notes().to_vec() {
        pipe.emit(RunEvent::Note(&n));
    }
    for s in &early {
        pipe.telemetry(s);
    }
    let result = pipe.go(ctl);
    pipe.drain();
    let (result, tally) = match result {
        Ok((o, t)) => (Ok(o), t),
        Err(e) => {
            pipe.rec.push_event(EventKind::Error, e.to_string());
            (Err(e), Tally::default())
        }
    };
    if run.plan.needs_temperature() {
        if let Some(sum) = crate::report::soak::summary(pipe.rec.session()) {
            for s in pipe.sinks.iter_mut() {
                s.event(&RunEvent::Soak(&sum));
            }
        }
    }
    if let Ok(outcome) = &result {
        pipe.emit(RunEvent::Ended {
            outcome,
            tally: &tally,
        });
    }
    let ended_by = match &result {
        Ok(o) => o.to_string(),
        Err(e) => format!("error: {e}"),
    };
    let Pipe { rec, sinks, .. } = pipe;
    let (result, saved) = finish(rec, result, &ended_by, sinks);
    Ok(Finished {
        result,
        tally,
        saved,
    })
}

/// The final save, whatever the result. A failed save turns a good run into an error (the
/// autosaved stream is still there, and the message says where).
fn finish(
    rec: SessionRecorder,
    result: Result<RunOutcome, RunError>,
    ended_by: &str,
    sinks: &mut [&mut dyn Sink],
) -> (Result<RunOutcome, RunError>, Option<PathBuf>) {
    let path = rec.path().to_path_buf();
    let say = |sinks: &mut [&mut dyn Sink], ev: RunEvent<'_>| {
        for s in sinks.iter_mut() {
            s.event(&ev);
        }
    };
    match rec.finalize(state_of(&result), ended_by) {
        Ok(p) => {
            say(sinks, RunEvent::Saved(&p));
            (result, Some(p))
        }
        Err(e) if result.is_ok() => (Err(e.into()), None),
        Err(e) => {
            let n = format!("{e} (the autosaved session is in {})", path.display());
            say(sinks, RunEvent::Note(&n));
            (result, None)
        }
    }
}
