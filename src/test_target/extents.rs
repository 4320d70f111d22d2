//! Does a file have blocks that were never written? Holes (SEEK_HOLE) and unwritten
//! extents (FIEMAP, as fallocate leaves them) read back as zeros without touching the
//! drive, so a read test over them measures nothing real.

use std::fs::File;
use std::os::fd::AsRawFd;

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
const FIEMAP_EXTENT_LAST: u32 = 0x1;
const FIEMAP_EXTENT_UNWRITTEN: u32 = 0x800;
const FIEMAP_FLAG_SYNC: u32 = 0x1;
const BATCH: usize = 128;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
    fm_extents: [FiemapExtent; BATCH],
}

/// Some(true) when the first `size` bytes hold a hole or an unwritten extent, Some(false)
/// when every block is written, None when the filesystem cannot tell.
pub fn has_unwritten(f: &File, size: u64) -> Option<bool> {
    if size == 0 {
        return Some(false);
    }
    let fd = f.as_raw_fd();
    // SAFETY: lseek passes no memory, only integers; `fd` belongs to `f`, which is borrowed
    // (so open) for the whole call. The file position it moves is not used by our I/O
    // (pread/pwrite and io_uring give offsets).
    let hole = unsafe { libc::lseek(fd, 0, libc::SEEK_HOLE) };
    if hole >= 0 && (hole as u64) < size {
        return Some(true);
    }
    let mut start = 0u64;
    loop {
        let mut fm = Fiemap {
            fm_start: start,
            fm_length: size - start,
            fm_flags: FIEMAP_FLAG_SYNC,
            fm_mapped_extents: 0,
            fm_extent_count: BATCH as u32,
            fm_reserved: 0,
            fm_extents: [FiemapExtent::default(); BATCH],
        };
        // SAFETY: FS_IOC_FIEMAP reads and writes a `struct fiemap` followed by
        // `fm_extent_count` extents: `fm` is that header (repr(C), the kernel's field order
        // and widths) with BATCH repr(C) `fiemap_extent`s after it, and fm_extent_count is
        // BATCH, so the kernel writes at most BATCH extents, all inside `fm`, exclusively
        // borrowed for the call. `fd` is open: `f` is borrowed.
        if unsafe { libc::ioctl(fd, FS_IOC_FIEMAP, &mut fm) } != 0 {
            return None;
        }
        let n = fm.fm_mapped_extents as usize;
        if n == 0 {
            // Nothing mapped in the rest of the range: a hole.
            return Some(start < size);
        }
        let mut covered = start;
        for e in &fm.fm_extents[..n.min(BATCH)] {
            if e.fe_logical > covered {
                return Some(true);
            }
            if e.fe_flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
                return Some(true);
            }
            covered = e.fe_logical + e.fe_length;
            if e.fe_flags & FIEMAP_EXTENT_LAST != 0 || covered >= size {
                return Some(covered < size);
            }
        }
        start = covered;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn fallocated_is_unwritten_then_written_is_not() {
        // The crate's folder is on a real file system, where /tmp may be tmpfs.
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let p = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let size = 1 << 20;
        // SAFETY: fallocate passes no memory, only integers; the fd is `f`'s, open here.
        let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as i64) };
        if rc != 0 {
            crate::test_support::cannot("fallocate unsupported on the temp dir's filesystem");
            return;
        }
        let Some(before) = has_unwritten(&f, size) else {
            crate::test_support::cannot(
                "the temp dir's filesystem answers neither SEEK_HOLE nor FIEMAP",
            );
            return;
        };
        assert!(before, "a fallocated file reads zeros without I/O");
        f.write_all(&vec![7u8; size as usize]).unwrap();
        f.sync_all().unwrap();
        assert_eq!(has_unwritten(&f, size), Some(false));

        let sparse = dir.path().join("s");
        let s = std::fs::File::create(&sparse).unwrap();
        s.set_len(size).unwrap();
        assert_eq!(
            has_unwritten(&s, size),
            Some(true),
            "a sparse file is a hole"
        );
    }
}
