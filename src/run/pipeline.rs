//! The one pipeline every run goes through, headless or in the dashboard, on one drive or
//! several: the session is created before any I/O; each drive runs on its own thread (a
//! [`Worker`]: the fill before reads, the plan through the runner, its telemetry); what the
//! workers say goes to the [`Hub`] (the one session and the sinks); the final save happens
//! on every way out. One drive failing ends that drive only.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant, SystemTime};

use super::control::{RunCmd, RunControl, RunHandle};
use super::error::RunError;
use super::hub::{Finished, Hub, Sink};
use super::record::{identity, run_target_info, session_start};
use super::request::Prepared;
use super::tally::Tally;
use super::telemetry::{no_temperature, Feed, TelemetrySource, FIRST_READING_WAIT};
use super::worker::{Worker, WorkerMessage};
use crate::outcome::RunOutcome;
use crate::session::paths::{self, SessionLock};
use crate::session::{DriveEntry, RecorderOptions, SessionRecorder, SessionStart};
use crate::telemetry::TelemetrySample;
use crate::verify::state::Retirement;

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
            // The drive its host resolved when the target was prepared.
            let disk = run.told.drive.as_ref().and_then(|d| d.primary());
            if let Some(disk) = disk.map(|p| p.name.clone()) {
                if let Some((_, first)) = seen.iter().find(|(d, _)| *d == disk) {
                    return Feed::shared(&run.told, &disk, first);
                }
                seen.push((disk, run.label.clone()));
            }
            Feed::start(src, &run.told, t0)
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
    let early = first_readings(runs, &feeds)?;
    let start = start_of(runs, &feeds, &session);
    let retired = retire_unverified(runs)?;
    // The one asked for, or a dated file in the sessions folder, claimed (created
    // exclusively) so two runs started in the same second never share one.
    let path = match &session.path {
        Some(p) => p.clone(),
        None => paths::claim_session_file(&paths::sessions_dir(), SystemTime::now(), first.name())?,
    };
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
    let mut hub = Hub::new(runs, rec, sinks, ctl);
    let notes: Vec<String> = session.notes.iter().chain(&retired).cloned().collect();
    let told: Vec<&[String]> = feeds.iter().map(Feed::notes).collect();
    hub.notes(&notes, &told);
    let results = run_drives(&mut hub, feeds, early, ctl, &path);
    Ok(hub.wrap_up(results))
}

/// What each drive's telemetry read before the run starts: a plan that ends steps on the
/// temperature says before it starts that it has none (or shares it with another target).
fn first_readings(
    runs: &[Prepared],
    feeds: &[Feed],
) -> Result<Vec<Vec<TelemetrySample>>, RunError> {
    let mut early = Vec::with_capacity(runs.len());
    for (run, feed) in runs.iter().zip(feeds) {
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
    Ok(early)
}

/// The session's start: the first drive's run, with every drive listed in a run of
/// several.
fn start_of(runs: &[Prepared], feeds: &[Feed], session: &SessionPlan) -> SessionStart {
    let first = &runs[0];
    let mut start = session_start(first, feeds[0].drive(), session.command.clone());
    start.note = session.note.clone();
    if runs.len() > 1 {
        start.drives = runs
            .iter()
            .zip(feeds)
            .map(|(r, f)| DriveEntry {
                label: r.label.clone(),
                target: run_target_info(r),
                identity: f.drive().map(identity),
            })
            .collect();
    }
    start
}

/// What the run writes without verifying: the targets' own verify states are stale from
/// now on (one another process uses now refuses the run, before any I/O). What it says of
/// each it retired.
fn retire_unverified(runs: &[Prepared]) -> Result<Vec<String>, RunError> {
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
    Ok(retired)
}

/// A drive's end as its worker sent it, or the error its thread broke off with.
type DriveResult = Result<(RunOutcome, Tally), RunError>;

/// Runs each drive of the hub's runs on its own thread (its telemetry `feeds`, its
/// readings so far `early`) and feeds what they say to the hub until every drive ended;
/// each drive's result.
fn run_drives(
    hub: &mut Hub<'_, '_>,
    feeds: Vec<Feed>,
    early: Vec<Vec<TelemetrySample>>,
    ctl: &RunControl,
    session: &Path,
) -> Vec<DriveResult> {
    let runs = hub.runs;
    let (tx, rx) = mpsc::channel::<(usize, WorkerMessage)>();
    let mut relay = Relay::new(ctl, runs.len());
    let controls = std::mem::take(&mut relay.controls);
    let mut results: Vec<Option<DriveResult>> = runs.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        // Should the hub (a sink) panic, the drives are told to stop (before the scope
        // waits for them) rather than run their whole plan with nobody recording them.
        let _stop_on_unwind = StopOnUnwind(ctl);
        let drives = runs.iter().zip(feeds).zip(early).zip(controls);
        for (d, (((run, feed), samples), child)) in drives.enumerate() {
            let at = (run, session.to_path_buf());
            let spawned = spawn_drive(scope, d, tx.clone(), at, feed, samples, child);
            if let Err(e) = spawned {
                results[d] = Some(Err(RunError::Thread(e.to_string())));
            }
        }
        drop(tx);
        listen(hub, &rx, &mut relay, &mut results);
    });
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or(Err(RunError::Thread(
                "the drive's thread ended early".into(),
            )))
        })
        .collect()
}

