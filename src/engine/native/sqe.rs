//! What each I/O of a ring is ([`RingIo`]) and the SQEs of the io_uring worker: one per I/O, of the ring's entry type (64-byte SQEs
//! for reads, writes, NOPs and trims; 128-byte ones for NVMe commands), and what each
//! completion's result means.

use io_uring::{cqueue, opcode, squeue, types};

use super::append::ZoneAppend;
use super::buffers::Buffers;
use super::discard::{trim_sqe, TrimKind};
use super::iogen::IoDir;
use super::nvme::{self, Namespace};

/// What each I/O of a ring is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RingIo {
    /// Reads and writes of the target (READ_FIXED / WRITE_FIXED).
    Block,
    /// IORING_OP_NOP: no target, no data; the engine's own cost per I/O.
    Nop,
    /// NVMe read and write commands on an NVMe generic character device.
    NvmeCmd(Namespace),
    /// Its writes NVMe Zone Append commands to the zone each offset falls in (its reads
    /// NVMe reads), on a zoned namespace's generic device.
    ZoneAppend(ZoneAppend),
    /// A step that trims: its trims are block discard commands or punched holes (no data),
    /// its writes (`trimwrite`'s) those of [`RingIo::Block`].
    Trim(TrimKind),
}

/// An SQE of a ring's entry type for one I/O.
pub(super) trait MakeSqe: squeue::EntryMarker {
    #[allow(clippy::too_many_arguments)]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        dir: IoDir,
        len: u32,
        offset: u64,
    ) -> Self;
}

impl MakeSqe for squeue::Entry {
    #[inline]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        dir: IoDir,
        len: u32,
        offset: u64,
    ) -> Self {
        match io {
            RingIo::Nop => opcode::Nop::new().build().user_data(slot as u64),
            RingIo::Trim(k) if matches!(dir, IoDir::Trim) => {
                trim_sqe(k, fixed.0, fd, offset, len).user_data(slot as u64)
            }
            // Reads and writes, a trimming step's among them.
            RingIo::Block | RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) | RingIo::Trim(_) => {
                build_sqe(bufs, fixed, fd, slot, dir == IoDir::Write, len, offset)
            }
        }
    }
}

impl MakeSqe for squeue::Entry128 {
    #[inline]
    fn make(
        io: RingIo,
        bufs: &Buffers,
        fixed: (bool, bool),
        fd: i32,
        slot: usize,
        dir: IoDir,
        len: u32,
        offset: u64,
    ) -> Self {
        match io {
            RingIo::NvmeCmd(ns) => {
                // The command moves `len` bytes at `ptr`: both checks keep that inside
                // slot `slot`.
                assert!(
                    len as usize <= bufs.slot_len(),
                    "I/O larger than its buffer"
                );
                let ptr = bufs.slot_ptr(slot);
                let idx = fixed.1.then_some(slot as u16);
                let write = matches!(dir, IoDir::Write);
                nvme::cmd_sqe(ns, fixed.0, fd, write, ptr as u64, len, offset, idx)
                    .user_data(slot as u64)
            }
            RingIo::ZoneAppend(za) => {
                // As above: `len` bytes at `ptr`, inside slot `slot`.
                assert!(
                    len as usize <= bufs.slot_len(),
                    "I/O larger than its buffer"
                );
                let ptr = bufs.slot_ptr(slot) as u64;
                let idx = fixed.1.then_some(slot as u16);
                let e = match dir {
                    IoDir::Write => {
                        nvme::append_sqe(za.ns, fixed.0, fd, ptr, len, za.zone_start(offset), idx)
                    }
                    IoDir::Read | IoDir::Trim => {
                        nvme::cmd_sqe(za.ns, fixed.0, fd, false, ptr, len, offset, idx)
                    }
                };
                e.user_data(slot as u64)
            }
            RingIo::Block | RingIo::Nop | RingIo::Trim(_) => {
                squeue::Entry::make(io, bufs, fixed, fd, slot, dir, len, offset).into()
            }
        }
    }
}

/// The result of a completion as bytes moved or -errno: NOPs, trims and NVMe commands
/// complete with 0 (an NVMe command with its status code when the device refused it).
#[inline]
pub(super) fn io_result(io: RingIo, dir: IoDir, res: i32, len: u32) -> i64 {
    match (io, res) {
        (RingIo::Block, r) => i64::from(r),
        // A trimming step's reads and writes move bytes as a block ring's.
        (RingIo::Trim(_), r) if !matches!(dir, IoDir::Trim) => i64::from(r),
        (_, 0) => i64::from(len),
        (_, r) if r < 0 => i64::from(r),
        // An NVMe status (a positive value): the device failed the command.
        (RingIo::Nop | RingIo::NvmeCmd(_) | RingIo::ZoneAppend(_) | RingIo::Trim(_), _) => {
            -i64::from(libc::EIO)
        }
    }
}

/// A completion of the ring's entry type with what it carries beyond `res`: a 32-byte
/// CQE of an NVMe command holds the command's 64-bit result (the completion's DW0/DW1;
/// the LBA a Zone Append wrote at) in its first extra word.
pub(super) trait BigCqe: cqueue::EntryMarker {
    fn result64(&self) -> u64;
}

impl BigCqe for cqueue::Entry {
    #[inline(always)]
    fn result64(&self) -> u64 {
        0
    }
}

impl BigCqe for cqueue::Entry32 {
    #[inline(always)]
    fn result64(&self) -> u64 {
        self.big_cqe()[0]
    }
}

#[inline]
pub(super) fn build_sqe(
    bufs: &Buffers,
    fixed: (bool, bool),
    fd: i32,
    slot: usize,
    write: bool,
    len: u32,
    offset: u64,
) -> squeue::Entry {
    // The kernel moves `len` bytes at `ptr`: both checks keep that inside slot `slot`.
    assert!(
        len as usize <= bufs.slot_len(),
        "I/O larger than its buffer"
    );
    let ptr = bufs.slot_ptr(slot);
    let idx = slot as u16;
    let e = match (fixed.0, fixed.1, write) {
        (true, true, false) => opcode::ReadFixed::new(types::Fixed(0), ptr, len, idx)
            .offset(offset)
            .build(),
        (true, true, true) => opcode::WriteFixed::new(types::Fixed(0), ptr, len, idx)
            .offset(offset)
            .build(),
        (false, true, false) => opcode::ReadFixed::new(types::Fd(fd), ptr, len, idx)
            .offset(offset)
            .build(),
        (false, true, true) => opcode::WriteFixed::new(types::Fd(fd), ptr, len, idx)
            .offset(offset)
            .build(),
        (true, false, false) => opcode::Read::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (true, false, true) => opcode::Write::new(types::Fixed(0), ptr, len)
            .offset(offset)
            .build(),
        (false, false, false) => opcode::Read::new(types::Fd(fd), ptr, len)
            .offset(offset)
            .build(),
        (false, false, true) => opcode::Write::new(types::Fd(fd), ptr, len)
            .offset(offset)
            .build(),
    };
    e.user_data(slot as u64)
}
