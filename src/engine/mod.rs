//! The I/O engine: runs one step at a time on named threads, one per job, each owning its
//! ring (or a synchronous pread/pwrite loop), buffers, offset generator and histograms.
//! Workers never lock, allocate or send per I/O; every interval each sends one
//! [`WorkerInterval`](crate::stats::WorkerInterval), which the collector merges and hands to
//! its caller. The runner sees engines only through the seam ([`Engine`], [`engine_for`]).

mod buffers;
mod claim;
mod collector;
mod failure;
pub mod fio;
pub mod fio_cage;
pub mod fio_file;
mod fio_json;
pub mod fio_refusal;
mod fio_series;
mod idle;
mod invalid;
mod iogen;
pub mod nvme;
mod pacer;
mod pause;
mod polling;
pub mod rng;
mod schedule;
mod seam;
mod stopclock;
mod suspend;
mod sync;
mod tally;
mod uring;
mod verifier;
mod wake;

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::Instant;

use thiserror::Error;

pub use buffers::{Buffers, BUF_ALIGN};
pub use claim::{check_claim, openers, Opener};
pub use collector::{validate, validate_shape, StepTarget, MAX_BUFFER_BYTES, MAX_JOBS};
pub use failure::first_error;
pub use invalid::{InvalidStep, NoPolling, RingOption, MIN_STEP_DURATION};
pub use iogen::{IoGen, NextIo};
pub use schedule::Schedule;
pub use seam::{
    engine_for, engine_for_target, run_step, Control, Engine, FnObserver, StepControl, StepObserver,
};
pub use uring::MAX_IODEPTH;

use crate::stats::{LatHists, WorkerInterval};
use crate::workload::{EngineKind, Workload};

/// Why a step could not start or had to stop.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot open {path} for {mode}: {source}{hint}")]
    Open {
        path: String,
        mode: &'static str,
        source: std::io::Error,
        hint: &'static str,
    },
    #[error(transparent)]
    Invalid(#[from] InvalidStep),
    #[error("job {job}: {message}")]
    Worker { job: usize, message: String },
    #[error("{}: {}", .path.display(), in_use_text(.by, *.block_device))]
    InUse {
        path: std::path::PathBuf,
        by: Vec<Opener>,
        block_device: bool,
    },
    #[error("the {engine} engine needs io_uring: {reason}")]
    NeedsUring { engine: EngineKind, reason: String },
    #[error("cannot start worker thread: {0}")]
    Spawn(std::io::Error),
    #[error("filling {path} failed: {message}")]
    Fill { path: String, message: String },
    #[error(transparent)]
    Fio(#[from] fio::FioError),
    /// The target's host (an agent over ssh) could not run the step, in its words.
    #[error("{host}: {message}")]
    Remote { host: String, message: String },
    /// The link to the target's host broke mid-step.
    #[error("{host}: {why}")]
    Lost { host: String, why: String },
}

/// Why a target is in use, naming who has it open where /proc says.
fn in_use_text(by: &[Opener], block_device: bool) -> String {
    let who: Vec<String> = by
        .iter()
        .map(|o| format!("PID {} ({})", o.pid, o.command))
        .collect();
    match (who.is_empty(), block_device) {
        (false, _) => format!("in use, open by {}", who.join(", ")),
        (true, true) => "in use (mounted, active swap, held by device-mapper, md or LVM, \
                         or open exclusively by another process)"
            .to_string(),
        (true, false) => {
            "another process is writing it (it holds drivescope's write lock)".to_string()
        }
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
    pub ring_io: uring::RingIo,
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

/// Checks every step against the target before any I/O: a missing or too old fio (when a
/// step runs on it), each step's shape against the target, and a target another process
/// writes or holds (when a step writes). Returns fio's version when a step runs on fio,
/// for the steps to carry (fio is asked once a run).
pub fn check_steps(
    t: &StepTarget,
    specs: &[crate::workload::StepSpec],
) -> Result<Option<String>, EngineError> {
    // A missing or too old fio (or one whose json+ lacks what is read) is said now.
    let fio = match specs.iter().any(|s| s.engine == EngineKind::Fio) {
        true => Some(fio::fio_check()?),
        false => None,
    };
    for spec in specs {
        validate(t, spec)?;
    }
    if let Some(w) = specs
        .iter()
        .find(|s| s.workload.rw.read_percent(s.workload.rwmixread) < 100)
    {
        check_claim(t, w)?;
    }
    Ok(fio)
}
