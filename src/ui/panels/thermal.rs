//! Thermal and power: the drive's health verdict, composite and sensor temperatures over
//! time with the warning and critical thresholds drawn (and the host controlled thermal
//! management temperatures TMT1/TMT2 where the drive has them), power state and its ceiling (or
//! measured watts), throttle transitions and time. Says why when the drive gives none of it.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::slot::DriveSlot;
use crate::app::App;
use crate::telemetry::Health;
use crate::ui::format;
use crate::ui::widgets::{axis, bold, dots, line, time_chart};
use crate::ui::widgets::{axis_labels, empty, hline, panel_block, time_labels, vlines};

/// Columns of the "health " label before the verdict.
const HEALTH_LABEL: usize = 7;

/// The health verdict, wrapped to `width`: a failing drive in the error colour with its
/// reasons, a passed one in the good colour; nothing while no source gave one.
fn health_lines(app: &App, h: &Health, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let colour = match h.passed {
        _ if h.is_failing() => t.critical,
        Some(true) => t.ok,
        _ => return Vec::new(),
    };
    let style = bold(colour);
    format::wrap(&h.to_string(), width.saturating_sub(HEALTH_LABEL))
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let label = if i == 0 { "health " } else { "" };
            Line::from(vec![
                Span::styled(format!("{label:<HEALTH_LABEL$}"), t.dim_style()),
                Span::styled(piece, style),
            ])
        })
        .collect()
}

fn figures(app: &App, slot: &DriveSlot, width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    let Some(s) = &slot.telemetry.last else {
        return Vec::new();
    };
    let mut lines = health_lines(app, &s.health, width);
    let mut l1 = Vec::new();
    if let Some(c) = s.temperature_c {
        let colour = match (s.warning_c, s.critical_c) {
            (_, Some(cr)) if c >= cr => t.critical,
            (Some(w), _) if c >= w => t.warning,
            _ => t.accent,
        };
        l1.push(Span::styled("composite ", t.dim_style()));
        l1.push(Span::styled(format!("{c:.0} °C"), bold(colour)));
    }
    if !s.sensors_c.is_empty() {
        let v: Vec<String> = s.sensors_c.iter().map(|c| format!("{c:.0}")).collect();
        l1.push(Span::styled(
            format!("  sensors {} °C", v.join(" ")),
            Style::default().fg(t.fg),
        ));
    }
    if let Some(w) = s.warning_c {
        l1.push(Span::styled(
            format!("  warn {w:.0}"),
            Style::default().fg(t.warning),
        ));
    }
    if let Some(c) = s.critical_c {
        l1.push(Span::styled(
            format!("  crit {c:.0}"),
            Style::default().fg(t.critical),
        ));
    }
    let mut l2 = Vec::new();
    if let Some(ps) = s.power_state {
        l2.push(Span::styled("power ", t.dim_style()));
        let ceiling = s
            .power_state_max_w
            .map(|w| format!(" ≤ {w:.2} W"))
            .unwrap_or_default();
        l2.push(Span::styled(
            format!("PS{ps}{ceiling}"),
            Style::default().fg(t.fg),
        ));
    }
    if let Some(w) = s.power_w {
        l2.push(Span::styled("  measured ", t.dim_style()));
        l2.push(Span::styled(
            format!("{w:.1} W"),
            Style::default().fg(t.accent),
        ));
    }
    if let Some(n) = s.throttle_transitions {
        let secs = s
            .throttle_seconds
            .map(|x| format!(" · {}", format::clock(x as f64)))
            .unwrap_or_default();
        let style = if slot.telemetry.throttle_marks.is_empty() {
            Style::default().fg(t.fg)
        } else {
            bold(t.throttle)
        };
        l2.push(Span::styled("  throttle ", t.dim_style()));
        let plural = if n == 1 { "" } else { "s" };
        l2.push(Span::styled(format!("{n} transition{plural}{secs}"), style));
    }
    // Host controlled thermal management: where the drive throttles (a line of its own, so
    // that narrow panels do not cut it off).
    let mut l3 = Vec::new();
    for (name, v) in [("TMT1", s.tmt1_c), ("TMT2", s.tmt2_c)] {
        if let Some(v) = v {
            if l3.is_empty() {
                l3.push(Span::styled("throttles at ", t.dim_style()));
            } else {
                l3.push(Span::raw("  "));
            }
            l3.push(Span::styled(
                format!("{name} {v:.0} °C"),
                Style::default().fg(t.throttle),
            ));
        }
    }
    lines.extend(
        [l1, l2, l3]
            .into_iter()
            .chain(soak_lines(app, slot))
            .filter(|l| !l.is_empty())
            .map(Line::from),
    );
    lines
}

/// The temperatures shown: (time, °C) of each sample that has one.
fn temperatures(slot: &DriveSlot) -> Vec<(f64, f64)> {
    slot.telemetry
        .history
        .iter()
        .filter_map(|p| p.temperature_c.map(|c| (p.t_s, c)))
        .collect()
}

