//! Synthetic dashboard states: lists, intervals, telemetry and whole runs, built from
//! messages through `update` exactly as the runtime would deliver them.

use std::path::PathBuf;

use drivescope::app::datasheet;
use drivescope::app::{
    update, App, AppConfig, CurvePoint, DriveView, Effect, EventCategory, EventView, HostView,
    KernelView, Keymap, Msg, PresetEntry, SteadyView, StepInfo, TargetEntry, TargetKind,
    TelemetryView,
};
use drivescope::session::results::{DirResult, LatFigures};
use drivescope::session::{EventKind, StepResult};
use drivescope::stats::{DirCounts, IntervalReport, IoErrorRecord, LatSummary};
use drivescope::telemetry::{Health, HealthChange, HealthReason};
use drivescope::ui::theme;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use ratatui::Terminal;

pub fn presets() -> Vec<PresetEntry> {
    vec![
        PresetEntry {
            id: "sweep".into(),
            name: "iorate sweep".into(),
            description: "Probe the peak, then step the rate from 10% to 100%.".into(),
            phases: vec!["precondition".into(), "probe".into(), "sweep".into()],
            estimate: "about 40 min".into(),
            writes: true,
            fio_job: None,
        },
        PresetEntry {
            id: "quick-look".into(),
            name: "Quick look".into(),
            description:
                "Four short corners: 4K random read and write, 128K sequential read and write."
                    .into(),
            phases: vec![
                "4k randread".into(),
                "4k randwrite".into(),
                "128k read".into(),
                "128k write".into(),
            ],
            estimate: "about 2 min".into(),
            writes: true,
            fio_job: None,
        },
        PresetEntry {
            id: "snia-iops".into(),
            name: "SNIA PTS IOPS".into(),
            description:
                "Purge, workload-independent preconditioning, then rounds until steady state."
                    .into(),
            phases: vec!["purge".into(), "precondition".into(), "rounds".into()],
            estimate: "2 to 6 h".into(),
            writes: true,
            fio_job: None,
        },
    ]
}

pub fn scratch() -> PathBuf {
    PathBuf::from("/home/u/.local/share/drivescope/scratch.bin")
}

pub fn targets() -> Vec<TargetEntry> {
    vec![
        TargetEntry {
            path: scratch(),
            label: "scratch test file".into(),
            kind: TargetKind::File,
            size: Some(1 << 30),
            safety: None,
            creates: false,
        },
        TargetEntry {
            path: "/dev/nvme1n1".into(),
            label: "nvme1n1 Micron 7400".into(),
            kind: TargetKind::BlockDevice,
            size: Some(7_681_501_126_656),
            safety: None,
            creates: false,
        },
        TargetEntry {
            path: "/dev/sda".into(),
            label: "sda".into(),
            kind: TargetKind::BlockDevice,
            size: Some(500_107_862_016),
            safety: Some("sda2 is mounted at /".into()),
            creates: false,
        },
    ]
}

pub fn config(size: (u16, u16)) -> AppConfig {
    let (themes, errors) = theme::load_all(None);
    assert!(errors.is_empty(), "{errors:?}");
    AppConfig {
        presets: presets(),
        highlight_preset: Some("quick-look".into()),
        targets: targets(),
        target: 0,
        drive: None,
        themes,
        theme: None,
        keymap: Keymap::default(),
        datasheets: datasheet::builtin().expect("datasheets"),
        load_errors: Vec::new(),
        open_presets: false,
        replay: false,
        size,
        drives: Vec::new(),
        keys_file: None,
    }
}

/// A builder of a synthetic state for a terminal of a size.
pub type MakeApp = fn((u16, u16)) -> App;

/// A fresh app with the built-in presets (and the user's fio job files) for a 1 GiB
/// target, as the dashboard lists them.
pub fn with_builtins(size: (u16, u16)) -> App {
    let mut cfg = config(size);
    cfg.presets = drivescope::dashboard::views::preset_entries(1 << 30, 512, 1.0);
    App::new(cfg)
}

/// A fresh idle app (no overlay) for a terminal of `size`.
pub fn idle(size: (u16, u16)) -> App {
    App::new(config(size))
}

