//! Curve: latency against IOPS, one point per finished step and one line per workload (a
//! sweep's points joined, different workloads never), a legend naming each, the running
//! step drawn live, and the drive's quoted datasheet figure as a reference mark where the
//! model is known (labelled "quoted", never a measurement). A step that missed its target
//! (a paced step under 97% of it) is marked `▄` in the warning colour and counted above.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::datasheet::quoted_iops;
use crate::app::slot::DriveSlot;
use crate::app::{App, RunState};
use crate::ui::format;
use crate::ui::widgets::{axis, bold, dots, line, time_chart};
use crate::ui::widgets::{axis_labels, empty, padded, panel_block, vline};

/// The quoted figure for the running workload: (label, IOPS, datasheet model).
fn quoted(app: &App, slot: &DriveSlot) -> Option<(&'static str, f64, String)> {
    let d = app.datasheet()?;
    let share = slot
        .run
        .intervals
        .iter()
        .rev()
        .find(|p| p.iops() > 0.0)
        .map(|p| p.read_iops / p.iops())
        .unwrap_or(1.0);
    quoted_iops(d, share).map(|(l, v)| (l, v, d.model.clone()))
}

fn reference_line(app: &App, slot: &DriveSlot) -> Line<'static> {
    let t = app.theme();
    match (quoted(app, slot), &slot.drive) {
        (Some((label, v, model)), _) => Line::from(vec![
            Span::styled("┊ ", Style::default().fg(t.quoted)),
            Span::styled(
                format!("{label} {} IOPS ({model} datasheet)", format::iops(v)),
                Style::default().fg(t.quoted),
            ),
        ]),
        (None, Some(d)) if d.model.is_some() => Line::styled(
            "no quoted figure for this model (assets/datasheets.yaml)",
            t.dim_style(),
        ),
        _ => Line::styled("no quoted figure: drive model unknown", t.dim_style()),
    }
}

/// The finished steps' points, one series per workload in order of first appearance, each
/// in IOPS order so its line runs along the curve (a sweep's probe at max comes first).
fn workload_series(slot: &DriveSlot) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in slot.run.curve.iter() {
        let xy = (p.iops, p.mean_us);
        match out.iter_mut().find(|(n, _)| *n == p.series) {
            Some((_, pts)) => pts.push(xy),
            None => out.push((p.series.clone(), vec![xy])),
        }
    }
    for (_, pts) in &mut out {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}

/// Most legend lines above the chart; the series that do not fit are counted on the last.
const LEGEND_LINES: usize = 3;

/// A legend entry's colour mark and name.
fn entry(app: &App, i: usize, name: &str) -> [Span<'static>; 2] {
    let t = app.theme();
    [
        Span::styled("● ", Style::default().fg(t.series(i))),
        Span::styled(name.to_string(), t.dim_style()),
    ]
}

/// The legend above the chart: each series' colour and name, whole entries per line of
/// `width`, at most [`LEGEND_LINES`] lines.
fn legend_lines(
    app: &App,
    series: &[(String, Vec<(f64, f64)>)],
    width: usize,
) -> Vec<Line<'static>> {
    let t = app.theme();
    let mut lines: Vec<Vec<Span<'static>>> = Vec::new();
    let mut used = 0;
    for (i, (name, _)) in series.iter().enumerate() {
        let w = name.chars().count() + 2;
        let full = lines.len() == LEGEND_LINES;
        match lines.last_mut() {
            Some(l) if used + 2 + w <= width => {
                l.push(Span::raw("  "));
                used += 2;
            }
            Some(l) if full => {
                l.push(Span::styled(
                    format!("  +{} more", series.len() - i),
                    t.dim_style(),
                ));
                break;
            }
            _ => {
                lines.push(Vec::new());
                used = 0;
            }
        }
        if let Some(l) = lines.last_mut() {
            l.extend(entry(app, i, name));
        }
        used += w;
    }
    lines.into_iter().map(Line::from).collect()
}

/// The legend as a column beside the chart, one entry a line (names cut with an
/// ellipsis at `width`), the ones below `rows` counted on the last line.
fn legend_column(
    app: &App,
    series: &[(String, Vec<(f64, f64)>)],
    width: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let rows = rows.max(1);
    let mut out: Vec<Line<'static>> = Vec::new();
    for (i, (name, _)) in series.iter().enumerate() {
        if out.len() + 1 == rows && series.len() > rows {
            let more = format!("+{} more", series.len() - i);
            out.push(Line::styled(more, app.theme().dim_style()));
            break;
        }
        let name = format::cut_end(name, width.saturating_sub(2));
        out.push(Line::from(entry(app, i, &name).to_vec()));
    }
    out
}

/// Plot rows below which the legend moves beside the chart.
const FEW_ROWS: u16 = 6;
/// Rows of a chart besides its plot: the x axis and its labels.
const AXIS_ROWS: u16 = 2;

