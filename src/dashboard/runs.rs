//! The dashboard's effects thread: carries out what the app asks (start, pause, resume,
//! stop, skip, snapshot). A start prepares the run and hands it to the run pipeline on a
//! thread of its own, with the dashboard as its sink; the other effects are commands sent
//! to that run through its [`RunHandle`]. A run on several drives goes through
//! [`run::prepare_all`] (its waits for a host ended by the stop key) and
//! [`run::execute_many`]; each drive's worker polls its own
//! drive's telemetry (the dashboard's telemetry thread rests meanwhile).

use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

use super::sink::DashboardSink;
use super::telemetry::TelemetryCmd;
use super::views::{drive_view, drive_view_of, scaled};
use crate::app::{Effect, Msg, RunEnd};
use crate::metrics::MetricsSink;
use crate::preset;
use crate::run::{
    self, FioJobRequest, RunCmd, RunControl, RunError, RunHandle, RunRequest, RunWhat, SessionPlan,
    TargetChoice, TelemetrySource,
};
use crate::session::RecorderOptions;

/// What a dashboard run is started with.
struct Start {
    preset_id: String,
    target: PathBuf,
    /// The size of a new test file at `target` (`--size`): without it, only the built-in
    /// test file is created when missing.
    size: Option<u64>,
    /// An fio job file run instead of the preset (its targets its own).
    fio_job: Option<PathBuf>,
    destroy_data: Option<PathBuf>,
    time_scale: f64,
    /// What is tested, in the user's words (`--note`).
    note: Option<String>,
}

fn request(s: &Start) -> Result<RunRequest, RunError> {
    let (target, what) = match &s.fio_job {
        Some(file) => (
            TargetChoice::default(),
            RunWhat::FioJob(FioJobRequest {
                file: file.clone(),
                destroy_data: s.destroy_data.iter().cloned().collect(),
                logs: None,
            }),
        ),
        // A missing test file is created with the size given (`--size`); the built-in one
        // (1 GiB) without; any other missing path is refused by the guard; block devices
        // are never created.
        None => (
            TargetChoice {
                path: Some(s.target.clone()),
                size: s.size,
                destroy_data: s.destroy_data.clone(),
                create_missing: s.target == crate::test_target::default_target_path(),
                ..TargetChoice::default()
            },
            RunWhat::Preset(Box::new(preset::find(&s.preset_id)?)),
        ),
    };
    Ok(RunRequest {
        target,
        what,
        plan: scaled(s.time_scale),
        verify: None,
    })
}

/// The session of a dashboard run, recording `command` as its command line: a dated file
/// in the sessions folder, with snapshot files.
fn session_plan(command: String, note: Option<String>) -> SessionPlan {
    SessionPlan {
        options: crate::report::with_snapshot_files(RecorderOptions::default()),
        command: Some(command),
        note,
        ..SessionPlan::default()
    }
}

/// Prepares and runs one preset, then says how it ended.
fn run_one(
    s: Start,
    ctl: RunControl,
    msgs: &UnboundedSender<Msg>,
    telemetry: &std_mpsc::Sender<TelemetryCmd>,
    mut exporter: Option<MetricsSink>,
) {
    let prepared = match request(&s).and_then(|r| run::prepare(&r)) {
        Ok(p) => p,
        Err(e) => {
            let _ = msgs.send(ended(Err(e)));
            return;
        }
    };
    let t0 = Instant::now();
    let _ = telemetry.send(TelemetryCmd::Target(prepared.target.path.clone()));
    if let Some(v) = drive_view(&prepared.target.path) {
        let _ = msgs.send(Msg::Drive(v));
    }
    let (sample_tx, sample_rx) = std_mpsc::channel();
    let _ = telemetry.send(TelemetryCmd::Tap(Some((sample_tx, t0))));
    let command = match &s.fio_job {
        Some(f) => format!("drivescope (dashboard): fio job file {}", f.display()),
        None => format!("drivescope (dashboard): preset {}", s.preset_id),
    };
    let session = session_plan(command, s.note.clone());
    let mut sink = DashboardSink::new(msgs.clone(), t0);
    let mut sinks: Vec<&mut dyn run::Sink> = vec![&mut sink];
    if let Some(e) = &mut exporter {
        sinks.push(e);
    }
    let finished = run::execute(
        &prepared,
        session,
        TelemetrySource::Tap(sample_rx),
        &ctl,
        &mut sinks,
    );
    let _ = telemetry.send(TelemetryCmd::Tap(None));
    let _ = msgs.send(ended(finished));
}

