//! NVMe passthrough for the uring-cmd engine: the NVMe read and write commands (opcodes 0x02
//! and 0x01) that go to an NVMe generic character device (`/dev/ngXnY`) as io_uring commands
//! (`struct nvme_uring_cmd` in the 80-byte command area of a 128-byte SQE), as fio's
//! `io_uring_cmd` engine sends them; and which namespace such a device is.

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
    let mut c = [0u8; 80];
    let slba = offset >> ns.lba_shift;
    // Number of logical blocks, 0-based.
    let nlb = (len >> ns.lba_shift).saturating_sub(1);
    c[0] = if write { OPC_WRITE } else { OPC_READ };
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
    use io_uring::{opcode, types};
    let cmd = rw_cmd(ns, write, addr, len, offset);
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
}
