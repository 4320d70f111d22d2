//! A PTS method's live figure, in place of the curve while such a run is shown: HIR's and
//! XSR's recovery over time (each run's rate as a point, one colour per phase, the
//! baseline as a line) or DIRTH's demand-intensity curve (mean and p99 latency against
//! IOPS per threads x queue depth combination, the combinations labelled).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Line as CanvasLine, Points};
use ratatui::widgets::{Dataset, Paragraph};
use ratatui::Frame;

use crate::app::method::{BaselineFrom, Combination, MethodKind, MethodPoint, MethodState};
use crate::app::App;
use crate::ui::format;
use crate::ui::widgets::{axis, axis_labels, empty, hline, padded, panel_block, time_chart};
use crate::ui::widgets::{bold, dots, time_labels};

/// The name of the recovery view's steps that are neither runs nor rounds.
const CONTINUOUS: &str = "continuous";

pub fn render(app: &App, m: &MethodState, f: &mut Frame, area: Rect) {
    match m.kind {
        MethodKind::Recovery { by_bytes } => recovery(app, m, by_bytes, f, area),
        MethodKind::DemandIntensity => intensity(app, m, f, area),
    }
}

fn rate_text(v: f64, by_bytes: bool) -> String {
    if by_bytes {
        format::bw(v)
    } else {
        format!("{} IOPS", format::iops(v))
    }
}

/// The legend: each series' colour and name, then the baseline's, cut at `width`.
fn legend(app: &App, names: &[&str], extra: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let t = app.theme();
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, n) in names.iter().enumerate() {
        let w = n.chars().count() + 4;
        if used + w > width {
            spans.push(Span::styled(
                format!("+{} more", names.len() - i),
                t.dim_style(),
            ));
            break;
        }
        spans.push(Span::styled("● ", Style::default().fg(t.series(i))));
        spans.push(Span::styled(format!("{n}  "), t.dim_style()));
        used += w;
    }
    spans.extend(extra);
    Line::from(spans)
}

