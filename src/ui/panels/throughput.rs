//! Throughput: read and write IOPS (or MB/s, by the units key) over time with the current
//! IOPS and MB/s (and trims, in a step that trims), and a mark
//! where thermal throttling began, so the cause of a drop shows where the drop is.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::slot::DriveSlot;
use crate::app::{App, RunState};
use crate::ui::format;
use crate::ui::widgets::{axis, bold, line, time_chart};
use crate::ui::widgets::{
    axis_labels, empty, figure, padded, panel_block, time_labels, vlines, Series,
};

/// Why a run panel has nothing to draw yet, or `None` when it has data.
pub fn waiting_reason(app: &App, slot: &DriveSlot) -> Option<Vec<String>> {
    if !slot.run.intervals.is_empty() {
        return None;
    }
    Some(match &app.run.state {
        RunState::Idle => {
            let start = app.keymap.describe(crate::app::Action::Start);
            match app.selected_preset() {
                Some(p) => vec![
                    "no run yet".into(),
                    format!("{start} starts {}", crate::ui::format::shown(&p.name)),
                ],
                None => vec!["no run yet".into(), "no presets were given".into()],
            }
        }
        RunState::Starting => vec!["starting: preparing the target".into()],
        RunState::Ended { outcome } => {
            vec![format!("the run ended ({outcome}) before any interval")]
        }
        _ => vec!["waiting for the first interval".into()],
    })
}

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let title = if app.chart_bandwidth {
        "Throughput (MB/s)"
    } else {
        "Throughput (IOPS)"
    };
    let block = panel_block(title, t);
    if let Some(lines) = waiting_reason(app, slot) {
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [top, chart_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);

    let pts: Vec<_> = slot.run.intervals.iter().collect();
    let bw = app.chart_bandwidth;
    let (read, write): (Series, Series) = pts
        .iter()
        .map(|p| {
            if bw {
                ((p.t_s, p.read_bw / 1e6), (p.t_s, p.write_bw / 1e6))
            } else {
                ((p.t_s, p.read_iops), (p.t_s, p.write_iops))
            }
        })
        .unzip();
    let trim: Series = pts
        .iter()
        .map(|p| (p.t_s, if bw { p.trim_bw / 1e6 } else { p.trim_iops }))
        .collect();
    let any_read = pts.iter().any(|p| p.read_iops > 0.0);
    let any_write = pts.iter().any(|p| p.write_iops > 0.0);
    let any_trim = pts.iter().any(|p| p.trim_iops > 0.0);
    let x0 = pts.first().map(|p| p.t_s).unwrap_or(0.0);
    let x1 = pts.last().map(|p| p.t_s).unwrap_or(1.0).max(x0 + 1.0);
    let ymax = read
        .iter()
        .chain(&write)
        .chain(&trim)
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let [_, y1] = padded(0.0, ymax.max(1.0));

    if let Some(last) = slot.run.intervals.last() {
        let mut spans = Vec::new();
        for (shown, name, iops, bw, colour) in [
            (
                any_read || !(any_write || any_trim),
                "read",
                last.read_iops,
                last.read_bw,
                t.read,
            ),
            (any_write, "write", last.write_iops, last.write_bw, t.write),
            (any_trim, "trim", last.trim_iops, last.trim_bw, t.trim),
        ] {
            if shown {
                let figures = format!("{} IOPS {}", format::iops(iops), format::bw(bw));
                let style = bold(colour);
                spans.extend(figure(name, figures, style, t));
                spans.push(Span::raw("   "));
            }
        }
        if last.ramp {
            spans.push(Span::styled("ramp   ", Style::default().fg(t.warning)));
        }
        if let Some(m) = slot.telemetry.throttle_marks.last() {
            spans.push(Span::styled(
                format!("┃ throttling at {}", format::clock(*m)),
                Style::default().fg(t.throttle),
            ));
        }
        f.render_widget(Paragraph::new(Line::from(spans)), top);
    }

    let marks = vlines(&slot.telemetry.throttle_marks, [x0, x1], [0.0, y1]);
    let mut sets = Vec::new();
    for m in &marks {
        sets.push(line(m, Style::default().fg(t.throttle)));
    }
    if any_read || !(any_write || any_trim) {
        sets.push(line(&read, Style::default().fg(t.read)).name("read"));
    }
    if any_write {
        sets.push(line(&write, Style::default().fg(t.write)).name("write"));
    }
    if any_trim {
        sets.push(line(&trim, Style::default().fg(t.trim)).name("trim"));
    }
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).labels(time_labels(x0, x1)))
        .y_axis(axis([0.0, y1], t).labels(if bw {
            axis_labels(0.0, y1, 3, |v| format::bw_axis(v * 1e6))
        } else {
            axis_labels(0.0, y1, 3, format::iops)
        }));
    f.render_widget(chart, chart_area);
}
