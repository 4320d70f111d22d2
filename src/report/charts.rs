//! The four charts of a session: throughput over time, latency over time, the
//! latency-vs-IOPS curve (one point per step) and drive temperature over time.

use super::svg::{colour, Chart, Series, Style, Unit, PALETTE};
use crate::session::results::{missed, share_of, MISSED_BELOW};
use crate::session::{IntervalRecord, Session, StepRecord};

/// Throughput in MB/s when the I/Os are large (mean ≥ 64 KiB), else IOPS.
pub fn prefers_mbps(intervals: &[IntervalRecord]) -> bool {
    let (mb, iops) = intervals.iter().fold((0.0, 0.0), |(m, i), r| {
        (m + r.mbps() * r.dt, i + r.iops() * r.dt)
    });
    iops > 0.0 && mb * 1e6 / iops >= 65536.0
}

/// One vertex per interval, at its time: `y`, or nothing (a gap in the line) for an
/// interval that ended while the user's pause held the run: its zero I/O is the pause, not
/// the drive.
fn over_time(
    intervals: &[IntervalRecord],
    paused: &[(f64, f64)],
    y: impl Fn(&IntervalRecord) -> f64,
) -> Vec<(f64, f64)> {
    let held = |t: f64| paused.iter().any(|&(a, b)| t > a && t <= b);
    intervals
        .iter()
        .map(|r| (r.t, if held(r.t) { f64::NAN } else { y(r) }))
        .collect()
}

/// The axis of time since the run started.
const TIME: (&str, Unit) = ("time since start", Unit::Seconds);

/// Throughput over time: read and write (IOPS or MB/s), one vertex per interval, a gap
/// where the user paused.
pub fn throughput(s: &Session) -> Chart {
    let paused = s.paused_spans();
    let mbps = prefers_mbps(&s.intervals);
    let pick = |r: &IntervalRecord, write: bool| match (mbps, write) {
        (true, false) => r.read_mbps,
        (true, true) => r.write_mbps,
        (false, false) => r.read_iops,
        (false, true) => r.write_iops,
    };
    let unit = if mbps { "MB/s" } else { "IOPS" };
    let series = [(false, "read", PALETTE[0]), (true, "write", PALETTE[1])]
        .into_iter()
        .filter(|&(write, ..)| s.intervals.iter().any(|r| pick(r, write) > 0.0))
        .map(|(write, name, color)| {
            let points = over_time(&s.intervals, &paused, |r| pick(r, write));
            Series::new(format!("{name} {unit}"), color, Style::Line, points)
        })
        .collect();
    Chart {
        paused,
        ..Chart::new(
            "throughput",
            format!("Throughput over time ({unit})"),
            TIME,
            (unit, Unit::Plain),
            series,
            "no intervals recorded",
        )
    }
}

/// Latency percentiles over time, log scale, one vertex per interval, a gap where the
/// user paused.
pub fn latency(s: &Session) -> Chart {
    let paused = s.paused_spans();
    type Get = fn(&IntervalRecord) -> f64;
    let figures: [(&str, Get); 4] = [
        ("p50", |r| r.lat_us.p50),
        ("p99", |r| r.lat_us.p99),
        ("p99.9", |r| r.lat_us.p99_9),
        ("max", |r| r.lat_us.max),
    ];
    let series = figures
        .into_iter()
        .filter(|_| !s.intervals.is_empty())
        .enumerate()
        .map(|(i, (name, get))| {
            Series::new(
                name,
                PALETTE[i],
                Style::Line,
                over_time(&s.intervals, &paused, get),
            )
        })
        .collect();
    Chart {
        y_log: true,
        paused,
        ..Chart::new(
            "latency",
            "Response latency over time (from the schedule when paced, else from submission)",
            TIME,
            ("response latency", Unit::Micros),
            series,
            "no intervals recorded",
        )
    }
}

