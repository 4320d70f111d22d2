//! The step's figures over its measured intervals (not the ramp's, not those the process
//! spent partly suspended), added up as the intervals are handed on.

use super::merger::{overlap_ns, Merged};
use crate::stats::{ArrivalGaps, DirCounts, LatHists};

pub(super) struct Totals {
    pub hists: LatHists,
    /// Index 0 reads, 1 writes, 2 trims.
    pub dirs: [DirCounts; 3],
    pub errors: u64,
    pub gaps: ArrivalGaps,
    /// The end of the last measured or suspended interval (ns since the start).
    last_end_ns: u64,
    measured_any: bool,
    /// The time of the intervals left out for a suspension (ns).
    suspended_measured_ns: u64,
    ramp_ns: u64,
}

impl Totals {
    pub fn new(paced: bool, ramp_ns: u64) -> Self {
        Totals {
            hists: LatHists::new(paced),
            dirs: [DirCounts::default(); 3],
            errors: 0,
            gaps: ArrivalGaps::default(),
            last_end_ns: ramp_ns,
            measured_any: false,
            suspended_measured_ns: 0,
            ramp_ns,
        }
    }

    /// Counts one interval as it is handed on.
    pub fn count(&mut self, m: &Merged) {
        let report = &m.report;
        if m.suspended_ns > 0 && !report.ramp {
            self.suspended_measured_ns += m.end_ns.saturating_sub(m.start_ns);
            self.last_end_ns = self.last_end_ns.max(m.end_ns);
        } else if !report.ramp {
            self.measured_any = true;
            self.dirs[0].add(&report.read);
            self.dirs[1].add(&report.write);
            self.dirs[2].add(&report.trim);
            self.errors += report.errors;
            self.gaps.add(&m.gaps);
            self.last_end_ns = self.last_end_ns.max(m.end_ns);
            if let Some(h) = &report.hists {
                self.hists.add(h);
            }
        }
    }

    /// The end of the last interval counted (ns since the start).
    pub fn last_end_ns(&self) -> u64 {
        self.last_end_ns
    }

    /// The measured time (s): from the ramp's end to the last interval's, without the
    /// intervals left out for a suspension and the spans `pauses` the user paused.
    pub fn runtime_s(&self, pauses: &[(u64, u64)]) -> f64 {
        if !self.measured_any {
            return 0.0;
        }
        (self
            .last_end_ns
            .saturating_sub(self.ramp_ns)
            .saturating_sub(self.suspended_measured_ns)
            .saturating_sub(overlap_ns(pauses, self.ramp_ns, self.last_end_ns))) as f64
            / 1e9
    }
}
