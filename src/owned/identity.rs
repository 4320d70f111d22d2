//! Which file a descriptor or a name holds, as the kernel tells it: the device and inode
//! (exact while a descriptor of ours holds the file open: the kernel reuses an inode
//! number only once the file is gone) and the file handle of `name_to_handle_at(2)`
//! (inode and generation: a new file that reuses an inode number gets another handle),
//! which outlives the process. Where the filesystem gives no handle, its birth time
//! (`statx` `STX_BTIME`, to the nanosecond: a later file that reuses the inode number is
//! born later) stands in; a file with neither has no lasting identity: across runs it cannot
//! be proven ours, so it is the user's.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// The largest handle the kernel gives (MAX_HANDLE_SZ).
const MAX_HANDLE: usize = 128;

/// A file's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    /// The filesystem's file handle (its type, then its bytes), when it gives one.
    pub handle: Option<(i32, Vec<u8>)>,
    /// When the file was made (seconds, nanoseconds), when the filesystem says.
    pub born: Option<(i64, u32)>,
}

/// The birth time of the file `fd` holds, when its filesystem records one.
fn born_of(fd: BorrowedFd<'_>) -> Option<(i64, u32)> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
    (st.stx_mask & StatxFlags::BTIME.bits() != 0)
        .then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec))
}

/// `struct file_handle` with room for the largest handle.
#[repr(C)]
struct HandleBuf {
    handle_bytes: libc::c_uint,
    handle_type: libc::c_int,
    f_handle: [u8; MAX_HANDLE],
}

/// The file handle of the file `fd` holds, or `None` where its filesystem gives none.
fn handle_of(fd: BorrowedFd<'_>) -> Option<(i32, Vec<u8>)> {
    let mut buf = HandleBuf {
        handle_bytes: MAX_HANDLE as libc::c_uint,
        handle_type: 0,
        f_handle: [0; MAX_HANDLE],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: the path is a static NUL-terminated empty string, read with AT_EMPTY_PATH as
    // "the file `fd` holds" (fd is borrowed, so open for the call); `buf` is a live,
    // exclusively borrowed `struct file_handle` whose `handle_bytes` says the room after
    // its header (MAX_HANDLE bytes), which is all the kernel writes; `mount_id` is a live
    // c_int.
    let rc = unsafe {
        libc::name_to_handle_at(
            fd.as_raw_fd(),
            c"".as_ptr(),
            std::ptr::from_mut(&mut buf).cast::<libc::file_handle>(),
            &mut mount_id,
            libc::AT_EMPTY_PATH,
        )
    };
    let len = buf.handle_bytes as usize;
    (rc == 0 && len <= MAX_HANDLE).then(|| (buf.handle_type, buf.f_handle[..len].to_vec()))
}

impl Identity {
    /// The identity of the file `fd` holds.
    pub fn of(fd: impl AsFd) -> std::io::Result<Identity> {
        let fd = fd.as_fd();
        let st = rustix::fs::fstat(fd)?;
        Ok(Identity {
            dev: st.st_dev,
            ino: st.st_ino,
            handle: handle_of(fd),
            born: born_of(fd),
        })
    }

    /// Whether `other` is this file: the same device and inode, and the same handle where
    /// both have one.
    pub fn same(&self, other: &Identity) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && match (&self.handle, &other.handle) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
            && match (self.born, other.born) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// The identity as text that outlives the process (`dev:ino:type:hex` of the handle,
    /// else `dev:ino:born:SECONDS.NANOSECONDS`), or `None` when the file has neither: such
    /// a file is never known as ours in a later run.
    pub fn lasting(&self) -> Option<String> {
        if let Some((kind, bytes)) = &self.handle {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            return Some(format!("{}:{}:{kind}:{hex}", self.dev, self.ino));
        }
        let (sec, nsec) = self.born?;
        Some(format!("{}:{}:born:{sec}.{nsec:09}", self.dev, self.ino))
    }

    /// Whether `text` (a [`Identity::lasting`] of some earlier run) names this file: only
    /// ever true for a file with a handle, and a handle equal to the one recorded.
    pub fn is_lasting(&self, text: &str) -> bool {
        self.lasting().is_some_and(|mine| mine == text.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_keeps_its_identity_and_another_file_has_another() {
        let dir = tempfile::tempdir().unwrap();
        let a = std::fs::File::create(dir.path().join("a")).unwrap();
        let b = std::fs::File::create(dir.path().join("b")).unwrap();
        let ia = Identity::of(&a).unwrap();
        assert!(ia.same(&Identity::of(&a).unwrap()));
        assert!(!ia.same(&Identity::of(&b).unwrap()));
        // tmpfs and ext4 both give handles; the lasting text names only this file.
        if let Some(text) = ia.lasting() {
            assert!(ia.is_lasting(&text));
            assert!(!Identity::of(&b).unwrap().is_lasting(&text));
        }
    }

    #[test]
    fn a_reused_inode_number_is_another_file_by_its_handle() {
        let mine = Identity {
            dev: 1,
            ino: 2,
            handle: Some((1, vec![1, 2, 3])),
            born: None,
        };
        let reused = Identity {
            handle: Some((1, vec![1, 2, 4])),
            ..mine.clone()
        };
        assert!(!mine.same(&reused));
        assert!(!reused.is_lasting(&mine.lasting().unwrap()));
        let no_handle = Identity {
            handle: None,
            ..mine.clone()
        };
        assert_eq!(no_handle.lasting(), None);
        assert!(!no_handle.is_lasting(&mine.lasting().unwrap()));
        // Without a handle, the birth time tells a reused inode number apart.
        let born = Identity {
            born: Some((1_700_000_000, 5)),
            ..no_handle.clone()
        };
        let later = Identity {
            born: Some((1_700_000_001, 5)),
            ..no_handle
        };
        assert_eq!(born.lasting().unwrap(), "1:2:born:1700000000.000000005");
        assert!(!later.is_lasting(&born.lasting().unwrap()));
        assert!(!later.same(&born));
    }
}
