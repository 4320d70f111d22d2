//! The one pipeline every run goes through, headless or in the dashboard, on one drive or
//! several: the session is created before any I/O; each drive runs on its own thread (a
//! [`Worker`]: the fill before reads, the plan through the runner, its telemetry); every
//! [`RunEvent`] is recorded in the one session (under its drive when there are several)
//! and handed to the sinks (the printer, the dashboard); the final save happens on every
//! way out. One drive failing ends that drive only.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

use super::control::{RunCmd, RunControl, RunHandle};
use super::error::RunError;
use super::event::{Happening, RunEvent, Timed};
use super::record::{record, run_target_info, session_start};
use super::request::Prepared;
use super::tally::Tally;
use super::telemetry::{no_temperature, Feed, TelemetrySource, FIRST_READING_WAIT};
use super::worker::{Said, Worker};
use crate::outcome::RunOutcome;
use crate::session::paths::{self, SessionLock};
use crate::session::{
    DriveEntry, EventKind, RecorderOptions, RunEnd, SessionRecorder, SessionState,
};
use crate::thermal::{Load, SoakLog};
use crate::verify::state::Retirement;
use crate::workload::EngineKind;

/// Anything that shows a run as it goes.
pub trait Sink {
    fn event(&mut self, ev: &RunEvent<'_>);
    /// An event of drive `drive` (its index) of a run of several; by default shown as
    /// any other. A run of one drive calls [`Sink::event`] only.
    fn drive_event(&mut self, drive: usize, ev: &RunEvent<'_>) {
        let _ = drive;
        self.event(ev);
    }
}

/// Where and how the session is saved.
#[derive(Debug, Clone, Default)]
pub struct SessionPlan {
    /// `None`: a dated file in the sessions folder, named for the preset or pattern.
    pub path: Option<PathBuf>,
    pub options: RecorderOptions,
    /// The command line, as the session records it.
    pub command: Option<String>,
    /// What was tested, in the user's words (`--note`).
    pub note: Option<String>,
    /// What the run says of itself before it starts (hosts left out by --keep-going).
    pub notes: Vec<String>,
    /// The lock on `path`, when the caller took it before preparing the run
    /// ([`claim_session`]); `None`: the pipeline takes it when it creates the session.
    pub lock: Option<Arc<SessionLock>>,
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
struct Hub<'a, 's> {
    runs: &'a [Prepared],
    rec: SessionRecorder,
    sinks: &'a mut [&'s mut dyn Sink],
    /// Per drive whose plan ends steps on the temperature: its soak so far.
    soak: Vec<Option<SoakLog>>,
    /// Since when the user's pause holds the run.
    paused_at: Option<std::time::Instant>,
}

impl Hub<'_, '_> {
    /// Hands an event of drive `drive` (`None`: the run's own) to the sinks.
    fn show(&mut self, drive: Option<usize>, ev: &RunEvent<'_>) {
        let many = self.runs.len() > 1;
        for s in self.sinks.iter_mut() {
            match drive {
                Some(d) if many => s.drive_event(d, ev),
                _ => s.event(ev),
            }
        }
    }

    /// Records an event of drive `drive` and shows it.
    fn emit(&mut self, drive: usize, ev: RunEvent<'_>) {
        self.rec.set_current_drive(Some(drive as u32));
        record(&mut self.rec, &self.runs[drive], &ev);
        self.log_soak(drive, &ev);
        self.show(Some(drive), &ev);
    }

    /// Drive `drive`'s soak takes what the session just recorded of `ev` (its times and
    /// figures as the session holds them), when the drive has a soak.
    fn log_soak(&mut self, drive: usize, ev: &RunEvent<'_>) {
        let Some(log) = self.soak.get_mut(drive).and_then(Option::as_mut) else {
            return;
        };
        let s = self.rec.session();
        match ev {
            RunEvent::Interval { index, .. } => {
                let idle = self.runs[drive]
                    .plan
                    .steps
                    .get(*index)
                    .is_some_and(|st| st.engine == EngineKind::Idle);
                if let Some(i) = s.intervals.last() {
                    log.load(Load {
                        t: i.t,
                        dt: i.dt,
                        iops: i.iops(),
                        mbps: i.mbps(),
                        loaded: !i.ramp && i.suspended_s == 0.0 && !idle,
                    });
                }
            }
            RunEvent::Happened(Timed {
                what: Happening::Thermal(e),
                ..
            }) => {
                if let Some(last) = s.events.last() {
                    log.event(last.t, e.clone());
                }
            }
            RunEvent::Telemetry(_) => {
                if let Some((t, c)) = s
                    .telemetry
                    .last()
                    .and_then(|v| Some((v.t()?, v.temperature_c()?)))
                {
                    log.temperature(t, c);
                }
            }
            _ => {}
        }
    }

