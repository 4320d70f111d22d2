//! The checks a step passes before anything touches its target: the workload's shape
//! (queue, block sizes, buffer memory, rate), then the target (alignment, region, end) and
//! what the step's engine and ring options need of the target and the kernel.

use super::nvme;
use super::uring::build_ring;
use crate::engine::MIN_STEP_DURATION;
use crate::engine::{validate_shape, EngineError, InvalidStep, RingOption, StepTarget};
use crate::workload::{zone_append_problem, EngineKind, EngineOptions, StepSpec};

/// Checks a step against the target before any I/O.
pub fn validate(target: &StepTarget, spec: &StepSpec) -> Result<(), EngineError> {
    let w = &spec.workload;
    validate_shape(w)?;
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    for &(bs, _) in &w.bs.split {
        if w.direct && bs % target.align != 0 {
            return bad(InvalidStep::Unaligned {
                bs,
                path: target.path.clone(),
                align: target.align,
            });
        }
    }
    if w.direct && !w.region.offset.is_multiple_of(target.align) {
        return bad(InvalidStep::OffsetUnaligned {
            offset: w.region.offset,
            align: target.align,
        });
    }
    let end = w.region.offset.checked_add(w.region.len);
    if end.is_none_or(|e| e > target.size) {
        return bad(InvalidStep::PastEnd {
            offset: w.region.offset,
            len: w.region.len,
            path: target.path.clone(),
            size: target.size,
        });
    }
    if w.region.len < w.bs.max() {
        return bad(InvalidStep::RegionSmall {
            len: w.region.len,
            bs: w.bs.max(),
        });
    }
    // Each access range of a zoned distribution holds a whole I/O, or the distribution
    // asked for is not the one that would run (the engine's offsets are whole blocks from
    // its range's start, on the grain step_run gives the I/O generator).
    let grain = w.bs.min().max(target.align).max(1);
    let ranges = super::iogen::access_zones(w, grain);
    if let Some((i, r)) = ranges
        .iter()
        .enumerate()
        .find(|(_, (_, r))| r.len < w.bs.max())
    {
        return bad(InvalidStep::AccessRangeSmall {
            range: i + 1,
            of: ranges.len(),
            len: r.1.len,
            bs: w.bs.max(),
        });
    }
    if spec.end.duration.is_none() && spec.end.bytes.is_none() {
        return bad(InvalidStep::NoEnd);
    }
    if let Some(d) = spec.end.duration.filter(|d| *d < MIN_STEP_DURATION) {
        return bad(InvalidStep::TooShort(d));
    }
    check_engine(target, spec)
}

/// Checks what the step's engine and its ring options need of the target and the kernel:
/// zone append sequential passthrough writes of one size, passthrough an NVMe generic device, polled I/O a device with poll queues, SQPOLL
/// a kernel that lets this process have an SQ thread.
fn check_engine(target: &StepTarget, spec: &StepSpec) -> Result<(), EngineError> {
    let bad = |why: InvalidStep| Err(EngineError::Invalid(why));
    let o = &spec.options;
    if !o.is_default() && !spec.engine.uses_rings() {
        return bad(InvalidStep::RingOptions(spec.engine));
    }
    let w = &spec.workload;
    if w.zone_append {
        if let Some(p) = zone_append_problem(w.rw, spec.engine, w.bs.is_single()) {
            return bad(InvalidStep::ZoneAppend(p));
        }
    }
    if spec.workload.trims() && spec.engine == EngineKind::UringCmd {
        return bad(InvalidStep::TrimPassthrough);
    }
    if spec.workload.rwmixtrim > 0 && spec.engine == EngineKind::Fio {
        return bad(InvalidStep::TrimShareFio);
    }
    if spec.workload.trims() && target.verify.is_some() {
        return bad(InvalidStep::TrimVerify);
    }
    if spec.engine == EngineKind::UringCmd && !nvme::is_generic_device(&target.path) {
        return bad(InvalidStep::NotNvmeGeneric(target.path.clone()));
    }
    if o.hipri && spec.engine.targetless() {
        return bad(InvalidStep::HipriWithoutDevice(spec.engine));
    }
    if o.hipri {
        if let Some(why) = super::polling::no_polling(&target.path) {
            return bad(InvalidStep::NoPolling {
                path: target.path.clone(),
                why,
            });
        }
    }
    if let Some(p) = o.sqpoll {
        // An SQPOLL ring alone (no IOPOLL): what the kernel says of the SQ thread.
        let sq = EngineOptions {
            hipri: false,
            sqpoll: Some(p),
        };
        if let Err(e) = build_ring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>(8, &sq) {
            return bad(InvalidStep::Ring {
                option: RingOption::SqPoll,
                errno: e.raw_os_error().unwrap_or(0),
            });
        }
    }
    Ok(())
}