fn recovery(app: &App, m: &MethodState, by_bytes: bool, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let unit = if by_bytes { "MB/s" } else { "IOPS" };
    let block = panel_block(format!("Recovery: {unit} over time"), t);
    let series = m.recovery_series(CONTINUOUS);
    let Some(last) = m.points.last() else {
        let lines = vec![
            "no run finished yet".to_string(),
            "each run's rate over time, per phase, against the baseline".to_string(),
        ];
        return empty(f, area, block, lines, t);
    };
    let inner = block.inner(area);
    f.render_widget(block, area);
    let base = m.baseline();
    let mut head = Vec::new();
    if let Some((b, from)) = base {
        let from = match from {
            BaselineFrom::SteadyWindow => "steady window",
            BaselineFrom::FirstGroup => "first group's mean",
        };
        head.push(Span::styled(
            format!("baseline {} ({from}) · ", rate_text(b, by_bytes)),
            t.dim_style(),
        ));
    }
    head.push(Span::styled("last ", t.dim_style()));
    head.push(Span::styled(
        format!("{} {}", last.phase, rate_text(last.rate(), by_bytes)),
        bold(t.accent),
    ));
    if let Some((b, _)) = base.filter(|(b, _)| *b > 0.0) {
        head.push(Span::styled(
            format!(" ({:.0}%)", 100.0 * last.rate() / b),
            t.dim_style(),
        ));
    }
    let extra = match base {
        Some(_) => vec![
            Span::styled("─ ", Style::default().fg(t.quoted)),
            Span::styled("baseline", t.dim_style()),
        ],
        None => Vec::new(),
    };
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    let key = legend(app, &names, extra, usize::from(inner.width));
    let [top, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
    f.render_widget(Paragraph::new(vec![Line::from(head), key]), top);

    let x0 = m.points.first().map_or(0.0, |p| p.t_s);
    let x1 = m.points.iter().map(|p| p.t_s).fold(x0 + 1.0, f64::max);
    let ymax = m
        .points
        .iter()
        .map(|p| p.rate())
        .chain(base.map(|b| b.0))
        .fold(1.0, f64::max);
    let [_, y1] = padded(0.0, ymax);
    let bline = base.map(|b| hline(b.0, x0, x1)).unwrap_or_default();
    let mut sets: Vec<Dataset> = vec![dots(&bline, Style::default().fg(t.quoted))];
    for (i, (_, pts)) in series.iter().enumerate() {
        let style = bold(t.series(i));
        sets.push(dots(pts, style).marker(Marker::Dot));
    }
    let fmt = |v: f64| {
        if by_bytes {
            format::bw_axis(v)
        } else {
            format::iops(v)
        }
    };
    let chart = time_chart(sets, t)
        .x_axis(axis([x0, x1], t).labels(time_labels(x0, x1)))
        .y_axis(axis([0.0, y1], t).labels(axis_labels(0.0, y1, 3, fmt)));
    f.render_widget(chart, body);
}

/// Lines below the demand-intensity curve for the operating points' latest steps (their
/// response-time histograms' five nines).
const OPERATING_LINES: usize = 2;

/// A combination's label: threads x queue depth.
fn label(c: &Combination) -> String {
    format!("{}×{}", c.jobs, c.iodepth)
}

fn intensity(app: &App, m: &MethodState, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Demand intensity: latency vs IOPS", t);
    let combos = m.combinations();
    if combos.is_empty() {
        let lines = vec![
            "no combination finished yet".to_string(),
            "mean and p99 latency against IOPS per threads×QD".to_string(),
        ];
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let round = combos.iter().map(|c| c.round).max().unwrap_or(0);
    // The max operating point by the runner's rule (the most IOPS under 5 ms mean), so the
    // point named is the point the later phases run at.
    let points: Vec<crate::plan::operating::ShapePoint> = combos
        .iter()
        .map(|c| crate::plan::operating::ShapePoint {
            jobs: c.jobs,
            iodepth: c.iodepth,
            iops: c.iops,
            mean_us: c.mean_us,
        })
        .collect();
    let best = crate::plan::operating::pick(&points, crate::plan::operating::OperatingPoint::Max)
        .and_then(|(j, q)| combos.iter().find(|c| (c.jobs, c.iodepth) == (j, q)));
    let mut head = vec![Span::styled(
        format!("round {round} · {} combinations", combos.len()),
        t.dim_style(),
    )];
    if let Some(b) = best {
        head.push(Span::styled(" · max ", t.dim_style()));
        head.push(Span::styled(
            format!("{} IOPS at {}", format::iops(b.iops), label(b)),
            bold(t.accent),
        ));
    }
    let key = Line::from(vec![
        Span::styled("● ", Style::default().fg(t.series(0))),
        Span::styled("mean  ", t.dim_style()),
        Span::styled("• ", Style::default().fg(t.series(1))),
        Span::styled("p99  ", t.dim_style()),
        Span::styled("labels: threads×QD", t.dim_style()),
    ]);
    let others = m.others(OPERATING_LINES);
    let [top, body, xrow, below] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(others.len() as u16),
    ])
    .areas(inner);
    f.render_widget(Paragraph::new(vec![Line::from(head), key]), top);
    let lines = operating_lines(app, &others, usize::from(below.width));
    f.render_widget(Paragraph::new(lines), below);

    let xmax = combos.iter().map(|c| c.iops).fold(1.0, f64::max);
    let ymax = combos.iter().map(|c| c.p99_us).fold(1.0, f64::max);
    let [_, x1] = padded(0.0, xmax);
    let [_, y1] = padded(0.0, ymax);
    let ylabels = axis_labels(0.0, y1, 3, format::us_axis_round);
    let yw = ylabels.iter().map(Line::width).max().unwrap_or(1) as u16 + 1;
    let [yaxis, plot] =
        Layout::horizontal([Constraint::Length(yw), Constraint::Min(4)]).areas(body);
    // The y labels: top, middle, bottom rows of the plot.
    let rows = usize::from(plot.height.max(1));
    let mut ycol = vec![Line::raw(""); rows];
    for (i, l) in ylabels.into_iter().rev().enumerate() {
        let r = (rows - 1) * i / 2;
        ycol[r] = l;
    }
    f.render_widget(Paragraph::new(ycol).style(t.dim_style()), yaxis);
    let xl = format!("{} IOPS", format::iops(x1));
    let xline = Line::from(vec![
        Span::raw(" ".repeat(usize::from(yw))),
        Span::raw("0"),
        Span::raw(" ".repeat(usize::from(plot.width).saturating_sub(1 + xl.chars().count()))),
        Span::raw(xl),
    ]);
    f.render_widget(Paragraph::new(xline).style(t.dim_style()), xrow);
    let labels = placed_labels(&combos, x1, y1, plot);
    let canvas = Canvas::default()
        .marker(Marker::Braille)
        .x_bounds([0.0, x1])
        .y_bounds([0.0, y1])
        .background_color(t.base().bg.unwrap_or_default())
        .paint(|ctx| {
            // Each thread count's mean joined along its queue depths.
            let mut jobs: Vec<u32> = combos.iter().map(|c| c.jobs).collect();
            jobs.sort_unstable();
            jobs.dedup();
            for j in jobs {
                let mut pts: Vec<&Combination> = combos.iter().filter(|c| c.jobs == j).collect();
                pts.sort_by(|a, b| a.iops.total_cmp(&b.iops));
                for w in pts.windows(2) {
                    ctx.draw(&CanvasLine::new(
                        w[0].iops,
                        w[0].mean_us,
                        w[1].iops,
                        w[1].mean_us,
                        t.series(0),
                    ));
                }
            }
            let p99: Vec<(f64, f64)> = combos.iter().map(|c| (c.iops, c.p99_us)).collect();
            ctx.draw(&Points {
                coords: &p99,
                color: t.series(1),
            });
            let mean: Vec<(f64, f64)> = combos.iter().map(|c| (c.iops, c.mean_us)).collect();
            ctx.draw(&Points {
                coords: &mean,
                color: t.series(0),
            });
            ctx.layer();
            for l in &labels {
                let mark = Span::styled("●", Style::default().fg(t.series(0)));
                let text = Span::styled(l.text.clone(), t.dim_style());
                let spans = if l.left {
                    vec![text, mark]
                } else {
                    vec![mark, text]
                };
                ctx.print(l.x, l.y, Line::from(spans));
            }
        });
    f.render_widget(canvas, plot);
}

