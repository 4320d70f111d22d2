//! A test file drivescope created in this run: removed again when the run is refused
//! before it starts, so a refusal leaves no file behind. Only the file it created (the same
//! device and inode) is removed, never one that was there before or that replaced it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A file this run created; dropped without [`MadeFile::keep`], it is removed.
#[derive(Debug)]
pub struct MadeFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
    keep: AtomicBool,
}

impl MadeFile {
    /// The file at `path`, which this run has just created (`None` when it cannot be
    /// inspected: then it is kept, as any file drivescope cannot tell is its own).
    pub fn of(path: &Path) -> Option<Arc<MadeFile>> {
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Arc::new(MadeFile {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
            keep: AtomicBool::new(false),
        }))
    }

    /// The run started: the file stays.
    pub fn keep(&self) {
        self.keep.store(true, Ordering::Release);
    }
}

impl Drop for MadeFile {
    fn drop(&mut self) {
        if self.keep.load(Ordering::Acquire) {
            return;
        }
        let same = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.is_file() && m.dev() == self.dev && m.ino() == self.ino);
        if same {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