/// Starts drive `d`'s worker on a thread of its own; a panic there ends that drive alone,
/// as a failed drive does.
fn spawn_drive<'scope, 'env>(
    scope: &'scope Scope<'scope, 'env>,
    d: usize,
    tx: Sender<(usize, WorkerMessage)>,
    (run, session): (&'env Prepared, PathBuf),
    feed: Feed,
    samples: Vec<TelemetrySample>,
    child: RunControl,
) -> std::io::Result<ScopedJoinHandle<'scope, ()>> {
    std::thread::Builder::new()
        .name(format!("ds-drive{d}"))
        .spawn_scoped(scope, move || {
            let done = tx.clone();
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Worker::new(d, tx, feed).run(run, &child, &session, samples)
            }));
            if let Err(p) = ran {
                let why = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                let _ = done.send((d, WorkerMessage::Done(Err(RunError::Thread(why)))));
            }
        })
}

/// Hands what the drives say to the hub, and the user's commands to the hub and the
/// drives, until every drive still running (those without a result) ended.
fn listen(
    hub: &mut Hub<'_, '_>,
    rx: &Receiver<(usize, WorkerMessage)>,
    relay: &mut Relay<'_>,
    results: &mut [Option<DriveResult>],
) {
    let mut live = results.iter().filter(|r| r.is_none()).count();
    while live > 0 {
        relay.commands(hub);
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok((d, WorkerMessage::Done(r))) => {
                hub.drive_ended(d, &r);
                results[d] = Some(r);
                live -= 1;
            }
            Ok((d, said)) => hub.said(d, said),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // What was sent just before the end (a note, a power cut and the stop it made) is
    // still recorded.
    relay.commands(hub);
}

/// The run's control and each drive's: the user's commands go to the hub (pause, resume,
/// snapshot) or on to the drives (skip, a drive's stop, the run's stop).
struct Relay<'c> {
    ctl: &'c RunControl,
    handles: Vec<RunHandle>,
    /// Each drive's control, until its worker takes it.
    controls: Vec<RunControl>,
    many: bool,
    stop_forwarded: bool,
}

impl<'c> Relay<'c> {
    /// Of several drives, each has a stop of its own (the user may end one drive); the
    /// run's stop is forwarded to all. One drive shares the run's flags, as it always did.
    fn new(ctl: &'c RunControl, drives: usize) -> Self {
        let many = drives > 1;
        let (handles, controls) = (0..drives)
            .map(|_| {
                if many {
                    ctl.child_own_stop()
                } else {
                    ctl.child()
                }
            })
            .unzip();
        Relay {
            ctl,
            handles,
            controls,
            many,
            stop_forwarded: false,
        }
    }

    /// Takes the commands the user sent since the last call.
    fn commands(&mut self, hub: &mut Hub<'_, '_>) {
        for cmd in self.ctl.take() {
            match cmd {
                RunCmd::Snapshot => hub.snapshot(),
                RunCmd::Skip => self.handles.iter().for_each(|h| h.send(RunCmd::Skip)),
                RunCmd::StopDrive(d) => {
                    if let Some(h) = self.handles.get(d).filter(|_| self.many) {
                        h.send(RunCmd::Stop);
                    }
                }
                // The pause flag is shared: pause and resume reached every drive; the
                // session records when.
                RunCmd::Pause => hub.paused(true),
                RunCmd::Resume => hub.paused(false),
                RunCmd::Note(text) => hub.user_note(&text),
                RunCmd::PowerCut(data) => hub.power_cut(data),
                RunCmd::Stop => {}
            }
        }
        if self.many && !self.stop_forwarded && self.ctl.stop_requested() {
            self.stop_forwarded = true;
            let by = self.ctl.stopped_by();
            self.handles.iter().for_each(|h| h.forward_stop(by));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanOptions;
    use crate::run::{RunRequest, RunWhat, SingleStep, TargetChoice};
    use crate::workload::{BlockSizes, EngineKind, Region, RwMode, Workload};

    fn read_request(path: &Path) -> RunRequest {
        RunRequest {
            target: TargetChoice {
                path: Some(path.to_path_buf()),
                ..Default::default()
            },
            what: RunWhat::Single(SingleStep {
                workload: Workload {
                    direct: false,
                    ..Workload::new(
                        RwMode::Read,
                        BlockSizes::single(4096),
                        1,
                        Region { offset: 0, len: 0 },
                        1,
                    )
                },
                ramp: Duration::ZERO,
                duration: Duration::from_secs(1),
                io_size: None,
            }),
            plan: PlanOptions {
                engine: EngineKind::Sync,
                ..Default::default()
            },
            verify: None,
        }
    }

    #[test]
    fn a_plain_run_resolves_its_drive_once_when_prepared() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        std::fs::write(&path, vec![1u8; 1 << 16]).unwrap();
        let before = crate::drive::RESOLVED.with(|n| n.get());
        let run = super::super::prepare(&read_request(&path)).unwrap();
        let prepared = crate::drive::RESOLVED.with(|n| n.get()) - before;
        assert_eq!(prepared, 1, "resolved when prepared");
        let feeds = feeds(
            std::slice::from_ref(&run),
            TelemetrySource::Poll,
            Instant::now(),
        );
        let after = crate::drive::RESOLVED.with(|n| n.get()) - before;
        assert_eq!(after, 1, "the run's telemetry uses the drive prepared");
        // The drive its feed watches is the one prepared.
        assert_eq!(
            feeds[0].drive().map(|d| d.disks.len()),
            run.told.drive.as_ref().map(|d| d.disks.len())
        );
        assert_eq!(feeds[0].notes(), run.told.notes.as_slice());
    }
}