/// Where the legend goes: its lines above the chart, or a column of that width beside it.
enum Legend {
    Above(Vec<Line<'static>>),
    Beside(u16),
}

/// The legend above the chart when that leaves [`FEW_ROWS`] plot rows or takes one line,
/// else beside it when the chart keeps at least half the width.
fn place_legend(app: &App, series: &[(String, Vec<(f64, f64)>)], inner: Rect, head: u16) -> Legend {
    let above = legend_lines(app, series, usize::from(inner.width));
    let rows = inner.height.saturating_sub(head + AXIS_ROWS);
    let widest = series
        .iter()
        .map(|(n, _)| n.chars().count() + 3)
        .max()
        .unwrap_or(0)
        .min(26) as u16;
    let plot_above = rows.saturating_sub(above.len() as u16);
    if plot_above >= FEW_ROWS || above.len() < 2 || widest * 2 > inner.width {
        Legend::Above(above)
    } else {
        Legend::Beside(widest)
    }
}

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Curve: latency vs IOPS", t);
    let live = slot
        .run
        .last
        .as_ref()
        .filter(|_| matches!(app.run.state, RunState::Running | RunState::Paused))
        .filter(|r| r.lat_us.samples > 0)
        .map(|r| (r.iops(), r.service_lat_us.unwrap_or(r.lat_us).mean));
    let series = workload_series(slot);
    let points: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.clone()).collect();
    if points.is_empty() && live.is_none() {
        let mut lines = vec![
            "no curve yet".to_string(),
            "one point per finished step of a sweep".to_string(),
        ];
        if let Some((label, v, _)) = quoted(app, slot) {
            lines.push(format!("{label}: {} IOPS", format::iops(v)));
        }
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let mut spans = vec![Span::styled(
        format!(
            "{} step{} done",
            points.len(),
            if points.len() == 1 { "" } else { "s" }
        ),
        t.dim_style(),
    )];
    let missed: Vec<(f64, f64)> = slot
        .run
        .curve
        .iter()
        .filter(|p| p.missed())
        .map(|p| (p.iops, p.mean_us))
        .collect();
    if !missed.is_empty() {
        spans.push(Span::styled(
            format!(", {} missed target ▄", missed.len()),
            Style::default().fg(t.warning),
        ));
    }
    if let Some((x, y)) = live {
        spans.push(Span::styled("   running ", t.dim_style()));
        spans.push(Span::styled(
            format!("{} IOPS at {} mean service", format::iops(x), format::us(y)),
            bold(t.accent),
        ));
    }
    // The reference on the first line when both fit, else on its own.
    let reference = reference_line(app, slot);
    let first_w = Line::from(spans.clone()).width();
    let together = first_w + 3 + reference.width() <= usize::from(inner.width);
    let mut head = vec![];
    if together {
        spans.push(Span::styled(" · ", t.dim_style()));
        spans.extend(reference.spans);
        head.push(Line::from(spans));
    } else {
        head.push(Line::from(spans));
        head.push(reference);
    }
    let head_rows = head.len() as u16;
    let (above, beside) = match place_legend(app, &series, inner, head_rows) {
        Legend::Above(lines) => (lines, 0),
        Legend::Beside(w) => (Vec::new(), w),
    };
    let [top, legend, body] = Layout::vertical([
        Constraint::Length(head_rows),
        Constraint::Length(above.len() as u16),
        Constraint::Min(1),
    ])
    .areas(inner);
    f.render_widget(Paragraph::new(head), top);
    f.render_widget(Paragraph::new(above), legend);
    let chart_area = if beside > 0 {
        let [c, _gap, l] = Layout::horizontal([
            Constraint::Min(10),
            Constraint::Length(1),
            Constraint::Length(beside),
        ])
        .areas(body);
        let column = legend_column(app, &series, usize::from(beside), usize::from(l.height));
        f.render_widget(Paragraph::new(column), l);
        c
    } else {
        body
    };

    let q = quoted(app, slot);
    let xmax = points
        .iter()
        .map(|p| p.0)
        .chain(live.map(|l| l.0))
        .chain(q.as_ref().map(|q| q.1))
        .fold(1.0, f64::max);
    let ymax = points
        .iter()
        .map(|p| p.1)
        .chain(live.map(|l| l.1))
        .fold(1.0, f64::max);
    let [_, x1] = padded(0.0, xmax);
    let [_, y1] = padded(0.0, ymax);
    let live_pt: Vec<(f64, f64)> = live.into_iter().collect();
    let qline = q.as_ref().map(|q| vline(q.1, 0.0, y1)).unwrap_or_default();
    let mut sets = Vec::new();
    if !qline.is_empty() {
        sets.push(dots(&qline, Style::default().fg(t.quoted)));
    }
    for (i, (_, pts)) in series.iter().enumerate() {
        let c = t.series(i);
        sets.push(line(pts, Style::default().fg(c)));
        let bold = bold(c);
        sets.push(dots(pts, bold).marker(Marker::Dot));
    }
    sets.push(dots(&missed, Style::default().fg(t.warning)).marker(Marker::Bar));
    sets.push(dots(&live_pt, Style::default().fg(t.accent)).marker(Marker::Block));
    // No axis titles: ratatui draws them inside the plot, over its corner points. The
    // units are in the labels (the last x label says IOPS; the y labels are times).
    let n = if chart_area.width >= 40 { 3 } else { 2 };
    let mut xlabels = axis_labels(0.0, x1, n, format::iops);
    if let Some(l) = xlabels.last_mut() {
        *l = Line::raw(format!("{} IOPS", format::iops(x1)));
    }
    let chart = time_chart(sets, t)
        .x_axis(axis([0.0, x1], t).labels(xlabels))
        .y_axis(axis([0.0, y1], t).labels(axis_labels(0.0, y1, 3, format::us_axis_round)));
    f.render_widget(chart, chart_area);
}
