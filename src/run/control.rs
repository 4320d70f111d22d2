//! Run control: a command channel into the runner. The [`RunHandle`] (held by the
//! dashboard, or built over a signal flag for headless runs) sends [`RunCmd`]s; the runner
//! takes them at each interval. Pause and stop also flip the engine's [`StepControl`]
//! flags at once, so the workers hold or end their I/O within milliseconds rather than at
//! the next interval.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use crate::engine::StepControl;
use crate::outcome::StopBy;

/// What the user can ask of a running plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunCmd {
    /// Hold the I/O; the step's time and rate schedule resume where they were.
    Pause,
    Resume,
    /// End the run after the current interval (its session is saved).
    Stop,
    /// End the current step only.
    Skip,
    /// Export a snapshot of the session so far.
    Snapshot,
    /// A run of several drives: end drive `n` (its index) only; the others go on.
    StopDrive(usize),
    /// Record the user's note in the session, at the time it came.
    Note(String),
    /// A power-cut run cut the power now: record it in the session.
    PowerCut(crate::session::PowerCutData),
}

/// The sending side: cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct RunHandle {
    tx: Sender<RunCmd>,
    flags: StepControl,
    by_user: Arc<AtomicBool>,
    /// The handle of one drive of several: its pause flag is every drive's, so its stop
    /// leaves it alone (a paused engine still sees the stop).
    shared_pause: bool,
}

impl RunHandle {
    /// Sends `cmd`; a run that has ended ignores it.
    pub fn send(&self, cmd: RunCmd) {
        match cmd {
            RunCmd::Pause => self.flags.pause.store(true, Ordering::Relaxed),
            RunCmd::Resume => self.flags.pause.store(false, Ordering::Relaxed),
            RunCmd::Stop => {
                self.by_user.store(true, Ordering::Relaxed);
                if !self.shared_pause {
                    self.flags.pause.store(false, Ordering::Relaxed);
                }
                self.flags.stop.store(true, Ordering::Relaxed);
            }
            RunCmd::Skip
            | RunCmd::Snapshot
            | RunCmd::StopDrive(_)
            | RunCmd::Note(_)
            | RunCmd::PowerCut(_) => {}
        }
        let _ = self.tx.send(cmd);
    }

    /// Sets the stop flag as the run's own stop did (`by`: who stopped it), without a
    /// command: a drive with a stop flag of its own is told of the run's stop this way.
    pub(super) fn forward_stop(&self, by: StopBy) {
        if by == StopBy::User {
            self.by_user.store(true, Ordering::Relaxed);
        }
        self.flags.pause.store(false, Ordering::Relaxed);
        self.flags.stop.store(true, Ordering::Relaxed);
    }
}

/// A handle and its control, over a new command queue, on `flags` (who stopped them:
/// `by_user`); `shared_pause`: see [`RunHandle`].
fn pair(
    flags: StepControl,
    by_user: Arc<AtomicBool>,
    shared_pause: bool,
) -> (RunHandle, RunControl) {
    let (tx, rx) = mpsc::channel();
    let handle = RunHandle {
        tx,
        flags: flags.clone(),
        by_user: by_user.clone(),
        shared_pause,
    };
    (handle, RunControl { rx, flags, by_user })
}

/// The receiving side, owned by the run.
#[derive(Debug)]
pub struct RunControl {
    rx: Receiver<RunCmd>,
    flags: StepControl,
    by_user: Arc<AtomicBool>,
}

impl RunControl {
    /// A control whose stop flag is `stop` (set by signal handlers for headless runs);
    /// a stop seen there without a [`RunCmd::Stop`] counts as a signal's.
    pub fn with_stop_flag(stop: Arc<AtomicBool>) -> (RunHandle, RunControl) {
        let flags = StepControl {
            stop,
            pause: Arc::new(AtomicBool::new(false)),
        };
        pair(flags, Arc::new(AtomicBool::new(false)), false)
    }

    /// A fresh control, stopped only by its handle.
    pub fn new() -> (RunHandle, RunControl) {
        Self::with_stop_flag(Arc::new(AtomicBool::new(false)))
    }

    /// A control for one drive of a run of several: the same stop and pause flags (a stop
    /// or pause reaches every drive's workers at once), its own command queue (the
    /// pipeline hands each drive the commands meant for all).
    pub fn child(&self) -> (RunHandle, RunControl) {
        pair(self.flags.clone(), self.by_user.clone(), false)
    }

    /// A control for one drive of a run of several that can be stopped on its own: the
    /// same pause flag, but a stop flag (and who stopped it) of its own; the pipeline
    /// forwards the run's stop to it ([`RunHandle::forward_stop`]).
    pub fn child_own_stop(&self) -> (RunHandle, RunControl) {
        let flags = StepControl {
            stop: Arc::new(AtomicBool::new(self.stop_requested())),
            pause: self.flags.pause.clone(),
        };
        let by_user = Arc::new(AtomicBool::new(self.by_user.load(Ordering::Relaxed)));
        pair(flags, by_user, true)
    }

    /// The flags the engine's workers read.
    pub fn flags(&self) -> &StepControl {
        &self.flags
    }

    pub fn stop_requested(&self) -> bool {
        self.flags.stop.load(Ordering::Relaxed)
    }

    /// Who stopped the run (when it was stopped).
    pub fn stopped_by(&self) -> StopBy {
        if self.by_user.load(Ordering::Relaxed) {
            StopBy::User
        } else {
            StopBy::Signal
        }
    }

    /// The commands sent since the last call (never blocks).
    pub fn take(&self) -> Vec<RunCmd> {
        self.rx.try_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_drive_stopped_alone_leaves_the_others_paused_and_running() {
        let (run, ctl) = RunControl::new();
        let (one, one_ctl) = ctl.child_own_stop();
        let (_, other_ctl) = ctl.child_own_stop();
        run.send(RunCmd::Pause);
        one.send(RunCmd::Stop);
        assert!(one_ctl.stop_requested());
        assert_eq!(one_ctl.stopped_by(), StopBy::User);
        assert!(!other_ctl.stop_requested() && !ctl.stop_requested());
        assert!(
            other_ctl.flags().pause.load(Ordering::Relaxed),
            "the others stay paused"
        );
        // The run's stop, forwarded as a signal's, reaches the other drive.
        ctl.flags().stop.store(true, Ordering::Relaxed);
        let (h, c) = ctl.child_own_stop();
        assert!(
            c.stop_requested(),
            "a drive made after the stop starts stopped"
        );
        h.forward_stop(ctl.stopped_by());
        assert_eq!(c.stopped_by(), StopBy::Signal);
        assert!(
            !other_ctl.stop_requested(),
            "forwarded only through its handle"
        );
    }
}
