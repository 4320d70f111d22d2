//! What a step opens before its workers start: which engine runs (io_uring or its sync
//! fallback), the target once per job, what each ring I/O is, the watches on the device,
//! and the verify state's flusher.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::sync::Arc;

use super::append::ZoneAppend;
use super::discard::TrimKind;
use super::failure::{DeviceWatch, KernelCounts};
use super::notes::Notes;
use super::nvme::{self, Namespace};
use super::sqe::RingIo;
use super::uring::build_ring;
use crate::engine::{EngineError, InvalidStep, StepObserver, StepTarget};
use crate::workload::{EngineKind, EngineOptions, StepSpec};

/// Whether the step's I/O goes through io_uring (false: the sync engine), saying where
/// it falls back. The nop and passthrough engines are io_uring operations (no fallback),
/// and so is a verified step.
pub(super) fn uses_uring(
    kind: EngineKind,
    target: &StepTarget,
    iodepth: u32,
    notes: &mut Notes,
    obs: &mut dyn StepObserver,
) -> Result<bool, EngineError> {
    if matches!(kind, EngineKind::Nop | EngineKind::UringCmd) {
        // No fallback: these engines are io_uring operations.
        if let Some(reason) = io_uring_unavailable_reason(iodepth) {
            return Err(EngineError::NeedsUring {
                engine: kind,
                reason,
            });
        }
    }
    let mut use_uring = kind != EngineKind::Sync;
    if kind == EngineKind::IoUring {
        if let Some(reason) = io_uring_unavailable_reason(iodepth) {
            notes.say(
                format!("{reason}: running the sync engine (queue depth 1 per job)"),
                obs,
            );
            use_uring = false;
        }
    }
    if !use_uring && iodepth > 1 && kind == EngineKind::Sync {
        notes.say(
            format!(
                "the sync engine runs one I/O at a time per job; iodepth {iodepth} is not used"
            ),
            obs,
        );
    }
    if target.verify.is_some() && (!use_uring || kind != EngineKind::IoUring) {
        return Err(EngineError::NeedsUring {
            engine: kind,
            reason: "--verify runs on the io_uring engine only".to_string(),
        });
    }
    Ok(use_uring)
}

/// The target opened once per job (none for an engine without a target).
pub(super) fn open_files(
    target: &StepTarget,
    spec: &StepSpec,
    kind: EngineKind,
) -> Result<Vec<Option<File>>, EngineError> {
    let jobs = spec.workload.jobs as usize;
    if kind.targetless() {
        Ok((0..jobs).map(|_| None).collect())
    } else {
        (0..jobs)
            .map(|_| open_target(target, spec).map(Some))
            .collect()
    }
}

/// A trim workload's kind of trim (a discard on a block device, a punched hole in a file),
/// checked with one trim of the region's first block; `None` for any other workload.
pub(super) fn trim_kind(
    target: &StepTarget,
    spec: &StepSpec,
    first: Option<&File>,
) -> Result<Option<TrimKind>, EngineError> {
    let w = &spec.workload;
    let trim = match (w.trims(), first) {
        (true, Some(f)) => Some(TrimKind::of(f).map_err(|source| EngineError::Open {
            path: target.path.display().to_string(),
            mode: "its file type",
            source,
            hint: "",
        })?),
        _ => None,
    };
    if let (Some(k), Some(f)) = (trim, first) {
        // One trim of the region's first block (the step trims it anyway): a target that
        // takes none is refused before the step, not counted as a step of errors.
        let len = w.bs.min().max(target.align);
        if let Err(e) = super::discard::trim_sync(f, k, w.region.offset, len) {
            return Err(EngineError::Invalid(InvalidStep::NoTrim {
                path: target.path.clone(),
                kind: k.word(),
                errno: e.raw_os_error().unwrap_or(libc::EIO),
            }));
        }
    }
    Ok(trim)
}

/// Whether io_uring takes the block discards of a discard step (false: they go through
/// BLKDISCARD in the sync engine, which is said).
pub(super) fn uring_discards(
    target: &StepTarget,
    spec: &StepSpec,
    f: &File,
    notes: &mut Notes,
    obs: &mut dyn StepObserver,
) -> bool {
    let w = &spec.workload;
    let len = w.bs.min().max(target.align) as u32;
    let Some(e) = super::discard::uring_discard_refused(f, w.region.offset, len) else {
        return true;
    };
    notes.say(
        format!(
            "this kernel refuses io_uring's block discard command ({e}; it needs \
             Linux 6.12+): trims go through BLKDISCARD in the sync engine (queue \
             depth 1 per job)"
        ),
        obs,
    );
    false
}

