//! A small, dependency-free SVG line/scatter chart: linear or log-10 axes with readable
//! ticks, a legend, one `<polyline>` per line series (one point per sample) and one
//! `<circle>` per marker (with a `<title>` tooltip). Elements carry `class` and
//! `data-series` so tests and scripts can find them.

use std::fmt::Write;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    /// A line through the points and a marker on each.
    LineMarkers,
    /// A dashed line with markers (a second figure of the same session).
    DashedMarkers,
    /// A dashed line, no markers (a limit or band drawn across a plot).
    Dashed,
    /// Hollow rings and no line, drawn over another series' markers: its points that are
    /// marked (a sweep point that missed its target).
    Rings,
}

/// One series: a name for the legend, a colour, points (x, y) and optional tooltips.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
    /// One tooltip per point (markers only), or empty.
    pub tips: Vec<String>,
}

impl Series {
    /// A series of `points`, with no tooltips (none, for a legend's key entry).
    pub fn new(
        name: impl Into<String>,
        color: &'static str,
        style: Style,
        points: Vec<(f64, f64)>,
    ) -> Series {
        Series {
            name: name.into(),
            color,
            style,
            points,
            tips: Vec::new(),
        }
    }
}

/// How axis values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Plain,
    /// Seconds, printed as s, m:ss or h:mm.
    Seconds,
    /// Microseconds, printed as µs, ms or s.
    Micros,
    /// Whole numbers (rounds): the axis spans the data, not from 0, its ticks whole.
    Count,
}

/// A chart with its axes.
#[derive(Debug, Clone)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_unit: Unit,
    pub y_unit: Unit,
    pub y_log: bool,
    /// A log-10 x axis (IOPS spanning decades).
    pub x_log: bool,
    /// Legend entries in place of one per series (their points unused): a key by colour and
    /// by style when the series are too many to name one by one; empty for one per series.
    pub key: Vec<Series>,
    pub series: Vec<Series>,
    /// Shown instead of the plot when no series has a point.
    pub empty_note: String,
    /// Spans of the x axis (a time axis) the user's pause held the run: each drawn as a
    /// shaded band labelled `paused`.
    pub paused: Vec<(f64, f64)>,
}

/// Colours that stay apart on white and for common colour blindness (Okabe–Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// The `i`-th colour of the palette, from its start again past its end.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

const W: f64 = 900.0;
const H: f64 = 380.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
/// Top of the plot area with no legend; each legend row adds `LEGEND_ROW`.
const TOP: f64 = 40.0;
const LEGEND_ROW: f64 = 15.0;
const BOTTOM: f64 = 52.0;

/// Escapes text for XML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// 1, 2 or 5 times a power of ten, at least `x`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let n = [1.0, 2.0, 5.0].into_iter().find(|&n| m <= n);
    n.unwrap_or(10.0) * p
}

/// Linear ticks covering [lo, hi] and the rounded bounds.
fn linear_ticks(lo: f64, hi: f64, unit: Unit) -> (f64, f64, Vec<f64>) {
    let span = (hi - lo).max(f64::EPSILON);
    let mut step = nice_step(span / 6.0);
    if unit == Unit::Count {
        step = step.max(1.0).round();
    }
    if unit == Unit::Seconds {
        // Whole minutes or hours once the span is long enough.
        for s in [
            60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0,
        ] {
            if span / s <= 8.5 && span > 300.0 {
                step = s;
                break;
            }
        }
    }
    let start = (lo / step).floor() * step;
    // Data a hair past a round tick (a 24 h run ending at 86,400.3 s) does not earn a
    // whole empty step of axis; the plot area has a little room past its edge.
    let end = ((hi - step * 0.05) / step).ceil() * step;
    let end = if end <= start { start + step } else { end };
    let n = ((end - start) / step).round() as usize;
    let ticks = (0..=n.min(50)).map(|i| start + i as f64 * step).collect();
    (start, end, ticks)
}

