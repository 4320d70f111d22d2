//! A step's running workers as the collector holds them: their message channel, the
//! threads, the way back for their histograms, and the flags and counters they share.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::WorkerMsg;
use crate::stats::LatHists;

/// How long the collector waits for a message before it looks at its clocks and flags.
const TURN: Duration = Duration::from_millis(20);

pub(super) struct Crew {
    pub rx: Receiver<WorkerMsg>,
    pub handles: Vec<JoinHandle<()>>,
    /// Per job: where its emptied histograms go back to.
    pub spares: Vec<Sender<Box<LatHists>>>,
    /// Tells every worker to stop issuing.
    pub stop: Arc<AtomicBool>,
    /// Asks draining workers to send what they measured now.
    pub send_now: Arc<AtomicBool>,
    /// Per job: its completions so far.
    pub progress: Vec<Arc<AtomicU64>>,
    /// When the step's clock started.
    pub started: Instant,
}

impl Crew {
    /// The next message, or a timeout after one turn.
    pub fn recv(&self) -> Result<WorkerMsg, RecvTimeoutError> {
        self.rx.recv_timeout(TURN)
    }

    /// Gives job `job` an emptied set of histograms back.
    pub fn give_back(&self, job: usize, h: Box<LatHists>) {
        let _ = self.spares[job].send(h);
    }

    /// Tells every worker to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the workers were told to stop.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The completions every worker has reaped so far.
    pub fn reaped(&self) -> u64 {
        self.progress
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .sum()
    }

    /// Asks the workers to send what they measured now; false if that was asked before.
    pub fn ask_send_now(&self) -> bool {
        !self.send_now.swap(true, Ordering::Relaxed)
    }

    /// Joins the workers. With `abandoned` workers left behind, only those that finished:
    /// a worker still waiting on the device is left to finish on its own (its ring and
    /// buffers stay alive until the kernel completes, or the process exits).
    pub fn join(self, abandoned: usize) {
        for h in self.handles {
            if abandoned == 0 || h.is_finished() {
                let _ = h.join();
            }
        }
    }
}
