//! Small building blocks shared by the panels: the bordered panel block, the "no data,
//! and why" message, chart axes, and the vertical marker lines drawn on charts.

use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Axis, Block, BorderType, Borders, Chart, Dataset, GraphType, Paragraph, Wrap,
};
use ratatui::Frame;

use crate::theme::Theme;

/// Points of one chart line: (x, y).
pub type Series = Vec<(f64, f64)>;

/// A panel's bordered block with its title.
pub fn panel_block<'a>(title: impl Into<String>, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(theme.border))
        .title(Span::styled(
            format!(" {} ", title.into()),
            theme.title_style(),
        ))
        .style(theme.base())
}

/// Gives the border cells of the block drawn at `area` the style `style` (its title keeps
/// its own): the panel in focus.
pub fn accent_border(f: &mut Frame, area: Rect, style: Style) {
    let buf = f.buffer_mut();
    let area = area.intersection(buf.area);
    if area.width < 2 || area.height < 2 {
        return;
    }
    let (x0, y0, x1, y1) = (area.left(), area.top(), area.right() - 1, area.bottom() - 1);
    let rows = (x0..=x1).flat_map(|x| [(x, y0), (x, y1)]);
    let sides = (y0 + 1..y1).flat_map(|y| [(x0, y), (x1, y)]);
    for at in rows.chain(sides) {
        if let Some(c) = buf.cell_mut(at) {
            if matches!(c.symbol(), "─" | "│" | "╭" | "╮" | "╰" | "╯") {
                c.set_style(style);
            }
        }
    }
}

/// Draws the block and a centred message saying why there is nothing to show.
pub fn empty(f: &mut Frame, area: Rect, block: Block<'_>, lines: Vec<String>, theme: &Theme) {
    let inner = block.inner(area);
    f.render_widget(block, area);
    let pad = inner.height.saturating_sub(lines.len() as u16) / 2;
    let mut text: Vec<Line> = (0..pad).map(|_| Line::raw("")).collect();
    text.extend(
        lines
            .into_iter()
            .map(|l| Line::styled(l, theme.dim_style())),
    );
    f.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        inner,
    );
}

/// Evenly spaced axis labels from `lo` to `hi`.
pub fn axis_labels<'a>(lo: f64, hi: f64, n: usize, fmt: impl Fn(f64) -> String) -> Vec<Line<'a>> {
    let n = n.max(2);
    (0..n)
        .map(|i| {
            let v = lo + (hi - lo) * i as f64 / (n - 1) as f64;
            Line::raw(fmt(v))
        })
        .collect()
}

/// Time-axis labels (`m:ss`): three when the span tells them apart, else the two ends.
pub fn time_labels<'a>(x0: f64, x1: f64) -> Vec<Line<'a>> {
    let n = if x1 - x0 >= 4.0 { 3 } else { 2 };
    axis_labels(x0, x1, n, super::format::clock)
}

/// Bounds with a little headroom; never an empty range.
pub fn padded(lo: f64, hi: f64) -> [f64; 2] {
    if !(lo.is_finite() && hi.is_finite()) {
        return [0.0, 1.0];
    }
    if hi - lo < 1e-9 {
        return [
            lo - 0.5_f64.max(lo.abs() * 0.1),
            hi + 0.5_f64.max(hi.abs() * 0.1),
        ];
    }
    [lo, hi + (hi - lo) * 0.08]
}

/// The points of a vertical line at `x` from `y0` to `y1` (dense enough to draw solid).
pub fn vline(x: f64, y0: f64, y1: f64) -> Vec<(f64, f64)> {
    (0..=40)
        .map(|i| (x, y0 + (y1 - y0) * i as f64 / 40.0))
        .collect()
}

/// The points of a horizontal line at `y` from `x0` to `x1`.
pub fn hline(y: f64, x0: f64, x1: f64) -> Vec<(f64, f64)> {
    (0..=80)
        .map(|i| (x0 + (x1 - x0) * i as f64 / 80.0, y))
        .collect()
}

/// A label and a value in the value's colour: `read 245.1k`.
pub fn figure<'a>(label: &str, value: String, style: Style, theme: &Theme) -> Vec<Span<'a>> {
    vec![
        Span::styled(format!("{label} "), theme.dim_style()),
        Span::styled(value, style),
    ]
}

/// A vertical line from `y0` to `y1` at each of the marks `xs` from `x0` to `x1`.
pub fn vlines(xs: &[f64], [x0, x1]: [f64; 2], [y0, y1]: [f64; 2]) -> Vec<Vec<(f64, f64)>> {
    let within = xs.iter().filter(|x| (x0..=x1).contains(*x));
    within.map(|x| vline(*x, y0, y1)).collect()
}

/// Text in colour `c`, bold: a figure or name the eye should find first.
pub fn bold(c: Color) -> Style {
    Style::default().fg(c).add_modifier(Modifier::BOLD)
}

/// A braille line through `data` (the way every time series on the dashboard is drawn).
pub fn line<'a>(data: &'a [(f64, f64)], style: Style) -> Dataset<'a> {
    Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(style)
        .data(data)
}

/// Braille dots at `data`, not joined: a dotted line where `data` is one, and lines of one
/// dataset share cells where they cross a row together.
pub fn dots<'a>(data: &'a [(f64, f64)], style: Style) -> Dataset<'a> {
    Dataset::default()
        .marker(Marker::Braille)
        .graph_type(GraphType::Scatter)
        .style(style)
        .data(data)
}

/// A chart in the theme's colours, without ratatui's legend (panels draw their own).
pub fn time_chart<'a>(sets: Vec<Dataset<'a>>, theme: &Theme) -> Chart<'a> {
    Chart::new(sets).legend_position(None).style(theme.base())
}

/// An axis over `bounds` in the theme's dim style.
pub fn axis<'a>(bounds: [f64; 2], theme: &Theme) -> Axis<'a> {
    Axis::default().bounds(bounds).style(theme.dim_style())
}
