//! NVMe passthrough for the uring-cmd engine: the NVMe read and write commands (opcodes 0x02
//! and 0x01) and the ZNS Zone Append command (0x7D) that go to an NVMe generic character
//! device (`/dev/ngXnY`) as io_uring commands (`struct nvme_uring_cmd` in the 80-byte
//! command area of a 128-byte SQE), as fio's `io_uring_cmd` engine sends them; and which
//! namespace such a device is.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// `NVME_URING_CMD_IO`: `_IOWR('N', 0x80, struct nvme_uring_cmd)` (72 bytes).
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// `NVME_IOCTL_ID`: `_IO('N', 0x40)`, the namespace id of the device.
const NVME_IOCTL_ID: libc::c_ulong = 0x4E40;

const OPC_WRITE: u8 = 0x01;
const OPC_READ: u8 = 0x02;
/// Zone Append (NVMe Zoned Namespace Command Set): a write the device places at the write
/// pointer of the zone its SLBA field names (the zone's start, ZSLBA), returning where in the
/// completion's DW0/DW1.
const OPC_ZONE_APPEND: u8 = 0x7D;

/// The namespace an NVMe generic device stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Namespace {
    pub nsid: u32,
    /// log2 of the logical block size.
    pub lba_shift: u32,
}

/// The `struct nvme_uring_cmd` of a read or write of `len` bytes at byte `offset` into (or
/// from) `addr`, in the SQE's 80-byte command area. `offset` and `len` are whole logical
/// blocks (the engine's alignment is the logical block size).
pub fn rw_cmd(ns: Namespace, write: bool, addr: u64, len: u32, offset: u64) -> [u8; 80] {
    io_cmd(
        ns,
        if write { OPC_WRITE } else { OPC_READ },
        addr,
        len,
        offset,
    )
}

/// The `struct nvme_uring_cmd` of a Zone Append of `len` bytes from `addr` to the zone
/// starting at byte `zone_start` (its ZSLBA in CDW10/11, NLB 0-based in CDW12): the device
/// writes them at the zone's write pointer and says where (the completion's result, the
/// big CQE's first word with io_uring).
pub fn append_cmd(ns: Namespace, addr: u64, len: u32, zone_start: u64) -> [u8; 80] {
    io_cmd(ns, OPC_ZONE_APPEND, addr, len, zone_start)
}

/// An I/O command of the NVM and ZNS command sets: `len` bytes at `addr`, its SLBA the
/// logical block of byte `offset`.
fn io_cmd(ns: Namespace, opcode: u8, addr: u64, len: u32, offset: u64) -> [u8; 80] {
    let mut c = [0u8; 80];
    let slba = offset >> ns.lba_shift;
    // Number of logical blocks, 0-based.
    let nlb = (len >> ns.lba_shift).saturating_sub(1);
    c[0] = opcode;
    c[4..8].copy_from_slice(&ns.nsid.to_ne_bytes());
    c[24..32].copy_from_slice(&addr.to_ne_bytes());
    c[36..40].copy_from_slice(&len.to_ne_bytes());
    c[40..44].copy_from_slice(&((slba & 0xffff_ffff) as u32).to_ne_bytes());
    c[44..48].copy_from_slice(&((slba >> 32) as u32).to_ne_bytes());
    c[48..52].copy_from_slice(&nlb.to_ne_bytes());
    c
}

/// The SQE of one NVMe read or write of `len` bytes at byte `offset`, into or from `addr`:
/// an io_uring command (128-byte SQE) on the generic device, which is registered file 0
/// when `fixed_file`, else the fd `fd`; `buf_index` names the registered buffer `addr` is
/// in, if buffers are registered. The engine and `examples/nvme_readback.rs` build their
/// commands with it.
#[allow(clippy::too_many_arguments)]
pub fn cmd_sqe(
    ns: Namespace,
    fixed_file: bool,
    fd: i32,
    write: bool,
    addr: u64,
    len: u32,
    offset: u64,
    buf_index: Option<u16>,
) -> io_uring::squeue::Entry128 {
    sqe_of(
        rw_cmd(ns, write, addr, len, offset),
        fixed_file,
        fd,
        buf_index,
    )
}

/// The SQE of one Zone Append of `len` bytes from `addr` to the zone starting at byte
/// `zone_start`; the file and buffer as [`cmd_sqe`]'s.
pub fn append_sqe(
    ns: Namespace,
    fixed_file: bool,
    fd: i32,
    addr: u64,
    len: u32,
    zone_start: u64,
    buf_index: Option<u16>,
) -> io_uring::squeue::Entry128 {
    sqe_of(
        append_cmd(ns, addr, len, zone_start),
        fixed_file,
        fd,
        buf_index,
    )
}

