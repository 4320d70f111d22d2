//! The header: drive identity (and its health when a source says it fails), target,
//! preset, phase and step, run state, steady state, and progress with ETA for the step and
//! the whole plan.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{LineGauge, Paragraph};
use ratatui::Frame;

use crate::app::slot::DriveSlot;
use crate::app::{App, RunState, SteadyView, TargetKind};
use crate::telemetry::Health;
use crate::ui::format;
use crate::ui::widgets::{bold, panel_block};
use crate::workload::EngineKind;

/// The drive's health from the last telemetry, when a source says it fails.
fn failing_health(slot: &DriveSlot) -> Option<&Health> {
    let h = &slot.telemetry.last.as_ref()?.health;
    h.is_failing().then_some(h)
}

fn drive_line(app: &App, slot: &DriveSlot) -> Line<'static> {
    let t = app.theme();
    let mut spans = vec![Span::styled("drive ", t.dim_style())];
    if let Some(d) = app.table_drives().get(app.picked) {
        spans.push(Span::styled(
            format!("{} · ", format::shown(&d.label)),
            bold(super::drives::colour(t, app.picked)),
        ));
    }
    match &slot.drive {
        None => spans.push(Span::styled("not identified yet", t.dim_style())),
        Some(d) => {
            let model = d
                .model
                .as_deref()
                .map_or_else(|| "model unknown".into(), format::shown);
            spans.push(Span::styled(model, bold(t.accent)));
            // Before the rest of the identity, so a narrow screen cuts that, not this.
            if let Some(h) = failing_health(slot) {
                spans.push(Span::styled(" · ", t.dim_style()));
                spans.push(Span::styled(format!("health {h}"), bold(t.critical)));
            }
            let mut rest = Vec::new();
            if let Some(s) = &d.serial {
                rest.push(format!("SN {}", format::shown(s)));
            }
            if let Some(fw) = &d.firmware {
                rest.push(format!("FW {}", format::shown(fw)));
            }
            // The binary size beside the decimal one where the line has room for it.
            if let Some(c) = d.capacity_bytes {
                rest.push(if app.size.0 >= 100 {
                    format::capacity(c)
                } else {
                    format::capacity_decimal(c)
                });
            }
            if let Some(tr) = &d.transport {
                rest.push(format::shown(tr));
            }
            if !rest.is_empty() {
                spans.push(Span::styled(
                    format!(" · {}", rest.join(" · ")),
                    Style::default().fg(t.fg),
                ));
            }
            spans.extend(zones_span(app, slot, d));
        }
    }
    Line::from(spans)
}

/// A zoned drive's zones by condition (the telemetry poller's latest zone report), then its
/// zone model, size, count and limits, after its identity.
fn zones_span(app: &App, slot: &DriveSlot, d: &crate::app::DriveView) -> Option<Span<'static>> {
    let z = d.zones.as_ref()?;
    let states = slot
        .telemetry
        .last
        .as_ref()
        .and_then(|t| t.zones)
        .map(|s| format!("{} · ", crate::telemetry::devices::zone_states_text(&s)))
        .unwrap_or_default();
    // The zones' states first: they change, and a narrow line cuts its end.
    Some(Span::styled(
        format!(
            " · zones {states}{}",
            crate::telemetry::devices::zones_text(z)
        ),
        Style::default().fg(app.theme().warning),
    ))
}

fn run_line(app: &App, slot: &DriveSlot) -> Line<'static> {
    let t = app.theme();
    let sep = || Span::styled("  │  ", t.dim_style());
    let mut spans = Vec::new();
    let preset = match (&app.run.state, &app.run.preset_id) {
        (RunState::Idle, _) | (_, None) => app
            .selected_preset()
            .map(|p| format!("{} (highlighted)", format::shown(&p.name)))
            .unwrap_or_else(|| "no presets".into()),
        (_, Some(id)) => format::shown(&app.preset_name(id)),
    };
    spans.push(Span::styled("preset ", t.dim_style()));
    spans.push(Span::styled(preset, Style::default().fg(t.fg)));
    if let Some(s) = &slot.run.step {
        spans.push(sep());
        spans.push(Span::styled("phase ", t.dim_style()));
        spans.push(Span::styled(
            format::shown(&s.phase_name),
            Style::default().fg(t.fg),
        ));
        spans.push(sep());
        spans.push(Span::styled(
            format!("step {}/{} ", s.index + 1, s.count),
            t.dim_style(),
        ));
        let mut name = format::shown(&s.name);
        if let Some(r) = s.target_iops.filter(|_| s.rate_limited) {
            name.push_str(&format!(" @ {} IOPS", format::iops(r)));
        }
        spans.push(Span::styled(name, Style::default().fg(t.fg)));
        if s.engine != EngineKind::IoUring || !s.engine_options.is_default() {
            spans.push(sep());
            spans.push(Span::styled("engine ", t.dim_style()));
            let mut engine = s.engine.to_string();
            if !s.engine_options.is_default() {
                engine.push_str(&format!(" ({})", s.engine_options));
            }
            spans.push(Span::styled(engine, Style::default().fg(t.fg)));
        }
    }
    if slot.run.errors > 0 {
        spans.push(sep());
        spans.push(Span::styled(
            format!("{} I/O errors", slot.run.errors),
            bold(t.critical),
        ));
    }
    Line::from(spans)
}