pub fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub fn code(c: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// Applies messages in order; returns every effect.
/// The message of a finished step whose curve point is `p`: its result, as a run's would
/// be (reads of 4 KiB at the point's rate and latency), numbered `step`, labelled `label`.
pub fn finished(p: CurvePoint, label: &str, step: u32) -> Msg {
    let lat = LatFigures {
        mean: p.mean_us,
        p50: p.mean_us * 0.9,
        p99: p.p99_us,
        p99_9: p.p999_us,
        p99_99: p.p999_us * 1.5,
        p99_999: None,
        max: p.p999_us * 3.0,
    };
    let result = StepResult {
        step,
        label: label.into(),
        workload: p.series.clone(),
        target_iops: p.target_iops,
        achieved_share: drivescope::session::results::share_of(p.iops, p.target_iops),
        missed_target: drivescope::session::results::missed(p.iops, p.target_iops),
        service_lat_us: Some(lat),
        read: DirResult {
            ios: (p.iops.max(0.0) * 60.0) as u64,
            iops: p.iops,
            mbps: p.iops * 4096.0 / 1e6,
            lat_us: Some(lat),
        },
        write: DirResult::default(),
        measured_s: 60.0,
        ..Default::default()
    };
    Msg::StepFinished(p, Box::new(result))
}

pub fn send(app: &mut App, msgs: impl IntoIterator<Item = Msg>) -> Vec<Effect> {
    msgs.into_iter().flat_map(|m| update(app, m)).collect()
}

pub fn lat(p50: f64) -> LatSummary {
    LatSummary {
        samples: 1000,
        min: p50 * 0.3,
        mean: p50 * 1.1,
        stddev: p50 * 0.4,
        p50,
        p90: p50 * 1.6,
        p99: p50 * 3.0,
        p99_9: p50 * 6.0,
        p99_99: p50 * 11.0,
        p99_999: None,
        max: p50 * 20.0,
    }
}

/// Interval `i` (1 s each) of a step at `iops` reads and `wiops` writes, 4 KiB.
pub fn interval(i: u64, iops: f64, wiops: f64, p50: f64) -> IntervalReport {
    IntervalReport {
        index: i,
        start_s: i as f64,
        end_s: (i + 1) as f64,
        read: DirCounts {
            ios: iops as u64,
            bytes: (iops as u64).saturating_mul(4096),
        },
        write: DirCounts {
            ios: wiops as u64,
            bytes: (wiops as u64).saturating_mul(4096),
        },
        read_iops: iops,
        write_iops: wiops,
        read_bw_bytes: iops * 4096.0,
        write_bw_bytes: wiops * 4096.0,
        lat_us: lat(p50),
        ..Default::default()
    }
}

pub fn micron() -> DriveView {
    DriveView {
        model: Some("Micron_7400_MTFDKCB7T6TDZ".into()),
        serial: Some("2143311A9F2C".into()),
        firmware: Some("E1MU23BC".into()),
        capacity_bytes: Some(7_681_501_126_656),
        transport: Some("NVMe".into()),
        zones: None,
    }
}

pub fn telemetry(t_s: f64, temp: f64, transitions: u64) -> TelemetryView {
    TelemetryView {
        t_s,
        temperature_c: Some(temp),
        sensors_c: vec![temp - 4.0, temp + 3.0],
        warning_c: Some(70.0),
        critical_c: Some(80.0),
        tmt1_c: None,
        tmt2_c: None,
        power_state: Some(0),
        power_state_max_w: Some(25.0),
        power_w: None,
        throttle_transitions: Some(transitions),
        throttle_seconds: Some(transitions * 7),
        kernel: Some(KernelView {
            read_iops: 401_200.0,
            write_iops: 0.0,
            read_bw: 401_200.0 * 4096.0,
            write_bw: 0.0,
            util_pct: 99.0,
            in_flight: 32,
        }),
        host: Some(HostView {
            cpu_pct: 23.0,
            own_cpu_pct: 11.5,
            mem_used_bytes: 3_435_973_837,
            own_rss_bytes: 48 << 20,
        }),
        unavailable: Vec::new(),
        health: Health::default(),
        zones: None,
    }
}

/// The labels of the `running` fixture's plan: twelve steps of a sweep.
pub const SWEEP_STEPS: [&str; 12] = [
    "rate 90% of max",
    "rate 70% of max",
    "rate 50% of max",
    "4k randread QD32",
    "rate 30% of max",
    "rate 10% of max",
    "rate 5% of max",
    "rate 1% of max",
    "write 90% of max",
    "write 50% of max",
    "write 10% of max",
    "write 1% of max",
];

/// The fourth step of an iorate sweep on a Micron 7400, 30 intervals in, with three
/// finished sweep steps on the curve.
pub fn running(size: (u16, u16)) -> App {
    let mut app = idle(size);
    send(&mut app, [code(KeyCode::Enter)]);
    send(
        &mut app,
        [
            Msg::Drive(micron()),
            Msg::RunStarted {
                preset_id: "sweep".into(),
                target: scratch(),
            },
            Msg::PlanSteps(SWEEP_STEPS.iter().map(|s| s.to_string()).collect()),
        ],
    );
    for (i, p) in [(900_000.0, 350.0), (700_000.0, 140.0), (500_000.0, 90.0)]
        .iter()
        .enumerate()
    {
        let point = CurvePoint {
            series: "randread 4KiB QD32×1".into(),
            target_iops: Some(p.0),
            iops: p.0 * (0.99 - i as f64 * 0.001),
            mean_us: p.1,
            p99_us: p.1 * 3.0,
            p999_us: p.1 * 6.0,
            response_mean_us: None,
        };
        send(&mut app, [finished(point, SWEEP_STEPS[i], i as u32 + 1)]);
    }
    send(
        &mut app,
        [Msg::StepStarted(StepInfo {
            index: 3,
            count: 12,
            name: "4k randread QD32".into(),
            phase_name: "sweep".into(),
            started_s: 540.0,
            expected_s: Some(60.0),
            plan_expected_s: Some(1260.0),
            rate_limited: false,
            target_iops: None,
            engine: Default::default(),
            engine_options: Default::default(),
        })],
    );
    for i in 0..30u64 {
        let wobble = ((i * 7919) % 13) as f64 * 1500.0;
        let t = i as f64;
        let r = interval(i, 400_000.0 + wobble, 0.0, 70.0 + (i % 5) as f64 * 3.0);
        send(&mut app, [Msg::Interval(Box::new(r))]);
        send(
            &mut app,
            [Msg::Telemetry(Box::new(telemetry(
                541.0 + t,
                52.0 + t * 0.3,
                0,
            )))],
        );
    }
    send(
        &mut app,
        [Msg::SteadyState(SteadyView::Tracking {
            detail: "round 3 of 5, range 12% of 20%".into(),
        })],
    );
    app
}

/// `running`, then the drive heats past its warning threshold and throttles at 561 s.
pub fn throttling(size: (u16, u16)) -> App {
    let mut app = running(size);
    for i in 30..50u64 {
        let t = 541.0 + i as f64;
        let hot = 52.0 + i as f64 * 0.45;
        let transitions = if i >= 40 { 1 } else { 0 };
        let iops = if i >= 40 { 240_000.0 } else { 400_000.0 };
        send(
            &mut app,
            [
                Msg::Interval(Box::new(interval(
                    i,
                    iops,
                    0.0,
                    if i >= 40 { 130.0 } else { 72.0 },
                ))),
                Msg::Telemetry(Box::new(TelemetryView {
                    // The host controlled thermal management temperatures it throttles at.
                    tmt1_c: Some(73.0),
                    tmt2_c: Some(76.0),
                    ..telemetry(t, hot, transitions)
                })),
            ],
        );
    }
    app
}

/// A run on a drive whose SMART data cannot be read (not root): no temperature, no power
/// state, but kernel and host figures.
pub fn no_smart(size: (u16, u16)) -> App {
    let mut app = idle(size);
    send(&mut app, [code(KeyCode::Enter)]);
    send(
        &mut app,
        [
            Msg::RunStarted {
                preset_id: "quick-look".into(),
                target: scratch(),
            },
            Msg::StepStarted(StepInfo {
                index: 0,
                count: 4,
                name: "4k randread QD32".into(),
                phase_name: "4k randread".into(),
                started_s: 0.0,
                expected_s: Some(30.0),
                plan_expected_s: Some(120.0),
                rate_limited: false,
                target_iops: None,
                engine: Default::default(),
                engine_options: Default::default(),
            }),
        ],
    );
    for i in 0..12u64 {
        let mut t = telemetry(1.0 + i as f64, 0.0, 0);
        t.temperature_c = None;
        t.sensors_c.clear();
        t.warning_c = None;
        t.critical_c = None;
        t.power_state = None;
        t.power_state_max_w = None;
        t.throttle_transitions = None;
        t.throttle_seconds = None;
        t.unavailable = vec!["no SMART: run as root".into()];
        send(
            &mut app,
            [
                Msg::Interval(Box::new(interval(i, 95_000.0, 0.0, 310.0))),
                Msg::Telemetry(Box::new(t)),
            ],
        );
    }
    app
}

/// The running sweep on a drive whose critical warning turns on spare-below-threshold and
/// read-only: its health fails, and the session's health event reaches the events panel.
pub fn failing(size: (u16, u16)) -> App {
    let mut app = running(size);
    let mut t = telemetry(571.0, 61.0, 0);
    t.health = Health::judge(Some(true), HealthReason::of_critical_warning(0x09));
    let change = HealthChange {
        from: Some(Health::judge(Some(true), Vec::new())),
        to: t.health.clone(),
    };
    send(
        &mut app,
        [
            Msg::Telemetry(Box::new(t)),
            Msg::Event(EventView {
                t_s: 571.0,
                kind: EventCategory::from(&EventKind::Health),
                text: change.to_string(),
            }),
        ],
    );
    app
}

/// A rate-limited step that ends with I/O errors and a failed run.
pub fn errored(size: (u16, u16)) -> App {
    let mut app = idle(size);
    send(&mut app, [code(KeyCode::Enter)]);
    send(
        &mut app,
        [
            Msg::Drive(micron()),
            Msg::RunStarted {
                preset_id: "sweep".into(),
                target: scratch(),
            },
            Msg::StepStarted(StepInfo {
                index: 5,
                count: 12,
                name: "4k randread QD32".into(),
                phase_name: "sweep".into(),
                started_s: 700.0,
                expected_s: Some(60.0),
                plan_expected_s: Some(1260.0),
                rate_limited: true,
                target_iops: Some(200_000.0),
                engine: Default::default(),
                engine_options: Default::default(),
            }),
        ],
    );
    for i in 0..8u64 {
        let mut r = interval(i, 200_000.0, 0.0, 80.0);
        r.service_lat_us = Some(lat(60.0));
        if i == 7 {
            r.errors = 3;
            r.error_records = vec![IoErrorRecord::new(4096 * 77, 4096, false, -5)];
        }
        send(&mut app, [Msg::Interval(Box::new(r))]);
    }
    send(
        &mut app,
        [Msg::RunEnded {
            outcome: drivescope::app::RunEnd::Failed,
            error: Some("every I/O failed".into()),
            saved_to: Some("/home/u/.local/share/drivescope/sessions/2026-11-30T09-10.yaml".into()),
        }],
    );
    app
}

/// The message that a run ended with `outcome`, without an error, its session saved to
/// `saved_to`.
pub fn run_ended(outcome: drivescope::app::RunEnd, saved_to: Option<&str>) -> Msg {
    Msg::RunEnded {
        outcome,
        error: None,
        saved_to: saved_to.map(Into::into),
    }
}

/// The app drawn once on a test terminal of its size.
pub fn draw(app: &App) -> Buffer {
    let (w, h) = app.size;
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    term.draw(|f| drivescope::ui::render(app, f)).expect("draw");
    term.backend().buffer().clone()
}

/// A row of the buffer as text, one symbol a cell.
fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// The foreground colour of the first cell of each place `needle` stands on the screen.
pub fn colours_of(app: &App, needle: &str) -> Vec<Color> {
    let buf = draw(app);
    let mut out = Vec::new();
    for y in 0..buf.area.height {
        let text = row(&buf, y);
        for (i, _) in text.match_indices(needle) {
            // The column of byte offset `i`: symbols before it, one cell each.
            let x = text[..i].chars().count() as u16;
            out.push(buf[(x, y)].fg);
        }
    }
    out
}

/// The cells under each place `needle` stands on the screen, one cell a symbol.
pub fn cells_of(app: &App, needle: &str) -> Vec<Vec<ratatui::buffer::Cell>> {
    let buf = draw(app);
    let mut out = Vec::new();
    for y in 0..buf.area.height {
        let text = row(&buf, y);
        for (i, _) in text.match_indices(needle) {
            let x = text[..i].chars().count() as u16;
            let n = needle.chars().count() as u16;
            out.push((x..x + n).map(|x| buf[(x, y)].clone()).collect());
        }
    }
    out
}

/// Every cell's (foreground, background), row by row.
pub fn colour_grid(app: &App) -> Vec<(Color, Color)> {
    draw(app).content().iter().map(|c| (c.fg, c.bg)).collect()
}

/// The screen as text: one line per row, trailing spaces trimmed.
pub fn screen(app: &App) -> String {
    let buf = draw(app);
    let mut out = String::new();
    for y in 0..buf.area.height {
        out.push_str(row(&buf, y).trim_end());
        out.push('\n');
    }
    out
}
