//! The pending intervals: each worker's report of an interval waits here until every live
//! worker has sent its own, and then leaves, merged over the jobs, as one
//! [`IntervalReport`], in order.

use std::collections::BTreeMap;

use super::schedule::Schedule;
use crate::stats::{
    ArrivalGaps, DirCounts, DueEarlier, IntervalReport, IoErrorRecord, LatHists, LatSummary,
    WorkerInterval,
};

/// One interval as merged so far.
#[derive(Default)]
struct Partial {
    dirs: [DirCounts; 3],
    errors: u64,
    error_records: Vec<IoErrorRecord>,
    /// The histograms of the first job that sent the interval (which gets them back once
    /// the interval is handed on), the others' added in.
    hists: Option<(usize, Box<LatHists>)>,
    gaps: ArrivalGaps,
    due_earlier: DueEarlier,
    end_ns: u64,
}

/// What one worker has sent.
#[derive(Clone, Default)]
struct WorkerState {
    last_index: Option<u64>,
    done: bool,
    /// The spans it held its schedule still (ns since the step's start).
    held: Vec<(u64, u64)>,
}

/// One interval merged over every job.
pub(super) struct Merged {
    pub report: IntervalReport,
    /// Its start and end (ns since the step's start).
    pub start_ns: u64,
    pub end_ns: u64,
    /// How much of it the process was suspended (ns).
    pub suspended_ns: u64,
    /// The gaps between the intended issue times of its paced I/Os.
    pub gaps: ArrivalGaps,
    /// Of its I/Os, the paced ones due in an earlier interval.
    pub due_earlier: DueEarlier,
    /// The job whose histograms the report carries (to give them back to).
    pub origin: Option<usize>,
}

/// The intervals the workers have sent and the collector not yet handed on.
pub(super) struct Merger {
    workers: Vec<WorkerState>,
    pending: BTreeMap<u64, Partial>,
    next_emit: u64,
    schedule: Schedule,
    paced: bool,
}

impl Merger {
    pub fn new(jobs: usize, schedule: Schedule, paced: bool) -> Self {
        Merger {
            workers: vec![WorkerState::default(); jobs],
            pending: BTreeMap::new(),
            next_emit: 0,
            schedule,
            paced,
        }
    }

    /// Adds one worker's interval; the histograms it came with, emptied, when the interval
    /// already had some (the worker gets them back).
    pub fn add(&mut self, wi: WorkerInterval) -> Option<Box<LatHists>> {
        let st = &mut self.workers[wi.job];
        st.last_index = Some(wi.index);
        st.done |= wi.last;
        st.held.extend_from_slice(&wi.held);
        let p = self.pending.entry(wi.index).or_default();
        for (a, b) in p.dirs.iter_mut().zip(&wi.dirs) {
            a.add(b);
        }
        p.errors += wi.errors;
        p.error_records.extend(wi.error_records);
        p.gaps.add(&wi.gaps);
        p.due_earlier.add(&wi.due_earlier);
        p.end_ns = p.end_ns.max(wi.end_ns);
        match &mut p.hists {
            None => {
                p.hists = Some((wi.job, wi.hists));
                None
            }
            Some((_, base)) => {
                base.add(&wi.hists);
                let mut h = wi.hists;
                h.reset();
                Some(h)
            }
        }
    }

    /// Worker `job` has stopped (failed): it sends nothing more.
    pub fn failed(&mut self, job: usize) {
        self.workers[job].done = true;
    }

    /// Every worker has stopped (the channel is closed).
    pub fn all_gone(&mut self) {
        for st in &mut self.workers {
            st.done = true;
        }
    }

    /// Every worker has sent its last interval, and every interval was handed on.
    pub fn finished(&self) -> bool {
        self.all_done() && self.pending.is_empty()
    }

    /// Every worker is done but intervals are left that nothing will complete (left behind
    /// by failed workers).
    pub fn stranded(&self) -> bool {
        self.all_done()
            && !self.pending.is_empty()
            && self.pending.keys().next() != Some(&self.next_emit)
    }

    /// How many workers have not sent their last interval.
    pub fn unfinished(&self) -> usize {
        self.workers.iter().filter(|st| !st.done).count()
    }

    /// The jobs whose worker has not sent its last interval.
    pub fn unfinished_jobs(&self) -> impl Iterator<Item = usize> + '_ {
        self.workers
            .iter()
            .enumerate()
            .filter(|(_, st)| !st.done)
            .map(|(j, _)| j)
    }

    /// Per job, the spans it held its schedule still (ns since the step's start).
    pub fn held(&self) -> impl Iterator<Item = &[(u64, u64)]> {
        self.workers.iter().map(|st| st.held.as_slice())
    }

    fn all_done(&self) -> bool {
        self.workers.iter().all(|st| st.done)
    }

    /// The next interval, once every live worker has delivered it; `suspensions` are the
    /// spans (ns since the start) the process was suspended.
    pub fn next(&mut self, suspensions: &[(u64, u64)]) -> Option<Merged> {
        let next = self.next_emit;
        let complete = self.workers.iter().all(|st| {
            st.last_index.is_some_and(|l| l >= next)
                || (st.done && st.last_index.is_none_or(|l| l < next))
        });
        if !complete {
            return None;
        }
        let p = self.pending.remove(&next)?;
        self.next_emit += 1;
        Some(self.report(next, p, suspensions))
    }

    fn report(&self, k: u64, p: Partial, suspensions: &[(u64, u64)]) -> Merged {
        let paced = self.paced;
        let ramp = self.schedule.is_ramp(k);
        let start_ns = self.schedule.start(k);
        let secs = (p.end_ns.saturating_sub(start_ns)).max(1) as f64 / 1e9;
        let (origin, hists) = match p.hists {
            Some((j, h)) => (Some(j), h),
            None => (None, Box::new(LatHists::new(paced))),
        };
        let lat = LatSummary::from_hist(&hists.response_all());
        let suspended = overlap_ns(suspensions, start_ns, p.end_ns);
        let span_s = (start_ns as f64 / 1e9, p.end_ns as f64 / 1e9);
        let report = IntervalReport {
            ramp,
            suspended_s: suspended as f64 / 1e9,
            errors: p.errors,
            service_lat_us: paced.then(|| LatSummary::from_hist(&hists.service_all())),
            error_records: p.error_records,
            hists: Some(hists),
            ..IntervalReport::of_counts(k, span_s, p.dirs, secs, lat)
        };
        Merged {
            report,
            start_ns,
            end_ns: p.end_ns,
            suspended_ns: suspended,
            gaps: p.gaps,
            due_earlier: p.due_earlier,
            origin,
        }
    }
}

/// How much of [from, to) the spans cover, ns.
pub(super) fn overlap_ns(spans: &[(u64, u64)], from: u64, to: u64) -> u64 {
    spans
        .iter()
        .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
        .sum()
}
