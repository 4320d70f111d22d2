//! What the printer keeps of a run of several drives: each drive's label, the one now
//! printed, the intervals of each since the last "all" line, and the sums of a plain run's
//! summaries.

use crate::stats::{IntervalReport, StepSummary};

/// What the printer keeps of a run of several drives.
#[derive(Debug, Default)]
pub(super) struct Drives {
    pub(super) labels: Vec<String>,
    pub(super) current: Option<usize>,
    /// Per drive: its last interval's figures since the last "all" line (None: none yet).
    pub(super) pending: Vec<Option<IntervalFigures>>,
    /// Per drive: still running.
    pub(super) live: Vec<bool>,
    /// Per drive: its last step's summary (a plain run's "all" summary adds them up).
    pub(super) summaries: Vec<Option<StepSummary>>,
    /// Printing the run's own figures: labelled "all".
    pub(super) all: bool,
}

impl Drives {
    pub(super) fn grow(&mut self, n: usize) {
        if self.labels.len() < n {
            self.labels.resize(n, String::new());
            self.pending.resize(n, None);
            self.live.resize(n, true);
            self.summaries.resize(n, None);
        }
    }

    /// Every running drive has an interval since the last "all" line: the sum of every
    /// drive's that has one (a drive that just ended gives its last).
    pub(super) fn take_all(&mut self) -> Option<(IntervalFigures, usize)> {
        let n = self.labels.len();
        let waiting = (0..n).any(|d| self.live[d] && self.pending[d].is_none());
        let with: Vec<usize> = (0..n).filter(|&d| self.pending[d].is_some()).collect();
        if n < 2 || waiting || with.is_empty() {
            return None;
        }
        let mut sum = IntervalFigures::default();
        for d in &with {
            if let Some(f) = self.pending[*d].take() {
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

    /// A plain run of several drives: every drive's last summary added up (none with
    /// fewer than two).
    pub(super) fn sums(&self) -> Option<Sums> {
        let sums: Vec<&StepSummary> = self.summaries.iter().flatten().collect();
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
