//! Keeping a second writer off the target while a step writes it. A block device is
//! claimed exclusively (O_EXCL): the kernel then refuses it while mounted, active swap or
//! held by device-mapper, md or LVM, and refuses those (and other exclusive openers) to
//! anyone else meanwhile. A regular file gets an exclusive advisory lock (flock), which
//! every drivescope takes before writing one, so two runs never write the same file at
//! once. When the claim fails, the processes that have the target open are named.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::drive::in_use::Scene;
use crate::drive::SysRoot;
use crate::engine::EngineError;
use crate::engine::{Opener, StepTarget};
use crate::workload::StepSpec;

/// The processes other than this one with `path` open (the same inode, or for a device
/// node the same device), as far as /proc lets this user see.
pub fn openers(path: &Path) -> Vec<Opener> {
    Scene::read(&SysRoot::real())
        .openers(path)
        .into_iter()
        .map(|(pid, command)| Opener { pid, command })
        .collect()
}

/// Claims the target for a step that writes it, for as long as the returned descriptor
/// lives; `None` for a read-only step. The claim is a plain descriptor of its own, never
/// registered with a ring: a ring's descriptors are released by the kernel's asynchronous
/// ring teardown, some time after the step, which would make the next step's (or the next
/// run's) claim fail.
pub fn claim(
    target: &StepTarget,
    spec: &StepSpec,
    block_device: bool,
) -> Result<Option<File>, EngineError> {
    let w = &spec.workload;
    if w.rw.read_percent(w.rwmixread) == 100 {
        return Ok(None);
    }
    let in_use = || EngineError::InUse {
        path: target.path.clone(),
        by: openers(&target.path),
        block_device,
    };
    if block_device {
        return match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(&target.path)
        {
            Ok(f) => Ok(Some(f)),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(in_use()),
            Err(source) => Err(EngineError::Open {
                path: target.path.display().to_string(),
                mode: "exclusive use",
                hint: "",
                source,
            }),
        };
    }
    let f = OpenOptions::new()
        .read(true)
        .open(&target.path)
        .map_err(|source| EngineError::Open {
            path: target.path.display().to_string(),
            mode: "exclusive use",
            hint: "",
            source,
        })?;
    // SAFETY: flock(2) on a descriptor this function owns; it takes no pointers.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        return Err(in_use());
    }
    Ok(Some(f))
}

/// Whether a step writing the target could claim it now (the claim is let go at once): a
/// run checks this before it creates its session, so a target another process writes is
/// refused before anything starts.
pub fn check_claim(target: &StepTarget, spec: &StepSpec) -> Result<(), EngineError> {
    if spec.engine.targetless() {
        return Ok(());
    }
    if let Some(ns) = namespace_target(target) {
        return claim(&ns, spec, true).map(drop);
    }
    let block_device =
        std::fs::metadata(&target.path).is_ok_and(|m| m.file_type().is_block_device());
    claim(target, spec, block_device).map(drop)
}

/// For an NVMe generic character device (`/dev/ngXnY`), the block namespace behind it
/// (`/dev/nvmeXnY`): a write through passthrough is claimed, and guarded, there.
pub fn namespace_target(target: &StepTarget) -> Option<StepTarget> {
    if !super::nvme::is_generic_device(&target.path) {
        return None;
    }
    super::nvme::block_namespace(&target.path).map(|path| StepTarget {
        path,
        ..target.clone()
    })
}