    /// What the recorder wants shown (an autosave that failed, a snapshot written).
    fn tick(&mut self) {
        self.rec.set_current_drive(None);
        for n in self.rec.tick() {
            self.show(None, &RunEvent::SessionNotice(&n));
        }
    }

    /// The user paused (`true`) or resumed the run: an event of the session, once per
    /// change (a resume says how long the pause held).
    fn paused(&mut self, pause: bool) {
        self.rec.set_current_drive(None);
        match (pause, self.paused_at) {
            (true, None) => {
                self.paused_at = Some(std::time::Instant::now());
                self.rec.push_event(EventKind::Paused, "paused");
            }
            (false, Some(at)) => {
                self.paused_at = None;
                let s = crate::session::round(at.elapsed().as_secs_f64(), 3);
                self.rec.push_event_data(
                    EventKind::Resumed,
                    format!("resumed after {s:.1} s paused"),
                    serde_json::json!({ "paused_s": s }),
                );
            }
            _ => {}
        }
    }

    fn snapshot(&mut self) {
        self.rec.set_current_drive(None);
        match self.rec.snapshot_by_hand() {
            Ok(dir) => self.show(None, &RunEvent::Snapshot(&dir)),
            Err(e) => {
                let n = format!(
                    "snapshot not taken: no new folder beside {}: {e}",
                    self.rec.snapshot_dir().display()
                );
                self.show(None, &RunEvent::SessionNotice(&n));
            }
        }
    }

    /// What drive `d`'s worker said (all but its end).
    fn said(&mut self, d: usize, said: Said, session: &Path) {
        let runs = self.runs;
        let run = &runs[d];
        match said {
            Said::Started => self.emit(d, RunEvent::Started { run, session }),
            Said::StepStarted { index, target_iops } => {
                if let Some(step) = run.plan.steps.get(index) {
                    self.emit(
                        d,
                        RunEvent::StepStarted {
                            index,
                            step,
                            target_iops,
                        },
                    );
                }
            }
            Said::Interval { index, report } => {
                self.emit(
                    d,
                    RunEvent::Interval {
                        index,
                        report: &report,
                    },
                );
                self.tick();
            }
            Said::StepFinished(f) => self.emit(d, RunEvent::StepFinished(&f)),
            Said::Happened(t) => self.emit(d, RunEvent::Happened(&t)),
            Said::Note(n) => self.emit(d, RunEvent::Note(&n)),
            Said::Show(n) => self.show(Some(d), &RunEvent::Note(&n)),
            Said::Record {
                kind,
                message,
                data,
            } => {
                self.rec.set_current_drive(Some(d as u32));
                self.rec.push_event_data(kind, message, data);
            }
            Said::Telemetry(s) => self.emit(d, RunEvent::Telemetry(&s)),
            Said::Wear(w) => self.emit(d, RunEvent::Wear(&w)),
            Said::Verify(t) => self.emit(d, RunEvent::Verify(&t)),
            Said::Snapshot => self.snapshot(),
            Said::Done(_) => {}
        }
    }
}

/// Sets the run's stop flag when dropped during a panic.
struct StopOnUnwind<'a>(&'a RunControl);

impl Drop for StopOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0
                .flags()
                .stop
                .store(true, std::sync::atomic::Ordering::Relaxed);
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
        if let Some(check) = options.snapshot_check {
            check(dir, &inputs).map_err(RunError::Snapshot)?;
        }
    }
    Ok(())
}

/// Claims `path` for this run before anything is touched: its files checked
/// ([`check_outputs`]: nothing there, drivescope's own, and an earlier session only with
/// `options.replace`), the path locked for the run (another process running on it is
/// [`SessionError::InUse`](crate::session::SessionError::InUse)), and checked again under
/// the lock. Hand the lock to the pipeline in [`SessionPlan::lock`].
pub fn claim_session(path: &Path, options: &RecorderOptions) -> Result<Arc<SessionLock>, RunError> {
    check_outputs(path, options)?;
    let lock = paths::lock_session(path)?;
    check_outputs(path, options)?;
    Ok(Arc::new(lock))
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
    execute_many(std::slice::from_ref(run), session, telemetry, ctl, sinks)
}

/// Each drive's telemetry: one poller per physical drive (a second target on the same
/// drive says so and records none); `telemetry` goes to the first drive.
fn feeds(runs: &[Prepared], telemetry: TelemetrySource, t0: Instant) -> Vec<Feed> {
    let mut tap = Some(telemetry);
    let mut seen: Vec<(String, String)> = Vec::new();
    runs.iter()
        .map(|run| {
            // A host that streams its own drive's samples: they, and what it says.
            if let Some((rx, mut notes)) = run.host.telemetry(t0) {
                notes.extend(run.told.notes.iter().cloned());
                return Feed::Streamed(run.told.drive.clone(), rx, notes);
            }
            let src = tap.take().unwrap_or(TelemetrySource::Poll);
            let disk = crate::drive::resolve(&run.target.path)
                .ok()
                .and_then(|d| d.primary().map(|p| p.name.clone()));
            if let Some(disk) = disk {
                if let Some((_, first)) = seen.iter().find(|(d, _)| *d == disk) {
                    return Feed::shared(&run.target.path, &disk, first);
                }
                seen.push((disk, run.label.clone()));
            }
            Feed::start(src, &run.target.path, t0)
        })
        .collect()
}

