//! Locks the kernel holds for a process: an exclusive `flock(2)` on a lock file beside
//! what is locked (`.NAME.lock` in its folder). The kernel lets the lock go when the
//! process ends, however it ends (a crash, `kill -9`), so no lock is ever left stale; the
//! file itself is removed when the lock is let go in order, and one left by a process that
//! died is simply taken again. Used for sessions and verify states: two processes never
//! use one at once.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a lock was not taken.
#[derive(Debug)]
pub enum TakeError {
    /// Another process holds it (its pid, as it wrote it in the lock file, when known).
    Held { holder: Option<u32> },
    /// The lock file could not be made, opened or locked.
    Io(std::io::Error),
}

/// A lock held until dropped.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    file: File,
}

/// How often a lock file removed between our open and our lock is tried anew.
const ATTEMPTS: u32 = 100;

/// The lock file of `path`: `.NAME.lock` in the folder `path` is really in (a link
/// followed, the folder made canonical), so every name of one file has one lock.
pub fn beside(path: &Path) -> PathBuf {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let parent = std::fs::canonicalize(&parent).unwrap_or(parent);
        match path.file_name() {
            Some(n) => parent.join(n),
            None => parent,
        }
    });
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match real.parent() {
        Some(dir) => dir.join(format!(".{name}.lock")),
        None => PathBuf::from(format!(".{name}.lock")),
    }
}

fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

impl LockFile {
    /// Takes the lock at `path` (its folder made if needed) without waiting: held by
    /// another process, it is [`TakeError::Held`] at once.
    pub fn take(path: &Path) -> Result<LockFile, TakeError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(TakeError::Io)?;
        }
        for _ in 0..ATTEMPTS {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
                .map_err(TakeError::Io)?;
            // SAFETY: flock(2) on a descriptor this function owns; it takes no pointers.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    return Err(TakeError::Held {
                        holder: text.trim().parse().ok(),
                    });
                }
                return Err(TakeError::Io(e));
            }
            // The holder before us may have removed the file between our open and our
            // lock: what we locked must still be what the path names.
            let ours = file.metadata().map_err(TakeError::Io)?;
            match std::fs::symlink_metadata(path) {
                Ok(now) if same_inode(&now, &ours) => {
                    file.set_len(0).map_err(TakeError::Io)?;
                    writeln!(file, "{}", std::process::id()).map_err(TakeError::Io)?;
                    return Ok(LockFile {
                        path: path.to_path_buf(),
                        file,
                    });
                }
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(TakeError::Io(e)),
            }
        }
        Err(TakeError::Io(std::io::Error::from(ErrorKind::WouldBlock)))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed while still held, and only if it is still ours: whoever opened it
        // meanwhile finds, once they hold it, that the path names another file, and
        // tries again.
        let still = match (self.file.metadata(), std::fs::symlink_metadata(&self.path)) {
            (Ok(a), Ok(b)) => same_inode(&a, &b),
            _ => false,
        };
        if still {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_the_file_goes_with_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.yaml");
        let p = beside(&target);
        assert_eq!(p.file_name().unwrap(), ".s.yaml.lock");
        let a = LockFile::take(&p).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap().trim(),
            std::process::id().to_string()
        );
        // flock locks are per open file: a second open, even in this process, is refused.
        match LockFile::take(&p) {
            Err(TakeError::Held { holder }) => assert_eq!(holder, Some(std::process::id())),
            other => panic!("taken twice: {other:?}"),
        }
        drop(a);
        assert!(!p.exists(), "let go in order, the lock file goes");
        let b = LockFile::take(&p).unwrap();
        drop(b);
        // A lock file left by a process that died (no lock on it) is taken again.
        std::fs::write(&p, "999999\n").unwrap();
        let c = LockFile::take(&p).unwrap();
        assert_eq!(c.path(), p);
        // A link to the file shares its lock.
        std::fs::write(&target, "").unwrap();
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(beside(&link), beside(&target));
    }
}
