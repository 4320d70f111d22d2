//! The "all" figures of a run of several drives: every running drive's interval since the
//! last "all" line added up, and a plain run's summaries (the hub's view keeps each
//! drive's last).

use crate::run::RunView;
use crate::stats::{IntervalReport, StepSummary};

/// Every running drive (of the `view`) has an interval in `pending` since the last "all"
/// line: the sum of every drive's that has one (a drive that just ended gives its last).
pub(super) fn take_all(
    pending: &mut [Option<IntervalFigures>],
    view: &RunView,
) -> Option<(IntervalFigures, usize)> {
    let running = |d: usize| view.drives.get(d).is_some_and(|v| v.ended.is_none());
    let waiting = (0..pending.len()).any(|d| running(d) && pending[d].is_none());
    let with: Vec<usize> = (0..pending.len())
        .filter(|&d| pending[d].is_some())
        .collect();
    if pending.len() < 2 || waiting || with.is_empty() {
        return None;
    }
    let mut sum = IntervalFigures::default();
    for d in &with {
        if let Some(f) = pending[*d].take() {
            sum.end_s = sum.end_s.max(f.end_s);
            sum.read_iops += f.read_iops;
            sum.write_iops += f.write_iops;
            sum.read_bw += f.read_bw;
            sum.write_bw += f.write_bw;
            sum.p99 = sum.p99.max(f.p99);
            sum.errors += f.errors;
        }
    }
    Some((sum, with.len()))
}

/// A plain run of several drives: every drive's last summary added up (none with fewer
/// than two).
pub(super) fn sums(view: &RunView) -> Option<Sums> {
    let sums: Vec<&StepSummary> = view
        .drives
        .iter()
        .filter_map(|d| Some(&d.last.as_ref()?.summary))
        .collect();
    if sums.len() < 2 {
        return None;
    }
    let add = |f: fn(&StepSummary) -> f64| sums.iter().map(|s| f(s)).sum::<f64>();
    Some(Sums {
        drives: sums.len(),
        ios: sums.iter().map(|s| s.ios).sum(),
        errors: sums.iter().map(|s| s.errors).sum(),
        read_iops: add(|s| s.read_iops),
        write_iops: add(|s| s.write_iops),
        trim_iops: add(|s| s.trim_iops),
        read_bw: add(|s| s.read_bw_bytes),
        write_bw: add(|s| s.write_bw_bytes),
        trim_bw: add(|s| s.trim_bw_bytes),
    })
}

/// A plain run's summaries of several drives, added up.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sums {
    pub(super) drives: usize,
    pub(super) ios: u64,
    pub(super) errors: u64,
    pub(super) read_iops: f64,
    pub(super) write_iops: f64,
    pub(super) trim_iops: f64,
    pub(super) read_bw: f64,
    pub(super) write_bw: f64,
    pub(super) trim_bw: f64,
}

/// An interval's figures, for the "all" line.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IntervalFigures {
    pub(super) end_s: f64,
    pub(super) read_iops: f64,
    pub(super) write_iops: f64,
    pub(super) read_bw: f64,
    pub(super) write_bw: f64,
    pub(super) p99: f64,
    pub(super) errors: u64,
}

impl IntervalFigures {
    pub(super) fn of(r: &IntervalReport) -> Self {
        IntervalFigures {
            end_s: r.end_s,
            read_iops: r.read_iops,
            write_iops: r.write_iops,
            read_bw: r.read_bw_bytes,
            write_bw: r.write_bw_bytes,
            p99: r.lat_us.p99,
            errors: r.errors,
        }
    }
}