/// How a run that was executed ended, for the app.
fn ended(finished: Result<run::Finished, RunError>) -> Msg {
    match finished {
        Err(e) => Msg::RunEnded {
            outcome: RunEnd::NotStarted,
            error: Some(e.to_string()),
            saved_to: None,
        },
        Ok(f) => {
            let (outcome, error) = match &f.result {
                Ok(o) => (RunEnd::from(o), o.failure()),
                Err(e) => (RunEnd::Failed, Some(e.to_string())),
            };
            Msg::RunEnded {
                outcome,
                error,
                saved_to: f.saved,
            }
        }
    }
}

/// What a run on several drives is started with.
struct StartMany {
    preset_id: String,
    /// Every drive's target, with its write confirmation when the user gave one.
    targets: Vec<TargetChoice>,
    time_scale: f64,
    /// What is tested, in the user's words (`--note`).
    note: Option<String>,
}

/// Prepares every drive (each guard-checked before any is touched) and runs the preset on
/// all of them at once, then says how it ended.
fn run_many(
    s: StartMany,
    ctl: RunControl,
    msgs: &UnboundedSender<Msg>,
    telemetry: &std_mpsc::Sender<TelemetryCmd>,
    mut exporter: Option<MetricsSink>,
) {
    let reqs = preset::find(&s.preset_id).map(|p| {
        s.targets
            .iter()
            .map(|t| RunRequest {
                verify: None,
                // A missing target is created only with its size (the targets file's, or
                // `--size`); the built-in test file of a host, when no path is given.
                target: t.clone(),
                what: RunWhat::Preset(Box::new(p.clone())),
                plan: scaled(s.time_scale),
            })
            .collect::<Vec<_>>()
    });
    // The stop key ends a wait for a host (ssh, its handshake) at once.
    let stop = ctl.flags().stop.clone();
    let prepared = match reqs
        .map_err(RunError::from)
        .and_then(|r| run::prepare_all(&r, false, Some(&stop)))
        .map(|(p, _)| p)
    {
        Ok(p) => p,
        Err(e) => {
            let _ = msgs.send(ended(Err(e)));
            return;
        }
    };
    let _ = telemetry.send(TelemetryCmd::Off);
    for (d, p) in prepared.iter().enumerate() {
        // The drive is the one its host resolved (another host's, for a target there).
        let view = p.told.drive.as_ref().and_then(drive_view_of);
        if let Some(v) = view {
            let _ = msgs.send(Msg::OnDrive(d, Box::new(Msg::Drive(v))));
        }
    }
    let command = format!(
        "drivescope (dashboard): preset {} on {}",
        s.preset_id,
        crate::app::drives::count(prepared.len()).trim_end()
    );
    let session = session_plan(command, s.note.clone());
    let mut sink = DashboardSink::new(msgs.clone(), Instant::now());
    let mut sinks: Vec<&mut dyn run::Sink> = vec![&mut sink];
    if let Some(e) = &mut exporter {
        sinks.push(e);
    }
    let finished = run::execute_many(&prepared, session, TelemetrySource::Poll, &ctl, &mut sinks);
    // Back to polling the first drive between runs: not a remote one (its path is the other
    // host's; this host's device of that name is another drive), as when the table opened.
    if let Some(first) = prepared.first() {
        let path = first
            .host
            .path_here(&first.target)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let _ = telemetry.send(TelemetryCmd::Target(path));
    }
    let _ = msgs.send(ended(finished));
}

/// A run the user started: on one target, or on several drives.
enum Starting {
    One(Start),
    Many(StartMany),
}

/// The run going on (or the last one), and how to talk to it.
struct Current {
    handle: RunHandle,
    thread: JoinHandle<()>,
}

impl Current {
    fn active(&self) -> bool {
        !self.thread.is_finished()
    }

    /// Stops it and waits until its session is saved.
    fn stop_and_join(self) {
        self.handle.send(RunCmd::Stop);
        let _ = self.thread.join();
    }
}

/// What every run the dashboard starts is given from its command line.
pub(super) struct EveryRun {
    /// Multiplies every duration of the presets (`--time-scale`).
    pub time_scale: f64,
    /// What is tested, in the user's words (`--note`).
    pub note: Option<String>,
}