/// The steps of a session that did I/O, one group per workload ([`StepRecord::series`]) in
/// order of first appearance, each group in IOPS order (so a sweep's line runs along its
/// curve, the probe at max last).
pub fn workload_groups(s: &Session) -> Vec<(String, Vec<&StepRecord>)> {
    let mut groups: Vec<(String, Vec<&StepRecord>)> = Vec::new();
    for st in s.steps.iter().filter(|st| st.summary.ios > 0) {
        let name = st.series();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, g)) => g.push(st),
            None => groups.push((name, vec![st])),
        }
    }
    for (_, g) in &mut groups {
        g.sort_by(|a, b| a.summary.iops.total_cmp(&b.summary.iops));
    }
    groups
}

/// The curve series of one session: per workload, a solid line of the mean latency and a
/// dashed p99 line through its steps (latency from submission, service, as vdbench's, as
/// StorageReview publishes average and 99th percentile latency against IOPS); points of
/// different workloads are never joined. Each workload gets the next colour of the palette,
/// or `color` for all when given (one colour per session).
pub fn curve_series(s: &Session, name_prefix: &str, color: Option<&'static str>) -> Vec<Series> {
    use crate::ui::format::{iops, us};
    type Get = fn(&crate::stats::LatSummary) -> f64;
    let at = |st: &StepRecord, get: Get| (st.summary.iops, get(st.summary.service_lat()));
    let mut out = Vec::new();
    for (i, (name, steps)) in workload_groups(s).into_iter().enumerate() {
        let c = color.unwrap_or(colour(i));
        let figures: [(&str, Style, Get); 2] = [
            ("avg", Style::LineMarkers, |l| l.mean),
            ("p99", Style::DashedMarkers, |l| l.p99),
        ];
        for (what, style, get) in figures {
            let tip = |st: &&StepRecord| {
                let v = us(at(st, get).1);
                format!("{}: {} IOPS, {what} {v}", st.label, iops(st.summary.iops))
            };
            let points = steps.iter().map(|st| at(st, get)).collect();
            out.push(Series {
                tips: steps.iter().map(tip).collect(),
                ..Series::new(format!("{name_prefix}{name} {what}"), c, style, points)
            });
        }
        // A sweep point that missed its target: a ring over both its markers.
        let missed: Vec<&StepRecord> = steps
            .into_iter()
            .filter(|st| missed(st.summary.iops, st.summary.target_iops))
            .collect();
        if missed.is_empty() {
            continue;
        }
        let tip = |st: &&StepRecord| {
            format!(
                "{}: missed its target, {} of {} IOPS ({:.0}%)",
                st.label,
                iops(st.summary.iops),
                iops(st.summary.target_iops.unwrap_or_default()),
                share_of(st.summary.iops, st.summary.target_iops).unwrap_or_default() * 100.0
            )
        };
        let name = format!(
            "{name_prefix}{name} missed its target (under {:.0}%)",
            MISSED_BELOW * 100.0
        );
        let points = missed
            .iter()
            .flat_map(|st| [at(st, |l| l.mean), at(st, |l| l.p99)])
            .collect();
        out.push(Series {
            tips: missed.iter().flat_map(|st| [tip(st), tip(st)]).collect(),
            ..Series::new(name, c, Style::Rings, points)
        });
    }
    out
}

/// Whether values spread over two decades or more (an axis for them reads best in log).
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    hi > 0.0 && hi / lo >= 100.0
}

/// Whether the series' x values (IOPS) spread over two decades or more.
fn x_spans_decades(series: &[Series]) -> bool {
    spans_decades(series.iter().flat_map(|x| x.points.iter().map(|p| p.0)))
}

/// Latency against IOPS, one point per step (the sweep's curve); IOPS on a log axis when
/// they span decades.
pub fn curve(s: &Session) -> Chart {
    let series = curve_series(s, "", None);
    Chart {
        y_log: true,
        x_log: x_spans_decades(&series),
        ..Chart::new(
            "curve",
            "Latency vs IOPS (average solid, p99 dashed; one line per workload)",
            ("IOPS", Unit::Plain),
            ("service latency (from submission)", Unit::Micros),
            series,
            "no step finished",
        )
    }
}

