//! `update`: the one place the app's state changes. Each message may change the state and
//! returns the effects the runtime carries out; nothing here does I/O. Keys and mouse are
//! handled in [`key_actions`](super::key_actions). A message of the run goes to one drive's slot: the
//! picked one's, or drive n's for `Msg::OnDrive(n, _)`.

use ratatui::crossterm::event::KeyEventKind;

use super::drives::{self, DriveState};
use super::history::{IntervalPoint, ThermalPoint, THROTTLE_MARKS, UNAVAILABLE_REASONS};
use super::key_actions::{key, mouse};
use super::method::MethodState;
use super::msg::{Effect, Msg, RunEnd, RunState};
use super::overlay::{Confirm, Overlay};
use super::state::App;
use super::view::{EventCategory, SteadyView, StepInfo, TelemetryView};

/// Applies `msg` to `app`; returns what the runtime must do.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    let picked = app.picked;
    let before = app.events.pushed();
    let latest = app.events.last().map_or(0.0, |e| e.t_s);
    let of_a_drive = matches!(msg, Msg::OnDrive(..) | Msg::Telemetry(_));
    let fx = update_on(app, picked, msg);
    let added = app.events.pushed().saturating_sub(before) as usize;
    // Several drives, each on its own clock: the events panel in the order of those times
    // (once each new event is labelled with its drive); an event of no drive (a save, a
    // signal, a key's) stands at the latest time shown.
    if app.table && added > 0 {
        if !of_a_drive {
            let skip = app.events.len().saturating_sub(added);
            for e in app.events.iter_mut().skip(skip) {
                e.t_s = e.t_s.max(latest);
            }
        }
        app.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    }
    fx
}

/// Applies `msg` with drive `i` as the drive its figures belong to.
fn update_on(app: &mut App, i: usize, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(k) => {
            if k.kind == KeyEventKind::Release {
                return Vec::new();
            }
            app.dirty = true;
            key(app, &k)
        }
        Msg::Mouse(m) => mouse(app, &m),
        // The dashboard's own telemetry watches the first drive of the table.
        Msg::Telemetry(t) if drives::table(app) => on_drive(app, 0, Msg::Telemetry(t)),
        Msg::Telemetry(t) => {
            telemetry(app, i, *t);
            Vec::new()
        }
        Msg::OnDrive(j, m) => on_drive(app, j, *m),
        Msg::DriveEnded { drive, outcome } => {
            drives::ended(app, drive, outcome);
            Vec::new()
        }
        Msg::RunEnded {
            outcome,
            error,
            saved_to,
        } => {
            run_ended(app, i, outcome, error, saved_to);
            Vec::new()
        }
        Msg::Signal(sig) => signal(app, sig),
        m => {
            figures(app, i, m);
            Vec::new()
        }
    }
}

/// The messages that change only the state, no effect: the run's figures, the lists, the
/// clock and the replay's place.
fn figures(app: &mut App, i: usize, msg: Msg) {
    match msg {
        Msg::RunStarted { preset_id, target } => {
            app.run.state = RunState::Running;
            app.notice = None;
            let name = app.preset_name(&preset_id);
            app.push_event_on(
                i,
                EventCategory::Phase,
                format!("started {name} on {}", target.display()),
            );
            app.run.preset_id = Some(preset_id);
            // The run made the new file: it is an existing one from now on.
            for t in app.targets.iter_mut().filter(|t| t.path == target) {
                t.creates = false;
            }
            app.slot_mut(i).run.target = Some(target);
        }
        Msg::StepStarted(info) => step_started(app, i, info),
        Msg::Interval(r) => interval(app, i, *r),
        Msg::PlanSteps(labels) => {
            app.slot_mut(i).run.plan_steps = labels;
            app.dirty = true;
        }
        Msg::StepFinished(p, result) => {
            let run = &mut app.slot_mut(i).run;
            run.curve.push(p);
            run.results.push(*result);
            run.step_open = false;
            app.dirty = true;
        }
        Msg::Grid(cells) => {
            app.slot_mut(i).run.grid = cells;
            app.dirty = true;
        }
        Msg::Method(p) => {
            let run = &mut app.slot_mut(i).run;
            run.method
                .get_or_insert_with(|| MethodState {
                    kind: p.kind,
                    points: Vec::new(),
                })
                .push(*p);
            app.dirty = true;
        }
        Msg::Drive(d) => {
            app.slot_mut(i).drive = Some(d);
            app.dirty = true;
        }
        Msg::SteadyState(s) => steady(app, i, s),
        Msg::Event(e) => app.add_event(e),
        Msg::Thermal { t_s, event } => {
            app.slot_mut(i).run.push_thermal(t_s, event);
            app.dirty = true;
        }
        Msg::Integrity(totals) => {
            app.run
                .integrity
                .get_or_insert_with(Default::default)
                .totals = totals;
            app.dirty = true;
        }
        Msg::IntegrityFinding(text) => {
            app.run.integrity.get_or_insert_with(Default::default).last = Some(text);
            app.dirty = true;
        }
        m => others(app, m),
    }
}

