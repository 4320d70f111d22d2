//! `drivescope` with no arguments: the dashboard on the built-in default target.
//!
//! Until the preset library and the plan runner are connected, the dashboard is offered
//! one stand-in preset that runs what `drivescope run` runs by default (4 KiB random reads,
//! QD32, one job, 10 s) through the real engine, after filling a new test file once. It
//! is labelled as a stand-in; the lead replaces [`standalone_presets`] and
//! [`spawn_runner`] with the real presets and plan runner.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::app::{
    CurvePoint, Effect, EventKind, EventView, Msg, PresetEntry, StepInfo, TargetEntry, TargetKind,
    TelemetryView,
};
use crate::engine::{self, Control, EngineKind, StepTarget};
use crate::target::{self, TargetRequest};
use crate::tui::{run_dashboard, DashboardError, DashboardOptions, Exit};
use crate::workload::{BlockSizes, Region, RwMode, StepEnd, StepSpec, Workload};

/// Id of the stand-in preset.
pub const STANDIN_ID: &str = "standin-randread";
const STANDIN_SECONDS: u64 = 10;

/// The one stand-in preset this build can run by itself.
pub fn standalone_presets() -> Vec<PresetEntry> {
    vec![PresetEntry {
        id: STANDIN_ID.into(),
        name: "4K random read (stand-in)".into(),
        description: "What `drivescope run` does by default: 4 KiB random reads, queue depth \
                      32, one job, 10 s, on the chosen target; a new test file is filled once \
                      first. A stand-in until the preset library is connected."
            .into(),
        phases: vec![
            "fill (new test file only)".into(),
            "4k randread QD32, 10 s".into(),
        ],
        estimate: "about 10 s (plus the fill of a new file)".into(),
    }]
}

/// The built-in default target as a list entry.
pub fn default_target_entry() -> TargetEntry {
    let path = target::default_target_path();
    let size = std::fs::metadata(&path)
        .map(|m| m.len())
        .unwrap_or(target::DEFAULT_FILE_SIZE);
    let label = if path.exists() {
        "scratch test file".to_string()
    } else {
        "scratch test file (created on first run)".to_string()
    };
    TargetEntry {
        path,
        label,
        kind: TargetKind::File,
        size: Some(size),
        safety: None,
    }
}

/// Opens the dashboard with the stand-in runner behind it.
pub fn run() -> Result<Exit, DashboardError> {
    let opts = DashboardOptions {
        presets: standalone_presets(),
        highlight_preset: Some("quick-look".into()),
        targets: vec![default_target_entry()],
        ..DashboardOptions::default()
    };
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (fx_tx, fx_rx) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let effects = spawn_effects(fx_rx, msg_tx, stop.clone());
    let result = run_dashboard(opts, msg_rx, fx_tx);
    stop.store(true, Ordering::Relaxed);
    let _ = effects.join();
    result
}

/// Carries out the dashboard's effects until it quits.
fn spawn_effects(
    mut fx: UnboundedReceiver<Effect>,
    msgs: UnboundedSender<Msg>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut runner: Option<std::thread::JoinHandle<()>> = None;
        while let Some(e) = fx.blocking_recv() {
            match e {
                Effect::StartRun { target, .. } => {
                    if let Some(r) = runner.take() {
                        let _ = r.join();
                    }
                    stop.store(false, Ordering::Relaxed);
                    runner = Some(spawn_runner(target, msgs.clone(), stop.clone()));
                }
                Effect::Stop | Effect::SkipStep => stop.store(true, Ordering::Relaxed),
                Effect::Pause | Effect::Resume => {
                    let _ = msgs.send(Msg::Notice(
                        "pause needs the plan runner, which this build does not have yet".into(),
                    ));
                }
                Effect::Snapshot => {
                    let _ = msgs.send(Msg::Notice(
                        "snapshots need sessions, which this build does not have yet".into(),
                    ));
                }
                Effect::SetTheme(_) => {}
                Effect::Quit => {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
        if let Some(r) = runner {
            let _ = r.join();
        }
    })
}

fn step_spec(
    rw: RwMode,
    bs: u64,
    iodepth: u32,
    region: Region,
    end: StepEnd,
    seed: u64,
) -> StepSpec {
    StepSpec {
        workload: Workload {
            rw,
            rwmixread: 100,
            bs: BlockSizes::single(bs),
            iodepth,
            jobs: 1,
            region,
            rate_iops: None,
            seed,
            direct: true,
        },
        ramp: Duration::ZERO,
        end,
        interval: Duration::from_secs(1),
    }
}

/// Runs the stand-in plan on a thread, reporting through `msgs`.
pub fn spawn_runner(
    path: PathBuf,
    msgs: UnboundedSender<Msg>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (outcome, error) = match run_standin(&path, &msgs, &stop) {
            Ok(o) => (o, None),
            Err(e) => ("failed".to_string(), Some(e)),
        };
        let _ = msgs.send(Msg::RunEnded {
            outcome,
            error,
            saved_to: None,
        });
    })
}

