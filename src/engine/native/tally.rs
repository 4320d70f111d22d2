//! The worker-side record of one interval: counters, latency histograms and error records,
//! updated per I/O without locking or allocating, and sent as one message per interval.

use std::mem;
use std::sync::mpsc::{Receiver, Sender};

use super::iogen::IoDir;
use super::schedule::Schedule;
use super::WorkerMsg;
use crate::stats::{
    ArrivalGaps, DirCounts, DueEarlier, IoErrorRecord, LatHists, WorkerInterval,
    MAX_ERROR_RECORDS_PER,
};

pub struct IntervalTally<'a> {
    job: usize,
    schedule: Schedule,
    paced: bool,
    k: u64,
    /// The current interval's start and end (ns since the step's start).
    start: u64,
    next_boundary: u64,
    dirs: [DirCounts; 3],
    /// Of `dirs`, the paced I/Os due in an earlier interval.
    due_earlier: DueEarlier,
    /// Spans the worker held its schedule still, not sent yet.
    held: Vec<(u64, u64)>,
    errors: u64,
    error_records: Vec<IoErrorRecord>,
    hists: Box<LatHists>,
    gaps: ArrivalGaps,
    last_arrival: Option<u64>,
    tx: Sender<WorkerMsg>,
    spare: &'a Receiver<Box<LatHists>>,
}

impl<'a> IntervalTally<'a> {
    pub fn new(
        job: usize,
        schedule: Schedule,
        paced: bool,
        tx: Sender<WorkerMsg>,
        spare: &'a Receiver<Box<LatHists>>,
    ) -> Self {
        IntervalTally {
            job,
            schedule,
            paced,
            k: 0,
            start: 0,
            next_boundary: schedule.boundary(0),
            dirs: [DirCounts::default(); 3],
            due_earlier: DueEarlier::default(),
            held: Vec::new(),
            errors: 0,
            error_records: Vec::with_capacity(MAX_ERROR_RECORDS_PER),
            hists: Box::new(LatHists::new(paced)),
            gaps: ArrivalGaps::default(),
            last_arrival: None,
            tx,
            spare,
        }
    }

    /// End of the current interval, ns since the step's start.
    #[inline]
    pub fn next_boundary(&self) -> u64 {
        self.next_boundary
    }

    /// Sends every interval that ended at or before `now`.
    #[inline]
    pub fn maybe_flush(&mut self, now: u64) {
        while now >= self.next_boundary {
            let b = self.next_boundary;
            self.flush(b, false);
        }
    }

    /// Records a paced I/O's intended issue time (they come in order): the gap since the
    /// one before is a sample of the arrival process.
    #[inline]
    pub fn arrived(&mut self, t_intended: u64) {
        if let Some(last) = self.last_arrival.replace(t_intended) {
            self.gaps.push(t_intended.saturating_sub(last));
        }
    }

    /// Records that the worker held its schedule and its end still over `[from, to)` (ns
    /// since the step's start): a pause, or a suspension it saw. Sent with the interval.
    pub fn held(&mut self, from: u64, to: u64) {
        self.held.push((from, to));
    }

    /// Records one completion. `result` is the kernel's: bytes transferred or -errno. A
    /// paced I/O due before this interval began is also counted as due in its own
    /// interval (the step's figures count it there).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        dir: IoDir,
        len: u32,
        offset: u64,
        result: i64,
        t_submit: u64,
        t_intended: u64,
        now: u64,
    ) {
        let d = dir.index();
        if result == i64::from(len) {
            self.dirs[d].ios += 1;
            self.dirs[d].bytes += u64::from(len);
            if self.paced && t_intended < self.start {
                let due_in = self.schedule.index_of(t_intended).min(self.k);
                self.due_earlier.count(due_in, d, u64::from(len));
            }
            self.hists.service[d].saturating_record(now.saturating_sub(t_submit));
            if let Some(r) = &mut self.hists.response {
                r[d].saturating_record(now.saturating_sub(t_intended));
            }
        } else {
            self.errors += 1;
            if self.error_records.len() < MAX_ERROR_RECORDS_PER {
                let rec = match dir {
                    IoDir::Trim => IoErrorRecord::trim(offset, len, result),
                    d => IoErrorRecord::new(offset, len, d == IoDir::Write, result),
                };
                self.error_records.push(rec);
            }
        }
    }

    /// Sends the current interval, ending at `end_ns`; `last` tells the collector this
    /// worker is done.
    pub fn flush(&mut self, end_ns: u64, last: bool) {
        let fresh = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Box::new(LatHists::new(self.paced)));
        let msg = WorkerInterval {
            job: self.job,
            index: self.k,
            end_ns,
            dirs: mem::take(&mut self.dirs),
            errors: mem::take(&mut self.errors),
            error_records: mem::replace(
                &mut self.error_records,
                Vec::with_capacity(MAX_ERROR_RECORDS_PER),
            ),
            hists: mem::replace(&mut self.hists, fresh),
            gaps: mem::take(&mut self.gaps),
            due_earlier: mem::take(&mut self.due_earlier),
            held: mem::take(&mut self.held),
            last,
        };
        // A closed channel means the collector is gone; the worker will stop on its flag.
        let _ = self.tx.send(WorkerMsg::Interval(msg));
        self.k += 1;
        self.start = self.schedule.start(self.k);
        self.next_boundary = self.schedule.boundary(self.k);
    }
}
