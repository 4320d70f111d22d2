//! The text of a plain run's summary, a preset's step, the intervals' rows, a run's engine
//! and target host, and a paced step's schedule, as the printer shows them: figures in
//! units that scale (k and M IOPS, MB/s and GB/s, µs, ms and s) and counts with their
//! plurals.

use crate::run::{FinishedStep, Prepared};
use crate::session::results::{percent_text, MISSED_BELOW};
use crate::stats::{LatSummary, StepSummary};
use crate::ui::format::{bw, iops, us};
use crate::units::count;
use crate::workload::{EngineKind, EngineOptions};

/// The intervals' header, over [`interval_row`]'s columns.
pub(super) fn interval_header() -> String {
    format!(
        "{:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7}",
        "time",
        "read IOPS",
        "read MB/s",
        "write IOPS",
        "write MB/s",
        "resp p50",
        "resp p99",
        "resp p99.9",
        "errors"
    )
}

/// An interval's row: its end, read and write IOPS and bandwidth (bytes per second), three
/// response latencies already in words (blank where there is none: from the schedule when
/// paced, else from submission, the service latency), and its errors.
pub(super) fn interval_row(end_s: f64, rates: [f64; 4], lat: [String; 3], errors: u64) -> String {
    let [ri, rb, wi, wb] = rates;
    let [p50, p99, p99_9] = lat;
    format!(
        "{end_s:>7.1}s {:>10} {:>10} {:>10} {:>10} {p50:>10} {p99:>10} {p99_9:>10} {errors:>7}",
        iops(ri),
        bw(rb),
        iops(wi),
        bw(wb),
    )
}

/// A preset's step as it ends: what it achieved on one line, how it ended on an indented
/// second one, and fio's series under them.
pub(super) fn step_lines(r: &FinishedStep, steps: usize) -> Vec<String> {
    let s = &r.summary;
    let target = match (r.target_iops, r.closed_loop) {
        (Some(t), false) => format!("target {} IOPS, ", iops(t)),
        (Some(t), true) => format!("target {} IOPS (run closed-loop), ", iops(t)),
        (None, _) => String::new(),
    };
    let l = &r.service_lat_us;
    let reached = reached_text(r.achieved_share());
    let mut out = vec![format!(
        "step {}/{steps} {}: {target}achieved {} IOPS{reached}, {}, service mean {}, p99 {}, p99.9 {}",
        r.index + 1,
        r.name,
        iops(s.iops),
        bw(s.bw_bytes()),
        us(l.mean),
        us(l.p99),
        us(l.p99_9),
    )];
    let resp = r
        .response_from_schedule_lat_us
        .map(|l| format!("response from schedule mean {}, ", us(l.mean)))
        .unwrap_or_default();
    out.push(format!(
        "  {resp}{}, {:.1}s, ended by {}",
        count(s.errors, "error"),
        s.runtime_s,
        s.ended_by
    ));
    out.extend(s.fio_series.iter().map(|x| format!("  {x}")));
    out
}

/// A paced step's share of its target, after its achieved IOPS: ` (98% of target)`, or
/// ` (64% of target: MISSED)` under [`MISSED_BELOW`] of it; nothing for an unpaced step.
pub(super) fn reached_text(share: Option<f64>) -> String {
    match share {
        Some(x) if x < MISSED_BELOW => format!(" ({} of target: MISSED)", percent_text(x)),
        Some(x) => format!(" ({} of target)", percent_text(x)),
        None => String::new(),
    }
}

/// The engine and its ring options in a run's first line (nothing for plain io_uring):
/// ` with the nop engine`, ` with io_uring (hipri, sqpoll (idle 1000ms))`.
pub(super) fn engine_text(engine: EngineKind, o: &EngineOptions) -> String {
    match (engine, o.is_default()) {
        (EngineKind::IoUring, true) => String::new(),
        (e, true) => format!(" with the {e} engine"),
        (e, false) => format!(" with the {e} engine ({o})"),
    }
}

/// A latency's line: `name` (its direction, or the latency's kind), then the figures
/// after `kind` (`service mean 85 µs  min …`, or `mean …` when the name says which).
fn lat_line(name: &str, kind: &str, l: &LatSummary) -> String {
    format!(
        "  {name:<9} {kind}mean {}  min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
        us(l.mean),
        us(l.min),
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.p99_9),
        us(l.p99_99),
        us(l.max)
    )
}

