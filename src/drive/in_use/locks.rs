//! Who holds a `flock(2)` lock on a file, as `/proc/locks` says: the processes (and their
//! command lines) holding one on the file's inode, each with its kind (shared or
//! exclusive). drivescope's target lock is such a lock: a run refused by it names them.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::super::SysRoot;
use super::scene::command_of;

/// A process holding a `flock` lock on a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    pub pid: u32,
    /// Its command line, as /proc shows it (arguments joined by spaces).
    pub command: String,
    /// An exclusive lock (`LOCK_EX`, /proc/locks' `WRITE`), else a shared one.
    pub exclusive: bool,
}

/// The processes holding a `flock` lock on the file (or device node) at `path`, in the
/// order `/proc/locks` lists them, each once; none when it cannot be read.
pub fn flock_holders(root: &SysRoot, path: &Path) -> Vec<LockHolder> {
    let Ok(m) = std::fs::metadata(path) else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(root.proc.join("locks")) else {
        return Vec::new();
    };
    let (major, minor) = (libc::major(m.dev()), libc::minor(m.dev()));
    held_on(&text, (major, minor, m.ino()))
        .into_iter()
        .map(|(pid, exclusive)| LockHolder {
            pid,
            command: command_of(&root.proc, pid),
            exclusive,
        })
        .collect()
}

/// The `(pid, exclusive)` of each `FLOCK` line of `/proc/locks` on inode `ino` of the
/// device `major:minor` (a line `1: FLOCK  ADVISORY  WRITE 15082 fe:00:10011590 0 EOF`:
/// the device in hex, the inode in decimal); a waiter's line (`->`) is no holder.
fn held_on(text: &str, (major, minor, ino): (u32, u32, u64)) -> Vec<(u32, bool)> {
    let mut out: Vec<(u32, bool)> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, "FLOCK", _, kind, pid, id, ..] = f.as_slice() else {
            continue;
        };
        let mut parts = id.split(':');
        let (Some(ma), Some(mi), Some(i), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let same = u32::from_str_radix(ma, 16) == Ok(major)
            && u32::from_str_radix(mi, 16) == Ok(minor)
            && i.parse::<u64>() == Ok(ino);
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if same && !out.iter().any(|(p, _)| *p == pid) {
            out.push((pid, *kind == "WRITE"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_of_one_inode_are_read_from_proc_locks() {
        let text = "1: FLOCK  ADVISORY  WRITE 15082 fe:00:10011590 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 16000 fe:00:10011590 0 EOF\n\
                    2: FLOCK  ADVISORY  READ 200 fe:00:10011590 0 EOF\n\
                    3: POSIX  ADVISORY  WRITE 300 fe:00:10011590 0 EOF\n\
                    4: FLOCK  ADVISORY  READ 400 fe:01:10011590 0 EOF\n\
                    5: FLOCK  ADVISORY  READ 500 103:02:77 0 EOF\n";
        assert_eq!(
            held_on(text, (0xfe, 0, 10011590)),
            [(15082, true), (200, false)]
        );
        assert_eq!(held_on(text, (0x103, 2, 77)), [(500, false)]);
        assert!(held_on(text, (0xfe, 0, 1)).is_empty());
    }

    #[test]
    fn a_lock_this_process_holds_is_found() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, "x").unwrap();
        let f = std::fs::File::open(&p).unwrap();
        // SAFETY: flock(2) on a descriptor the test owns; it takes no pointers.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) }, 0);
        let held = flock_holders(&SysRoot::real(), &p);
        assert_eq!(held.len(), 1, "{held:?}");
        assert_eq!(held[0].pid, std::process::id());
        assert!(!held[0].exclusive);
    }
}
