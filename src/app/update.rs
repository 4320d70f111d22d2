//! `update`: the one place the app's state changes. Each message may change the state and
//! returns the effects the runtime carries out; nothing here does I/O. Keys and mouse are
//! handled in [`input`](super::input).

use ratatui::crossterm::event::KeyEventKind;

use super::history::{IntervalPoint, ThermalPoint, THROTTLE_MARKS, UNAVAILABLE_REASONS};
use super::input::{key, mouse};
use super::msg::{Effect, Msg, RunState};
use super::overlay::Overlay;
use super::state::App;
use super::view::{EventCategory, SteadyView, TelemetryView};

/// Applies `msg` to `app`; returns what the runtime must do.
pub fn update(app: &mut App, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(k) => {
            if k.kind == KeyEventKind::Release {
                return Vec::new();
            }
            app.dirty = true;
            key(app, &k)
        }
        Msg::Mouse(m) => mouse(app, &m),
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
            Vec::new()
        }
        Msg::Resize(w, h) => {
            app.size = (w, h);
            app.dirty = true;
            Vec::new()
        }
        Msg::RunStarted { preset_id, target } => {
            app.run.state = RunState::Running;
            app.notice = None;
            let name = app.preset_name(&preset_id);
            app.push_event(
                EventCategory::Phase,
                format!("started {name} on {}", target.display()),
            );
            app.run.preset_id = Some(preset_id);
            app.run.target = Some(target);
            Vec::new()
        }
        Msg::StepStarted(info) => {
            let phase_changed = app
                .run
                .step
                .as_ref()
                .is_none_or(|s| s.phase_name != info.phase_name);
            if app.run.state == RunState::Starting {
                app.run.state = RunState::Running;
            }
            let text = format!("phase {}", info.phase_name);
            app.run.step = Some(info);
            app.run.last = None;
            if phase_changed {
                app.push_event(EventCategory::Phase, text);
            }
            app.run.steady = SteadyView::NotApplicable;
            app.dirty = true;
            Vec::new()
        }
        Msg::Interval(r) => {
            interval(app, *r);
            Vec::new()
        }
        Msg::StepFinished(p) => {
            app.run.curve.push(p);
            app.dirty = true;
            Vec::new()
        }
        // The dashboard's own telemetry watches the first drive of the table.
        Msg::Telemetry(t) if super::drives::table(app) => {
            super::drives::on_drive(app, 0, Msg::Telemetry(t))
        }
        Msg::Telemetry(t) => {
            telemetry(app, *t);
            Vec::new()
        }
        Msg::OnDrive(i, m) => super::drives::on_drive(app, i, *m),
        Msg::DriveEnded { drive, outcome } => {
            super::drives::ended(app, drive, outcome);
            Vec::new()
        }
        Msg::Drive(d) => {
            app.drive = Some(d);
            app.dirty = true;
            Vec::new()
        }
        Msg::SteadyState(s) => {
            let reached = matches!(s, SteadyView::Reached { .. })
                && !matches!(app.run.steady, SteadyView::Reached { .. });
            if let (true, SteadyView::Reached { detail }) = (reached, &s) {
                app.push_event(
                    EventCategory::SteadyState,
                    format!("steady state: {detail}"),
                );
            }
            if let SteadyView::NotReached { detail } = &s {
                if app.run.steady != s {
                    app.push_event(
                        EventCategory::SteadyState,
                        format!("steady state not reached: {detail}"),
                    );
                }
            }
            app.run.steady = s;
            app.dirty = true;
            Vec::new()
        }
        Msg::Event(e) => {
            app.events.push(e);
            app.dirty = true;
            Vec::new()
        }
        Msg::Thermal { t_s, event } => {
            app.run.push_thermal(t_s, event);
            app.dirty = true;
            Vec::new()
        }
        Msg::Integrity(totals) => {
            app.run
                .integrity
                .get_or_insert_with(Default::default)
                .totals = totals;
            app.dirty = true;
            Vec::new()
        }
        Msg::IntegrityFinding(text) => {
            app.run.integrity.get_or_insert_with(Default::default).last = Some(text);
            app.dirty = true;
            Vec::new()
        }
        Msg::RunEnded {
            outcome,
            error,
            saved_to,
        } => {
            super::drives::run_ended(app, outcome);
            let outcome = outcome.label().to_string();
            match &error {
                Some(e) => app.push_event(EventCategory::Error, format!("run {outcome}: {e}")),
                None => app.push_event(EventCategory::Info, format!("run {outcome}")),
            }
            if let Some(p) = &saved_to {
                app.push_event(
                    EventCategory::Save,
                    format!("session saved to {}", p.display()),
                );
            }
            app.notify(format!("run {outcome}"));
            app.run.state = RunState::Ended { outcome };
            app.run.error = error;
            app.run.saved_to = saved_to;
            if matches!(app.overlay, Some(Overlay::Confirm(_))) {
                app.overlay = None;
            }
            Vec::new()
        }
        Msg::Presets(p) => {
            let keep = app.selected_preset().map(|p| p.id.clone());
            app.presets = p;
            app.preset_sel = keep
                .and_then(|id| app.presets.iter().position(|p| p.id == id))
                .unwrap_or(0);
            app.dirty = true;
            Vec::new()
        }
        Msg::Targets(t) => {
            let keep = app.selected_target().map(|t| t.path.clone());
            app.targets = t;
            app.target_sel = keep
                .and_then(|p| app.targets.iter().position(|t| t.path == p))
                .unwrap_or(0);
            app.dirty = true;
            Vec::new()
        }
        Msg::Notice(n) => {
            app.notify(n);
            Vec::new()
        }
        Msg::ReplayReset => {
            app.reset_run_views();
            Vec::new()
        }
        Msg::ReplayAt { at_s, end_s } => {
            let hms = |s: f64| {
                let s = s.max(0.0) as u64;
                format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
            };
            app.run.state = RunState::Ended {
                outcome: format!("replay {} of {}", hms(at_s), hms(end_s)),
            };
            app.dirty = true;
            Vec::new()
        }
        Msg::Signal(sig) => {
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
    }
}

fn interval(app: &mut App, r: crate::stats::IntervalReport) {
    let step_start = app.run.step.as_ref().map(|s| s.started_s).unwrap_or(0.0);
    app.run
        .intervals
        .push(IntervalPoint::from_report(&r, step_start));
    if r.errors > 0 {
        app.run.errors += r.errors;
        let first = r
            .error_records
            .first()
            .map(|e| format!(": {}", e.message))
            .unwrap_or_default();
        app.push_event(
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
    app.run.last = Some(r);
    app.dirty = true;
}

pub(super) fn telemetry(app: &mut App, mut t: TelemetryView) {
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
    let prev = app
        .telemetry
        .last
        .as_ref()
        .and_then(|p| p.throttle_transitions);
    if let (Some(a), Some(b)) = (prev, t.throttle_transitions) {
        if b > a {
            let marks = &mut app.telemetry.throttle_marks;
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
        if !app.telemetry.unavailable.contains(reason)
            && app.telemetry.unavailable.len() < UNAVAILABLE_REASONS
        {
            app.telemetry.unavailable.push(reason.clone());
            app.events.push(super::view::EventView {
                t_s: t.t_s,
                kind: EventCategory::Info,
                text: reason.clone(),
            });
        }
    }
    app.telemetry.history.push(ThermalPoint {
        t_s: t.t_s,
        temperature_c: t.temperature_c,
        sensors_c: t.sensors_c.clone(),
        power_w: t.power_w,
    });
    app.telemetry.last = Some(t);
    app.dirty = true;
}