/// Decade ticks (with 2 and 5 between when there are few decades).
fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let lo = lo.max(1e-9);
    let hi = hi.max(lo * 1.0001);
    let d0 = lo.log10().floor() as i32;
    let mut d1 = hi.log10().ceil() as i32;
    if d1 <= d0 {
        d1 = d0 + 1;
    }
    let mut ticks = Vec::new();
    for d in d0..=d1 {
        let p = 10f64.powi(d);
        ticks.push(p);
        if d1 - d0 <= 3 && d < d1 {
            ticks.push(2.0 * p);
            ticks.push(5.0 * p);
        }
    }
    (10f64.powi(d0), 10f64.powi(d1), ticks)
}

fn trim_num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if a >= 1e6 {
        format!("{}M", trim_num(x / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim_num(x / 1e3))
    } else if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else if a < 0.01 {
        // Small shares on a log axis (0.0001): their first two significant digits.
        let places = (-a.log10().floor()) as usize + 1;
        let s = format!("{x:.places$}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Prints an axis value in `unit`.
pub fn format_value(x: f64, unit: Unit) -> String {
    match unit {
        Unit::Plain | Unit::Count => trim_num(x),
        Unit::Micros => {
            if x >= 1e6 {
                format!("{} s", trim_num(x / 1e6))
            } else if x >= 1e3 {
                format!("{} ms", trim_num(x / 1e3))
            } else {
                format!("{} µs", trim_num(x))
            }
        }
        Unit::Seconds => {
            let s = x.round() as i64;
            if x.abs() < 120.0 {
                format!("{}s", trim_num(x))
            } else if s.unsigned_abs() < 3600 {
                format!("{}:{:02}", s / 60, (s % 60).abs())
            } else {
                format!("{}h{:02}", s / 3600, (s % 3600 / 60).abs())
            }
        }
    }
}

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    px0: f64,
    px1: f64,
}

impl Axis {
    /// The axis of `values` (those it can show: numbers, above 0 on a log axis) from pixel
    /// `px0` to `px1`, and its ticks: log-10, or linear from 0 (from the least value, for a
    /// count); none without a value.
    fn over(
        values: impl Iterator<Item = f64>,
        log: bool,
        unit: Unit,
        (px0, px1): (f64, f64),
    ) -> Option<(Axis, Vec<f64>)> {
        let v: Vec<f64> = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .collect();
        let lo = v.iter().cloned().reduce(f64::min)?;
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi, ticks) = match (log, unit) {
            (true, _) => log_ticks(lo, hi),
            (false, Unit::Count) => linear_ticks(lo, hi, unit),
            (false, _) => linear_ticks(lo.min(0.0), hi, unit),
        };
        let axis = Axis {
            lo,
            hi,
            log,
            px0,
            px1,
        };
        Some((axis, ticks))
    }

    fn map(&self, v: f64) -> f64 {
        let (a, b, v) = if self.log {
            let v = v.max(self.lo);
            (self.lo.log10(), self.hi.log10(), v.log10())
        } else {
            (self.lo, self.hi, v)
        };
        let f = if b > a { (v - a) / (b - a) } else { 0.0 };
        self.px0 + f.clamp(-0.02, 1.02) * (self.px1 - self.px0)
    }
}

/// Legend entries laid out in rows under the title, left to right: (x, row) per series,
/// and the number of rows.
fn legend_layout(series: &[Series]) -> (Vec<(f64, usize)>, usize) {
    let mut pos = Vec::with_capacity(series.len());
    let (mut x, mut row) = (LEFT, 0usize);
    for s in series {
        let w = 30.0 + 6.6 * s.name.chars().count() as f64;
        if x > LEFT && x + w > W - RIGHT {
            x = LEFT;
            row += 1;
        }
        pos.push((x, row));
        x += w;
    }
    let rows = if series.is_empty() { 0 } else { row + 1 };
    (pos, rows)
}

fn dash(style: Style) -> &'static str {
    match style {
        Style::DashedMarkers | Style::Dashed => " stroke-dasharray=\"6 4\"",
        _ => "",
    }
}

