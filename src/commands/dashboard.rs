//! `drivescope` with no subcommand: the dashboard. This file wires the UI
//! ([`run_dashboard`]) to the rest: the preset library and target list it offers, the
//! effects it asks for (start, pause, resume, stop, skip, snapshot) carried out by the plan
//! runner on its own thread, the session every run records, and a telemetry thread that
//! keeps the drive's temperature, power and kernel counters flowing, run or no run.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clap::Args;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::live::{self, Live};
use crate::app::{
    CurvePoint, DriveView, Effect, EventKind, EventView, HostView, KernelView, Msg, PresetEntry,
    SteadyView, StepInfo, TargetEntry, TargetKind, TelemetryView,
};
use crate::drive::{self, SysRoot};
use crate::dut::fill::fill_if_unwritten;
use crate::dut::{self, guard, PreparedTarget, TargetRequest};
use crate::engine::{EngineKind, StepTarget};
use crate::plan::{self, Plan, PlanOptions, TargetFacts};
use crate::preset;
use crate::runner::{run_plan, PlanOutcome, RunControl, RunEvent};
use crate::session::{RecorderOptions, SessionRecorder, SessionState, DEFAULT_AUTOSAVE};
use crate::telemetry::TelemetrySample;
use crate::tui::{run_dashboard, DashboardError, DashboardOptions, Exit};

/// Options of the dashboard (`drivescope [--target X] [--preset Y]`).
#[derive(Debug, Clone, Default, Args)]
pub struct DashboardArgs {
    /// Open on this file or block device instead of the built-in test file.
    #[arg(long, short = 't')]
    pub target: Option<PathBuf>,
    /// Highlight this preset (id) in the picker.
    #[arg(long)]
    pub preset: Option<String>,
    /// Colour theme: dark, light, high-contrast, colorblind, or a user theme.
    #[arg(long)]
    pub theme: Option<String>,
    /// Let the mouse pick tabs and list entries.
    #[arg(long)]
    pub mouse: bool,
    /// Multiply every duration of the presets by F (demos, tests).
    #[arg(long, value_parser = crate::cli::parse_time_scale, default_value = "1")]
    pub time_scale: f64,
}

/// Throughput assumed for estimates of data-amount phases.
const ASSUMED_BYTES_PER_S: f64 = 1e9;

fn preset_entries(capacity: u64, lbs: u32, time_scale: f64) -> Vec<PresetEntry> {
    let facts = TargetFacts {
        capacity_bytes: capacity.max(1),
        logical_block_size: lbs,
    };
    preset::builtins()
        .into_iter()
        .map(|p| {
            let opts = PlanOptions {
                time_scale,
                ..PlanOptions::default()
            };
            let (phases, estimate) = match plan::expand(&p, &facts, &opts) {
                Ok(plan) => (
                    plan.phases
                        .iter()
                        .map(|ph| format!("{} ({} steps)", ph.name, ph.steps.len()))
                        .collect(),
                    super::presets::estimate_text(&plan, ASSUMED_BYTES_PER_S),
                ),
                Err(e) => (Vec::new(), format!("cannot run here: {e}")),
            };
            PresetEntry {
                id: p.id,
                name: p.name,
                description: p.description.trim().to_string(),
                phases,
                estimate,
            }
        })
        .collect()
}

fn file_entry(path: &Path, default: bool) -> TargetEntry {
    let size = std::fs::metadata(path).map(|m| m.len()).ok();
    let label = match (default, size.is_some()) {
        (true, true) => "drivescope's test file".to_string(),
        (true, false) => "drivescope's test file (created on first run)".to_string(),
        (false, _) => "test file".to_string(),
    };
    TargetEntry {
        path: path.to_path_buf(),
        label,
        kind: TargetKind::File,
        size: size.or(default.then_some(dut::DEFAULT_FILE_SIZE)),
        safety: None,
    }
}

