//! The list of engines (as fio's `ioengines.c`): which [`Engine`] runs a step of each
//! [`EngineKind`], the engine a target's run uses, the checks of a run's steps before any
//! I/O, and the lock a run holds on its target whatever engine runs it ([`lock_targets`]).
//! Outside the contract (`crate::engine`), which names none of them.

use crate::engine::native::{self, InProcess};
pub use crate::engine::native::{lock_targets, TargetLock};
use crate::engine::{Control, Engine, EngineError, FnObserver, StepControl, StepTarget};
use crate::stats::{IntervalReport, StepSummary};
use crate::workload::{EngineKind, StepSpec};

/// The engine of a step's kind.
pub fn engine_for(kind: EngineKind) -> Box<dyn Engine> {
    match kind {
        EngineKind::IoUring | EngineKind::Sync | EngineKind::Nop | EngineKind::UringCmd => {
            Box::new(InProcess::new(kind))
        }
        EngineKind::Idle => Box::new(native::Idle),
        EngineKind::Fio => Box::new(crate::fio::Fio),
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
        (EngineKind::IoUring, Some(p)) if native::nvme::is_generic_device(p) => {
            EngineKind::UringCmd
        }
        _ => asked,
    }
}

/// Checks every step against the target before any I/O: a missing or too old fio (when a
/// step runs on it) and each step's shape against the target (another run on the target
/// is the lock's to refuse, [`lock_targets`]). Returns fio's version when a step runs on
/// fio, for the steps to carry (fio is asked once a run).
pub fn check_steps(
    t: &StepTarget,
    specs: &[crate::workload::StepSpec],
) -> Result<Option<String>, EngineError> {
    // A missing or too old fio (or one whose json+ lacks what is read) is said now.
    let fio = match specs.iter().any(|s| s.engine == EngineKind::Fio) {
        true => Some(crate::fio::fio_check()?),
        false => None,
    };
    for spec in specs {
        native::validate(t, spec)?;
    }
    native::zoned::check_steps(t, specs)?;
    Ok(fio)
}