/// [`execute`] on several drives at once, each on its own thread with its own jobs and
/// rings, recorded in one session; one drive failing ends that drive only.
pub fn execute_many(
    runs: &[Prepared],
    session: SessionPlan,
    telemetry: TelemetrySource,
    ctl: &RunControl,
    sinks: &mut [&mut dyn Sink],
) -> Result<Finished, RunError> {
    let Some(first) = runs.first() else {
        return Err(RunError::NoTargets);
    };
    let t0 = Instant::now();
    let feeds = feeds(runs, telemetry, t0);
    // A plan that ends steps on the temperature says before it starts that it has none.
    let mut early = Vec::with_capacity(runs.len());
    for (run, feed) in runs.iter().zip(&feeds) {
        let samples = if run.plan.needs_temperature() {
            if feed.is_shared() {
                return Err(RunError::SharedThermal {
                    target: run.target.path.clone(),
                });
            }
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
        early.push(samples);
    }
    let mut start = session_start(first, feeds[0].drive(), session.command.clone());
    start.note = session.note.clone();
    if runs.len() > 1 {
        start.drives = runs
            .iter()
            .zip(&feeds)
            .map(|(r, f)| DriveEntry {
                label: r.label.clone(),
                target: run_target_info(r),
                identity: f
                    .drive()
                    .and_then(|d| serde_yaml::to_value(d).ok())
                    .unwrap_or_default(),
            })
            .collect();
    }
    // What the run writes without verifying: the targets' own verify states are stale
    // from now on (one another process uses now refuses the run, before any I/O).
    let mut retired = Vec::new();
    for run in runs {
        for t in &run.retires {
            if let Some(dir) = super::verify::retire_state(None, t, Retirement::UnverifiedWrite)? {
                retired.push(format!(
                    "the verify state of {} ({}) is retired: {}; `run --verify \
                     --verify-reset` starts a new one",
                    crate::ostext::escaped(t.as_os_str()),
                    crate::ostext::escaped(dir.as_os_str()),
                    Retirement::UnverifiedWrite
                ));
            }
        }
    }
    let path = session_path(&session, first)?;
    let options = session.options.clone();
    // Held until the final save is done (dropped last).
    let _lock = match &session.lock {
        Some(l) => l.clone(),
        None => Arc::new(paths::lock_session(&path)?),
    };
    check_outputs(&path, &options)?;
    let rec = SessionRecorder::create(&path, start, options)?;
    // Past every refusal: the test files the runs created stay.
    for run in runs {
        run.started();
    }
    let soak = runs
        .iter()
        .map(|r| r.plan.needs_temperature().then(SoakLog::default))
        .collect();
    let mut hub = Hub {
        runs,
        rec,
        sinks,
        soak,
        paused_at: None,
    };
    for n in session.notes.iter().chain(&retired) {
        hub.rec.set_current_drive(None);
        hub.rec.push_event(EventKind::Note, n.clone());
        hub.show(None, &RunEvent::Note(n));
    }
    for (d, feed) in feeds.iter().enumerate() {
        for n in feed.notes().to_vec() {
            hub.emit(d, RunEvent::Note(&n));
        }
    }
    let (tx, rx) = mpsc::channel::<(usize, Said)>();
    // Of several drives, each has a stop of its own (the user may end one drive); the
    // run's stop is forwarded to all. One drive shares the run's flags, as it always did.
    let many = runs.len() > 1;
    let (handles, controls): (Vec<RunHandle>, Vec<RunControl>) = runs
        .iter()
        .map(|_| {
            if many {
                ctl.child_own_stop()
            } else {
                ctl.child()
            }
        })
        .unzip();
    let mut stop_forwarded = false;
    let mut results: Vec<Option<Result<(RunOutcome, Tally), RunError>>> =
        runs.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        // Should the hub (a sink) panic, the drives are told to stop (before the scope
        // waits for them) rather than run their whole plan with nobody recording them.
        let _stop_on_unwind = StopOnUnwind(ctl);
        let drives = runs.iter().zip(feeds).zip(early).zip(controls);
        for (d, (((run, feed), samples), child)) in drives.enumerate() {
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("ds-drive{d}"))
                .spawn_scoped(scope, move || {
                    let done = tx.clone();
                    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        Worker::new(d, tx, feed).run(run, &child, samples)
                    }));
                    // A drive whose thread panicked ends alone, as a failed drive does.
                    if let Err(p) = ran {
                        let why = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic".into());
                        let _ = done.send((d, Said::Done(Err(RunError::Thread(why)))));
                    }
                });
            if let Err(e) = spawned {
                results[d] = Some(Err(RunError::Thread(e.to_string())));
            }
        }
        drop(tx);
        let mut live = results.iter().filter(|r| r.is_none()).count();
        while live > 0 {
            for cmd in ctl.take() {
                match cmd {
                    RunCmd::Snapshot => hub.snapshot(),
                    RunCmd::Skip => handles.iter().for_each(|h| h.send(RunCmd::Skip)),
                    RunCmd::StopDrive(d) => {
                        if let Some(h) = handles.get(d).filter(|_| many) {
                            h.send(RunCmd::Stop);
                        }
                    }
                    // The pause flag is shared: pause and resume reached every drive; the
                    // session records when.
                    RunCmd::Pause => hub.paused(true),
                    RunCmd::Resume => hub.paused(false),
                    RunCmd::Stop => {}
                }
            }
            if many && !stop_forwarded && ctl.stop_requested() {
                stop_forwarded = true;
                let by = ctl.stopped_by();
                handles.iter().for_each(|h| h.forward_stop(by));
            }
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok((d, Said::Done(r))) => {
                    hub.drive_ended(d, &r);
                    results[d] = Some(r);
                    live -= 1;
                }
                Ok((d, said)) => hub.said(d, said, &path),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    let results: Vec<Result<(RunOutcome, Tally), RunError>> = results
        .into_iter()
        .map(|r| {
            r.unwrap_or(Err(RunError::Thread(
                "the drive's thread ended early".into(),
            )))
        })
        .collect();
    let (result, tally) = overall(runs, results);
    hub.rec.set_current_drive(None);
    // A run of several has said each drive's error under the drive already.
    if let (Err(e), 1) = (&result, runs.len()) {
        hub.rec.push_event(EventKind::Error, e.to_string());
    }
    let soaks: Vec<_> = hub
        .soak
        .iter()
        .map(|log| log.as_ref().and_then(SoakLog::summary))
        .collect();
    for (d, sum) in soaks.iter().enumerate() {
        if let Some(sum) = sum {
            hub.show(Some(d), &RunEvent::Soak(sum));
        }
    }
    if let Ok(outcome) = &result {
        hub.show(
            None,
            &RunEvent::Ended {
                outcome,
                tally: &tally,
            },
        );
    }
    let ended_by = match &result {
        Ok(o) => RunEnd::Outcome(o.clone()),
        Err(e) => RunEnd::Error(e.to_string()),
    };
    let Hub { rec, sinks, .. } = hub;
    let (result, saved) = finish(rec, result, &ended_by, sinks);
    Ok(Finished {
        result,
        tally,
        saved,
    })
}