/// Block devices with what the write guard finds on each (None: blank, writable once named):
/// the dashboard's target picker lists these.
pub fn device_entries() -> Vec<TargetEntry> {
    drive::list_disks(&SysRoot::real())
        .into_iter()
        .filter(|d| d.capacity_bytes > 0)
        .map(|d| {
            let path = d.dev_path();
            let rdev = std::fs::metadata(&path)
                .map(|m| std::os::unix::fs::MetadataExt::rdev(&m))
                .ok();
            let safety = match rdev {
                Some(r) => guard::check_block_device_write(&path, r, Some(&path))
                    .err()
                    .map(|e| e.reason),
                None => Some("cannot inspect the device (run as root)".into()),
            };
            TargetEntry {
                label: format!(
                    "{} {}",
                    d.model.clone().unwrap_or_else(|| "(no model)".into()),
                    d.transport.as_str()
                ),
                path,
                kind: TargetKind::BlockDevice,
                size: Some(d.capacity_bytes),
                safety,
            }
        })
        .collect()
}

/// The header's drive identity from the drive under `path`.
pub fn drive_view(path: &Path) -> Option<DriveView> {
    let info = drive::resolve(path).ok()?;
    drive_view_of(&info)
}

/// The header's drive identity from a resolved drive.
pub fn drive_view_of(info: &drive::DriveInfo) -> Option<DriveView> {
    let d = info.primary()?;
    Some(DriveView {
        model: d.model.clone(),
        serial: d.serial.clone(),
        firmware: d.firmware.clone(),
        capacity_bytes: Some(d.capacity_bytes),
        transport: Some(d.transport.as_str().to_string()),
    })
}

/// Converts a poller sample for the panels; `t_s` on the run's time axis.
pub fn telemetry_view(s: &TelemetrySample, t_s: f64) -> TelemetryView {
    let mut v = TelemetryView {
        t_s,
        unavailable: s.notes.clone(),
        ..TelemetryView::default()
    };
    if let Some(r) = &s.smart {
        v.temperature_c = r.temperature_c.map(f64::from);
        v.sensors_c = r.sensors_c.iter().map(|x| f64::from(x.c)).collect();
        v.warning_c = r.warning_temp_c.map(f64::from);
        v.critical_c = r.critical_temp_c.map(f64::from);
        v.power_state = r.power_state.map(u32::from);
        v.power_state_max_w = r.power_state_max_w;
        v.power_w = r.power_w;
        if let Some(t) = &r.thermal_throttle {
            v.throttle_transitions =
                Some(u64::from(t.tmt1_transitions) + u64::from(t.tmt2_transitions));
            v.throttle_seconds = Some(u64::from(t.tmt1_seconds) + u64::from(t.tmt2_seconds));
        }
        v.unavailable.extend(r.notes.iter().cloned());
    }
    if let Some(b) = &s.block {
        v.kernel = Some(KernelView {
            read_iops: b.read_iops,
            write_iops: b.write_iops,
            read_bw: b.read_bytes_per_s,
            write_bw: b.write_bytes_per_s,
            util_pct: b.util_percent,
            in_flight: b.in_flight,
        });
    }
    if let Some(h) = &s.host {
        if let (Some(own), Some(rss)) = (h.self_cpu_percent, h.self_rss_bytes) {
            v.host = Some(HostView {
                cpu_pct: f64::from(h.cpu_percent),
                own_cpu_pct: f64::from(own),
                mem_used_bytes: h.mem_used_bytes,
                own_rss_bytes: rss,
            });
        }
    }
    v
}

/// Commands to the telemetry thread.
enum TelemetryCmd {
    /// Watch the drive under this target.
    Target(PathBuf),
    /// Also hand samples to a run (its session), with the run's start for the time axis.
    Tap(Option<(std_mpsc::Sender<TelemetrySample>, Instant)>),
    Quit,
}

