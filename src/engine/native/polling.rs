//! Whether a target can do polled I/O (IORING_SETUP_IOPOLL, `--hipri`): an NVMe namespace
//! whose driver has poll queues (`nvme.poll_queues`), as its queue's `io_poll` says.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::nvme;
use crate::engine::NoPolling;

/// Why `path` (a block device, an NVMe generic device or a file on a block device) cannot
/// be polled; None when it can.
pub fn no_polling(path: &Path) -> Option<NoPolling> {
    let Some(queue) = queue_dir(path) else {
        return Some(NoPolling::NotNvme);
    };
    let nvme = std::fs::canonicalize(queue.join("../device"))
        .ok()
        .and_then(|d| std::fs::canonicalize(d.join("driver")).ok())
        .is_some_and(|d| d.ends_with("nvme"))
        || queue
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("nvme"));
    if !nvme {
        return Some(NoPolling::NotNvme);
    }
    let io_poll = std::fs::read_to_string(queue.join("io_poll"))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    match io_poll {
        Some(n) if n > 0 => None,
        _ => Some(NoPolling::NoPollQueues {
            poll_queues: std::fs::read_to_string("/sys/module/nvme/parameters/poll_queues")
                .ok()
                .and_then(|s| s.trim().parse().ok()),
        }),
    }
}

/// The sysfs `queue` directory of the disk under `path` (the whole disk for a partition).
fn queue_dir(path: &Path) -> Option<PathBuf> {
    let path = nvme::block_namespace(path)
        .filter(|_| nvme::is_generic_device(path))
        .unwrap_or_else(|| path.to_path_buf());
    let m = std::fs::metadata(&path).ok()?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let node = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    let disk = if node.join("partition").exists() {
        node.parent()?.to_path_buf()
    } else {
        node
    };
    Some(disk.join("queue"))
}
