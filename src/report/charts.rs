//! The four charts of a session: throughput over time, latency over time, the
//! latency-vs-IOPS curve (one point per step) and drive temperature over time.

use super::svg::{Chart, Series, Style, Unit, PALETTE};
use crate::session::results::{missed, share_of, MISSED_BELOW};
use crate::session::{IntervalRecord, Session, StepRecord};

/// Throughput in MB/s when the I/Os are large (mean ≥ 64 KiB), else IOPS.
pub fn prefers_mbps(intervals: &[IntervalRecord]) -> bool {
    let (mb, iops) = intervals.iter().fold((0.0, 0.0), |(m, i), r| {
        (m + r.mbps() * r.dt, i + r.iops() * r.dt)
    });
    iops > 0.0 && mb * 1e6 / iops >= 65536.0
}

/// `y` at an interval's time, or nothing (a gap in the line) for an interval that ended
/// while the user's pause held the run: its zero I/O is the pause, not the drive.
fn unless_paused(paused: &[(f64, f64)], t: f64, y: f64) -> (f64, f64) {
    if paused.iter().any(|&(a, b)| t > a && t <= b) {
        (t, f64::NAN)
    } else {
        (t, y)
    }
}

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
    let mut series = Vec::new();
    for (write, name, color) in [(false, "read", PALETTE[0]), (true, "write", PALETTE[1])] {
        if s.intervals.iter().any(|r| pick(r, write) > 0.0) {
            series.push(Series {
                name: format!("{name} {unit}"),
                color,
                style: Style::Line,
                points: s
                    .intervals
                    .iter()
                    .map(|r| unless_paused(&paused, r.t, pick(r, write)))
                    .collect(),
                tips: Vec::new(),
            });
        }
    }
    Chart {
        id: "throughput".into(),
        title: format!("Throughput over time ({unit})"),
        x_label: "time since start".into(),
        y_label: unit.into(),
        x_unit: Unit::Seconds,
        y_unit: Unit::Plain,
        y_log: false,
        x_log: false,
        key: Vec::new(),
        series,
        empty_note: "no intervals recorded".into(),
        paused,
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
    let series = if s.intervals.is_empty() {
        Vec::new()
    } else {
        figures
            .iter()
            .enumerate()
            .map(|(i, (name, get))| Series {
                name: (*name).into(),
                color: PALETTE[i],
                style: Style::Line,
                points: s
                    .intervals
                    .iter()
                    .map(|r| unless_paused(&paused, r.t, get(r)))
                    .collect(),
                tips: Vec::new(),
            })
            .collect()
    };
    Chart {
        id: "latency".into(),
        title: "Response latency over time (from the schedule when paced, else from submission)"
            .into(),
        x_label: "time since start".into(),
        y_label: "response latency".into(),
        x_unit: Unit::Seconds,
        y_unit: Unit::Micros,
        y_log: true,
        x_log: false,
        key: Vec::new(),
        series,
        empty_note: "no intervals recorded".into(),
        paused,
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
    let tip = |label: &str, iops: f64, what: &str, v: f64| {
        format!(
            "{label}: {} IOPS, {what} {}",
            crate::ui::format::iops(iops),
            crate::ui::format::us(v)
        )
    };
    let mut out = Vec::new();
    for (i, (name, steps)) in workload_groups(s).into_iter().enumerate() {
        let c = color.unwrap_or(PALETTE[i % PALETTE.len()]);
        let mk = |what: &str, style, get: fn(&crate::stats::LatSummary) -> f64| Series {
            name: format!("{name_prefix}{name} {what}"),
            color: c,
            style,
            points: steps
                .iter()
                .map(|st| (st.summary.iops, get(st.summary.service_lat())))
                .collect(),
            tips: steps
                .iter()
                .map(|st| {
                    tip(
                        &st.label,
                        st.summary.iops,
                        what,
                        get(st.summary.service_lat()),
                    )
                })
                .collect(),
        };
        out.push(mk("avg", Style::LineMarkers, |l| l.mean));
        out.push(mk("p99", Style::DashedMarkers, |l| l.p99));
        // A sweep point that missed its target: a ring over both its markers.
        let missed: Vec<_> = steps
            .iter()
            .filter(|st| missed(st.summary.iops, st.summary.target_iops))
            .collect();
        if !missed.is_empty() {
            let l = |st: &&&StepRecord, f: fn(&crate::stats::LatSummary) -> f64| {
                f(st.summary.service_lat())
            };
            let tip = |st: &&&StepRecord| {
                format!(
                    "{}: missed its target, {} of {} IOPS ({:.0}%)",
                    st.label,
                    crate::ui::format::iops(st.summary.iops),
                    crate::ui::format::iops(st.summary.target_iops.unwrap_or_default()),
                    share_of(st.summary.iops, st.summary.target_iops).unwrap_or_default() * 100.0
                )
            };
            out.push(Series {
                name: format!(
                    "{name_prefix}{name} missed its target (under {:.0}%)",
                    MISSED_BELOW * 100.0
                ),
                color: c,
                style: Style::Rings,
                points: missed
                    .iter()
                    .flat_map(|st| {
                        [
                            (st.summary.iops, l(st, |x| x.mean)),
                            (st.summary.iops, l(st, |x| x.p99)),
                        ]
                    })
                    .collect(),
                tips: missed.iter().flat_map(|st| [tip(st), tip(st)]).collect(),
            });
        }
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

/// Latency against IOPS, one point per step (the sweep's curve); IOPS on a log axis when
/// they span decades.
pub fn curve(s: &Session) -> Chart {
    let series = curve_series(s, "", None);
    Chart {
        id: "curve".into(),
        title: "Latency vs IOPS (average solid, p99 dashed; one line per workload)".into(),
        x_label: "IOPS".into(),
        y_label: "service latency (from submission)".into(),
        x_unit: Unit::Plain,
        y_unit: Unit::Micros,
        y_log: true,
        x_log: spans_decades(series.iter().flat_map(|x| x.points.iter().map(|p| p.0))),
        key: Vec::new(),
        series,
        empty_note: "no step finished".into(),
        paused: Vec::new(),
    }
}

/// Drive temperature from the telemetry samples.
pub fn temperature(s: &Session) -> Chart {
    let points: Vec<(f64, f64)> = s
        .telemetry
        .iter()
        .filter_map(|v| Some((v.t()?, v.temperature_c()?)))
        .collect();
    let series = if points.is_empty() {
        Vec::new()
    } else {
        vec![Series {
            name: "drive °C".into(),
            color: PALETTE[1],
            style: Style::Line,
            points,
            tips: Vec::new(),
        }]
    };
    Chart {
        id: "temperature".into(),
        title: "Drive temperature over time".into(),
        x_label: "time since start".into(),
        y_label: "°C".into(),
        x_unit: Unit::Seconds,
        y_unit: Unit::Plain,
        y_log: false,
        x_log: false,
        key: Vec::new(),
        series,
        empty_note: "no temperature samples in this session".into(),
        paused: s.paused_spans(),
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
    let colour = |i: usize| PALETTE[i % PALETTE.len()];
    let line = |i: usize, name: String, points: Vec<(f64, f64)>| Series {
        name,
        color: colour(i),
        style: Style::Line,
        points,
        tips: Vec::new(),
    };
    let mut tp = throughput(s);
    tp.title = format!("Throughput over time ({unit}, reads and writes, per drive)");
    tp.series = views
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let pts = v
                .intervals
                .iter()
                .map(|r| unless_paused(&paused, r.t, if mbps { r.mbps() } else { r.iops() }))
                .collect();
            line(i, format!("{} {unit}", labels[i]), pts)
        })
        .collect();
    let mut lat = latency(s);
    lat.title = "p99 response latency over time, per drive".into();
    lat.series = views
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let pts = v
                .intervals
                .iter()
                .map(|r| unless_paused(&paused, r.t, r.lat_us.p99))
                .collect();
            line(i, format!("{} p99", labels[i]), pts)
        })
        .filter(|x| x.points.iter().any(|p| p.1 > 0.0))
        .collect();
    let mut cv = curve(s);
    cv.series = views
        .iter()
        .enumerate()
        .flat_map(|(i, v)| curve_series(v, &format!("{}: ", labels[i]), Some(colour(i))))
        .collect();
    cv.x_log = spans_decades(cv.series.iter().flat_map(|x| x.points.iter().map(|p| p.0)));
    // One key entry a drive (its colour) and one a figure (its style): the workloads are
    // told apart by their points' tooltips and the tables, not by a legend longer than
    // the plot.
    cv.key = labels
        .iter()
        .enumerate()
        .map(|(i, l)| key_entry(l.clone(), colour(i), Style::Line))
        .chain([
            key_entry("average".into(), "#555555", Style::LineMarkers),
            key_entry("p99".into(), "#555555", Style::DashedMarkers),
        ])
        .chain(cv.series.iter().any(|x| x.style == Style::Rings).then(|| {
            key_entry(
                format!("missed its target (under {:.0}%)", MISSED_BELOW * 100.0),
                "#555555",
                Style::Rings,
            )
        }))
        .collect();
    cv.title =
        "Latency vs IOPS per drive (average solid, p99 dashed; one line per workload)".into();
    let mut temp = temperature(s);
    temp.title = "Drive temperature over time, per drive".into();
    temp.series = views
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let pts = v
                .telemetry
                .iter()
                .filter_map(|x| Some((x.t()?, x.temperature_c()?)))
                .collect();
            line(i, format!("{} °C", labels[i]), pts)
        })
        .filter(|x: &Series| !x.points.is_empty())
        .collect();
    vec![tp, lat, cv, temp]
}

fn key_entry(name: String, color: &'static str, style: Style) -> Series {
    Series {
        name,
        color,
        style,
        points: Vec::new(),
        tips: Vec::new(),
    }
}

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
