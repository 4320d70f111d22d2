//! A thermal soak's part of a report: its figures (time to the warning temperature, the
//! throttle onset, throughput before and while throttled and the cliff, the peak, the
//! cool-down) and one chart of temperature and throughput on one time axis, with the
//! drive's warning and critical lines. Present when the session holds thermal events.

use serde::Deserialize;

use super::page::{kv_table, para};
use super::svg::{format_value, Chart, Series, Style, Unit, PALETTE};
use crate::session::{EventKind, Session};
use crate::thermal::{Load, SoakSummary, ThermalEvent};
use crate::workload::EngineKind;

/// The session's thermal events, typed, with their times.
fn events(s: &Session) -> Vec<(f64, ThermalEvent)> {
    s.events
        .iter()
        .filter(|e| e.kind == EventKind::Thermal)
        .filter_map(|e| Some((e.t, e.data_as()?)))
        .collect()
}

fn loads(s: &Session) -> Vec<Load> {
    s.intervals
        .iter()
        .map(|i| {
            // `step` is the step's index, not its place in this (maybe one drive's) list.
            let idle = s
                .steps
                .iter()
                .find(|st| st.index == i.step)
                .is_some_and(|st| st.summary.engine == EngineKind::Idle);
            Load {
                t: i.t,
                dt: i.dt,
                iops: i.iops(),
                mbps: i.mbps(),
                loaded: !i.ramp && i.suspended_s == 0.0 && !idle,
            }
        })
        .collect()
}

/// The drive's temperature over time, from the telemetry samples.
pub fn temps(s: &Session) -> Vec<(f64, f64)> {
    s.telemetry
        .iter()
        .filter_map(|v| Some((v.t()?, v.temperature_c()?)))
        .collect()
}

/// The drive's temperature as a line of a chart, when the session has any.
pub fn temperature_line(s: &Session) -> Option<Series> {
    let t = temps(s);
    (!t.is_empty()).then(|| Series::new("drive °C", PALETTE[1], Style::Line, t))
}

/// The soak's figures, when the session has thermal events.
pub fn summary(s: &Session) -> Option<SoakSummary> {
    let ev = events(s);
    if ev.is_empty() {
        return None;
    }
    let refs: Vec<(f64, &ThermalEvent)> = ev.iter().map(|(t, e)| (*t, e)).collect();
    Some(SoakSummary::build(&temps(s), &loads(s), &refs))
}

/// A sample's temperature thresholds (its SMART reading's).
#[derive(Deserialize)]
struct WithThresholds {
    smart: Option<Thresholds>,
}

#[derive(Deserialize)]
struct Thresholds {
    warning_temp_c: Option<f64>,
    critical_temp_c: Option<f64>,
}

/// The drive's warning and critical thresholds, from the first reading that has them.
fn thresholds(s: &Session) -> (Option<f64>, Option<f64>) {
    let find = |key: fn(&Thresholds) -> Option<f64>| {
        s.telemetry.iter().find_map(|v| {
            let smart = v.read::<WithThresholds>()?.smart?;
            key(&smart).filter(|x| x.is_finite())
        })
    };
    (find(|r| r.warning_temp_c), find(|r| r.critical_temp_c))
}

/// Temperature (°C) and throughput as a percentage of its mean before the throttle, on one
/// time axis, with the warning and critical lines across it.
pub fn chart(s: &Session, sum: &SoakSummary) -> Chart {
    let t = temps(s);
    let mut series: Vec<Series> = temperature_line(s).into_iter().collect();
    if let Some(b) = sum.before.filter(|b| b.iops > 0.0) {
        let points = loads(s)
            .iter()
            .filter(|l| l.loaded)
            .map(|l| (l.t, 100.0 * l.iops / b.iops))
            .collect();
        let name = "IOPS, % of the mean before throttling";
        series.push(Series::new(name, PALETTE[0], Style::Line, points));
    }
    let span = s
        .intervals
        .iter()
        .map(|i| i.t)
        .chain(t.iter().map(|p| p.0))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    let (warn, crit) = thresholds(s);
    for (name, c, color) in [
        ("warning", warn, PALETTE[4]),
        ("critical", crit, PALETTE[6]),
    ] {
        if let (Some(c), true) = (c, span.0 < span.1) {
            let line = vec![(span.0, c), (span.1, c)];
            series.push(Series {
                tips: vec![format!("{name} threshold"); 2],
                ..Series::new(
                    format!("{name} {c:.0} °C"),
                    color,
                    Style::DashedMarkers,
                    line,
                )
            });
        }
    }
    Chart::new(
        "soak",
        "Thermal soak: temperature and throughput",
        ("time since start", Unit::Seconds),
        ("°C, or % of throughput before throttling", Unit::Plain),
        series,
        "no temperature or throughput recorded",
    )
}

/// The soak's figures as rows: what a storage engineer reads first.
pub fn rows(sum: &SoakSummary) -> Vec<(String, String)> {
    let secs = |x: f64| format_value(x, Unit::Seconds);
    let c = |x: Option<i32>| x.map_or("unknown".to_string(), |c| format!("{c} °C"));
    let mut out = vec![("starting temperature".to_string(), c(sum.start_c))];
    out.push((
        "peak temperature".into(),
        sum.peak.map_or("unknown".into(), |(t, p)| {
            format!("{p:.0} °C at {}", secs(t))
        }),
    ));
    out.push((
        "time to the warning temperature".into(),
        sum.to_warning.map_or("not reached".into(), |(t, w)| {
            format!("{} after I/O began ({w} °C)", secs(t))
        }),
    ));
    out.push((
        "throttle onset".into(),
        sum.onset.map_or("never throttled".into(), |(t, temp, by)| {
            format!("{} after I/O began, {} (by {by})", secs(t), c(temp))
        }),
    ));
    let through = |x: Option<crate::thermal::Throughput>| {
        x.map_or("-".into(), |t| {
            format!(
                "{:.0} IOPS, {:.1} MB/s (mean of {})",
                t.iops,
                t.mbps,
                secs(t.secs)
            )
        })
    };
    out.push(("before throttling".into(), through(sum.before)));
    out.push(("while throttled".into(), through(sum.throttled)));
    if let Some((i, m)) = sum.cliff() {
        out.push((
            "the cliff (throttled ÷ before)".into(),
            format!("{i:.2}× IOPS, {m:.2}× MB/s"),
        ));
    }
    out.push((
        "cool-down to the starting temperature".into(),
        match (sum.cooled_s, sum.not_cooled) {
            (Some(t), _) => secs(t),
            (None, true) => "not back when the idle phase ended".into(),
            (None, false) => "-".into(),
        },
    ));
    out
}

/// The soak's section of the session page.
pub fn section(o: &mut String, sum: &SoakSummary) {
    o.push_str("<h2>Thermal soak</h2>\n");
    kv_table(o, "soak", &rows(sum));
    para(o, "note", "Times run from the first interval with I/O; throughput while throttled runs from the onset to the end of the throttle or of the load.");
}
