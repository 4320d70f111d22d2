//! Trims: on a block device the block layer's discard (io_uring's `BLOCK_URING_CMD_DISCARD`
//! on Linux 6.12+, the `BLKDISCARD` ioctl in the sync engine), on a file a punched hole
//! (`fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`: the blocks go, the size stays).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;

use io_uring::{opcode, squeue, types};

/// `_IO(0x12, 119)`: discard a byte range `[start, len]` of a block device.
const BLKDISCARD: libc::c_ulong = 0x1277;
/// `_IO(0x12, 0)`: io_uring's discard command on a block device (Linux 6.12+); the SQE's
/// `addr` is the start, its `addr3` (the first 8 bytes of the command area) the length.
const BLOCK_URING_CMD_DISCARD: u32 = 0x1200;

/// How a trim reaches the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrimKind {
    /// A block device: the block layer's discard.
    Discard,
    /// A regular file: a hole punched, the file's size kept.
    PunchHole,
}

impl TrimKind {
    /// The system call's name, for the refusal of a target that takes none.
    pub fn word(self) -> &'static str {
        match self {
            TrimKind::Discard => "BLKDISCARD",
            TrimKind::PunchHole => "fallocate(PUNCH_HOLE)",
        }
    }

    /// The trim a target takes: a block device discards, anything else punches holes.
    pub fn of(file: &File) -> io::Result<TrimKind> {
        let block = file.metadata()?.file_type().is_block_device();
        Ok(if block {
            TrimKind::Discard
        } else {
            TrimKind::PunchHole
        })
    }
}

/// One trim, synchronously.
pub fn trim_sync(file: &File, kind: TrimKind, offset: u64, len: u64) -> io::Result<()> {
    let fd = file.as_raw_fd();
    let rc = match kind {
        TrimKind::Discard => {
            let range: [u64; 2] = [offset, len];
            // SAFETY: BLKDISCARD reads two u64 from the pointer, which lives across the call.
            unsafe { libc::ioctl(fd, BLKDISCARD as _, range.as_ptr()) }
        }
        TrimKind::PunchHole => {
            let (Ok(o), Ok(l)) = (i64::try_from(offset), i64::try_from(len)) else {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            };
            // SAFETY: plain system call on an open descriptor.
            unsafe {
                libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    o,
                    l,
                )
            }
        }
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The SQE of one trim: the target is the ring's registered file 0 when `fixed_file`, else
/// the descriptor `fd`. Completes with 0 when done, -errno otherwise.
///
/// A block discard goes out with `IOSQE_ASYNC`: issued from the kernel's io-wq in blocking
/// mode, with the SQE copied when it is submitted. Issued inline instead, the kernel tries
/// it without blocking, and when the block layer pushes the discard back (EAGAIN: no free
/// request on a queue as shallow as a SATA or USB drive's) it issues it again from io-wq
/// reading the SQE from the submission ring, not from a copy (Linux 6.12 to at least
/// 6.18's `io_uring_cmd_issue_blocking`). By then the ring's slot holds a later SQE: the
/// discard covered another trim's range, or, a write's SQE in the slot (its `len` set), the
/// kernel refused it with EINVAL. Measured on a loop device with `nr_requests` 4: 2 to 7
/// EINVALs in 3 s of `randrw --rwmixtrim 50 --bssplit 64k/50:1m/50 --jobs 4`, and 18 to
/// 38 MiB of discards that were not the ones issued in 2 s of `randtrim`; none with
/// `IOSQE_ASYNC`, whose discards the kernel's counts match to the byte.
pub fn trim_sqe(kind: TrimKind, fixed_file: bool, fd: i32, offset: u64, len: u32) -> squeue::Entry {
    // io-uring's file types share a sealed trait: one arm per type.
    macro_rules! sqe {
        ($fd:expr) => {
            match kind {
                TrimKind::Discard => {
                    let mut cmd = [0u8; 16];
                    cmd[..8].copy_from_slice(&u64::from(len).to_ne_bytes());
                    opcode::UringCmd16::new($fd, BLOCK_URING_CMD_DISCARD)
                        .addr(Some(offset))
                        .cmd(cmd)
                        .build()
                        .flags(squeue::Flags::ASYNC)
                }
                TrimKind::PunchHole => opcode::Fallocate::new($fd, u64::from(len))
                    .offset(offset)
                    .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                    .build(),
            }
        };
    }
    if fixed_file {
        sqe!(types::Fixed(0))
    } else {
        sqe!(types::Fd(fd))
    }
}

/// Whether this kernel takes io_uring's discard command on `file` (a block device opened for
/// writing): one discard of `len` bytes at `offset` (a block of the step's own region, which
/// the step trims anyway) on a ring of its own. `None` when it does, else the kernel's error
/// (`EOPNOTSUPP` before Linux 6.12).
pub fn uring_discard_refused(file: &File, offset: u64, len: u32) -> Option<io::Error> {
    let mut ring = match io_uring::IoUring::new(2) {
        Ok(r) => r,
        Err(e) => return Some(e),
    };
    let sqe = trim_sqe(TrimKind::Discard, false, file.as_raw_fd(), offset, len);
    // SAFETY: the SQE points at no memory; the descriptor outlives the ring's wait below.
    if unsafe { ring.submission().push(&sqe) }.is_err() {
        return Some(io::Error::from_raw_os_error(libc::EBUSY));
    }
    if let Err(e) = ring.submit_and_wait(1) {
        return Some(e);
    }
    let res = ring.completion().next().map_or(-libc::EIO, |c| c.result());
    (res < 0).then(|| io::Error::from_raw_os_error(-res))
}
