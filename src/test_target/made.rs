//! A test file drivescope created in this run: removed again when the run is refused
//! before it starts, so a refusal leaves no file behind. Only the file it created is
//! removed (its name still holding the same file, by the kernel's identity), never one
//! that was there before or that replaced it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::owned::{Folder, Identity};

/// A file this run created; dropped without [`MadeFile::keep`], it is removed.
#[derive(Debug)]
pub struct MadeFile {
    path: PathBuf,
    id: Identity,
    keep: AtomicBool,
}

impl MadeFile {
    /// The file at `path`, which this run has just created (`None` when it cannot be
    /// proven drivescope's: then it is kept, as any file drivescope cannot tell is its own).
    pub fn of(path: &Path) -> Option<Arc<MadeFile>> {
        let f = std::fs::File::open(path).ok()?;
        if !super::marker::is_created(&f, path) {
            return None;
        }
        Some(Arc::new(MadeFile {
            path: path.to_path_buf(),
            id: Identity::of(&f).ok()?,
            keep: AtomicBool::new(false),
        }))
    }

    /// The run started: the file stays.
    pub fn keep(&self) {
        self.keep.store(true, Ordering::Release);
    }
}

/// Removes the test file at `path` when drivescope made it (its identity is the one
/// recorded when it was made) and its name still holds it; returns whether it did.
pub fn remove_made(path: &Path) -> std::io::Result<bool> {
    let f = std::fs::File::open(path)?;
    if !super::marker::is_created(&f, path) {
        return Ok(false);
    }
    let id = Identity::of(&f)?;
    remove_if_same(path, &id)
}

fn remove_if_same(path: &Path, id: &Identity) -> std::io::Result<bool> {
    let (folder, name) = Folder::of_file(path).map_err(std::io::Error::other)?;
    let Some(mine) = folder.mine_at(&name, id).map_err(std::io::Error::other)? else {
        return Ok(false);
    };
    folder.remove(&mine).map_err(std::io::Error::other)
}

impl Drop for MadeFile {
    fn drop(&mut self) {
        if !self.keep.load(Ordering::Acquire) {
            let _ = remove_if_same(&self.path, &self.id);
        }
    }
}