/// Drive temperature from the telemetry samples.
pub fn temperature(s: &Session) -> Chart {
    let series = super::soak::temperature_line(s).into_iter().collect();
    Chart {
        paused: s.paused_spans(),
        ..Chart::new(
            "temperature",
            "Drive temperature over time",
            TIME,
            ("°C", Unit::Plain),
            series,
            "no temperature samples in this session",
        )
    }
}

/// The four charts of a session of several drives, every drive on each, one colour a
/// drive: throughput (IOPS or MB/s, reads and writes together) and p99 latency over time,
/// the curves, the temperatures.
fn overlaid(s: &Session) -> Vec<Chart> {
    let paused = s.paused_spans();
    let views = s.drive_views();
    let labels = s.drive_labels();
    let mbps = prefers_mbps(&s.intervals);
    let unit = if mbps { "MB/s" } else { "IOPS" };
    // A line a drive, in its colour, named by its label and `what`.
    let lines = |what: &str, points: &dyn Fn(&Session) -> Vec<(f64, f64)>| -> Vec<Series> {
        let line = |(i, v): (usize, &Session)| {
            Series::new(
                format!("{} {what}", labels[i]),
                colour(i),
                Style::Line,
                points(v),
            )
        };
        views.iter().enumerate().map(line).collect()
    };
    let mut tp = throughput(s);
    tp.title = format!("Throughput over time ({unit}, reads and writes, per drive)");
    let moved = |r: &IntervalRecord| if mbps { r.mbps() } else { r.iops() };
    tp.series = lines(unit, &|v| over_time(&v.intervals, &paused, moved));
    let mut lat = latency(s);
    lat.title = "p99 response latency over time, per drive".into();
    lat.series = lines("p99", &|v| {
        over_time(&v.intervals, &paused, |r| r.lat_us.p99)
    });
    lat.series.retain(|x| x.points.iter().any(|p| p.1 > 0.0));
    let mut cv = curve(s);
    cv.series = views
        .iter()
        .enumerate()
        .flat_map(|(i, v)| curve_series(v, &format!("{}: ", labels[i]), Some(colour(i))))
        .collect();
    cv.x_log = x_spans_decades(&cv.series);
    // One key entry a drive (its colour) and one a figure (its style): the workloads are
    // told apart by their points' tooltips and the tables, not by a legend longer than
    // the plot.
    let key = |name: String, color, style| Series::new(name, color, style, Vec::new());
    let missed = format!("missed its target (under {:.0}%)", MISSED_BELOW * 100.0);
    cv.key = labels
        .iter()
        .enumerate()
        .map(|(i, l)| key(l.clone(), colour(i), Style::Line))
        .chain([
            key("average".into(), GREY, Style::LineMarkers),
            key("p99".into(), GREY, Style::DashedMarkers),
        ])
        .chain(
            cv.series
                .iter()
                .any(|x| x.style == Style::Rings)
                .then(|| key(missed, GREY, Style::Rings)),
        )
        .collect();
    cv.title =
        "Latency vs IOPS per drive (average solid, p99 dashed; one line per workload)".into();
    let mut temp = temperature(s);
    temp.title = "Drive temperature over time, per drive".into();
    temp.series = lines("°C", &super::soak::temps);
    temp.series.retain(|x| !x.points.is_empty());
    vec![tp, lat, cv, temp]
}

/// The colour of a key entry that stands for a figure of every drive.
const GREY: &str = "#555555";

/// All four, in page order; a thermal soak's chart after them. A session of several drives
/// draws every drive on each.
pub fn all(s: &Session) -> Vec<Chart> {
    if !s.drives.is_empty() {
        return overlaid(s);
    }
    let mut out = vec![throughput(s), latency(s), curve(s), temperature(s)];
    if let Some(sum) = super::soak::summary(s) {
        out.push(super::soak::chart(s, &sum));
    }
    out
}
