//! Every drive on one chart (the overlay of a dashboard on several drives): throughput,
//! p99 latency and temperature over time, one colour a drive, with a legend naming each.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::drives::colour;
use crate::app::history::{IntervalPoint, ThermalPoint};
use crate::app::slot::DriveSlot;
use crate::app::App;
use crate::ui::format;
use crate::ui::widgets::{axis, axis_labels, empty, line, padded, panel_block, time_chart};
use crate::ui::widgets::{time_labels, Series};

/// One line per drive: its index and points.
type Lines = Vec<(usize, Series)>;

/// The legend: each drive's label in its colour and its latest figure, whole entries
/// per line of `width`, at most `most` lines (the drives left over counted on the last).
fn legend(
    app: &App,
    lines: &Lines,
    last: impl Fn(&Series) -> String,
    width: usize,
    most: usize,
) -> Vec<Line<'static>> {
    let t = app.theme();
    let mut out: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    let mut used = 0;
    let entries: Vec<(usize, String, String)> = lines
        .iter()
        .filter_map(|(i, pts)| {
            let d = app.drives.get(*i)?;
            Some((*i, crate::ui::format::shown(&d.label), last(pts)))
        })
        .collect();
    for (n, (i, label, fig)) in entries.iter().enumerate() {
        let w = label.chars().count() + fig.chars().count() + 5;
        if used > 0 && used + w > width {
            if out.len() == most.max(1) {
                let more = format!("+{} more", entries.len() - n);
                if let Some(l) = out.last_mut() {
                    l.push(Span::styled(more, t.dim_style()));
                }
                break;
            }
            out.push(Vec::new());
            used = 0;
        }
        if let Some(l) = out.last_mut() {
            l.push(Span::styled(
                format!("■ {label} "),
                Style::default().fg(colour(t, *i)),
            ));
            l.push(Span::styled(format!("{fig}  "), t.dim_style()));
        }
        used += w;
    }
    out.into_iter().map(Line::from).collect()
}

/// Every drive's intervals as a series of `get`.
fn from_intervals(app: &App, get: impl Fn(&IntervalPoint) -> Option<f64>) -> Lines {
    let point = |p: &IntervalPoint| Some((p.t_s, get(p)?));
    per_drive(app, |d| d.run.intervals.iter().filter_map(&point).collect())
}

/// Every drive's series as `points` makes it of the drive's slot.
fn per_drive(app: &App, points: impl Fn(&DriveSlot) -> Series) -> Lines {
    app.drives.iter().map(points).enumerate().collect()
}

/// How the y axis reads.
enum YAxis {
    /// From zero up.
    Linear(fn(f64) -> String),
    /// Around the values (temperatures).
    Around(fn(f64) -> String),
    /// Values are log10 of microseconds.
    LogMicros,
}

fn draw(
    app: &App,
    f: &mut Frame,
    area: Rect,
    title: &str,
    lines: Lines,
    y: YAxis,
    fig: fn(f64) -> String,
) {
    let t = app.theme();
    let block = panel_block(format!("{title} · every drive"), t);
    if lines.iter().all(|(_, p)| p.is_empty()) {
        return empty(
            f,
            area,
            block,
            vec!["no figures from any drive yet".into()],
            t,
        );
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let shown = |p: &Series| {
        p.last()
            .map(|(_, v)| match y {
                YAxis::LogMicros => fig(10f64.powf(*v)),
                YAxis::Linear(_) | YAxis::Around(_) => fig(*v),
            })
            .unwrap_or_else(|| "-".into())
    };
    // The legend wraps over at most a third of the panel; the chart keeps the rest.
    let most = usize::from(inner.height / 3).max(1);
    let names = legend(app, &lines, shown, usize::from(inner.width), most);
    let [top, chart_area] = Layout::vertical([
        Constraint::Length(u16::try_from(names.len()).unwrap_or(1)),
        Constraint::Min(1),
    ])
    .areas(inner);
    f.render_widget(Paragraph::new(names), top);
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let x0 = xs.clone().fold(f64::INFINITY, f64::min);
    let x1 = xs.fold(f64::NEG_INFINITY, f64::max).max(x0 + 1.0);
    let ys = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1));
    let lo = ys.clone().fold(f64::INFINITY, f64::min);
    let hi = ys.fold(f64::NEG_INFINITY, f64::max);
    let sets = lines
        .iter()
        .map(|(i, p)| line(p, Style::default().fg(colour(t, *i))))
        .collect();
    let (bounds, labels) = match y {
        YAxis::Linear(fmt) => {
            let [lo, hi] = padded(lo.min(0.0), hi.max(1.0));
            ([lo, hi], axis_labels(lo, hi, 3, fmt))
        }
        YAxis::Around(fmt) => {
            let (lo, hi) = ((lo - 2.0).floor(), (hi + 2.0).ceil());
            ([lo, hi], axis_labels(lo, hi, 3, fmt))
        }
        YAxis::LogMicros => {
            let (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
            let decades = (lo as i32..=hi as i32)
                .map(|d| Line::raw(format::us_axis(10f64.powi(d))))
                .collect();
            ([lo, hi], decades)
        }
    };
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).labels(time_labels(x0, x1)))
        .y_axis(axis(bounds, t).labels(labels));
    f.render_widget(chart, chart_area);
}

/// Every drive's IOPS (or MB/s, by the units key), reads and writes together.
pub fn throughput(app: &App, f: &mut Frame, area: Rect) {
    if app.chart_bandwidth {
        let lines = from_intervals(app, |p| Some(p.bw() / 1e6));
        let mbps = |v: f64| format::bw_axis(v * 1e6);
        draw(
            app,
            f,
            area,
            "Throughput (MB/s)",
            lines,
            YAxis::Linear(mbps),
            mbps,
        );
    } else {
        let lines = from_intervals(app, |p| Some(p.iops()));
        draw(
            app,
            f,
            area,
            "Throughput (IOPS)",
            lines,
            YAxis::Linear(format::iops),
            format::iops,
        );
    }
}

/// Every drive's p99 latency, on a log axis.
pub fn latency(app: &App, f: &mut Frame, area: Rect) {
    let lines = from_intervals(app, |p| {
        (p.lat.samples > 0).then(|| p.lat.p99.max(1.0).log10())
    });
    draw(
        app,
        f,
        area,
        "Latency p99",
        lines,
        YAxis::LogMicros,
        format::us,
    );
}

/// Every drive's composite temperature.
pub fn thermal(app: &App, f: &mut Frame, area: Rect) {
    let temperature = |p: &ThermalPoint| Some((p.t_s, p.temperature_c?));
    let lines = per_drive(app, |d| {
        d.telemetry.history.iter().filter_map(temperature).collect()
    });
    let celsius = |v: f64| format!("{v:.0}°C");
    draw(
        app,
        f,
        area,
        "Temperature",
        lines,
        YAxis::Around(celsius),
        celsius,
    );
}
