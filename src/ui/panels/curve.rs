//! Curve: latency against IOPS, one point per finished step and one line per workload (a
//! sweep's points joined, different workloads never), a legend naming each, the running
//! step drawn live, and the drive's quoted datasheet figure as a reference mark where the
//! model is known (labelled "quoted", never a measurement).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Dataset, GraphType, Paragraph};
use ratatui::Frame;

use crate::app::datasheet::quoted_iops;
use crate::app::{App, RunState};
use crate::ui::format;
use crate::ui::widgets::{axis, line, time_chart};
use crate::ui::widgets::{axis_labels, empty, padded, panel_block, vline};

/// The quoted figure for the running workload: (label, IOPS, datasheet model).
fn quoted(app: &App) -> Option<(&'static str, f64, String)> {
    let d = app.datasheet()?;
    let share = app
        .picked_slot()
        .run
        .intervals
        .iter()
        .rev()
        .find(|p| p.iops() > 0.0)
        .map(|p| p.read_iops / p.iops())
        .unwrap_or(1.0);
    quoted_iops(d, share).map(|(l, v)| (l, v, d.model.clone()))
}

fn reference_line(app: &App) -> Line<'static> {
    let t = app.theme();
    match (quoted(app), &app.picked_slot().drive) {
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
fn workload_series(app: &App) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for p in app.picked_slot().run.curve.iter() {
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

/// Most legend lines; the series that do not fit are counted on the last.
const LEGEND_LINES: usize = 3;

/// The legend: each series' colour and name, whole entries per line of `width`.
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
            l.push(Span::styled("● ", Style::default().fg(t.series(i))));
            l.push(Span::styled(name.clone(), t.dim_style()));
        }
        used += w;
    }
    lines.into_iter().map(Line::from).collect()
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Curve: latency vs IOPS", t);
    let live = app
        .picked_slot()
        .run
        .last
        .as_ref()
        .filter(|_| matches!(app.run.state, RunState::Running | RunState::Paused))
        .filter(|r| r.lat_us.samples > 0)
        .map(|r| (r.iops(), r.service_lat_us.unwrap_or(r.lat_us).mean));
    let series = workload_series(app);
    let points: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.clone()).collect();
    if points.is_empty() && live.is_none() {
        let mut lines = vec![
            "no curve yet".to_string(),
            "one point per finished step of a sweep".to_string(),
        ];
        if let Some((label, v, _)) = quoted(app) {
            lines.push(format!("{label}: {} IOPS", format::iops(v)));
        }
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let names = legend_lines(app, &series, usize::from(inner.width));
    let [top, reference, legend, chart_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(names.len() as u16),
        Constraint::Min(1),
    ])
    .areas(inner);

    let mut spans = vec![Span::styled(
        format!(
            "{} step{} done",
            points.len(),
            if points.len() == 1 { "" } else { "s" }
        ),
        t.dim_style(),
    )];
    if let Some((x, y)) = live {
        spans.push(Span::styled("   running ", t.dim_style()));
        spans.push(Span::styled(
            format!("{} IOPS at {} mean service", format::iops(x), format::us(y)),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), top);
    f.render_widget(Paragraph::new(reference_line(app)), reference);
    f.render_widget(Paragraph::new(names), legend);

    let q = quoted(app);
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
        sets.push(
            Dataset::default()
                .marker(Marker::Braille)
                .graph_type(GraphType::Scatter)
                .style(Style::default().fg(t.quoted))
                .data(&qline),
        );
    }
    for (i, (_, pts)) in series.iter().enumerate() {
        let c = t.series(i);
        sets.push(line(pts, Style::default().fg(c)));
        sets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .graph_type(GraphType::Scatter)
                .style(Style::default().fg(c).add_modifier(Modifier::BOLD))
                .data(pts),
        );
    }
    sets.push(
        Dataset::default()
            .marker(Marker::Block)
            .graph_type(GraphType::Scatter)
            .style(Style::default().fg(t.accent))
            .data(&live_pt),
    );
    let chart = time_chart(sets, t)
        .x_axis(
            axis([0.0, x1], t)
                .title("IOPS")
                .labels(axis_labels(0.0, x1, 3, format::iops)),
        )
        .y_axis(axis([0.0, y1], t).title("service").labels(axis_labels(
            0.0,
            y1,
            3,
            format::us_axis_round,
        )));
    f.render_widget(chart, chart_area);
}
