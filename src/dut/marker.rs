//! Remembers which files drivescope created, so they may be rewritten without asking: an
//! extended attribute `user.drivescope` on the file, or (on filesystems without user
//! xattrs) a line `device inode` in `$XDG_STATE_HOME/drivescope/created-files`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

const XATTR: &[u8] = b"user.drivescope\0";
const VALUE: &[u8] = b"created";

fn state_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("drivescope").join("created-files"))
}

fn identity(f: &File) -> Option<String> {
    let m = f.metadata().ok()?;
    Some(format!("{} {}", m.dev(), m.ino()))
}

/// Marks a file as created by drivescope (best effort: a file left unmarked is only
/// protected more, never less).
pub fn mark_created(f: &File, _path: &Path) {
    // SAFETY: XATTR is a NUL-terminated static string (the name), VALUE a static buffer
    // whose length is the size passed, so the kernel reads only inside both; the fd is
    // `f`'s, borrowed and so open.
    let rc = unsafe {
        libc::fsetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            VALUE.as_ptr().cast(),
            VALUE.len(),
            0,
        )
    };
    if rc == 0 {
        return;
    }
    if let (Some(sf), Some(id)) = (state_file(), identity(f)) {
        if let Some(dir) = sf.parent() {
            let _ = fs::create_dir_all(dir);
        }
        if let Ok(mut out) = OpenOptions::new().create(true).append(true).open(&sf) {
            let _ = writeln!(out, "{id}");
        }
    }
}

/// True when drivescope created this file.
pub fn is_created(f: &File, _path: &Path) -> bool {
    let mut buf = [0u8; 16];
    // SAFETY: XATTR is a NUL-terminated static string; fgetxattr writes at most the size
    // passed, buf.len(), into `buf`, live and exclusively borrowed; the fd is `f`'s, open.
    let n = unsafe {
        libc::fgetxattr(
            f.as_raw_fd(),
            XATTR.as_ptr().cast(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n > 0 && &buf[..n as usize] == VALUE {
        return true;
    }
    match (state_file(), identity(f)) {
        (Some(sf), Some(id)) => fs::read_to_string(sf)
            .map(|s| s.lines().any(|l| l.trim() == id))
            .unwrap_or(false),
        _ => false,
    }
}
