//! The engine seam: what the runner knows of an engine. An [`Engine`] runs one step on one
//! target and yields merged interval stats (to a [`StepObserver`]) and a step summary; the
//! runner knows nothing beyond that, so an engine in a child process (fio, a remote
//! drivescope) or one that does no I/O (NOPs) plugs in here without touching it.
//! Control flows the other way through [`StepControl`]'s flags, which the engine's workers
//! read directly (a stop or pause takes effect within milliseconds, not at an interval).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::collector::{self, StepTarget};
use super::EngineError;
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

/// The in-process engines: one thread per job, each with its io_uring ring (reads and
/// writes, NOPs or NVMe commands) or a synchronous pread/pwrite loop, merged by the
/// collector.
struct InProcess {
    kind: EngineKind,
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
        collector::run(target, spec, self.kind, ctl, obs)
    }
}

/// The engine of a step's kind.
pub fn engine_for(kind: EngineKind) -> Box<dyn Engine> {
    match kind {
        EngineKind::IoUring | EngineKind::Sync | EngineKind::Nop | EngineKind::UringCmd => {
            Box::new(InProcess { kind })
        }
        EngineKind::Idle => Box::new(super::idle::Idle),
        EngineKind::Fio => Box::new(super::fio::Fio),
    }
}

/// Runs one step on the engine its spec names, with closures for the intervals and notes.
pub fn run_step(
    target: &StepTarget,
    spec: &StepSpec,
    ctl: &StepControl,
    on_interval: impl FnMut(&IntervalReport) -> Control,
    on_note: impl FnMut(&str),
) -> Result<StepSummary, EngineError> {
    engine_for(spec.engine).run_step(target, spec, ctl, &mut FnObserver(on_interval, on_note))
}

/// The engine a run on `target` uses when `asked` is: the default engine becomes NVMe
/// passthrough (uring-cmd) on an NVMe generic character device, which has no block
/// interface for reads and writes.
pub fn engine_for_target(asked: EngineKind, target: Option<&std::path::Path>) -> EngineKind {
    match (asked, target) {
        (EngineKind::IoUring, Some(p)) if super::nvme::is_generic_device(p) => EngineKind::UringCmd,
        _ => asked,
    }
}
