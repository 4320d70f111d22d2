//! A saved session replayed in the dashboard (`drivescope open SESSION.yaml`). The session
//! becomes a timeline of the messages the live run sent (steps, intervals, telemetry,
//! events); moving to a time resets the panels and replays the timeline up to it, so every
//! panel shows what it showed then. `[` and `]` step through time, Home and End jump.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::views::{recorded_drive_view, telemetry_view};
use crate::app::drives::DriveSetup;
use crate::app::{
    CurvePoint, Effect, EventCategory, EventView, Msg, Seek, StepInfo, TargetEntry, TargetKind,
};
use crate::session::{self, Session};
use crate::stats::{DirCounts, IntervalReport, LatSummary};
use crate::telemetry::TelemetrySample;
use crate::tui::{run_dashboard, DashboardError, DashboardOptions, Exit};

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    #[error(transparent)]
    Dashboard(#[from] DashboardError),
}

/// The session as (time in seconds, message), in time order. A session of several drives
/// gives each drive's records as messages of that drive, the run's own events once, and
/// each drive's end at the end.
pub fn timeline(s: &Session) -> Vec<(f64, Msg)> {
    if s.drives.len() < 2 {
        return timeline_one(s, false);
    }
    let mut out: Vec<(f64, Msg)> = Vec::new();
    let views = s.drive_views();
    let end_s = s
        .intervals
        .iter()
        .map(|i| i.t)
        .chain(s.steps.iter().map(|st| st.end_s))
        .fold(0.0, f64::max);
    for (i, mut v) in views.into_iter().enumerate() {
        v.events.retain(|e| e.drive == Some(i as u32));
        for (t, m) in timeline_one(&v, true) {
            out.push((t, Msg::OnDrive(i, Box::new(m))));
        }
        if let Some(sum) = s.summary.as_ref().and_then(|x| x.drives.get(i)) {
            let outcome = sum.ended_by.outcome();
            out.push((end_s, Msg::DriveEnded { drive: i, outcome }));
        }
    }
    for e in s.events.iter().filter(|e| e.drive.is_none()) {
        if e.kind == crate::session::EventKind::Phase {
            continue;
        }
        out.push(event_msg(e));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The drives of a session of several, for the drives table.
pub fn drive_setups(s: &Session) -> Vec<DriveSetup> {
    s.drives
        .iter()
        .map(|d| DriveSetup {
            label: d.label.clone(),
            target: TargetEntry {
                path: PathBuf::from(&d.target.path),
                label: d.label.clone(),
                kind: if d.target.kind == crate::session::TargetKind::BlockDevice {
                    TargetKind::BlockDevice
                } else {
                    TargetKind::File
                },
                size: None,
                safety: None,
                creates: false,
            },
            drive: d.identity.as_ref().and_then(recorded_drive_view),
            confirmed: false,
        })
        .collect()
}

/// The name of the preset's phase `index` as the live view shows it (`randread-4k`), or
/// `phase N` when the session's preset does not name it.
fn phase_name(s: &Session, index: Option<u64>) -> String {
    let Some(i) = index else {
        return String::new();
    };
    s.preset_info()
        .phase(i)
        .and_then(|p| p.name.clone())
        .unwrap_or_else(|| format!("phase {}", i + 1))
}

/// The session's preset as the picker lists it, so the header names it as live
/// (`Quick look`, not its id).
fn preset_entry(s: &Session) -> Option<crate::app::PresetEntry> {
    let p = s.preset_info();
    Some(crate::app::PresetEntry {
        id: p.id?,
        name: p.name?,
        description: p.description.unwrap_or_default(),
        phases: Vec::new(),
        estimate: String::new(),
        writes: false,
        fio_job: None,
    })
}

/// One drive's session (or a session of one drive) as (time, message); `renumber`: a drive
/// of several counts its steps from its own first (the session numbers them across all).
fn timeline_one(s: &Session, renumber: bool) -> Vec<(f64, Msg)> {
    let mut out: Vec<(f64, Msg)> = Vec::new();
    let preset_id = s.preset_info().id.unwrap_or_else(|| "(no preset)".into());
    out.push((
        0.0,
        Msg::RunStarted {
            preset_id,
            target: PathBuf::from(&s.target.path),
        },
    ));
    // The steps that ran are the plan a replay knows.
    out.push((
        0.0,
        Msg::PlanSteps(s.steps.iter().map(|st| st.label.clone()).collect()),
    ));
    let count = s.steps.len();
    let method = super::method::Replayed::of(s);
    let plan_end = s
        .steps
        .last()
        .map(|l| l.end_s)
        .or_else(|| s.intervals.last().map(|i| i.t))
        .unwrap_or(0.0);
    for (k, st) in s.steps.iter().enumerate() {
        let target_iops = st.summary.target_iops;
        out.push((
            st.start_s,
            Msg::StepStarted(StepInfo {
                index: if renumber { k } else { st.index as usize },
                count,
                name: st.label.clone(),
                phase_name: phase_name(s, st.point.and_then(|p| p.phase)),
                started_s: st.start_s,
                expected_s: Some(st.end_s - st.start_s),
                plan_expected_s: Some(plan_end),
                rate_limited: target_iops.is_some(),
                target_iops,
                engine: st.summary.engine,
                engine_options: st.summary.engine_options,
            }),
        ));
        for x in &st.summary.fio_series {
            out.push((
                st.end_s,
                Msg::Event(EventView {
                    t_s: st.end_s,
                    kind: EventCategory::from(&session::EventKind::Note),
                    text: x.to_string(),
                }),
            ));
        }
        out.push((
            st.end_s,
            Msg::StepFinished(
                CurvePoint::new(st.series(), &st.summary),
                Box::new(session::StepResult::of(st, k as u32 + 1, None)),
            ),
        ));
        if let Some(p) = method.as_ref().and_then(|m| m.point(st)) {
            out.push((st.end_s, Msg::Method(Box::new(p))));
        }
    }
    let step_start = |i: u32| {
        s.steps
            .iter()
            .find(|st| st.index == i)
            .map(|st| st.start_s)
            .unwrap_or(0.0)
    };
    for (k, iv) in s.intervals.iter().enumerate() {
        let r = interval_report(k, iv, step_start(iv.step));
        out.push((iv.t, Msg::Interval(Box::new(r))));
    }
    for v in &s.telemetry {
        let t = v.t().unwrap_or(0.0);
        if let Some(sample) = v.read::<TelemetrySample>() {
            out.push((t, Msg::Telemetry(Box::new(telemetry_view(&sample, t)))));
        }
    }
    for e in &s.events {
        if e.kind == crate::session::EventKind::Phase {
            continue;
        }
        if e.kind == crate::session::EventKind::Verified {
            if let Some(t) = e.data_as() {
                out.push((e.t, Msg::Integrity(t)));
            }
        }
        if e.kind == crate::session::EventKind::VerifyFinding {
            out.push((e.t, Msg::IntegrityFinding(e.message.clone())));
        }
        if e.kind == crate::session::EventKind::Thermal {
            if let Some(event) = e.data_as() {
                out.push((e.t, Msg::Thermal { t_s: e.t, event }));
            }
        }
        out.push(event_msg(e));
    }
    // Stable: at equal times a step starts before its intervals and ends after them.
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// A recorded interval (`k`th of the session, of a step that started at `start` on the
/// session clock) as the engine's report the panels take.
fn interval_report(k: usize, iv: &session::IntervalRecord, start: f64) -> IntervalReport {
    let end_s = iv.t - start;
    let dt = iv.dt.max(1e-9);
    let l = &iv.lat_us;
    IntervalReport {
        index: k as u64,
        start_s: end_s - iv.dt,
        end_s,
        ramp: iv.ramp,
        suspended_s: iv.suspended_s,
        read: DirCounts {
            ios: (iv.read_iops * dt).round() as u64,
            bytes: (iv.read_mbps * 1e6 * dt).round() as u64,
        },
        write: DirCounts {
            ios: (iv.write_iops * dt).round() as u64,
            bytes: (iv.write_mbps * 1e6 * dt).round() as u64,
        },
        read_iops: iv.read_iops,
        write_iops: iv.write_iops,
        read_bw_bytes: iv.read_mbps * 1e6,
        write_bw_bytes: iv.write_mbps * 1e6,
        trim: DirCounts {
            ios: (iv.trim_iops * dt).round() as u64,
            bytes: (iv.trim_mbps * 1e6 * dt).round() as u64,
        },
        trim_iops: iv.trim_iops,
        trim_bw_bytes: iv.trim_mbps * 1e6,
        errors: iv.errors,
        lat_us: LatSummary {
            samples: (iv.iops() * dt).round() as u64,
            min: l.min,
            mean: l.mean,
            stddev: 0.0,
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            p99_9: l.p99_9,
            p99_99: l.p99_99,
            p99_999: None,
            max: l.max,
        },
        service_lat_us: None,
        error_records: Vec::new(),
        hists: None,
    }
}

/// Sends the panels the state at `at_s`.
fn show(msgs: &UnboundedSender<Msg>, tl: &[(f64, Msg)], at_s: f64, end_s: f64) {
    let _ = msgs.send(Msg::ReplayReset);
    for (t, m) in tl.iter().take_while(|(t, _)| *t <= at_s + 1e-9) {
        let _ = t;
        let _ = msgs.send(m.clone());
    }
    let _ = msgs.send(Msg::ReplayAt { at_s, end_s });
}

fn spawn_controller(
    mut fx: UnboundedReceiver<Effect>,
    msgs: UnboundedSender<Msg>,
    tl: Vec<(f64, Msg)>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let end_s = tl.last().map(|(t, _)| *t).unwrap_or(0.0);
        // Twenty steps across the session, at least a second each.
        let step = (end_s / 20.0).max(1.0);
        let mut at = end_s;
        show(&msgs, &tl, at, end_s);
        while let Some(e) = fx.blocking_recv() {
            at = match e {
                Effect::Seek(Seek::Back) => (at - step).max(0.0),
                Effect::Seek(Seek::Forward) => (at + step).min(end_s),
                Effect::Seek(Seek::Start) => 0.0,
                Effect::Seek(Seek::End) => end_s,
                Effect::Quit => break,
                _ => continue,
            };
            show(&msgs, &tl, at, end_s);
        }
    })
}

/// Opens the replay of the session in `path`; returns when the user quits.
pub fn run(path: &Path, theme: Option<String>, colour: bool) -> Result<Exit, OpenError> {
    super::hold_signals_for_shutdown();
    let loaded = session::load(path)?;
    for w in &loaded.warnings {
        crate::output::err_line(&format!("drivescope: {w}"));
    }
    let (mut opts, tl) = replay_of(&loaded.session, &loaded.warnings);
    opts.theme = theme;
    opts.monochrome = !colour;
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (fx_tx, fx_rx) = mpsc::unbounded_channel();
    let ctl = spawn_controller(fx_rx, msg_tx, tl);
    let result = run_dashboard(opts, msg_rx, fx_tx);
    let _ = ctl.join();
    Ok(result?)
}

/// What the replay of `s` (read with `warnings`) starts the dashboard with, and the
/// timeline it plays.
pub fn replay_of(s: &Session, warnings: &[String]) -> (DashboardOptions, Vec<(f64, Msg)>) {
    let drive = s.drive.as_ref().and_then(recorded_drive_view);
    let mut tl = timeline(s);
    // What the reader dropped is shown in the events panel too, from the first moment (on
    // stderr it is seen only after the dashboard closes).
    let damaged = warnings.iter().map(|w| {
        let text = format!("damaged session: {w}");
        (
            0.0,
            Msg::Event(EventView {
                t_s: 0.0,
                kind: EventCategory::Error,
                text,
            }),
        )
    });
    let at = tl.len().min(1);
    tl.splice(at..at, damaged);
    let opts = DashboardOptions {
        drive,
        presets: preset_entry(s).into_iter().collect(),
        replay: true,
        drives: if s.drives.len() > 1 {
            drive_setups(s)
        } else {
            Vec::new()
        },
        ..DashboardOptions::default()
    };
    (opts, tl)
}

/// A session event as the events panel's message, at its time.
fn event_msg(e: &crate::session::Event) -> (f64, Msg) {
    (
        e.t,
        Msg::Event(EventView {
            t_s: e.t,
            kind: EventCategory::from(&e.kind),
            text: e.message.clone(),
        }),
    )
}