/// How every chart [`Chart::render`] writes begins, up to its id.
const CHART_HEAD: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"";

/// Whether `head` (a file's first bytes) is the start of a chart drivescope wrote.
pub fn is_chart(head: &[u8]) -> bool {
    let first = head.split(|&b| b == b'>').next().unwrap_or_default();
    head.starts_with(CHART_HEAD.as_bytes()) && first.windows(15).any(|w| w == b"\" class=\"chart\"")
}

impl Chart {
    /// A chart of linear axes, `x` and `y` each (label, unit), with no key and no paused
    /// span; `empty_note` is shown in place of a plot with no point.
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        x: (&str, Unit),
        y: (&str, Unit),
        series: Vec<Series>,
        empty_note: &str,
    ) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            x_label: x.0.into(),
            y_label: y.0.into(),
            x_unit: x.1,
            y_unit: y.1,
            y_log: false,
            x_log: false,
            key: Vec::new(),
            series,
            empty_note: empty_note.into(),
            paused: Vec::new(),
        }
    }

    /// The chart in a figure of a page.
    pub fn figure(&self) -> String {
        format!("<div class=\"figure\">{}</div>\n", self.render())
    }

    /// The chart as a standalone `<svg>` element (with its namespace, so it also works
    /// inline in HTML and as a file).
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "{CHART_HEAD}{}\" class=\"chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" font-family=\"sans-serif\" font-size=\"12\">",
            esc(&self.id)
        );
        let _ = write!(
            o,
            "<title>{}</title><rect width=\"{W}\" height=\"{H}\" fill=\"#ffffff\"/><text x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            esc(&self.title),
            LEFT,
            esc(&self.title)
        );
        let named = if self.key.is_empty() {
            &self.series
        } else {
            &self.key
        };
        let (legend, rows) = legend_layout(named);
        let top = TOP + 6.0 + rows as f64 * LEGEND_ROW;
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (px, py) = ((LEFT, W - RIGHT), (H - BOTTOM, top));
        let x = Axis::over(pts.clone().map(|p| p.0), self.x_log, self.x_unit, px);
        let y = Axis::over(pts.map(|p| p.1), self.y_log, self.y_unit, py);
        let (Some((xa, xt)), Some((ya, yt))) = (x, y) else {
            // A short strip saying why, not a blank plot.
            let o = o
                .replacen(&format!("0 0 {W} {H}\""), &format!("0 0 {W} 70\""), 1)
                .replacen(&format!("height=\"{H}\""), "height=\"70\"", 2);
            return format!(
                "{o}<text class=\"empty\" x=\"{LEFT}\" y=\"50\" fill=\"#666666\">{}</text></svg>",
                esc(&self.empty_note)
            );
        };
        self.grid(&mut o, (&xa, &xt), (&ya, &yt), top);
        self.paused_bands(&mut o, &xa, top);
        self.frame(&mut o, top);
        self.lines(&mut o, &xa, &ya);
        self.legend(&mut o, named, &legend);
        o.push_str("</g></svg>");
        o
    }

    /// The grid lines and the tick labels of both axes.
    fn grid(&self, o: &mut String, (xa, xt): (&Axis, &[f64]), (ya, yt): (&Axis, &[f64]), top: f64) {
        o.push_str("<g class=\"grid\" stroke=\"#e3e3e3\">");
        for &t in yt {
            let y = ya.map(t);
            let _ = write!(
                o,
                "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>",
                W - RIGHT
            );
        }
        for &t in xt {
            let x = xa.map(t);
            let _ = write!(
                o,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{}\"/>",
                H - BOTTOM
            );
        }
        o.push_str("</g><g class=\"ticks\" fill=\"#333333\">");
        for &t in yt {
            let _ = write!(
                o,
                "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT - 6.0,
                ya.map(t) + 4.0,
                esc(&format_value(t, self.y_unit))
            );
        }
        for &t in xt {
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                xa.map(t),
                H - BOTTOM + 16.0,
                esc(&format_value(t, self.x_unit))
            );
        }
    }

    /// A shaded band, labelled, over each paused span (clipped to the plot).
    fn paused_bands(&self, o: &mut String, xa: &Axis, top: f64) {
        for &(a, b) in &self.paused {
            let (a, b) = (a.max(xa.lo), b.min(xa.hi));
            if !(a.is_finite() && b.is_finite()) || b <= a {
                continue;
            }
            let (x0, x1) = (xa.map(a), xa.map(b));
            let _ = write!(
                o,
                "<rect class=\"paused\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#888888\" fill-opacity=\"0.18\"><title>paused {} to {}</title></rect><text class=\"paused\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555555\">paused</text>",
                (x1 - x0).max(1.0),
                H - BOTTOM - top,
                esc(&format_value(a, self.x_unit)),
                esc(&format_value(b, self.x_unit)),
                (x0 + x1) / 2.0,
                top + 12.0
            );
        }
    }

    /// The plot's frame and the axes' labels.
    fn frame(&self, o: &mut String, top: f64) {
        let _ = write!(
            o,
            "</g><rect x=\"{LEFT}\" y=\"{top:.1}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>",
            W - LEFT - RIGHT,
            H - top - BOTTOM
        );
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#333333\">{}</text>",
            LEFT + (W - LEFT - RIGHT) / 2.0,
            H - 10.0,
            esc(&self.x_label)
        );
        let _ = write!(
            o,
            "<text transform=\"translate(16 {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#333333\">{}</text>",
            top + (H - top - BOTTOM) / 2.0,
            esc(&self.y_label)
        );
    }

    /// Each series: its polyline (broken where a value is not a number: a paused span, a
    /// hand-edited `.nan`, which have no place on the chart) and, but for a plain line,
    /// its markers with tooltips.
    fn lines(&self, o: &mut String, xa: &Axis, ya: &Axis) {
        for s in &self.series {
            let name = esc(&s.name);
            if s.style == Style::Rings {
                rings(o, &name, s, xa, ya);
                continue;
            }
            let mut runs: Vec<String> = s
                .points
                .split(|(x, y)| !(x.is_finite() && y.is_finite()))
                .filter(|run| !run.is_empty())
                .map(|run| {
                    let xy = run
                        .iter()
                        .map(|&(x, y)| format!("{:.1},{:.1}", xa.map(x), ya.map(y)));
                    xy.collect::<Vec<_>>().join(" ")
                })
                .collect();
            if runs.is_empty() {
                // A series with no number still has its (empty) line, for its legend.
                runs.push(String::new());
            }
            for points in runs {
                let _ = write!(
                    o,
                    "<polyline class=\"series\" data-series=\"{name}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"{} points=\"{points}\"/>",
                    s.color,
                    dash(s.style),
                );
            }
            if !matches!(s.style, Style::Line | Style::Dashed) {
                let group = format!(
                    "<g class=\"markers\" data-series=\"{name}\" fill=\"{}\">",
                    s.color
                );
                markers(o, &group, "point", 3.5, s, xa, ya);
            }
        }
    }

    /// The legend: rows under the title.
    fn legend(&self, o: &mut String, named: &[Series], legend: &[(f64, usize)]) {
        o.push_str("<g class=\"legend\">");
        for (s, &(lx, row)) in named.iter().zip(legend) {
            let (y, c) = (TOP + row as f64 * LEGEND_ROW, s.color);
            let mid = y - 4.0;
            let _ = if s.style == Style::Rings {
                write!(
                    o,
                    "<circle cx=\"{:.1}\" cy=\"{mid:.1}\" r=\"5\" fill=\"#ffffff\" stroke=\"{c}\" stroke-width=\"2\"/>",
                    lx + 8.0
                )
            } else {
                write!(
                    o,
                    "<line x1=\"{lx:.1}\" x2=\"{:.1}\" y1=\"{mid:.1}\" y2=\"{mid:.1}\" stroke=\"{c}\" stroke-width=\"3\"{}/>",
                    lx + 16.0,
                    dash(s.style)
                )
            };
            let name = esc(&s.name);
            let _ = write!(o, "<text x=\"{:.1}\" y=\"{y:.1}\">{name}</text>", lx + 20.0);
        }
    }
}