/// Carries out the dashboard's effects until it quits (or the UI goes away); a run still
/// going then is stopped, and its session saved, before this returns.
pub(super) fn spawn_effects(
    mut fx: UnboundedReceiver<Effect>,
    msgs: UnboundedSender<Msg>,
    telemetry: std_mpsc::Sender<TelemetryCmd>,
    every_run: EveryRun,
    drives: Vec<TargetChoice>,
    new_file: Option<(PathBuf, u64)>,
    exporter: Option<MetricsSink>,
) -> JoinHandle<()> {
    let EveryRun { time_scale, note } = every_run;
    std::thread::spawn(move || {
        let mut current: Option<Current> = None;
        let send = |c: &Option<Current>, cmd: RunCmd| {
            if let Some(c) = c {
                c.handle.send(cmd);
            }
        };
        while let Some(e) = fx.blocking_recv() {
            match e {
                Effect::StartRun { .. }
                | Effect::StartFioJob { .. }
                | Effect::StartDrives { .. } => {
                    if let Some(c) = current.take() {
                        let _ = c.thread.join();
                    }
                    let (handle, ctl) = RunControl::new();
                    let start = match e {
                        Effect::StartFioJob {
                            preset_id,
                            file,
                            destroy_data,
                        } => Starting::One(Start {
                            preset_id,
                            size: None,
                            target: file.clone(),
                            fio_job: Some(file),
                            destroy_data,
                            time_scale,
                            note: note.clone(),
                        }),
                        Effect::StartRun {
                            preset_id,
                            target,
                            destroy_data,
                        } => Starting::One(Start {
                            preset_id,
                            size: new_file
                                .as_ref()
                                .filter(|(p, _)| *p == target)
                                .map(|(_, s)| *s),
                            target,
                            fio_job: None,
                            destroy_data,
                            time_scale,
                            note: note.clone(),
                        }),
                        Effect::StartDrives {
                            preset_id,
                            destroy_data,
                        } => Starting::Many(StartMany {
                            preset_id,
                            targets: drives
                                .iter()
                                .zip(destroy_data.into_iter().chain(std::iter::repeat(None)))
                                .map(|(t, typed)| TargetChoice {
                                    destroy_data: typed.or_else(|| t.destroy_data.clone()),
                                    ..t.clone()
                                })
                                .collect(),
                            time_scale,
                            note: note.clone(),
                        }),
                        _ => continue,
                    };
                    let (msgs, telemetry) = (msgs.clone(), telemetry.clone());
                    let exporter = exporter.clone();
                    let thread = std::thread::spawn(move || match start {
                        Starting::One(s) => run_one(s, ctl, &msgs, &telemetry, exporter),
                        Starting::Many(s) => run_many(s, ctl, &msgs, &telemetry, exporter),
                    });
                    current = Some(Current { handle, thread });
                }
                Effect::StopDrive(d) => send(&current, RunCmd::StopDrive(d)),
                Effect::Pause => send(&current, RunCmd::Pause),
                Effect::Resume => send(&current, RunCmd::Resume),
                Effect::Stop => send(&current, RunCmd::Stop),
                Effect::SkipStep => send(&current, RunCmd::Skip),
                Effect::Note(text) => send(&current, RunCmd::Note(text)),
                Effect::Snapshot => match &current {
                    Some(c) if c.active() => c.handle.send(RunCmd::Snapshot),
                    _ => {
                        let _ = msgs.send(Msg::Notice(
                            "no run is going: a snapshot exports the running session; \
                             saved sessions are in the sessions folder (drivescope report)"
                                .into(),
                        ));
                    }
                },
                Effect::WatchTarget(path) => {
                    if !current.as_ref().is_some_and(Current::active) {
                        if let Some(v) = drive_view(&path) {
                            let _ = msgs.send(Msg::Drive(v));
                        }
                        let _ = telemetry.send(TelemetryCmd::Target(path));
                    }
                }
                Effect::SetTheme(name) => {
                    let _ = msgs.send(Msg::Notice(keep_theme(&name)));
                }
                Effect::Seek(_) => {}
                Effect::Quit => break,
            }
        }
        if let Some(c) = current {
            c.stop_and_join();
        }
    })
}

/// Keeps the theme chosen for the next start, and says where (or why not).
fn keep_theme(name: &str) -> String {
    use crate::tui::chosen_theme::{save, Saved};
    let Some(dir) = crate::app::keymap::config_dir() else {
        return format!("theme {name}; not kept for the next start: no config folder (HOME)");
    };
    match save(&dir, name) {
        Ok(Saved::Written(p)) => {
            format!("theme {name}, kept for the next start in {}", p.display())
        }
        Ok(Saved::NotOurs(p)) => format!(
            "theme {name}; not kept: {} was not written by drivescope and is left as it is",
            p.display()
        ),
        Err(e) => format!("theme {name}; not kept for the next start: {e}"),
    }
}