impl Hub<'_, '_> {
    /// Drive `d` ended: in a run of several, its own end is kept in its summary and shown
    /// on its own, and a failed drive says so in the session.
    fn drive_ended(&mut self, d: usize, r: &Result<(RunOutcome, Tally), RunError>) {
        if self.runs.len() < 2 {
            return;
        }
        let label = self.runs[d].label.clone();
        let end = match r {
            Ok((o, _)) => RunEnd::Outcome(o.clone()),
            Err(e) => RunEnd::Error(e.to_string()),
        };
        self.rec.set_drive_ended(d, end);
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
        match r {
            Ok((outcome, tally)) => self.show(Some(d), &RunEvent::Ended { outcome, tally }),
            // The sinks learn of a drive that broke off too (the printer stops waiting for
            // it before an "all" line).
            Err(e) => {
                let outcome = RunOutcome::Failed {
                    step: None,
                    ended_by: crate::outcome::EndedBy::Other(format!("error: {e}")),
                };
                self.show(
                    Some(d),
                    &RunEvent::Ended {
                        outcome: &outcome,
                        tally: &Tally::default(),
                    },
                );
            }
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
                if tally.verify_unsaved.is_none() {
                    tally.verify_unsaved = t.verify_unsaved;
                }
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
) -> (Result<RunOutcome, RunError>, Option<PathBuf>) {
    let path = rec.path().to_path_buf();
    let say = |sinks: &mut [&mut dyn Sink], ev: RunEvent<'_>| {
        for s in sinks.iter_mut() {
            s.event(&ev);
        }
    };
    match rec.finalize_keeping(state_of(&result), ended_by) {
        Ok((p, session)) => {
            say(
                sinks,
                RunEvent::Saved {
                    path: &p,
                    session: &session,
                },
            );
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
