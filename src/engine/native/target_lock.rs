//! The one lock on a run's target, whatever runs it (the io_uring, sync and passthrough
//! engines, an fio job file, a verified run, a remote host's agent): taken before any I/O
//! and before the session exists, held until the run ends, refused at once (never waited
//! for). A run that only reads holds it shared (`flock` `LOCK_SH`), one that writes
//! exclusively (`LOCK_EX`), on a descriptor of the target itself: the kernel's lock is the
//! inode's, so two runs exclude each other whatever names they give the target. A block
//! device written is also claimed exclusively (`O_EXCL`): the kernel then refuses it while
//! mounted, active swap or held by device-mapper, md or LVM, and refuses those (and other
//! exclusive openers) to anyone else meanwhile. An NVMe generic device (`/dev/ngXnY`) is
//! locked as the block namespace behind it, so a run through either name excludes the
//! other. When the lock is refused, the processes holding it are named (`/proc/locks`).
//!
//! This process's locks are known by their file ([`held_here`]): a step of a run that
//! holds one (its fill, its steps) takes no claim of its own, which a second lock of the
//! same process on another descriptor would refuse.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::drive::in_use::flock_holders;
use crate::drive::SysRoot;
use crate::engine::{EngineError, Locker, Opener};

/// A file's identity: its device and inode.
type FileId = (u64, u64);

/// A file (device and inode) and whether it is locked exclusively.
type Held = (u64, u64, bool);

/// The target locks this process holds now.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// A target locked for a run: shared or exclusive, for as long as the value lives.
#[derive(Debug)]
pub struct TargetLock {
    /// The node the lock is on (an NVMe generic device's block namespace).
    path: PathBuf,
    exclusive: bool,
    held: Held,
    /// The descriptor the lock (and a block device's claim) is on; closing it lets go.
    _fd: File,
}

impl TargetLock {
    /// The file or device node the lock is on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock is exclusive (the run writes the target).
    pub fn exclusive(&self) -> bool {
        self.exclusive
    }
}

impl Drop for TargetLock {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock() {
            if let Some(i) = held.iter().position(|h| *h == self.held) {
                held.swap_remove(i);
            }
        }
    }
}

/// The node a target's lock is on: the target, or the block namespace behind an NVMe
/// generic device; and whether that is a block device.
fn lock_node(path: &Path) -> (PathBuf, bool) {
    if super::nvme::is_generic_device(path) {
        if let Some(ns) = super::nvme::block_namespace(path) {
            return (ns, true);
        }
    }
    let block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    (path.to_path_buf(), block)
}

/// The identity a lock on `m`'s file is known by.
fn identity(m: &std::fs::Metadata) -> FileId {
    (m.dev(), m.ino())
}

/// Whether this process holds a lock on the target at `path` that covers a step: an
/// exclusive one for a step that writes, any for one that reads.
pub fn held_here(path: &Path, writes: bool) -> bool {
    let (node, _) = lock_node(path);
    let Ok(m) = std::fs::metadata(&node) else {
        return false;
    };
    let (dev, ino) = identity(&m);
    HELD.lock().is_ok_and(|held| {
        held.iter()
            .any(|&(d, i, ex)| (d, i) == (dev, ino) && (ex || !writes))
    })
}

/// The processes but this one that hold a lock on `node`, else those that have it open.
fn holders(node: &Path) -> Vec<Locker> {
    let me = std::process::id();
    flock_holders(&SysRoot::real(), node)
        .into_iter()
        .filter(|h| h.pid != me)
        .map(|h| Locker {
            pid: h.pid,
            command: h.command,
            writes: h.exclusive,
        })
        .collect()
}

/// Locks the target at `path` for a run: exclusively when it writes, else shared. Refused
/// at once when another run holds it ([`EngineError::Locked`], naming it), or when a block
/// device written is in use ([`EngineError::InUse`]).
pub fn lock_target(path: &Path, exclusive: bool) -> Result<TargetLock, EngineError> {
    let (node, block_device) = lock_node(path);
    let cannot = |source| EngineError::Open {
        path: node.display().to_string(),
        mode: "locking it for the run",
        hint: "",
        source,
    };
    let mut o = OpenOptions::new();
    o.read(true);
    if block_device && exclusive {
        o.custom_flags(libc::O_EXCL);
    }
    let fd = match o.open(&node) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            let held = holders(&node);
            return Err(match held.is_empty() {
                true => EngineError::InUse {
                    by: openers(&node),
                    path: node,
                    block_device,
                },
                false => EngineError::Locked {
                    path: node,
                    by: held,
                },
            });
        }
        Err(source) => return Err(cannot(source)),
    };
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    // SAFETY: flock(2) on a descriptor this function owns; it takes no pointers.
    if unsafe { libc::flock(fd.as_raw_fd(), op | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(cannot(e));
        }
        return Err(EngineError::Locked {
            by: holders(&node),
            path: node,
        });
    }
    let (dev, ino) = identity(&fd.metadata().map_err(cannot)?);
    let held = (dev, ino, exclusive);
    if let Ok(mut h) = HELD.lock() {
        h.push(held);
    }
    Ok(TargetLock {
        path: node,
        exclusive,
        held,
        _fd: fd,
    })
}

/// Locks each of `targets` (a path, and whether the run writes it) for a run, each file
/// once however many names it has (exclusively when any of them is written): all, or
/// none and the first refusal.
pub fn lock_targets(targets: &[(PathBuf, bool)]) -> Result<Vec<TargetLock>, EngineError> {
    let mut wanted: Vec<(PathBuf, bool, Option<FileId>)> = Vec::new();
    for (path, writes) in targets {
        let (node, _) = lock_node(path);
        let id = std::fs::metadata(&node).ok().map(|m| identity(&m));
        match wanted.iter_mut().find(|w| id.is_some() && w.2 == id) {
            Some(w) => w.1 |= *writes,
            None => wanted.push((path.clone(), *writes, id)),
        }
    }
    wanted
        .into_iter()
        .map(|(path, writes, _)| lock_target(&path, writes))
        .collect()
}

/// The processes other than this one with `path` open (the same inode, or for a device
/// node the same device), as far as /proc lets this user see.
pub fn openers(path: &Path) -> Vec<Opener> {
    crate::drive::in_use::Scene::read(&SysRoot::real())
        .openers(path)
        .into_iter()
        .map(|(pid, command)| Opener { pid, command })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_share_a_target_and_a_writer_has_it_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, vec![0u8; 4096]).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        let a = lock_target(&p, false).unwrap();
        let b = lock_target(&link, false).expect("two readers share it");
        assert!(held_here(&p, false) && !held_here(&p, true));
        // flock is per open file: this process's own writer is refused as another's is.
        let e = lock_target(&link, true).unwrap_err();
        assert!(matches!(e, EngineError::Locked { .. }), "{e}");
        assert!(e.to_string().contains("in use by another run"), "{e}");
        drop((a, b));
        assert!(!held_here(&p, false));
        let w = lock_target(&p, true).unwrap();
        assert!(w.exclusive() && held_here(&link, true));
        assert!(matches!(
            lock_target(&p, false),
            Err(EngineError::Locked { .. })
        ));
        drop(w);
        // One file under two names is locked once, exclusively when either is written.
        let both = lock_targets(&[(p.clone(), false), (link.clone(), true)]).unwrap();
        assert_eq!(both.len(), 1);
        assert!(both[0].exclusive());
    }
}