/// A thermal soak's figures so far, on two lines: time to the warning temperature and the
/// throttle onset; the cliff, the peak and the cool-down (times from the start of I/O).
fn soak_lines(app: &App, slot: &DriveSlot) -> [Vec<Span<'static>>; 2] {
    // Most runs have no thermal event: nothing to build on each frame.
    if slot.run.thermal.is_empty() {
        return [Vec::new(), Vec::new()];
    }
    let t = app.theme();
    let temps = temperatures(slot);
    let Some(s) = slot.run.soak(&temps) else {
        return [Vec::new(), Vec::new()];
    };
    let sep = Span::styled(" · ", t.dim_style());
    let put = |l: &mut Vec<Span<'static>>, text: String, style: Style| {
        if l.len() > 1 {
            l.push(sep.clone());
        }
        l.push(Span::styled(text, style));
    };
    let mut first = vec![Span::styled("soak ", t.dim_style())];
    match s.to_warning {
        Some((secs, _)) => put(
            &mut first,
            format!("warning at {}", format::clock(secs)),
            Style::default().fg(t.warning),
        ),
        None => put(
            &mut first,
            "warning not reached".into(),
            Style::default().fg(t.fg),
        ),
    }
    match s.onset {
        Some((secs, c, _)) => put(
            &mut first,
            format!(
                "throttled at {}{}",
                format::clock(secs),
                c.map(|c| format!(" ({c} °C)")).unwrap_or_default()
            ),
            bold(t.throttle),
        ),
        None => put(&mut first, "no throttle".into(), Style::default().fg(t.fg)),
    }
    let mut second = vec![Span::styled("     ", t.dim_style())];
    if let Some((iops, _)) = s.cliff().filter(|c| c.0.is_finite()) {
        put(
            &mut second,
            format!("cliff {iops:.2}×"),
            Style::default().fg(t.throttle),
        );
    }
    if let Some((_, p)) = s.peak {
        put(
            &mut second,
            format!("peak {p:.0} °C"),
            Style::default().fg(t.accent),
        );
    }
    if let Some(c) = s.cooled_s {
        put(
            &mut second,
            format!("cooled in {}", format::clock(c)),
            Style::default().fg(t.fg),
        );
    }
    if second.len() == 1 {
        second.clear();
    }
    [first, second]
}

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Thermal & power", t);
    let temps = temperatures(slot);
    let lines = figures(app, slot, block.inner(area).width.into());
    if temps.is_empty() && lines.is_empty() {
        let mut why: Vec<String> = slot.telemetry.unavailable.clone();
        if why.is_empty() {
            why.push("no telemetry yet".into());
        }
        return empty(f, area, block, why, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let n = lines.len() as u16;
    let [top, chart_area] =
        Layout::vertical([Constraint::Length(n), Constraint::Min(1)]).areas(inner);
    f.render_widget(Paragraph::new(lines), top);
    if temps.is_empty() {
        let mut why = slot.telemetry.unavailable.clone();
        if why.is_empty() {
            why.push("the drive reports no temperature".into());
        }
        f.render_widget(
            Paragraph::new(
                why.into_iter()
                    .map(|w| Line::styled(w, t.dim_style()))
                    .collect::<Vec<_>>(),
            ),
            chart_area,
        );
        return;
    }
    let last = slot.telemetry.last.as_ref();
    let warn = last.and_then(|l| l.warning_c);
    let crit = last.and_then(|l| l.critical_c);
    let tmt1 = last.and_then(|l| l.tmt1_c);
    let tmt2 = last.and_then(|l| l.tmt2_c);
    let x0 = temps.first().map(|p| p.0).unwrap_or(0.0);
    let x1 = temps.last().map(|p| p.0).unwrap_or(1.0).max(x0 + 1.0);
    let tmax = temps.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let tmin = temps.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let y0 = ((tmin - 5.0) / 10.0).floor() * 10.0;
    // Every threshold line drawn stays inside the chart.
    let top = [warn, crit, tmt1, tmt2]
        .into_iter()
        .flatten()
        .fold(tmax, f64::max);
    let y1 = ((top + 5.0) / 10.0).ceil() * 10.0;
    let sensors: Vec<Vec<(f64, f64)>> = {
        let count = slot
            .telemetry
            .history
            .iter()
            .map(|p| p.sensors_c.len())
            .max()
            .unwrap_or(0);
        (0..count.min(4))
            .map(|i| {
                slot.telemetry
                    .history
                    .iter()
                    .filter_map(|p| p.sensors_c.get(i).map(|c| (p.t_s, *c)))
                    .collect()
            })
            .collect()
    };
    let wl = warn.map(|w| hline(w, x0, x1)).unwrap_or_default();
    let cl = crit.map(|c| hline(c, x0, x1)).unwrap_or_default();
    // TMT1 and TMT2 dotted, in one dataset: both show where they fall in one row of cells.
    let tmts: Vec<(f64, f64)> = [tmt1, tmt2]
        .into_iter()
        .flatten()
        .flat_map(|c| hline(c, x0, x1))
        .collect();
    let marks = vlines(&slot.telemetry.throttle_marks, [x0, x1], [y0, y1]);
    // Drawn first: where a TMT shares a row of cells with the warning or critical line,
    // those stay visible.
    let mut sets = vec![dots(&tmts, Style::default().fg(t.throttle))];
    for (data, colour) in [(&wl, t.warning), (&cl, t.critical)] {
        sets.push(line(data, Style::default().fg(colour)));
    }
    for m in &marks {
        sets.push(line(m, Style::default().fg(t.throttle)));
    }
    for s in &sensors {
        sets.push(line(s, t.dim_style()));
    }
    sets.push(line(&temps, Style::default().fg(t.accent)));
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).labels(time_labels(x0, x1)))
        .y_axis(axis([y0, y1], t).labels(axis_labels(y0, y1, 3, |v| format!("{v:.0}°C"))));
    f.render_widget(chart, chart_area);
}