/// The messages of the dashboard itself: the clock, the terminal, the lists, notices, the
/// replay's place.
fn others(app: &mut App, msg: Msg) {
    match msg {
        Msg::Tick { now_s } => {
            app.now_s = now_s;
            if app
                .notice
                .as_ref()
                .is_some_and(|(_, until)| *until <= now_s)
            {
                app.notice = None;
                app.dirty = true;
            }
        }
        Msg::Resize(w, h) => {
            app.size = (w, h);
            app.dirty = true;
        }
        Msg::Presets(p) => {
            let keep = app.selected_preset().map(|p| p.id.clone());
            app.presets = p;
            app.preset_sel = keep
                .and_then(|id| app.presets.iter().position(|p| p.id == id))
                .unwrap_or(0);
            app.dirty = true;
        }
        Msg::Targets(t) => {
            let keep = app.selected_target().map(|t| t.path.clone());
            app.targets = t;
            app.target_sel = keep
                .and_then(|p| app.targets.iter().position(|t| t.path == p))
                .unwrap_or(0);
            app.dirty = true;
        }
        Msg::Notice(n) => app.notify(n),
        Msg::ReplayReset => app.reset_run_views(),
        Msg::ReplayAt { at_s, end_s } => {
            let hms = |s: f64| {
                let s = s.max(0.0) as u64;
                format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
            };
            app.run.state = RunState::Ended {
                outcome: format!("replay {} of {}", hms(at_s), hms(end_s)),
            };
            app.dirty = true;
        }
        // Handled by `update_on` and `figures`.
        Msg::Key(_)
        | Msg::Mouse(_)
        | Msg::Telemetry(_)
        | Msg::OnDrive(..)
        | Msg::DriveEnded { .. }
        | Msg::RunEnded { .. }
        | Msg::Signal(_)
        | Msg::RunStarted { .. }
        | Msg::StepStarted(_)
        | Msg::Interval(_)
        | Msg::PlanSteps(_)
        | Msg::StepFinished(..)
        | Msg::Grid(_)
        | Msg::Method(_)
        | Msg::Drive(_)
        | Msg::SteadyState(_)
        | Msg::Event(_)
        | Msg::Thermal { .. }
        | Msg::Integrity(_)
        | Msg::IntegrityFinding(_) => {}
    }
}

fn step_started(app: &mut App, i: usize, info: StepInfo) {
    let phase_changed = app
        .slot_mut(i)
        .run
        .step
        .as_ref()
        .is_none_or(|s| s.phase_name != info.phase_name);
    if app.run.state == RunState::Starting {
        app.run.state = RunState::Running;
    }
    // The skip asked for is done: its notice goes.
    if app.skip_notice {
        app.skip_notice = false;
        app.notice = None;
    }
    let text = format!("phase {}", info.phase_name);
    let held = app.run.pauses.held(app.now_s);
    let run = &mut app.slot_mut(i).run;
    run.step = Some(info);
    run.step_open = true;
    run.last = None;
    run.paused_before_step_s = held;
    if phase_changed {
        app.push_event_on(i, EventCategory::Phase, text);
    }
    app.slot_mut(i).run.steady = SteadyView::NotApplicable;
    app.dirty = true;
}

fn steady(app: &mut App, i: usize, s: SteadyView) {
    let was = app.slot_mut(i).run.steady.clone();
    let reached =
        matches!(s, SteadyView::Reached { .. }) && !matches!(was, SteadyView::Reached { .. });
    if let (true, SteadyView::Reached { detail }) = (reached, &s) {
        app.push_event_on(
            i,
            EventCategory::SteadyState,
            format!("steady state: {detail}"),
        );
    }
    if let SteadyView::NotReached { detail } = &s {
        if was != s {
            app.push_event_on(
                i,
                EventCategory::SteadyState,
                format!("steady state not reached: {detail}"),
            );
        }
    }
    app.slot_mut(i).run.steady = s;
    app.dirty = true;
}

fn run_ended(
    app: &mut App,
    i: usize,
    outcome: RunEnd,
    error: Option<String>,
    saved_to: Option<std::path::PathBuf>,
) {
    drives::run_ended(app, outcome);
    let outcome = outcome.label().to_string();
    match &error {
        Some(e) => app.push_event_on(i, EventCategory::Error, format!("run {outcome}: {e}")),
        None => app.push_event_on(i, EventCategory::Info, format!("run {outcome}")),
    }
    if let Some(p) = &saved_to {
        app.push_event_on(
            i,
            EventCategory::Save,
            format!("session saved to {}", p.display()),
        );
    }
    app.notify(format!("run {outcome}"));
    app.run.state = RunState::Ended { outcome };
    app.run.error = error;
    app.run.saved_to = saved_to;
    // A question about stopping the run has no object now; one about quitting stays (its
    // answer still quits: a yes typed as the run ended is not lost).
    if matches!(
        app.overlay,
        Some(Overlay::Confirm(Confirm::StopRun | Confirm::StopDrive(_)))
    ) {
        app.overlay = None;
    }
}

