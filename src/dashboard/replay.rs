//! A saved session replayed in the dashboard (`drivescope open SESSION.yaml`). The session
//! becomes a timeline of the messages the live run sent (steps, intervals, telemetry,
//! events); moving to a time resets the panels and replays the timeline up to it, so every
//! panel shows what it showed then. `[` and `]` step through time, Home and End jump.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use super::sink::{Clock, DashboardSink};
use super::views::{entry, recorded_drive_view, telemetry_view};
use crate::app::drives::DriveSetup;
use crate::app::{Effect, EventCategory, EventView, Msg, Seek, TargetKind};
use crate::plan::{Plan, PlanPhase, PlanStep};
use crate::run::{FinishedStep, RunEvent, RunView, Sink};
use crate::session::{self, Session, Word};
use crate::stats::{DirCounts, IntervalReport, LatSummary};
use crate::telemetry::TelemetrySample;
use crate::tui::{run_dashboard, DashboardError, DashboardOptions, Exit};
use crate::workload::{FioFileStep, StepEnd};

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    #[error(transparent)]
    Dashboard(#[from] DashboardError),
}

/// The session as (time in seconds, message), in time order: its records fed, on their
/// own clock, to the sink a live run feeds ([`DashboardSink`]), as the events the live run
/// gave it (a step's start and end, its intervals, the drive's samples and ends) or, for
/// what the session keeps as an event, as that event, with the run's view made of them as
/// the hub makes it. A session of several drives feeds each drive's records to that drive's
/// sink and the run's own events once.
pub fn timeline(s: &Session) -> Vec<(f64, Msg)> {
    let plan = Arc::new(plan_of(s));
    let (tx, rx) = mpsc::unbounded_channel();
    let mut feed = Feed {
        sink: DashboardSink::on(tx, Clock::At(0.0)),
        view: RunView::new(s.drives.iter().map(|d| d.label.clone())),
        rx,
        out: Vec::new(),
    };
    let name = s.preset_info().id;
    let name = name.as_deref().unwrap_or("(no preset)");
    if s.drives.len() < 2 {
        feed.at(0.0, None, Record::Start(name, &s.target.path, &plan));
        for (t, r) in records(s, &plan) {
            feed.at(t, None, r);
        }
        // A live run's drive sends its samples from the dashboard's own telemetry thread.
        for v in &s.telemetry {
            let t = v.t().unwrap_or(0.0);
            if let Some(sample) = v.read::<TelemetrySample>() {
                let m = Msg::Telemetry(Box::new(telemetry_view(&sample, t)));
                feed.out.push((t, m));
            }
        }
    } else {
        let end_s = s
            .intervals
            .iter()
            .map(|i| i.t)
            .chain(s.steps.iter().map(|st| st.end_s))
            .fold(0.0, f64::max);
        for (i, mut v) in s.drive_views().into_iter().enumerate() {
            v.events.retain(|e| e.drive == Some(i as u32));
            feed.at(0.0, Some(i), Record::Start(name, &v.target.path, &plan));
            for (t, r) in records(&v, &plan) {
                feed.at(t, Some(i), r);
            }
            for (t, r) in samples(&v) {
                feed.at(t, Some(i), r);
            }
            if let Some(sum) = s.summary.as_ref().and_then(|x| x.drives.get(i)) {
                let ended = RunEvent::Ended {
                    outcome: sum.ended_by.outcome(),
                    tally: Box::default(),
                };
                feed.at(end_s, Some(i), Record::Event(ended));
            }
        }
        for e in s.events.iter().filter(|e| e.drive.is_none()) {
            feed.at(e.t, None, Record::Saved(e));
        }
    }
    let mut out = feed.out;
    // Stable: at equal times a step starts before its intervals and ends after them.
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// A saved record as the sink takes it.
enum Record<'a> {
    /// The run starts: its name, target and plan.
    Start(&'a str, &'a str, &'a Arc<Plan>),
    /// What the live run gave the sink as an event.
    Event(RunEvent),
    /// What the session keeps as an event.
    Saved(&'a session::Event),
}

/// The sink fed records with the view made of them, and the messages it sent, each at its
/// record's time.
struct Feed {
    sink: DashboardSink,
    view: RunView,
    rx: UnboundedReceiver<Msg>,
    out: Vec<(f64, Msg)>,
}

impl Feed {
    /// Feeds `r` at `t` (to drive `drive`'s sink, in a session of several).
    fn at(&mut self, t: f64, drive: Option<usize>, r: Record<'_>) {
        let sink = &mut self.sink;
        sink.at(t, drive);
        match r {
            Record::Start(name, target, plan) => {
                self.view.start(drive, plan.clone());
                sink.start(&plan.steps, name, Path::new(target), None)
            }
            Record::Event(ev) => {
                self.view.update(drive, &ev);
                sink.event(&self.view, &ev);
            }
            Record::Saved(e) => sink.recorded(e.t, &e.kind, &e.message, e.data.as_ref()),
        }
        while let Ok(m) = self.rx.try_recv() {
            self.out.push((t, m));
        }
    }
}

/// One drive's records but its samples, as the sink takes them, in time order: each step's
/// start, intervals and end, and the session's events.
fn records<'a>(s: &'a Session, plan: &Plan) -> Vec<(f64, Record<'a>)> {
    // (time, order at equal times, record): a step's end before the next one's start.
    let mut out: Vec<(f64, u8, Record<'a>)> = Vec::new();
    for (k, st) in s.steps.iter().enumerate() {
        let target_iops = st.summary.target_iops;
        let index = match plan_step(s, plan, k, st) {
            Some((index, step)) => {
                let step = Arc::new(step);
                let started = RunEvent::StepStarted {
                    index,
                    step,
                    target_iops,
                };
                out.push((st.start_s, 2, Record::Event(started)));
                index
            }
            None => k,
        };
        let p = st.point.unwrap_or_default();
        let finished = FinishedStep {
            index,
            name: st.label.clone(),
            phase: p.phase.map_or(0, |i| i as usize),
            round: p.round,
            prewrite: p.prewrite,
            sweep_point: p.sweep_point,
            target_iops,
            closed_loop: p.closed_loop,
            service_lat_us: *st.summary.service_lat(),
            summary: st.summary.clone(),
            ..FinishedStep::default()
        };
        out.push((
            st.end_s,
            1,
            Record::Event(RunEvent::StepFinished(Arc::new(finished))),
        ));
    }
    let step_start = |i: u32| {
        s.steps
            .iter()
            .find(|st| st.index == i)
            .map(|st| st.start_s)
            .unwrap_or(0.0)
    };
    for (k, iv) in s.intervals.iter().enumerate() {
        let report = Arc::new(interval_report(k, iv, step_start(iv.step)));
        let index = iv.step as usize;
        out.push((iv.t, 0, Record::Event(RunEvent::Interval { index, report })));
    }
    for e in &s.events {
        out.push((e.t, 0, Record::Saved(e)));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(t, _, r)| (t, r)).collect()
}

/// A drive's samples (of a session of several) as the events its worker gave.
fn samples(s: &Session) -> Vec<(f64, Record<'static>)> {
    s.telemetry
        .iter()
        .filter_map(|v| {
            let t = v.t().unwrap_or(0.0);
            let mut sample = v.read::<TelemetrySample>()?;
            sample.t_ns = (t.max(0.0) * 1e9) as u64;
            Some((t, Record::Event(RunEvent::Telemetry(Arc::new(sample)))))
        })
        .collect()
}

/// The session's plan: as saved (a preset's run), or the steps that ran (a plain run's, a
/// job file's, a plan this release does not read) under the preset's phases.
fn plan_of(s: &Session) -> Plan {
    if let Some(p) = s.plan_as::<Plan>() {
        return p;
    }
    let steps = s
        .steps
        .iter()
        .enumerate()
        .filter_map(|(k, st)| recorded_step(s, k, st))
        .collect();
    let phases = s
        .preset_info()
        .phases
        .map(|ps| {
            ps.into_iter()
                .enumerate()
                .map(|(i, p)| {
                    let name = p.name.unwrap_or_else(|| format!("phase {}", i + 1));
                    PlanPhase::new(name, 0..0)
                })
                .collect()
        })
        .unwrap_or_default();
    Plan {
        phases,
        ..Plan::one_phase(String::new(), String::new(), steps)
    }
}

/// What a replay reads of a saved plan it cannot read as a [`Plan`] (a plain run's, a job
/// file's): its steps' times, and whether it ran a job file.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct SavedPlan {
    steps: Vec<SavedTimes>,
    fio_job: Option<serde::de::IgnoredAny>,
}

/// A saved plan step's times, in seconds (a plan with any of them not a number reads as
/// none of them).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
struct SavedTimes {
    ramp_s: Option<f64>,
    duration_s: Option<f64>,
    interval_s: Option<f64>,
}

/// The `k`th recorded step of `s` as a plan's step: its workload, its place in the plan,
/// and what a plain run's plan says of its times; none without a recorded workload.
fn recorded_step(s: &Session, k: usize, st: &session::StepRecord) -> Option<PlanStep> {
    let saved = s.plan_as::<SavedPlan>().unwrap_or_default();
    let times = saved.steps.get(k).cloned().unwrap_or_default();
    // A hand-edited session's times may be anything: saturated, never a panic.
    let secs = |v: Option<f64>| v.map(crate::plan::secs_saturating);
    let p = st.point.unwrap_or_default();
    let end = StepEnd {
        duration: secs(times.duration_s),
        bytes: None,
    };
    let interval = secs(times.interval_s).unwrap_or(Duration::from_secs(1));
    let phase = p.phase.map_or(0, |i| i as usize);
    let workload = st.workload.clone()?;
    Some(PlanStep {
        ramp: secs(times.ramp_s).unwrap_or_default(),
        round: p.round,
        prewrite: p.prewrite,
        sweep_point: p.sweep_point,
        run: p.run,
        closed_loop: p.closed_loop,
        engine: st.summary.engine,
        engine_options: st.summary.engine_options,
        // A job file's step is named by its jobs: its name is its series.
        fio_file: saved.fio_job.map(|_| FioFileStep::default()),
        ..PlanStep::new(st.label.clone(), phase, workload, end, interval)
    })
}

/// The plan's step the `k`th recorded step of `s` ran (found by its name, unique in a
/// plan; else made of the record), at the shape it ran at (its recorded workload's), with
/// its index in the plan; none for a step of neither.
fn plan_step(
    s: &Session,
    plan: &Plan,
    k: usize,
    st: &session::StepRecord,
) -> Option<(usize, PlanStep)> {
    let found = plan.steps.iter().position(|p| p.name == st.label);
    let mut step = match found.and_then(|i| plan.steps.get(i)) {
        Some(p) => p.clone(),
        None => recorded_step(s, k, st)?,
    };
    if let Some(w) = &st.workload {
        step.workload.jobs = w.jobs;
        step.workload.iodepth = w.iodepth;
    }
    Some((found.unwrap_or(k), step))
}

/// The drives of a session of several, for the drives table.
pub fn drive_setups(s: &Session) -> Vec<DriveSetup> {
    s.drives
        .iter()
        .map(|d| DriveSetup {
            label: d.label.clone(),
            target: entry(
                Path::new(&d.target.path),
                d.label.clone(),
                match d.target.kind {
                    Word::Known(TargetKind::BlockDevice) => TargetKind::BlockDevice,
                    _ => TargetKind::File,
                },
            ),
            drive: d.identity.as_ref().and_then(recorded_drive_view),
            confirmed: false,
        })
        .collect()
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

/// A recorded interval (`k`th of the session, of a step that started at `start` on the
/// session clock) as the engine's report the panels take.
fn interval_report(k: usize, iv: &session::IntervalRecord, start: f64) -> IntervalReport {
    let end_s = iv.t - start;
    let dt = iv.dt.max(1e-9);
    let l = &iv.lat_us;
    let counts = |iops: f64, mbps: f64| DirCounts {
        ios: (iops * dt).round() as u64,
        bytes: (mbps * 1e6 * dt).round() as u64,
    };
    IntervalReport {
        index: k as u64,
        start_s: end_s - iv.dt,
        end_s,
        ramp: iv.ramp,
        suspended_s: iv.suspended_s,
        read: counts(iv.read_iops, iv.read_mbps),
        write: counts(iv.write_iops, iv.write_mbps),
        read_iops: iv.read_iops,
        write_iops: iv.write_iops,
        read_bw_bytes: iv.read_mbps * 1e6,
        write_bw_bytes: iv.write_mbps * 1e6,
        trim: counts(iv.trim_iops, iv.trim_mbps),
        trim_iops: iv.trim_iops,
        trim_bw_bytes: iv.trim_mbps * 1e6,
        errors: iv.errors,
        lat_us: LatSummary {
            samples: (iv.iops() * dt).round() as u64,
            min: l.min,
            mean: l.mean,
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            p99_9: l.p99_9,
            p99_99: l.p99_99,
            max: l.max,
            ..LatSummary::default()
        },
        ..Default::default()
    }
}

/// Sends the panels the state at `at_s`.
fn show(msgs: &UnboundedSender<Msg>, tl: &[(f64, Msg)], at_s: f64, end_s: f64) {
    let _ = msgs.send(Msg::ReplayReset);
    for (_, m) in tl.iter().take_while(|(t, _)| *t <= at_s + 1e-9) {
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