/// Keeps a poller on the current target's drive and forwards its samples to the panels
/// (and to the running session), run or no run.
fn spawn_telemetry(
    first: PathBuf,
    msgs: UnboundedSender<Msg>,
    origin: Instant,
) -> (std_mpsc::Sender<TelemetryCmd>, JoinHandle<()>) {
    let (tx, rx) = std_mpsc::channel();
    let h = std::thread::spawn(move || {
        let mut live = Live::start(&first, None, origin);
        let mut tap: Option<(std_mpsc::Sender<TelemetrySample>, Instant)> = None;
        let announce = |live: &Live, msgs: &UnboundedSender<Msg>| {
            for n in &live.notes {
                let _ = msgs.send(Msg::Telemetry(Box::new(TelemetryView {
                    unavailable: vec![n.clone()],
                    ..TelemetryView::default()
                })));
            }
        };
        announce(&live, &msgs);
        loop {
            match rx.recv_timeout(Duration::from_millis(250)) {
                Ok(TelemetryCmd::Target(p)) => {
                    live.stop();
                    live = Live::start(&p, None, origin);
                    announce(&live, &msgs);
                }
                Ok(TelemetryCmd::Tap(t)) => tap = t,
                Ok(TelemetryCmd::Quit) | Err(std_mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            }
            for s in live.drain() {
                let offset = tap
                    .as_ref()
                    .map(|(_, start)| start.duration_since(origin).as_secs_f64())
                    .unwrap_or(0.0);
                let t_s = s.t_ns as f64 / 1e9 - offset;
                let _ = msgs.send(Msg::Telemetry(Box::new(telemetry_view(&s, t_s))));
                if let Some((run, _)) = &tap {
                    let _ = run.send(s);
                }
            }
        }
        live.stop();
    });
    (tx, h)
}

fn event_kind(kind: &str) -> EventKind {
    match kind {
        "phase" => EventKind::Phase,
        "steady_state" => EventKind::SteadyState,
        "errors" => EventKind::Error,
        _ => EventKind::Info,
    }
}

/// Everything one dashboard run needs from the effects thread.
struct RunCtx {
    preset_id: String,
    target: PathBuf,
    destroy_data: Option<PathBuf>,
    time_scale: f64,
    msgs: UnboundedSender<Msg>,
    ctl: Arc<RunControl>,
    telemetry: std_mpsc::Sender<TelemetryCmd>,
    /// The running session, for snapshots asked from the UI.
    snapshot: Arc<Mutex<Option<PathBuf>>>,
    snapshot_req: Arc<std::sync::atomic::AtomicBool>,
}

fn prepare(c: &RunCtx) -> Result<(preset::Preset, Plan, PreparedTarget), String> {
    let p = preset::find(&c.preset_id).map_err(|e| e.to_string())?;
    // A test file named in the dashboard is created (1 GiB) when missing, as the
    // built-in one is; block devices are never created (prepare refuses /dev paths).
    let mut req = TargetRequest {
        size: None,
        writes: false,
        destroy_data: c.destroy_data.clone(),
        create_default: true,
    };
    let t = dut::prepare(&c.target, &req).map_err(|e| e.to_string())?;
    let facts = TargetFacts {
        capacity_bytes: t.size,
        logical_block_size: t.align.min(u64::from(u32::MAX)) as u32,
    };
    let opts = PlanOptions {
        time_scale: c.time_scale,
        ..PlanOptions::default()
    };
    let plan = plan::expand(&p, &facts, &opts).map_err(|e| e.to_string())?;
    let writes = plan
        .steps
        .iter()
        .any(|s| s.workload.rw.read_percent(s.workload.rwmixread) < 100);
    if writes {
        req.writes = true;
        let t = dut::prepare(&c.target, &req).map_err(|e| e.to_string())?;
        return Ok((p, plan, t));
    }
    Ok((p, plan, t))
}

fn run_one(c: &RunCtx) -> (String, Option<String>, Option<PathBuf>) {
    let (p, plan, t) = match prepare(c) {
        Ok(x) => x,
        Err(e) => return ("not started".into(), Some(e), None),
    };
    let t0 = Instant::now();
    let _ = c.telemetry.send(TelemetryCmd::Target(t.path.clone()));
    let drive = drive::resolve(&t.path).ok();
    if let Some(v) = drive_view(&t.path) {
        let _ = c.msgs.send(Msg::Drive(v));
    }
    let path = match live::plan_session_path(None, &p.id) {
        Ok(path) => path,
        Err(e) => return ("not started".into(), Some(e.to_string()), None),
    };
    let opts = RecorderOptions {
        autosave_every: DEFAULT_AUTOSAVE,
        snapshot_every: None,
        snapshot_dir: None,
        histograms: false,
    };
    let mut rec = match live::create_plan_session(
        &path,
        &t,
        &p,
        &plan,
        drive.as_ref(),
        opts,
        Some(format!("drivescope (dashboard): preset {}", p.id)),
    ) {
        Ok(r) => r,
        Err(e) => return ("not started".into(), Some(e.to_string()), None),
    };
    if let Ok(mut s) = c.snapshot.lock() {
        *s = Some(rec.path().to_path_buf());
    }
    let (sample_tx, sample_rx) = std_mpsc::channel();
    let _ = c.telemetry.send(TelemetryCmd::Tap(Some((sample_tx, t0))));
    let _ = c.msgs.send(Msg::RunStarted {
        preset_id: p.id.clone(),
        target: t.path.clone(),
    });
    let _ = c.msgs.send(Msg::Event(EventView {
        t_s: 0.0,
        kind: EventKind::Save,
        text: format!("recording the session to {}", rec.path().display()),
    }));
    let result = drive_plan(c, &plan, &t, &mut rec, &sample_rx, t0);
    let _ = c.telemetry.send(TelemetryCmd::Tap(None));
    for s in sample_rx.try_iter() {
        rec.push_telemetry(&s);
    }
    let (state, outcome, error) = match &result {
        Ok(PlanOutcome::Completed) => (SessionState::Complete, "completed".to_string(), None),
        Ok(PlanOutcome::Stopped) => (SessionState::Stopped, "stopped".to_string(), None),
        Ok(PlanOutcome::Failed(why)) => (
            SessionState::Failed,
            "failed".to_string(),
            Some(why.clone()),
        ),
        Err(e) => (SessionState::Failed, "failed".to_string(), Some(e.clone())),
    };
    if let Ok(mut s) = c.snapshot.lock() {
        *s = None;
    }
    let saved = match rec.finalize(state, &outcome) {
        Ok(p) => Some(p),
        Err(e) => {
            let _ = c.msgs.send(Msg::Notice(format!("session not saved: {e}")));
            None
        }
    };
    (outcome, error, saved)
}

fn drive_plan(
    c: &RunCtx,
    plan: &Plan,
    t: &PreparedTarget,
    rec: &mut SessionRecorder,
    samples: &std_mpsc::Receiver<TelemetrySample>,
    t0: Instant,
) -> Result<PlanOutcome, String> {
    let reads = plan
        .steps
        .iter()
        .any(|s| s.workload.rw.read_percent(s.workload.rwmixread) > 0);
    if reads {
        let msgs = c.msgs.clone();
        let filled = fill_if_unwritten(t, &c.ctl.stop, &mut |n: &str| {
            let _ = msgs.send(Msg::Event(EventView {
                t_s: t0.elapsed().as_secs_f64(),
                kind: EventKind::Info,
                text: n.to_string(),
            }));
        })
        .map_err(|e| e.to_string())?;
        if let Some(s) = filled {
            rec.push_event_data("fill", format!("filled {}", t.path.display()), &s);
        }
    }
    let st = StepTarget {
        path: t.path.clone(),
        size: t.size,
        align: t.align,
    };
    let count = plan.steps.len();
    let plan_expected = plan.estimate(ASSUMED_BYTES_PER_S).max.as_secs_f64();
    let never = std::sync::atomic::AtomicBool::new(false);
    run_plan(plan, &st, EngineKind::IoUring, &c.ctl, &never, |ev| {
        live::record_run_event(rec, &ev);
        let now = t0.elapsed().as_secs_f64();
        match ev {
            RunEvent::StepStarted {
                index,
                step,
                target_iops,
            } => {
                let phase_name = plan
                    .phases
                    .get(step.phase)
                    .map(|p| p.name.clone())
                    .unwrap_or_default();
                let expected = step.end.duration.map(|d| (d + step.ramp).as_secs_f64());
                let _ = c.msgs.send(Msg::StepStarted(StepInfo {
                    index,
                    count,
                    name: step.name.clone(),
                    phase_name,
                    started_s: now,
                    expected_s: expected,
                    plan_expected_s: Some(plan_expected),
                    rate_limited: target_iops.is_some(),
                    target_iops,
                }));
                let _ = c.msgs.send(Msg::SteadyState(if step.steady.is_some() {
                    SteadyView::Tracking {
                        detail: "fio-style rule on each interval".into(),
                    }
                } else {
                    SteadyView::NotApplicable
                }));
            }
            RunEvent::Interval { report, .. } => {
                let _ = c.msgs.send(Msg::Interval(Box::new(report.without_hists())));
                for s in samples.try_iter() {
                    rec.push_telemetry(&s);
                }
                for n in rec.tick() {
                    let _ = c.msgs.send(Msg::Notice(n));
                }
                if c.snapshot_req.swap(false, Ordering::Relaxed) {
                    let dir = rec.snapshot_dir();
                    rec.snapshot(&dir);
                    let _ = c.msgs.send(Msg::Event(EventView {
                        t_s: now,
                        kind: EventKind::Save,
                        text: format!("snapshot being written to {}", dir.display()),
                    }));
                }
            }
            RunEvent::StepFinished(r) => {
                let _ = c.msgs.send(Msg::StepFinished(CurvePoint::from(&r.summary)));
            }
            // The panels announce phases themselves from StepStarted.
            RunEvent::Event(e) if e.kind == "phase" => {}
            RunEvent::Event(e) => {
                if e.kind == "steady_state" {
                    let detail = e.text.clone();
                    let _ = c
                        .msgs
                        .send(Msg::SteadyState(if e.text.contains("not reached") {
                            SteadyView::NotReached { detail }
                        } else {
                            SteadyView::Reached { detail }
                        }));
                }
                let _ = c.msgs.send(Msg::Event(EventView {
                    t_s: now,
                    kind: event_kind(&e.kind),
                    text: e.text.clone(),
                }));
            }
        }
    })
    .map_err(|e| e.to_string())
}

/// Carries out the dashboard's effects until it quits.
fn spawn_effects(
    mut fx: UnboundedReceiver<Effect>,
    msgs: UnboundedSender<Msg>,
    telemetry: std_mpsc::Sender<TelemetryCmd>,
    ctl_slot: Arc<Mutex<Option<Arc<RunControl>>>>,
    time_scale: f64,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut runner: Option<JoinHandle<()>> = None;
        let snapshot = Arc::new(Mutex::new(None));
        let snapshot_req = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let current =
            |slot: &Arc<Mutex<Option<Arc<RunControl>>>>| slot.lock().ok().and_then(|g| g.clone());
        while let Some(e) = fx.blocking_recv() {
            match e {
                Effect::StartRun {
                    preset_id,
                    target,
                    destroy_data,
                } => {
                    if let Some(r) = runner.take() {
                        let _ = r.join();
                    }
                    let ctl = Arc::new(RunControl::default());
                    if let Ok(mut g) = ctl_slot.lock() {
                        *g = Some(ctl.clone());
                    }
                    let c = RunCtx {
                        preset_id,
                        target,
                        destroy_data,
                        time_scale,
                        msgs: msgs.clone(),
                        ctl,
                        telemetry: telemetry.clone(),
                        snapshot: snapshot.clone(),
                        snapshot_req: snapshot_req.clone(),
                    };
                    runner = Some(std::thread::spawn(move || {
                        let (outcome, error, saved_to) = run_one(&c);
                        let _ = c.msgs.send(Msg::RunEnded {
                            outcome,
                            error,
                            saved_to,
                        });
                    }));
                }
                Effect::Pause | Effect::Resume => {
                    if let Some(c) = current(&ctl_slot) {
                        c.pause.store(e == Effect::Pause, Ordering::Relaxed);
                    }
                }
                Effect::Stop => {
                    if let Some(c) = current(&ctl_slot) {
                        c.pause.store(false, Ordering::Relaxed);
                        c.stop.store(true, Ordering::Relaxed);
                    }
                }
                Effect::SkipStep => {
                    if let Some(c) = current(&ctl_slot) {
                        c.skip.store(true, Ordering::Relaxed);
                    }
                }
                Effect::Snapshot => {
                    let running = snapshot.lock().ok().and_then(|g| g.clone());
                    match running {
                        Some(_) => snapshot_req.store(true, Ordering::Relaxed),
                        None => {
                            let _ = msgs.send(Msg::Notice(
                                "no run is going: a snapshot exports the running session; \
                                 saved sessions are in the sessions folder (drivescope report)"
                                    .into(),
                            ));
                        }
                    }
                }
                Effect::SetTheme(_) | Effect::Seek(_) => {}
                Effect::Quit => break,
            }
        }
        // Quit (or the UI went away): stop any run; its session is finalized before the
        // runner thread ends.
        if let Some(c) = current(&ctl_slot) {
            c.pause.store(false, Ordering::Relaxed);
            c.stop.store(true, Ordering::Relaxed);
        }
        if let Some(r) = runner {
            let _ = r.join();
        }
    })
}