/// A [`Style::Rings`] series: a hollow ring (white inside, over the marker under it) at
/// each point, with its tooltip.
fn rings(o: &mut String, name: &str, s: &Series, xa: &Axis, ya: &Axis) {
    let group = format!(
        "<g class=\"rings\" data-series=\"{name}\" fill=\"#ffffff\" stroke=\"{}\" stroke-width=\"2\">",
        s.color
    );
    markers(o, &group, "ring", 5.0, s, xa, ya);
}

/// A series' markers in the group `group` opens: a circle of class `class` and radius `r`
/// at each point that is a number, with its tooltip.
fn markers(o: &mut String, group: &str, class: &str, r: f64, s: &Series, xa: &Axis, ya: &Axis) {
    o.push_str(group);
    for (i, &(x, y)) in s.points.iter().enumerate() {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        let _ = write!(
            o,
            "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{r}\">",
            xa.map(x),
            ya.map(y)
        );
        if let Some(t) = s.tips.get(i) {
            let _ = write!(o, "<title>{}</title>", esc(t));
        }
        o.push_str("</circle>");
    }
    o.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        let (lo, hi, t) = linear_ticks(0.0, 937.0, Unit::Plain);
        assert_eq!(lo, 0.0);
        assert!((937.0..=1000.0).contains(&hi), "{hi}");
        assert!(
            t.windows(2).all(|w| (w[1] - w[0] - 200.0).abs() < 1e-9),
            "{t:?}"
        );
        let (lo, hi, t) = log_ticks(37.0, 12_000.0);
        assert_eq!((lo, hi), (10.0, 100_000.0));
        assert!(t.contains(&100.0) && t.contains(&10_000.0), "{t:?}");
        let (_, hi, t) = linear_ticks(0.0, 86_400.3, Unit::Seconds);
        assert!(t.iter().all(|v| v % 3600.0 == 0.0), "{t:?}");
        assert_eq!(hi, 86_400.0, "{t:?}");
    }

    #[test]
    fn values_print_in_their_units() {
        for (v, unit, text) in [
            (250.0, Unit::Micros, "250 µs"),
            (2500.0, Unit::Micros, "2.5 ms"),
            (90.0, Unit::Seconds, "90s"),
            (3900.0, Unit::Seconds, "1h05"),
            (25_000.0, Unit::Plain, "25k"),
            // A time far out of range (a damaged session's) saturates, and prints.
            (-3.3e110, Unit::Seconds, "-2562047788015215h30"),
            (f64::INFINITY, Unit::Seconds, "2562047788015215h30"),
        ] {
            assert_eq!(format_value(v, unit), text, "{v}");
        }
    }

    #[test]
    fn one_vertex_per_point_and_escaped_text() {
        let c = Chart {
            y_log: true,
            ..Chart::new(
                "c",
                "a < b & c",
                ("x", Unit::Plain),
                ("y", Unit::Micros),
                vec![Series {
                    tips: vec!["one".into()],
                    ..Series::new(
                        "p99",
                        PALETTE[0],
                        Style::LineMarkers,
                        vec![(1.0, 10.0), (2.0, 0.0), (3.0, 1000.0)],
                    )
                }],
                "",
            )
        };
        let svg = c.render();
        assert!(svg.contains("a &lt; b &amp; c"));
        let points = svg
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(points.split_whitespace().count(), 3);
        assert_eq!(svg.matches("<circle").count(), 3);
    }
}
