//! A step's claim on its target when the step writes it and no run of this process holds
//! the target's lock (a step run straight through the engine): the step takes the lock
//! itself, exclusively, for as long as it runs ([`super::target_lock`]). A run's own steps
//! (its fill among them) run under the run's lock and claim nothing more.

use crate::engine::{EngineError, StepTarget};
use crate::workload::StepSpec;

use super::target_lock::{held_here, lock_target, TargetLock};

/// Claims the target for a step that writes it, for as long as the returned lock lives;
/// `None` for a read-only step, or when this process's run holds the target's lock
/// exclusively already. The claim is a plain descriptor of its own, never registered with
/// a ring: a ring's descriptors are released by the kernel's asynchronous ring teardown,
/// some time after the step, which would make the next step's (or the next run's) claim
/// fail.
pub fn claim(target: &StepTarget, spec: &StepSpec) -> Result<Option<TargetLock>, EngineError> {
    let w = &spec.workload;
    if w.rw.read_percent(w.rwmixread) == 100 || held_here(&target.path, true) {
        return Ok(None);
    }
    lock_target(&target.path, true).map(Some)
}