/// Run state, steady state and errors, for the header's bottom border (right-aligned,
/// so they stay visible however long the step name is).
fn state_line(app: &App, slot: &DriveSlot) -> Line<'static> {
    let t = app.theme();
    let sep = || Span::styled(" · ", t.dim_style());
    let mut spans = vec![Span::raw(" ")];
    let state_style = match &app.run.state {
        RunState::Running => Style::default().fg(t.ok),
        RunState::Paused | RunState::Stopping | RunState::Starting => {
            Style::default().fg(t.warning)
        }
        RunState::Ended { .. } if app.run.error.is_some() => Style::default().fg(t.critical),
        _ => Style::default().fg(t.fg),
    };
    spans.push(Span::styled(
        app.run.state.label(),
        state_style.add_modifier(Modifier::BOLD),
    ));
    let steady = match &slot.run.steady {
        SteadyView::NotApplicable => None,
        SteadyView::Tracking { detail } => Some((format!("steady: measuring, {detail}"), t.fg)),
        SteadyView::Reached { detail } => Some((format!("steady: reached, {detail}"), t.ok)),
        SteadyView::NotReached { detail } => {
            Some((format!("steady: not reached, {detail}"), t.warning))
        }
    };
    if let Some((s, c)) = steady {
        spans.push(sep());
        spans.push(Span::styled(s, Style::default().fg(c)));
    }
    spans.push(Span::raw(" "));
    Line::from(spans).right_aligned()
}

/// `r` as a gauge ratio: within 0..=1, and 0 when it is not a number.
fn unit(r: f64) -> f64 {
    if r.is_finite() {
        r.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Progress `(ratio, label)` of the step and of the plan.
pub fn progress(app: &App, slot: &DriveSlot) -> [(f64, String); 2] {
    let none = |what: &str| (0.0, format!("{what}: no run"));
    let Some(s) = &slot.run.step else {
        return [none("step"), none("plan")];
    };
    // The step's and the plan's own time: the user's pauses left out.
    let held = app.run.pauses.held(app.now_s);
    let done = slot.run.step_working_s(held);
    let step = match s.expected_s.filter(|e| *e > 0.0) {
        Some(e) => (
            unit(done / e),
            format!(
                "step {} of {} · {} left",
                format::clock(done),
                format::clock(e),
                format::clock((e - done).max(0.0))
            ),
        ),
        None => (
            0.0,
            format!(
                "step {} · ends on its own rule (no fixed length)",
                format::clock(done)
            ),
        ),
    };
    let run_done = slot.run.run_working_s(held);
    // The plan's ETA in the words of the preset picker and `presets list`.
    let about = |secs: f64| {
        let d = std::time::Duration::try_from_secs_f64(secs.max(0.0));
        crate::units::readable_duration(d.unwrap_or(std::time::Duration::MAX))
    };
    let plan = match s.plan_expected_s.filter(|e| e.is_finite() && *e > 0.0) {
        Some(e) => (
            unit(run_done / e),
            format!(
                "plan {} of about {} · about {} left",
                format::clock(run_done),
                about(e),
                about(e - run_done)
            ),
        ),
        None => (
            unit(s.index as f64 / s.count.max(1) as f64),
            format!(
                "plan {} · step {} of {} (length not known ahead)",
                format::clock(run_done),
                s.index + 1,
                s.count
            ),
        ),
    };
    [step, plan]
}

/// The target of the run, or the chosen one when idle, with its kind, in `width` columns:
/// a long path loses its start (`…/scratch.bin`) so that what it is stays whole.
fn target_title(app: &App, slot: &DriveSlot, width: usize) -> String {
    let target = slot
        .run
        .target
        .clone()
        .filter(|_| app.run.state != RunState::Idle)
        .or_else(|| app.selected_target().map(|t| t.path.clone()));
    match target {
        // The nop engine's run: nothing under test but the engine.
        Some(p) if p.as_os_str().is_empty() => "drivescope · no target".into(),
        Some(p) => {
            let kind = app
                .targets
                .iter()
                .find(|t| t.path == p)
                .map(|t| match (t.kind, crate::ui::overlays::creates_text(t)) {
                    (_, Some(new)) => format!(" ({new})"),
                    (TargetKind::File, None) => " (test file)".into(),
                    (TargetKind::BlockDevice, None) => " (device)".into(),
                    (TargetKind::NvmeGeneric, None) => " (NVMe passthrough)".into(),
                    (TargetKind::None, None) => " (no target)".into(),
                })
                .unwrap_or_default();
            let room = width.saturating_sub("drivescope · ".chars().count() + kind.chars().count());
            let path = format::cut_start(&format::shown_path(&p), room.max(12));
            format!("drivescope · {path}{kind}")
        }
        None => "drivescope · no target chosen".into(),
    }
}

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    // The border's corners and the spaces around the title.
    let title = target_title(app, slot, usize::from(area.width).saturating_sub(4));
    let block = panel_block(title, t).title_bottom(state_line(app, slot));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [l1, l2, g1, g2] = Layout::vertical([Constraint::Length(1); 4]).areas(inner);
    f.render_widget(Paragraph::new(drive_line(app, slot)), l1);
    f.render_widget(Paragraph::new(run_line(app, slot)), l2);
    for ((ratio, label), area) in progress(app, slot).into_iter().zip([g1, g2]) {
        f.render_widget(
            LineGauge::default()
                .ratio(ratio)
                .label(Span::styled(format!("{label} "), Style::default().fg(t.fg)))
                .filled_style(Style::default().fg(t.accent))
                .unfilled_style(Style::default().fg(t.border)),
            area,
        );
    }
}
