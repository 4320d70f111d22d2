//! Which file or device a target is, across hosts: the kernel's boot id (the same on every
//! path to one running machine, whatever name or port reached it) with the file's device
//! and inode, or a block device's number. Two targets with equal ids are one.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A target's identity on the machine that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// `/proc/sys/kernel/random/boot_id` of the machine (its running kernel).
    pub boot_id: String,
    pub node: Node,
}

/// The file itself, or the device a block (or character) device node names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Node {
    File { dev: u64, ino: u64 },
    Device { rdev: u64 },
}

/// The identity of `path` on this machine, or `None` when it cannot be told (no boot id,
/// no such path).
pub fn file_id(path: &Path) -> Option<FileId> {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let m = std::fs::metadata(path).ok()?;
    let ft = m.file_type();
    let node = if ft.is_block_device() || ft.is_char_device() {
        Node::Device { rdev: m.rdev() }
    } else {
        Node::File {
            dev: m.dev(),
            ino: m.ino(),
        }
    };
    Some(FileId {
        boot_id: boot_id.trim().to_string(),
        node,
    })
}
