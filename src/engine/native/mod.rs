//! The in-process engines (io_uring, sync, nop, uring-cmd, and idle, which does no I/O):
//! one step at a time on named threads, one per job, each owning its ring (or a synchronous
//! pread/pwrite loop), buffers, offset generator and histograms. Workers never lock,
//! allocate or send per I/O; every interval each sends one
//! [`WorkerInterval`](crate::stats::WorkerInterval), which the collector merges and hands to
//! its caller. They implement the contract of [`crate::engine`] ([`InProcess`], [`Idle`]).

mod append;
mod buffers;
mod claim;
mod crew;
mod discard;
mod failure;
mod idle;
mod iogen;
mod merger;
mod notes;
pub mod nvme;
mod open;
mod pacer;
mod pause;
mod polling;
mod schedule;
mod sqe;
#[cfg(test)]
mod starved;
mod step_run;
mod stopclock;
mod suspend;
mod sync;
mod tally;
mod target_lock;
mod timeline;
mod totals;
mod uring;
mod uring_worker;
mod validate;
mod verifier;
mod wake;
pub mod zoned;

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::Instant;

pub use buffers::Buffers;
pub use idle::Idle;
pub use iogen::{IoGen, NextIo};
pub use schedule::Schedule;
pub use target_lock::{lock_target, lock_targets, TargetLock};
pub use validate::validate;

use super::{Engine, EngineError, StepControl, StepObserver, StepTarget};
use crate::stats::{LatHists, StepSummary, WorkerInterval};
use crate::workload::{EngineKind, StepSpec, Workload};

/// The in-process engines of one kind (io_uring, sync, nop, uring-cmd): one thread per
/// job, each with its io_uring ring (reads and writes, NOPs or NVMe commands) or a
/// synchronous pread/pwrite loop, merged by the collector.
pub struct InProcess {
    kind: EngineKind,
}

impl InProcess {
    /// The engine of `kind`, one of those that run here.
    pub fn new(kind: EngineKind) -> Self {
        InProcess { kind }
    }
}

impl Engine for InProcess {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn run_step(
        &mut self,
        target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        step_run::run(target, spec, self.kind, ctl, obs)
    }
}

/// Messages from workers to the collector.
pub enum WorkerMsg {
    Interval(WorkerInterval),
    /// Something the engine could not use and worked around (said once per step).
    Note(String),
    /// How the step's paced workers keep to their schedule (from its first job).
    Paced(crate::outcome::Pacing),
    /// Setup or a fatal ring error; the worker has stopped.
    Failed {
        job: usize,
        message: String,
    },
}

/// Everything one worker thread needs; moved into it.
pub(crate) struct WorkerCtx {
    pub job: usize,
    /// The target, opened for this job; `None` for the nop engine.
    pub file: Option<File>,
    /// What each I/O of the ring is (the sync engine does only reads and writes).
    pub ring_io: sqe::RingIo,
    /// The step trims (a trim workload, `trimwrite`): its trims are of this kind.
    pub trim: Option<discard::TrimKind>,
    /// How the ring is set up (polled I/O, SQPOLL).
    pub options: crate::workload::EngineOptions,
    pub workload: Workload,
    /// Offset alignment (bytes).
    pub align: u64,
    pub schedule: Schedule,
    /// Stop issuing at this time (ns since the step's start).
    pub end_ns: Option<u64>,
    /// Stop issuing after this many bytes.
    pub byte_budget: Option<u64>,
    /// This job's share of the step's rate (IOPS).
    pub rate: Option<f64>,
    pub stop: Arc<AtomicBool>,
    /// Set while the user has paused the run.
    pub pause: Arc<AtomicBool>,
    /// Set by the collector just before it stops waiting for a draining worker: send the
    /// interval measured so far now.
    pub send_now: Arc<AtomicBool>,
    /// This worker's completions so far (added per batch): the collector tells a device
    /// still draining a deep queue from one that stalled.
    pub progress: Arc<AtomicU64>,
    pub tx: Sender<WorkerMsg>,
    pub spare: Receiver<Box<LatHists>>,
    pub ready: Arc<Barrier>,
    pub go: Arc<Barrier>,
    pub t0: Arc<OnceLock<Instant>>,
    /// A verified step's state (the io_uring and sync engines check with it).
    pub verify: Option<Arc<crate::verify::VerifyState>>,
}

/// Nanoseconds since `t0`.
#[inline]
pub(crate) fn ns_since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

/// Largest wait without looking at the stop flag (ns).
pub(crate) const MAX_WAIT_NS: u64 = 100_000_000;

/// A paced worker's wake lead, measured with the timer slack it runs with (before the
/// step's clock starts); an unpaced one never sleeps for an I/O.
pub(crate) fn paced_lead(ctx: &WorkerCtx) -> wake::WakeLead {
    if ctx.rate.is_some() {
        tighten_timer_slack();
        wake::WakeLead::measure()
    } else {
        wake::WakeLead::none()
    }
}

/// Makes the thread's sleeps precise (1 µs timer slack instead of 50 µs): paced runs sleep
/// until the next intended issue time.
fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000u64, 0u64, 0u64, 0u64);
    }
}