pub(super) fn summary_text(s: &StepSummary) -> Vec<String> {
    let mut out = Vec::new();
    let engine = match &s.engine_note {
        Some(n) => format!("{} ({n})", s.engine),
        None => s.engine.to_string(),
    };
    out.push(format!(
        "summary: {:.2}s measured, engine {engine}, ended by {}",
        s.runtime_s, s.ended_by
    ));
    let dirs = [
        (
            "read",
            s.read_ios,
            s.read_iops,
            s.read_bw_bytes,
            &s.read_lat_us,
        ),
        (
            "write",
            s.write_ios,
            s.write_iops,
            s.write_bw_bytes,
            &s.write_lat_us,
        ),
        (
            "trim",
            s.trim_ios,
            s.trim_iops,
            s.trim_bw_bytes,
            &s.trim_lat_us,
        ),
    ];
    let busy = dirs.iter().filter(|d| d.1 > 0).count();
    // A step of no I/O still says its reads (0 of them).
    for (i, (name, ios, rate, bytes, _)) in dirs.iter().enumerate() {
        if *ios > 0 || (i == 0 && busy == 0) {
            out.push(format!(
                "  {name:<9} {}, {} IOPS, {} ({:.1} MiB/s)",
                count(*ios, "I/O"),
                iops(*rate),
                bw(*bytes),
                bytes / 1048576.0
            ));
        }
    }
    if let Some(t) = s.target_iops {
        out.push(format!(
            "  target    {} IOPS, achieved {} ({:+.2}%)",
            iops(t),
            iops(s.iops),
            (s.iops / t - 1.0) * 100.0
        ));
        if let Some(cv) = s.arrival_cv {
            out.push(format!(
                "  arrivals  gaps' coefficient of variation {cv:.3} (poisson ~1, uniform ~0)"
            ));
        }
        if let Some(p) = &s.pacing {
            out.push(format!("  pacing    {}", pacing_text(p)));
        }
    }
    // A paced step's latency from the schedule (response) and from submission (service);
    // an unpaced step has no schedule: its one latency is its service latency.
    let (kind, label) = match s.service_lat_us {
        Some(_) => ("response ", "response"),
        None => ("service ", "service"),
    };
    out.push(lat_line(label, "", &s.lat_us));
    if let Some(svc) = &s.service_lat_us {
        out.push(lat_line("service", "", svc));
    }
    if busy > 1 {
        for (name, ios, _, _, lat) in dirs {
            if ios > 0 {
                out.push(lat_line(name, kind, lat));
            }
        }
    }
    out.push(format!("  errors    {}", s.errors));
    out.extend(s.fio_series.iter().map(|x| format!("  {x}")));
    out
}

/// `HOST:` before a remote target's path; nothing for a target here.
pub(super) fn host_prefix(run: &Prepared) -> String {
    run.host.name().map(|h| format!("{h}:")).unwrap_or_default()
}

/// A start object with the target's host, when it is another one (a target here gets no
/// key, as before there were hosts).
pub(super) fn with_host(run: &Prepared, mut v: serde_json::Value) -> serde_json::Value {
    if let (Some(h), Some(m)) = (run.host.name(), v.as_object_mut()) {
        m.insert("host".into(), h.into());
    }
    v
}

/// How a paced step's workers kept to their schedule, in words.
fn pacing_text(p: &crate::outcome::Pacing) -> String {
    use crate::outcome::Pacing;
    match *p {
        Pacing::OnTime { lead_us } => {
            format!("each I/O on time (asleep until {lead_us:.0} µs before it, spinning the rest)")
        }
        Pacing::NoSpareCpu { workers, cpus } => format!(
            "each worker sleeps to its I/O's due time ({workers} paced workers on {cpus} CPUs, \
             none to spare for spinning): a sleep's lateness shows in response time"
        ),
        Pacing::LeadOverHalfPeriod { lead_us, period_us } => format!(
            "each worker sleeps to its I/O's due time (a sleep ends up to {lead_us:.0} µs late \
             here, over half the {period_us:.1} µs between I/Os): the lateness shows in \
             response time"
        ),
    }
}
