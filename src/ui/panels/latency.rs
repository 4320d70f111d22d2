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

/// The table's rows in the order shown, each with its rank: a short panel drops the rows
/// of the highest rank first (p90, then p99.99, min and p99.9), so max and mean stay.
const ROW_RANKS: [u8; 8] = [2, 0, 4, 0, 1, 3, 0, 0];

/// Which of the eight rows fit in `lines` (the header takes one when there is room).
fn rows_kept(lines: usize) -> ([bool; 8], bool) {
    let header = lines > 4;
    let room = lines.saturating_sub(usize::from(header));
    let mut kept = [true; 8];
    for rank in (1..=4u8).rev() {
        if kept.iter().filter(|k| **k).count() <= room {
            break;
        }
        for (k, r) in kept.iter_mut().zip(ROW_RANKS) {
            if r == rank {
                *k = false;
            }
        }
    }
    (kept, header)
}

/// The percentile table in at most `lines` rows.
fn table<'a>(app: &App, slot: &DriveSlot, lines: usize) -> (Table<'a>, u16) {
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
    let (kept, with_header) = rows_kept(lines);
    let mut out = Vec::new();
    for ((name, get, colour), _) in rows.into_iter().zip(kept).filter(|(_, k)| *k) {
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
        // Unpaced: no schedule, so the one latency is the service latency.
        Row::new(vec!["", "service"])
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
    let table = Table::new(out, widths).style(t.base());
    let table = if with_header {
        table.header(header)
    } else {
        table
    };
    (table, w)
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
    let (table, table_w) = table(app, slot, usize::from(inner.height));
    let [plot_area, table_area] =
        Layout::horizontal([Constraint::Min(10), Constraint::Length(table_w)])
            .spacing(2)
            .areas(inner);
    f.render_widget(table, table_area);
    // The legend has its own row above the plot: inside it, it ran into the table.
    let [legend_area, chart_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(plot_area);

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
    let mut legend = vec![
        Span::styled("p50  ", Style::default().fg(t.p50)),
        Span::styled("p99  ", Style::default().fg(t.p99)),
        Span::styled("p99.9", Style::default().fg(t.p999)),
    ];
    if !svc.is_empty() {
        legend.push(Span::styled(
            "  service p99",
            Style::default().fg(t.service),
        ));
    }
    f.render_widget(
        ratatui::widgets::Paragraph::new(Line::from(legend))
            .wrap(ratatui::widgets::Wrap { trim: true }),
        legend_area,
    );
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).labels(vec![
            Line::raw(format::clock(x0)),
            Line::raw(format::clock(x1)),
        ]))
        .y_axis(axis([lo, hi], t).labels(decades));
    f.render_widget(chart, chart_area);
}

#[cfg(test)]
mod tests {
    use super::rows_kept;

    /// The rows kept, by name, in the table's order.
    fn names(lines: usize) -> (Vec<&'static str>, bool) {
        let all = ["min", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean"];
        let (kept, header) = rows_kept(lines);
        let rows = all.iter().zip(kept).filter(|(_, k)| *k).map(|(n, _)| *n);
        (rows.collect(), header)
    }

    #[test]
    fn a_short_table_drops_p90_and_p99_99_first_and_keeps_max_and_mean() {
        assert_eq!(names(9).0.len(), 8);
        assert!(names(9).1);
        let (seven, header) = names(7);
        assert!(header);
        assert_eq!(seven, ["min", "p50", "p99", "p99.9", "max", "mean"]);
        assert_eq!(names(5).0, ["p50", "p99", "max", "mean"]);
        assert_eq!(names(4), (vec!["p50", "p99", "max", "mean"], false));
    }
}
