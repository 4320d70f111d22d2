//! The engine seam: what the runner knows of an engine. An [`Engine`] runs one step on one
//! target and yields merged interval stats (to a [`StepObserver`]) and a step summary; the
//! runner knows nothing beyond that, so an engine in a child process, one on another host
//! or one that does no I/O plugs in here without touching it.
//! Control flows the other way through [`StepControl`]'s flags, which the engine's workers
//! read directly (a stop or pause takes effect within milliseconds, not at an interval).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::{EngineError, StepTarget};
use crate::outcome::EndedBy;
use crate::stats::{IntervalReport, StepSummary};
use crate::workload::{EngineKind, StepSpec};

/// The caller's answer to each interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// End the step now, for this reason (recorded as the step's `ended_by`).
    Stop(EndedBy),
}

/// Flags a step's workers read: `stop` ends the step (as [`EndedBy::Stopped`]), `pause`
/// holds the I/O (the step's time and rate schedule resume where they were).
#[derive(Debug, Clone, Default)]
pub struct StepControl {
    pub stop: Arc<AtomicBool>,
    pub pause: Arc<AtomicBool>,
}

/// What an engine reports to while a step runs.
pub trait StepObserver {
    /// Each merged interval, in order; the answer may end the step.
    fn interval(&mut self, r: &IntervalReport) -> Control;
    /// Something the engine could not use and worked around (said once per step).
    fn note(&mut self, note: &str);
}

/// An observer made of two closures.
pub struct FnObserver<I, N>(pub I, pub N);

impl<I, N> StepObserver for FnObserver<I, N>
where
    I: FnMut(&IntervalReport) -> Control,
    N: FnMut(&str),
{
    fn interval(&mut self, r: &IntervalReport) -> Control {
        (self.0)(r)
    }
    fn note(&mut self, note: &str) {
        (self.1)(note)
    }
}

/// Anything that runs one step on one target.
pub trait Engine: Send {
    /// Which engine this is (as asked; the summary says which one actually ran).
    fn kind(&self) -> EngineKind;
    /// Runs `spec` on `target` to its end: its duration or data, `ctl.stop`, or a
    /// [`Control::Stop`] from the observer.
    fn run_step(
        &mut self,
        target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError>;
}
