//! The check of a workload's shape ([`validate_shape`]): what it asks for that no target
//! can change (queue, block sizes, buffer memory, rate), made before any target is created
//! or opened, by the run and by every engine's own check of a step.

use super::{EngineError, InvalidStep, MAX_BUFFER_BYTES, MAX_IODEPTH, MAX_JOBS};
use crate::workload::Workload;

/// Checks what a workload asks for that no target can change: queue shape, block sizes,
/// buffer memory, rate. Runs before anything touches a target.
pub fn validate_shape(w: &Workload) -> Result<(), EngineError> {
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    if w.iodepth == 0 || w.iodepth > MAX_IODEPTH {
        return bad(InvalidStep::Iodepth(w.iodepth));
    }
    if w.jobs == 0 || w.jobs > MAX_JOBS {
        return bad(InvalidStep::Jobs(w.jobs));
    }
    for &(bs, _) in &w.bs.split {
        if bs == 0 || bs > 1 << 30 {
            return bad(InvalidStep::BlockSize(bs));
        }
    }
    let mem = u64::from(w.iodepth) * u64::from(w.jobs) * w.bs.max();
    if mem > MAX_BUFFER_BYTES {
        return bad(InvalidStep::BufferMemory(mem));
    }
    if let Some(r) = w.rate_iops {
        if !(r.is_finite() && r > 0.0) {
            return bad(InvalidStep::Rate(r));
        }
    }
    Ok(())
}
