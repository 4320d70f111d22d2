//! Latency: p50 / p99 / p99.9 over time on a log axis, and the current percentile table;
//! response and service latency side by side when the step is rate-limited.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};
use ratatui::Frame;

use super::throughput::waiting_reason;
use crate::app::slot::DriveSlot;
use crate::app::App;
use crate::stats::LatSummary;
use crate::ui::format;
use crate::ui::widgets::{axis, line, time_chart};
use crate::ui::widgets::{empty, panel_block};

fn log(v: f64) -> f64 {
    v.max(1.0).log10()
}

/// A percentile row: label, how to read it from a summary, its colour.
type PctRow = (
    &'static str,
    fn(&LatSummary) -> f64,
    Option<ratatui::style::Color>,
);

fn table<'a>(app: &App, slot: &DriveSlot) -> (Table<'a>, u16) {
    let t = app.theme();
    let Some(last) = &slot.run.last else {
        return (Table::default(), 0);
    };
    let resp = last.lat_us;
    if resp.samples == 0 {
        let row = Row::new(vec![Cell::from(Span::styled(
            "no I/O completed in the last interval",
            t.dim_style(),
        ))]);
        return (Table::new(vec![row], [Constraint::Length(38)]), 38);
    }
    let service = last.service_lat_us;
    let rows: [PctRow; 8] = [
        ("min", |l| l.min, None),
        ("p50", |l| l.p50, Some(t.p50)),
        ("p90", |l| l.p90, None),
        ("p99", |l| l.p99, Some(t.p99)),
        ("p99.9", |l| l.p99_9, Some(t.p999)),
        ("p99.99", |l| l.p99_99, None),
        ("max", |l| l.max, None),
        ("mean", |l| l.mean, None),
    ];
    let mut out = Vec::new();
    for (name, get, colour) in rows {
        let style = Style::default().fg(colour.unwrap_or(t.fg));
        let mut cells = vec![
            Cell::from(Span::styled(name, t.dim_style())),
            Cell::from(Line::styled(format::us(get(&resp)), style).right_aligned()),
        ];
        if let Some(s) = &service {
            cells.push(Cell::from(
                Line::styled(format::us(get(s)), Style::default().fg(t.service)).right_aligned(),
            ));
        }
        out.push(Row::new(cells));
    }
    let header = if service.is_some() {
        Row::new(vec!["", "response", "service"])
    } else {
        Row::new(vec!["", "latency"])
    }
    .style(t.dim_style().add_modifier(Modifier::BOLD));
    let widths: Vec<Constraint> = if service.is_some() {
        vec![
            Constraint::Length(7),
            Constraint::Length(10),
            Constraint::Length(10),
        ]
    } else {
        vec![Constraint::Length(7), Constraint::Length(10)]
    };
    let w = widths
        .iter()
        .map(|c| match c {
            Constraint::Length(n) => *n + 1,
            _ => 0,
        })
        .sum::<u16>();
    (Table::new(out, widths).header(header).style(t.base()), w)
}

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let rate_limited = slot.run.step.as_ref().is_some_and(|s| s.rate_limited);
    let title = if rate_limited {
        "Latency (response, from intended issue time)"
    } else {
        "Latency"
    };
    let block = panel_block(title, t);
    if let Some(lines) = waiting_reason(app, slot) {
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (table, table_w) = table(app, slot);
    let [chart_area, table_area] =
        Layout::horizontal([Constraint::Min(10), Constraint::Length(table_w)])
            .spacing(2)
            .areas(inner);
    f.render_widget(table, table_area);

    let pts: Vec<_> = slot
        .run
        .intervals
        .iter()
        .filter(|p| p.lat.samples > 0)
        .collect();
    let series = |get: fn(&LatSummary) -> f64| -> Vec<(f64, f64)> {
        pts.iter().map(|p| (p.t_s, log(get(&p.lat)))).collect()
    };
    let p50 = series(|l| l.p50);
    let p99 = series(|l| l.p99);
    let p999 = series(|l| l.p99_9);
    let svc: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| p.service.map(|s| (p.t_s, log(s.p99))))
        .collect();
    let all = p50.iter().chain(&p999).chain(&svc).map(|p| p.1);
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        (0.0, 3.0)
    };
    let x0 = pts.first().map(|p| p.t_s).unwrap_or(0.0);
    let x1 = pts.last().map(|p| p.t_s).unwrap_or(1.0).max(x0 + 1.0);
    let mut sets = vec![
        line(&p50, Style::default().fg(t.p50)).name("p50"),
        line(&p99, Style::default().fg(t.p99)).name("p99"),
        line(&p999, Style::default().fg(t.p999)).name("p99.9"),
    ];
    if !svc.is_empty() {
        sets.push(line(&svc, Style::default().fg(t.service)).name("service p99"));
    }
    let decades = (lo as i32..=hi as i32)
        .map(|d| Line::raw(format::us_axis(10f64.powi(d))))
        .collect::<Vec<_>>();
    let legend = Line::from(vec![
        Span::styled("p50 ", Style::default().fg(t.p50)),
        Span::styled("p99 ", Style::default().fg(t.p99)),
        Span::styled("p99.9", Style::default().fg(t.p999)),
        Span::styled(
            if svc.is_empty() { "" } else { " service p99" },
            Style::default().fg(t.service),
        ),
    ]);
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).title(legend).labels(vec![
            Line::raw(format::clock(x0)),
            Line::raw(format::clock(x1)),
        ]))
        .y_axis(axis([lo, hi], t).labels(decades));
    f.render_widget(chart, chart_area);
}
