//! Helpers for fake sysfs trees in a temp dir: files, directories and relative symlinks
//! laid out as the kernel lays them out.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Self {
        Tree {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `rel` (creating parents).
    pub fn file(&self, rel: &str, content: &str) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }

    pub fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path(rel)).expect("mkdir");
    }

    /// A symlink at `rel` pointing at tree path `target`, stored relative as sysfs does.
    pub fn link(&self, rel: &str, target: &str) {
        let at = self.path(rel);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        let depth = rel.matches('/').count();
        let up = "../".repeat(depth);
        std::os::unix::fs::symlink(format!("{up}{target}"), &at).expect("symlink");
    }
}

/// The drive of NVMe namespace nvme0n1 on controller nvme0 (1 GiB), as `drive::resolve`
/// describes it: the drive the fake trees' poller tests read.
pub fn nvme_drive() -> drivescope::drive::DriveInfo {
    drivescope::drive::DriveInfo {
        target: std::path::PathBuf::from("/dev/nvme0n1"),
        block_device: "nvme0n1".into(),
        stat_name: "nvme0n1".into(),
        disks: vec![drivescope::drive::Disk {
            name: "nvme0n1".into(),
            model: None,
            serial: None,
            firmware: None,
            capacity_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 512,
            rotational: false,
            transport: drivescope::drive::Transport::Nvme,
            nvme_controller: Some("nvme0".into()),
            backing_file: None,
            zones: None,
        }],
    }
}