/// One line per operating point's step: its shape, IOPS, mean and five nines (only the
/// five nines when the whole line does not fit `width`).
fn operating_lines(app: &App, others: &[&MethodPoint], width: usize) -> Vec<Line<'static>> {
    let t = app.theme();
    others
        .iter()
        .map(|p| {
            let nines = format::lat(p.p99_999_us);
            let shape = format!("{}×{}", p.jobs, p.iodepth);
            let full = format!(
                " {} IOPS  {} mean  p99.999 {nines}",
                format::iops(p.iops),
                format::us(p.mean_us)
            );
            // The five nines first when the whole line does not fit.
            let used = p.phase.chars().count() + 1 + shape.chars().count();
            let rest = if used + full.chars().count() <= width {
                full
            } else {
                format!(" p99.999 {nines}")
            };
            Line::from(vec![
                Span::styled(format!("{} ", p.phase), t.dim_style()),
                Span::styled(shape, Style::default().fg(t.accent)),
                Span::styled(rest, t.dim_style()),
            ])
        })
        .collect()
}

/// A combination's label on the plot: where it starts, its text, and whether it is left
/// of its point (its mark last).
struct Label {
    x: f64,
    y: f64,
    text: String,
    left: bool,
}

/// The labels that fit: each combination's beside its mean point, one cell right, unless
/// it would overlap a label already placed (the first run, most outstanding I/O, win).
fn placed_labels(combos: &[Combination], x1: f64, y1: f64, plot: Rect) -> Vec<Label> {
    let (w, h) = (f64::from(plot.width.max(2)), f64::from(plot.height.max(2)));
    let mut taken: Vec<(i64, i64, i64)> = Vec::new();
    let mut out = Vec::new();
    for c in combos {
        let text = label(c);
        let col = (c.iops / x1 * (w - 1.0)).round() as i64;
        let row = ((1.0 - c.mean_us / y1) * (h - 1.0)).round() as i64;
        let len = text.chars().count() as i64 + 1;
        // Left of the point (the mark last) when it does not fit on its right.
        let left = col + len > w as i64;
        let col = if left { col - len + 1 } else { col };
        if col < 0 {
            continue;
        }
        if taken
            .iter()
            .any(|&(r, a, b)| r == row && col < b + 1 && a < col + len + 1)
        {
            continue;
        }
        taken.push((row, col, col + len));
        out.push(Label {
            x: col as f64 / (w - 1.0) * x1,
            y: c.mean_us,
            text,
            left,
        });
    }
    out
}