/// What each I/O of the step's rings is: for a zone-append step, the zone size of the
/// zoned namespace behind the generic device.
pub(super) fn ring_io(
    kind: EngineKind,
    target: &StepTarget,
    spec: &StepSpec,
    first: Option<&File>,
    trim: Option<TrimKind>,
) -> Result<RingIo, EngineError> {
    Ok(match (kind, first, trim) {
        (EngineKind::Nop, _, _) => RingIo::Nop,
        (_, _, Some(k)) => RingIo::Trim(k),
        (EngineKind::UringCmd, Some(f), None) => {
            let ns = Namespace {
                nsid: nvme::namespace_id(f).map_err(|source| EngineError::Open {
                    path: target.path.display().to_string(),
                    mode: "its NVMe namespace id",
                    source,
                    hint: " (an NVMe generic device, /dev/ngXnY, answers NVME_IOCTL_ID)",
                })?,
                lba_shift: target.align.max(1).trailing_zeros(),
            };
            if !spec.workload.zone_append {
                return Ok(RingIo::NvmeCmd(ns));
            }
            let zone_bytes = super::zoned::zoned_device(&target.path)
                .filter(|d| d.zones.model == crate::drive::ZoneModel::HostManaged)
                .map(|d| d.zones.zone_bytes)
                .filter(|&z| z > 0)
                .ok_or_else(|| {
                    EngineError::Invalid(InvalidStep::AppendNotZoned(target.path.clone()))
                })?;
            RingIo::ZoneAppend(ZoneAppend { ns, zone_bytes })
        }
        _ => RingIo::Block,
    })
}

/// The watch on a block device target (is it still there?) and on what the kernel
/// completes and holds on it: a device still working through a deep queue is not
/// stalled, even while our workers have not reaped yet, and only one that holds requests
/// without completing any is.
pub(super) fn watches(
    target: &StepTarget,
    first: Option<&File>,
) -> (Option<DeviceWatch>, Option<KernelCounts>) {
    let meta = first.and_then(|f| f.metadata().ok());
    let device = meta
        .as_ref()
        .filter(|m| m.file_type().is_block_device())
        .map(|m| DeviceWatch::new(&target.path, m.rdev()));
    let kernel = meta.as_ref().and_then(KernelCounts::of);
    (device, kernel)
}

/// The step's claim on its target, held until the step returns (none for the nop engine,
/// which touches no target). Our own jobs' plain opens do not stand in its way; anyone
/// else's exclusive use does.
pub(super) fn claim(
    kind: EngineKind,
    target: &StepTarget,
    spec: &StepSpec,
) -> Result<Option<super::target_lock::TargetLock>, EngineError> {
    match kind {
        EngineKind::Nop => Ok(None),
        _ => super::claim::claim(target, spec),
    }
}

/// A verified step that writes saves the generation map in flush epochs while it runs.
pub(super) fn flusher(
    target: &StepTarget,
    spec: &StepSpec,
) -> Result<Option<crate::verify::state::Flusher>, EngineError> {
    let w = &spec.workload;
    match (&target.verify, w.rw.read_percent(w.rwmixread) < 100) {
        (Some(state), true) => Ok(Some(start_flusher(state, target)?)),
        _ => Ok(None),
    }
}

/// Opens the target for one job.
fn open_target(target: &StepTarget, spec: &StepSpec) -> Result<File, EngineError> {
    let w = &spec.workload;
    let writes = w.rw.read_percent(w.rwmixread) < 100;
    let mut o = OpenOptions::new();
    o.read(true).write(writes);
    // Passthrough commands bypass the page cache anyway; a character device takes no
    // O_DIRECT.
    if w.direct && spec.engine != EngineKind::UringCmd {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(&target.path).map_err(|source| {
        let hint = if w.direct && source.raw_os_error() == Some(libc::EINVAL) {
            " (this filesystem refuses O_DIRECT; run with --direct 0 to go through the page cache)"
        } else if source.kind() == std::io::ErrorKind::PermissionDenied {
            " (run as root or get write access to it)"
        } else {
            ""
        };
        EngineError::Open {
            path: target.path.display().to_string(),
            mode: if writes {
                "reading and writing"
            } else {
                "reading"
            },
            source,
            hint,
        }
    })
}

/// Starts the verify state's flusher with a descriptor of the target of its own (its
/// fdatasync is each flush epoch).
fn start_flusher(
    state: &Arc<crate::verify::VerifyState>,
    target: &StepTarget,
) -> Result<crate::verify::state::Flusher, EngineError> {
    let open = |source| EngineError::Open {
        path: state.dir().display().to_string(),
        mode: "saving the verify state",
        source,
        hint: "",
    };
    let file = File::open(&target.path).map_err(open)?;
    crate::verify::state::Flusher::start(state.clone(), file).map_err(open)
}

fn io_uring_unavailable_reason(depth: u32) -> Option<String> {
    match build_ring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>(
        depth,
        &EngineOptions::default(),
    ) {
        Ok(_) => None,
        Err(e) => {
            let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|v| *v > 0)
                .map(|v| format!(", kernel.io_uring_disabled = {v}"))
                .unwrap_or_default();
            Some(format!("io_uring unavailable ({e}{sysctl})"))
        }
    }
}
