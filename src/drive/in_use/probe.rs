//! The kernel's own word on a block device: an exclusive open (`O_EXCL`) and `BLKROGET`,
//! and what makes a write to it impossible.

use std::fs::{self, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::super::SysRoot;
use super::*;

/// Whether the kernel refuses `path` (a block device) an exclusive open: someone has it
/// claimed (mounted, swap, a holder, another O_EXCL opener).
pub fn exclusive_busy(path: &Path) -> bool {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
}

/// Everything that uses block device `dev` (named `path` in /dev): [`Scene::block_device`],
/// and when that finds nothing, the kernel's own word through an exclusive open.
pub fn block_device_in_use(
    root: &SysRoot,
    scene: &Scene,
    dev: &BlockDevice,
    path: &Path,
) -> Vec<InUse> {
    let mut found = scene.block_device(root, dev);
    if found.is_empty() && exclusive_busy(path) {
        found.push(InUse::Exclusive {
            device: dev.node().dev_path(),
        });
    }
    found
}

/// `BLKROGET`: `_IO(0x12, 94)`.
const BLKROGET: libc::c_ulong = 0x125e;

/// Whether the open device `path` is read-only by `BLKROGET`; None when it cannot be asked.
fn ioctl_read_only(path: &Path) -> Option<bool> {
    let f = fs::File::open(path).ok()?;
    let mut ro: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int through the pointer, which points at `ro`, alive for
    // the call; the fd is `f`'s, open for the call.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKROGET, &mut ro as *mut libc::c_int) };
    (rc == 0).then_some(ro != 0)
}

/// What makes a write to `dev` (its node at `path`) impossible: read-only (`BLKROGET`, or
/// sysfs `ro` where the ioctl cannot be asked), or zoned when `random_writes`.
pub fn write_blockers(dev: &BlockDevice, path: &Path, random_writes: bool) -> Vec<InUse> {
    let n = dev.node();
    let mut out = Vec::new();
    let read_only = match ioctl_read_only(path) {
        Some(ro) => ro.then_some(ReadOnlyBy::Ioctl),
        None => {
            (SysRoot::attr(&n.dir.join("ro")).as_deref() == Some("1")).then_some(ReadOnlyBy::Sysfs)
        }
    };
    if let Some(by) = read_only {
        out.push(InUse::ReadOnly {
            device: n.dev_path(),
            by,
        });
    }
    if random_writes {
        if let Some(model) = SysRoot::attr(&dev.disk_dir.join("queue/zoned")) {
            if model != "none" {
                out.push(InUse::Zoned {
                    device: n.dev_path(),
                    model,
                });
            }
        }
    }
    out
}