/// Keeps SIGHUP, SIGTERM and SIGINT from killing the process outright while the
/// dashboard shuts down: the dashboard turns the first into a clean stop, and a second one
/// (a closing terminal sends more than one) must not cut the final session save short.
pub fn hold_signals_for_shutdown() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGHUP, SIGTERM, SIGINT] {
        let _ = signal_hook::flag::register(sig, seen.clone());
    }
}

/// Opens the dashboard and runs until the user quits (or a signal ends it).
pub fn run(args: &DashboardArgs) -> Result<Exit, DashboardError> {
    hold_signals_for_shutdown();
    let default_path = dut::default_target_path();
    let mut targets = Vec::new();
    if let Some(t) = &args.target {
        let is_dev = std::fs::metadata(t)
            .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
            .unwrap_or(false);
        if !is_dev {
            targets.push(file_entry(t, false));
        }
    }
    targets.push(file_entry(&default_path, true));
    let devices = device_entries();
    let mut selected = 0;
    if let Some(t) = &args.target {
        if let Some(i) = devices.iter().position(|d| &d.path == t) {
            selected = targets.len() + i;
        }
    }
    targets.extend(devices);
    let first = targets
        .get(selected)
        .map(|t| t.path.clone())
        .unwrap_or(default_path.clone());
    let capacity = targets
        .get(selected)
        .and_then(|t| t.size)
        .unwrap_or(dut::DEFAULT_FILE_SIZE);
    let opts = DashboardOptions {
        presets: preset_entries(capacity, 512, args.time_scale),
        highlight_preset: Some(args.preset.clone().unwrap_or_else(|| "quick-look".into())),
        targets,
        target: selected,
        drive: drive_view(&first),
        theme: args.theme.clone(),
        config_dir: None,
        mouse: args.mouse,
        replay: false,
    };
    let origin = Instant::now();
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (fx_tx, fx_rx) = mpsc::unbounded_channel();
    let (tele_tx, tele) = spawn_telemetry(first, msg_tx.clone(), origin);
    let ctl_slot = Arc::new(Mutex::new(None));
    let effects = spawn_effects(
        fx_rx,
        msg_tx,
        tele_tx.clone(),
        ctl_slot.clone(),
        args.time_scale,
    );
    // A panic in the UI must not skip the final save below.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_dashboard(opts, msg_rx, fx_tx)
    }))
    .unwrap_or_else(|_| Err(DashboardError::Terminal("the dashboard panicked".into())));
    // However the UI ended (quit, signal, error): stop the run so its session is saved,
    // then the telemetry thread.
    if let Some(c) = ctl_slot.lock().ok().and_then(|g| g.clone()) {
        c.pause.store(false, Ordering::Relaxed);
        c.stop.store(true, Ordering::Relaxed);
    }
    let _ = effects.join();
    let _ = tele_tx.send(TelemetryCmd::Quit);
    let _ = tele.join();
    result
}
