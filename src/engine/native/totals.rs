//! The step's figures over its measured intervals (not the ramp's, not those the process
//! spent partly suspended), added up as the intervals are handed on.
//!
//! A paced step's I/Os are counted where its schedule put them: an I/O counts if the
//! interval it was due in is measured, whichever interval it completed in. A worker that
//! fell behind in the ramp (or across a suspension) and caught up afterwards completes
//! more than the schedule's share of the first measured interval; counted by completion,
//! that catch-up read as a rate above the target. The measured time is the measured
//! intervals' less the spans every worker held its schedule still (a pause): so a paced
//! step's I/Os are at most its rate times its measured time, plus one per job (each job's
//! schedule has at most that many I/Os due in any stretch of that length).

use super::merger::{overlap_ns, Merged};
use super::schedule::Schedule;
use crate::stats::{ArrivalGaps, DirCounts, LatHists};

pub(super) struct Totals {
    pub hists: LatHists,
    /// Index 0 reads, 1 writes, 2 trims.
    pub dirs: [DirCounts; 3],
    pub errors: u64,
    pub gaps: ArrivalGaps,
    paced: bool,
    schedule: Schedule,
    /// The end of the last measured or suspended interval (ns since the start).
    last_end_ns: u64,
    measured_any: bool,
    /// The intervals left out for a suspension: their index, start and end (ns).
    left_out: Vec<(u64, u64, u64)>,
}

impl Totals {
    pub fn new(paced: bool, schedule: Schedule) -> Self {
        Totals {
            hists: LatHists::new(paced),
            dirs: [DirCounts::default(); 3],
            errors: 0,
            gaps: ArrivalGaps::default(),
            paced,
            schedule,
            last_end_ns: schedule.ramp_ns,
            measured_any: false,
            left_out: Vec::new(),
        }
    }

    /// Whether interval `k`'s I/Os count (its time is measured): not the ramp's, not one
    /// left out for a suspension. Known for every interval handed on so far.
    fn measured(&self, k: u64) -> bool {
        !self.schedule.is_ramp(k) && !self.left_out.iter().any(|&(j, _, _)| j == k)
    }

    /// Counts one interval as it is handed on.
    pub fn count(&mut self, m: &Merged) {
        let report = &m.report;
        let k = report.index;
        if m.suspended_ns > 0 && !report.ramp {
            self.left_out.push((k, m.start_ns, m.end_ns));
            self.last_end_ns = self.last_end_ns.max(m.end_ns);
        } else if !report.ramp {
            self.measured_any = true;
            self.errors += report.errors;
            self.gaps.add(&m.gaps);
            self.last_end_ns = self.last_end_ns.max(m.end_ns);
            if let Some(h) = &report.hists {
                self.hists.add(h);
            }
        }
        let dirs = [report.read, report.write, report.trim];
        if !self.paced {
            if self.measured(k) {
                self.add(&dirs);
            }
            return;
        }
        // A paced step: each I/O where it was due.
        let earlier = m.due_earlier.total();
        if self.measured(k) {
            let mut own = dirs;
            for (d, e) in own.iter_mut().zip(&earlier) {
                d.ios = d.ios.saturating_sub(e.ios);
                d.bytes = d.bytes.saturating_sub(e.bytes);
            }
            self.add(&own);
        }
        for (j, d) in m.due_earlier.iter() {
            if self.measured(*j) {
                self.add(d);
            }
        }
    }

    fn add(&mut self, dirs: &[DirCounts; 3]) {
        for (a, b) in self.dirs.iter_mut().zip(dirs) {
            a.add(b);
        }
    }

    /// The end of the last interval counted (ns since the start).
    pub fn last_end_ns(&self) -> u64 {
        self.last_end_ns
    }

    /// The measured time (s): from the ramp's end to the last interval's, without the
    /// intervals left out for a suspension, and without the spans the workers held their
    /// schedules still (`held`, per job: the least any job held, so that no job's schedule
    /// had more time than this to issue in).
    pub fn runtime_s<'h>(&self, held: impl Iterator<Item = &'h [(u64, u64)]>) -> f64 {
        if !self.measured_any {
            return 0.0;
        }
        let (from, to) = (self.schedule.ramp_ns, self.last_end_ns);
        let left_out: Vec<(u64, u64)> = self.left_out.iter().map(|&(_, s, e)| (s, e)).collect();
        let held = held
            .map(|spans| {
                union(spans)
                    .iter()
                    .map(|&(a, b)| {
                        let (a, b) = (a.max(from), b.min(to));
                        b.saturating_sub(a)
                            .saturating_sub(overlap_ns(&left_out, a, b))
                    })
                    .sum::<u64>()
            })
            .min()
            .unwrap_or(0);
        let suspended: u64 = left_out.iter().map(|&(s, e)| e.saturating_sub(s)).sum();
        (to.saturating_sub(from)
            .saturating_sub(suspended)
            .saturating_sub(held)) as f64
            / 1e9
    }
}

/// The spans merged where they overlap, in order.
fn union(spans: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut s = spans.to_vec();
    s.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(s.len());
    for (a, b) in s {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}