fn signal(app: &mut App, sig: i32) -> Vec<Effect> {
    app.quit = true;
    app.quit_signal = Some(sig);
    app.dirty = true;
    let mut fx = Vec::new();
    if app.run.state.is_active() {
        app.run.state = RunState::Stopping;
        fx.push(Effect::Stop);
    }
    app.push_event(EventCategory::Info, format!("signal {sig}: quitting"));
    fx.push(Effect::Quit);
    fx
}

/// Applies a message of drive `i` of the table to that drive's slot; events it adds name
/// the drive.
fn on_drive(app: &mut App, i: usize, msg: Msg) -> Vec<Effect> {
    if !drives::table(app) || i >= app.drives.len() {
        return update(app, msg);
    }
    if matches!(msg, Msg::RunStarted { .. } | Msg::StepStarted(_)) {
        let st = &mut app.drives[i].state;
        if matches!(st, DriveState::Idle | DriveState::Starting) {
            *st = DriveState::Running;
        }
    }
    let before = app.events.pushed();
    // Telemetry straight to the figures: `update` sends untagged samples to the first drive.
    let fx = match msg {
        Msg::Telemetry(t) => {
            telemetry(app, i, *t);
            Vec::new()
        }
        m => update_on(app, i, m),
    };
    let added = app.events.pushed().saturating_sub(before) as usize;
    let label = app.drives[i].label.clone();
    // On the drive's own clock, never earlier than its event before; then the panel in
    // time order over every drive (each drive's clock starts with the run of them all).
    let mut latest = app.drives[i].run.last_event_s;
    let skip = app.events.len().saturating_sub(added);
    for e in app.events.iter_mut().skip(skip) {
        e.text = format!("[{label}] {}", e.text);
        e.t_s = e.t_s.max(latest);
        latest = e.t_s;
    }
    app.drives[i].run.last_event_s = latest;
    fx
}

fn interval(app: &mut App, i: usize, r: crate::stats::IntervalReport) {
    let run = &mut app.slot_mut(i).run;
    let step_start = run.step.as_ref().map(|s| s.started_s).unwrap_or(0.0);
    run.intervals
        .push(IntervalPoint::from_report(&r, step_start));
    if r.errors > 0 {
        run.errors += r.errors;
        let first = r
            .error_records
            .first()
            .map(|e| format!(": {}", e.message))
            .unwrap_or_default();
        app.push_event_on(
            i,
            EventCategory::Error,
            format!(
                "{} I/O error{}{first}",
                r.errors,
                if r.errors == 1 { "" } else { "s" }
            ),
        );
    }
    let mut r = r;
    r.hists = None;
    r.error_records.clear();
    app.slot_mut(i).run.last = Some(r);
    app.dirty = true;
}

fn telemetry(app: &mut App, i: usize, mut t: TelemetryView) {
    // A figure that is not a number is no reading: shown as missing, never as "NaN °C".
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    t.temperature_c = finite(t.temperature_c);
    t.warning_c = finite(t.warning_c);
    t.critical_c = finite(t.critical_c);
    t.tmt1_c = finite(t.tmt1_c);
    t.tmt2_c = finite(t.tmt2_c);
    t.power_state_max_w = finite(t.power_state_max_w);
    t.power_w = finite(t.power_w);
    t.sensors_c.retain(|x| x.is_finite());
    let slot = app.slot_mut(i);
    let tel = &mut slot.telemetry;
    let prev = tel.last.as_ref().and_then(|p| p.throttle_transitions);
    if let (Some(a), Some(b)) = (prev, t.throttle_transitions) {
        if b > a {
            let marks = &mut tel.throttle_marks;
            if marks.len() >= THROTTLE_MARKS {
                marks.remove(0);
            }
            marks.push(t.t_s);
            app.events.push(super::view::EventView {
                t_s: t.t_s,
                kind: EventCategory::Throttle,
                text: format!(
                    "throttling began: {} transition{}{}",
                    b - a,
                    if b - a == 1 { "" } else { "s" },
                    t.temperature_c
                        .map(|c| format!(" at {c:.0} °C"))
                        .unwrap_or_default()
                ),
            });
        }
    }
    for reason in &t.unavailable {
        let tel = &mut app.slot_mut(i).telemetry;
        if !tel.unavailable.contains(reason) && tel.unavailable.len() < UNAVAILABLE_REASONS {
            tel.unavailable.push(reason.clone());
            app.events.push(super::view::EventView {
                t_s: t.t_s,
                kind: EventCategory::Info,
                text: reason.clone(),
            });
        }
    }
    let tel = &mut app.slot_mut(i).telemetry;
    tel.history.push(ThermalPoint {
        t_s: t.t_s,
        temperature_c: t.temperature_c,
        sensors_c: t.sensors_c.clone(),
        power_w: t.power_w,
    });
    tel.last = Some(t);
    app.dirty = true;
}
