//! Locks the kernel holds for a process: an exclusive `flock(2)` on a lock file beside
//! what is locked (`.NAME.lock` in its folder). The kernel lets the lock go when the
//! process ends, however it ends (a crash, `kill -9`), so no lock is ever left stale. The
//! lock file is made exclusively (`O_EXCL`, in the folder held open); one already there is
//! used only when it is a lock file of drivescope's (its first line says so, or a bare pid
//! as older releases wrote, and it has no other name), never truncated or removed
//! otherwise. The file is removed when the lock is let go in order, only while its name
//! still holds it. Used for sessions and verify states: two processes never use one at
//! once.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::FlockOperation;
use rustix::io::Errno;

use super::error::OwnedError;
use super::folder::{Folder, Mine};

/// Why a lock was not taken.
#[derive(Debug)]
pub enum TakeError {
    /// Another process holds it (its pid, as it wrote it in the lock file, when known).
    Held { holder: Option<u32> },
    /// The lock file could not be made, opened or locked (a file there that is not a lock
    /// file of drivescope's among them: [`OwnedError::NotOurs`]).
    Owned(OwnedError),
}

impl From<OwnedError> for TakeError {
    fn from(e: OwnedError) -> Self {
        TakeError::Owned(e)
    }
}

/// A lock held until dropped.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    folder: Folder,
    mine: Mine,
    _file: File,
}

/// How often a lock file removed between our open and our lock is tried anew.
const ATTEMPTS: u32 = 100;

/// The first line of a lock file of ours.
const FIRST_LINE: &str = "drivescope lock";

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

/// The holder's pid in a lock file's text, and whether the text is a lock file of ours.
fn read_lock(text: &str) -> (bool, Option<u32>) {
    let mut lines = text.lines();
    match lines.next().map(str::trim) {
        Some(FIRST_LINE) => (true, lines.next().and_then(|l| l.trim().parse().ok())),
        Some(l) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (lines.next().is_none(), l.parse().ok())
        }
        _ => (false, None),
    }
}

fn try_lock(file: &File) -> Result<bool, Errno> {
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e),
    }
}

fn held(file: &mut File) -> TakeError {
    let mut text = String::new();
    let _ = file.take(256).read_to_string(&mut text);
    TakeError::Held {
        holder: read_lock(&text).1,
    }
}

fn write_pid(file: &mut File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{FIRST_LINE}\n{}\n", std::process::id())
}

impl LockFile {
    /// Takes the lock at `path` (its folder made if needed) without waiting: held by
    /// another process, it is [`TakeError::Held`] at once.
    pub fn take(path: &Path) -> Result<LockFile, TakeError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| OwnedError::io(dir, "cannot create the folder", e))?;
        }
        let (folder, name) = Folder::of_file(path)?;
        let io = |what: &'static str, e: std::io::Error| OwnedError::io(path, what, e);
        for _ in 0..ATTEMPTS {
            let (mut file, mine) = match folder.create_open(&name, 0o644) {
                Ok(made) => made,
                Err(OwnedError::Exists { .. }) => match Self::existing(&folder, &name)? {
                    Some(found) => found,
                    None => continue,
                },
                Err(e) => return Err(e.into()),
            };
            if !try_lock(&file).map_err(|e| io("cannot lock", e.into()))? {
                return Err(held(&mut file));
            }
            // The holder before us may have removed the file between our open and our
            // lock: what we locked must still be what the name holds.
            if !folder.holds(&mine) {
                continue;
            }
            write_pid(&mut file).map_err(|e| io("cannot write", e))?;
            return Ok(LockFile {
                path: path.to_path_buf(),
                folder,
                mine,
                _file: file,
            });
        }
        Err(TakeError::Owned(io(
            "cannot lock",
            std::io::Error::from(std::io::ErrorKind::WouldBlock),
        )))
    }

    /// The lock file already at `name`, when it is one of ours (`None`: gone meanwhile).
    fn existing(folder: &Folder, name: &OsString) -> Result<Option<(File, Mine)>, TakeError> {
        let adopted = folder.adopt(name, |f| {
            let one_name = f.metadata().is_ok_and(|m| m.nlink() == 1);
            let mut text = String::new();
            let _ = f.take(256).read_to_string(&mut text);
            one_name && read_lock(&text).0
        });
        let Some((_, mine)) = adopted? else {
            return Ok(None);
        };
        // Opened again to write it (the adopted descriptor only reads), while the name
        // still holds it.
        match folder.open_rw(&mine) {
            Ok(file) => Ok(Some((file, mine))),
            Err(OwnedError::NotOurs { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LockFile {
    fn drop(&mut self) {
        // Removed while still held, and only if the name still holds it: whoever opened it
        // meanwhile finds, once they hold it, that the name holds another file, and tries
        // again.
        let _ = self.folder.remove(&self.mine);
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
            std::fs::read_to_string(&p).unwrap(),
            format!("drivescope lock\n{}\n", std::process::id())
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
        // A lock file left by a process that died (no lock on it) is taken again, in
        // today's form or an older release's.
        for left in ["999999\n", "drivescope lock\n999999\n"] {
            std::fs::write(&p, left).unwrap();
            let c = LockFile::take(&p).unwrap();
            assert_eq!(c.path(), p);
            drop(c);
            assert!(!p.exists());
        }
        // A link to the file shares its lock.
        std::fs::write(&target, "").unwrap();
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(beside(&link), beside(&target));
    }

    #[test]
    fn a_users_file_or_link_at_the_lock_name_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".s.yaml.lock");
        let mine = dir.path().join("notes.txt");
        // A file of the user's, a second name of it, a link to it.
        std::fs::write(&mine, "my notes\n").unwrap();
        std::fs::write(&p, "my notes\n").unwrap();
        assert!(matches!(
            LockFile::take(&p),
            Err(TakeError::Owned(OwnedError::NotOurs { .. }))
        ));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "my notes\n");
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&mine, "123\n").unwrap();
        std::fs::hard_link(&mine, &p).unwrap();
        assert!(LockFile::take(&p).is_err(), "a second name of a file");
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "123\n");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&mine, &p).unwrap();
        assert!(LockFile::take(&p).is_err(), "a link");
        assert_eq!(std::fs::read_to_string(&mine).unwrap(), "123\n");
        assert!(p.symlink_metadata().unwrap().file_type().is_symlink());
    }
}