fn sqe_of(
    cmd: [u8; 80],
    fixed_file: bool,
    fd: i32,
    buf_index: Option<u16>,
) -> io_uring::squeue::Entry128 {
    use io_uring::{opcode, types};
    let e = match fixed_file {
        true => opcode::UringCmd80::new(types::Fixed(0), NVME_URING_CMD_IO),
        false => opcode::UringCmd80::new(types::Fd(fd), NVME_URING_CMD_IO),
    };
    e.cmd(cmd).buf_index(buf_index).build()
}

/// The namespace id of an open NVMe generic (or block) device.
pub fn namespace_id(file: &File) -> io::Result<u32> {
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the id (or -1 with errno); the fd
    // is `file`'s, borrowed and so open for the call.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), NVME_IOCTL_ID) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as u32)
}

pub use crate::drive::block_namespace;

/// Is `path` an NVMe generic character device (`/dev/ngXnY`, a character device)?
pub fn is_generic_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    block_namespace(path).is_some()
        && std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_command_is_laid_out_as_the_kernel_reads_it() {
        let ns = Namespace {
            nsid: 1,
            lba_shift: 9,
        };
        let c = rw_cmd(ns, false, 0x1000, 4096, 1 << 40);
        assert_eq!(c[0], 0x02);
        assert_eq!(u32::from_ne_bytes(c[4..8].try_into().unwrap()), 1);
        assert_eq!(u64::from_ne_bytes(c[24..32].try_into().unwrap()), 0x1000);
        assert_eq!(u32::from_ne_bytes(c[36..40].try_into().unwrap()), 4096);
        let slba = (1u64 << 40) >> 9;
        assert_eq!(
            u32::from_ne_bytes(c[40..44].try_into().unwrap()),
            slba as u32
        );
        assert_eq!(
            u32::from_ne_bytes(c[44..48].try_into().unwrap()),
            (slba >> 32) as u32
        );
        assert_eq!(u32::from_ne_bytes(c[48..52].try_into().unwrap()), 7);
        assert_eq!(rw_cmd(ns, true, 0, 512, 0)[0], 0x01);
        assert_eq!(
            u32::from_ne_bytes(rw_cmd(ns, true, 0, 512, 0)[48..52].try_into().unwrap()),
            0
        );
    }

    #[test]
    fn a_zone_append_names_its_zones_start_and_its_blocks() {
        let ns = Namespace {
            nsid: 3,
            lba_shift: 12,
        };
        // 128 KiB to the zone at 6 TiB (LBA 0x6000_0000 of 4 KiB: above 32 bits in bytes).
        let zone = 6u64 << 40;
        let c = append_cmd(ns, 0xdead_b000, 128 << 10, zone);
        let word = |at: usize| u32::from_ne_bytes(c[at..at + 4].try_into().unwrap());
        assert_eq!(c[0], 0x7D, "Zone Append");
        assert_eq!(c[1], 0, "no flags (PRPs)");
        assert_eq!(word(4), 3, "nsid");
        assert_eq!(
            u64::from_ne_bytes(c[24..32].try_into().unwrap()),
            0xdead_b000
        );
        assert_eq!(word(36), 128 << 10, "data_len");
        let zslba = zone >> 12;
        assert_eq!(word(40), zslba as u32, "CDW10: ZSLBA, low");
        assert_eq!(word(44), (zslba >> 32) as u32, "CDW11: ZSLBA, high");
        assert_eq!(word(48), 31, "CDW12: 32 blocks, 0-based");
        // Nothing else: no PI, no FUA, no metadata, the kernel's default timeout.
        assert!(c[8..24].iter().all(|&b| b == 0));
        assert!(c[32..36].iter().all(|&b| b == 0));
        assert!(c[52..].iter().all(|&b| b == 0));
        // Laid out as a write of the same blocks, but for the opcode.
        let w = rw_cmd(ns, true, 0xdead_b000, 128 << 10, zone);
        assert_eq!(c[1..], w[1..]);
        // The SQE carries it in its command area, as an NVMe I/O command on the device.
        let sqe = append_sqe(ns, false, 7, 0xdead_b000, 128 << 10, zone, Some(2));
        // SAFETY: Entry128 is a 128-byte repr(C) SQE of plain integers (the io-uring crate
        // asserts its size); any bytes are a valid [u8; 128].
        let bytes: [u8; 128] = unsafe { std::mem::transmute(sqe) };
        assert_eq!(bytes[0], 46, "IORING_OP_URING_CMD");
        assert_eq!(i32::from_ne_bytes(bytes[4..8].try_into().unwrap()), 7, "fd");
        assert_eq!(
            u32::from_ne_bytes(bytes[8..12].try_into().unwrap()),
            NVME_URING_CMD_IO,
            "cmd_op"
        );
        assert_eq!(&bytes[48..128], &c[..], "the command");
    }
}
