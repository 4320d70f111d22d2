//! What the printer keeps of a run of several drives: each drive's label, the one now
//! printed, and the intervals of each since the last "all" line.

use crate::stats::StepSummary;

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
