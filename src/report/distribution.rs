//! The latency distribution of each step, from the histogram log saved with the session
//! (`run --histograms`): per workload, one chart of the share of I/Os slower than each
//! latency (both axes log, so the tail's nines read as steps down the chart), a line a step.

use std::path::Path;

use hdrhistogram::Histogram;

use super::svg::{colour, Chart, Series, Style, Unit, PALETTE};
use crate::session::{histlog, Session};

/// Points kept of a line at most (a histogram has a bucket for each distinct value).
const MAX_POINTS: usize = 400;

/// (latency µs, share of I/Os slower) of `h` (nanoseconds), the last value's share left
/// out (none is slower: no place on a log axis).
pub fn exceedance(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len();
    if total == 0 {
        return Vec::new();
    }
    let mut below = 0u64;
    let mut pts = Vec::new();
    for v in h.iter_recorded() {
        below += v.count_since_last_iteration();
        if below >= total {
            break;
        }
        let us = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e3;
        pts.push((us, (total - below) as f64 / total as f64));
    }
    if pts.len() > MAX_POINTS {
        let k = pts.len().div_ceil(MAX_POINTS);
        let last = pts.last().copied();
        pts = pts.into_iter().step_by(k).collect();
        if let (Some(l), Some(end)) = (last, pts.last()) {
            if *end != l {
                pts.push(l);
            }
        }
    }
    pts
}

/// One chart per workload of a session (or one drive's view of a session of several) whose
/// histograms are in `hlog`; nothing when the log cannot be read (the page says so in its
/// note).
pub fn charts(s: &Session, hlog: &Path) -> Vec<Chart> {
    let mut groups: Vec<(String, Vec<Series>)> = Vec::new();
    for (n, st) in s.steps.iter().enumerate() {
        let Ok(span) = histlog::read_drive_span(hlog, st.start_s, st.end_s, st.drive) else {
            return Vec::new();
        };
        let points = exceedance(&span.hist);
        if points.is_empty() {
            continue;
        }
        let w = st.series();
        let at = match groups.iter().position(|(g, _)| *g == w) {
            Some(i) => i,
            None => {
                groups.push((w, Vec::new()));
                groups.len() - 1
            }
        };
        let lines = &mut groups[at].1;
        let name = format!("{} {}", n + 1, st.label);
        lines.push(Series::new(name, colour(lines.len()), Style::Line, points));
    }
    // Few steps in all: one chart, a line a step.
    let lines: usize = groups.iter().map(|(_, g)| g.len()).sum();
    if groups.len() > 1 && lines <= PALETTE.len() {
        let mut all: Vec<Series> = groups.into_iter().flat_map(|(_, g)| g).collect();
        for (i, x) in all.iter_mut().enumerate() {
            x.color = PALETTE[i];
        }
        groups = vec![("every step".to_string(), all)];
    }
    groups
        .into_iter()
        .enumerate()
        .map(|(i, (w, series))| Chart {
            x_log: true,
            y_log: true,
            ..Chart::new(
                format!("distribution-{}", i + 1),
                format!("Latency distribution per step: {w}"),
                ("latency (response, log)", Unit::Micros),
                ("share of I/Os slower (log)", Unit::Plain),
                series,
                "no histograms in this span",
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_slower_falls_from_one_to_the_last_values_share() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let pts = exceedance(&h);
        // 999 points (every value but the last), thinned to at most MAX_POINTS, the last
        // kept: one I/O in 1000 slower than it.
        assert!(
            pts.len() <= MAX_POINTS + 1 && pts.len() > MAX_POINTS / 2,
            "{}",
            pts.len()
        );
        assert!(
            (pts.last().unwrap().1 - 0.001).abs() < 1e-12,
            "{:?}",
            pts.last()
        );
        assert!((pts[0].0 - 1.0).abs() < 0.01, "{:?}", pts[0]);
        assert!((pts[0].1 - 0.999).abs() < 1e-9);
        // 99% are at or under 990 µs: 1% slower.
        let p99 = pts.iter().find(|p| p.1 <= 0.01).unwrap();
        assert!((p99.0 - 990.0).abs() <= 990.0 * 0.002, "{p99:?}");
        assert!(pts.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 > w[1].1));
    }
}