fn run_standin(
    path: &Path,
    msgs: &UnboundedSender<Msg>,
    stop: &AtomicBool,
) -> Result<String, String> {
    let req = TargetRequest {
        size: None,
        writes: false,
        destroy_data: None,
        create_default: path == target::default_target_path(),
    };
    let t = target::prepare(path, &req).map_err(|e| e.to_string())?;
    let _ = msgs.send(Msg::RunStarted {
        preset_id: STANDIN_ID.into(),
        target: t.path.clone(),
    });
    let _ = msgs.send(Msg::Telemetry(Box::new(TelemetryView {
        unavailable: vec![
            "no telemetry: the poller is not connected to the dashboard in this build".into(),
        ],
        ..TelemetryView::default()
    })));
    let st = StepTarget {
        path: t.path.clone(),
        size: t.size,
        align: t.align,
    };
    let fill = t.kind == TargetKind::File && t.unwritten && (t.created || is_ours(&t.path));
    let count = if fill { 2 } else { 1 };
    let mut started = 0.0;
    let mut steps = Vec::new();
    if fill {
        let bs = 1u64 << 20;
        let len = t.size - t.size % bs;
        steps.push((
            "fill",
            "sequential write 1MiB QD8, whole file".to_string(),
            step_spec(
                RwMode::Write,
                bs,
                8,
                Region { offset: 0, len },
                StepEnd {
                    duration: None,
                    bytes: Some(len),
                },
                0xF111,
            ),
            None,
        ));
    }
    steps.push((
        "measure",
        "4k randread QD32".to_string(),
        step_spec(
            RwMode::RandRead,
            4096,
            32,
            Region {
                offset: 0,
                len: t.size,
            },
            StepEnd {
                duration: Some(Duration::from_secs(STANDIN_SECONDS)),
                bytes: None,
            },
            0x5eed,
        ),
        Some(STANDIN_SECONDS as f64),
    ));
    for (index, (phase, name, spec, expected)) in steps.into_iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            return Ok("stopped".into());
        }
        let _ = msgs.send(Msg::StepStarted(StepInfo {
            index,
            count,
            name,
            phase_name: phase.into(),
            started_s: started,
            expected_s: expected,
            plan_expected_s: None,
            rate_limited: false,
            target_iops: None,
        }));
        let s = engine::run_step(
            &st,
            &spec,
            EngineKind::IoUring,
            stop,
            |r| {
                let _ = msgs.send(Msg::Interval(Box::new(r.clone())));
                Control::Continue
            },
            |n| {
                let _ = msgs.send(Msg::Event(EventView {
                    t_s: started,
                    kind: EventKind::Info,
                    text: n.to_string(),
                }));
            },
        )
        .map_err(|e| e.to_string())?;
        started += s.runtime_s;
        if phase == "measure" {
            let _ = msgs.send(Msg::StepFinished(CurvePoint::from(&s)));
        }
        if s.ended_by == "stopped" {
            return Ok("stopped".into());
        }
    }
    Ok("completed".into())
}

fn is_ours(path: &Path) -> bool {
    std::fs::File::open(path)
        .map(|f| target::created_by_drivescope(&f, path))
        .unwrap_or(false)
}
