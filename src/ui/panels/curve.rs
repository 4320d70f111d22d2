//! Curve: latency against IOPS for the running sweep, one point per finished step, the
//! running step drawn live, and the drive's quoted datasheet figure as a reference mark
//! where the model is known (labelled "quoted", never a measurement).

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
    match (quoted(app), &app.drive) {
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

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Curve: latency vs IOPS", t);
    let live = app
        .run
        .last
        .as_ref()
        .filter(|_| matches!(app.run.state, RunState::Running | RunState::Paused))
        .filter(|r| r.lat_us.samples > 0)
        .map(|r| (r.iops(), r.lat_us.mean));
    let points: Vec<(f64, f64)> = app.run.curve.iter().map(|p| (p.iops, p.mean_us)).collect();
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
    let [top, reference, chart_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
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
            format!("{} IOPS at {} mean", format::iops(x), format::us(y)),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), top);
    f.render_widget(Paragraph::new(reference_line(app)), reference);

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
    sets.push(line(&points, Style::default().fg(t.read)));
    sets.push(
        Dataset::default()
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(Style::default().fg(t.read).add_modifier(Modifier::BOLD))
            .data(&points),
    );
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
        .y_axis(axis([0.0, y1], t).title("mean").labels(axis_labels(
            0.0,
            y1,
            3,
            format::us_axis_round,
        )));
    f.render_widget(chart, chart_area);
}
