//! NVMe admin passthrough (`NVME_IOCTL_ADMIN_CMD`) on a controller character device:
//! Identify Controller, Get Log Page (SMART / Health), Get Features (power management).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::NvmeError;

/// `_IOWR('N', 0x41, struct nvme_admin_cmd)` from linux/nvme_ioctl.h.
const NVME_IOCTL_ADMIN_CMD: u64 = 0xC048_4E41;
const OPC_GET_LOG_PAGE: u8 = 0x02;
const OPC_IDENTIFY: u8 = 0x06;
const OPC_GET_FEATURES: u8 = 0x0A;
const ADMIN_TIMEOUT_MS: u32 = 5_000;

/// `struct nvme_passthru_cmd`, 72 bytes, as in linux/nvme_ioctl.h.
#[repr(C)]
#[derive(Debug, Default)]
struct PassthruCmd {
    opcode: u8,
    flags: u8,
    rsvd1: u16,
    nsid: u32,
    cdw2: u32,
    cdw3: u32,
    metadata: u64,
    addr: u64,
    metadata_len: u32,
    data_len: u32,
    cdw10: u32,
    cdw11: u32,
    cdw12: u32,
    cdw13: u32,
    cdw14: u32,
    cdw15: u32,
    timeout_ms: u32,
    result: u32,
}

const _: () = assert!(std::mem::size_of::<PassthruCmd>() == 72);

/// An open NVMe controller (`/dev/nvmeX`) or namespace device.
#[derive(Debug)]
pub struct NvmeDevice {
    file: File,
    path: PathBuf,
}

impl NvmeDevice {
    /// Opens the device read-only; admin commands need no write access.
    pub fn open(path: &Path) -> Result<Self, NvmeError> {
        let file = File::open(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::PermissionDenied => NvmeError::OpenDenied {
                path: path.to_path_buf(),
            },
            _ => NvmeError::Open {
                path: path.to_path_buf(),
                source,
            },
        })?;
        Ok(NvmeDevice {
            file,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs one admin command. The data buffer is `data` (the kernel reads or writes at most
    /// its length), or none; `cmd`'s pointer fields are set here, never by the caller, so no
    /// caller can hand the kernel a pointer it has not checked.
    fn admin(
        &self,
        what: &'static str,
        cmd: &mut PassthruCmd,
        data: Option<&mut [u8]>,
    ) -> Result<u32, NvmeError> {
        cmd.timeout_ms = ADMIN_TIMEOUT_MS;
        cmd.metadata = 0;
        cmd.metadata_len = 0;
        (cmd.addr, cmd.data_len) = match data {
            // A buffer beyond 4 GiB is described as shorter than it is: still inside it.
            Some(buf) => (
                buf.as_mut_ptr() as u64,
                u32::try_from(buf.len()).unwrap_or(u32::MAX),
            ),
            None => (0, 0),
        };
        // SAFETY: NVME_IOCTL_ADMIN_CMD reads and writes back one `struct nvme_passthru_cmd`
        // (72 bytes, repr(C), size asserted at compile time): `cmd` is one, exclusively borrowed for the
        // call. The only memory it points the kernel at is `addr`/`data_len`, set just above
        // from a live, exclusively borrowed buffer (or null and 0), and no metadata buffer.
        // The command is synchronous: the kernel is done with the buffer when ioctl returns.
        let rc = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                NVME_IOCTL_ADMIN_CMD as _,
                cmd as *mut PassthruCmd,
            )
        };
        if rc < 0 {
            let err = std::io::Error::last_os_error();
            return Err(match err.raw_os_error() {
                Some(libc::EACCES) | Some(libc::EPERM) => NvmeError::PermissionDenied { what },
                _ => NvmeError::Ioctl { what, source: err },
            });
        }
        if rc > 0 {
            return Err(NvmeError::Status { what, status: rc });
        }
        Ok(cmd.result)
    }

    fn with_buffer(
        &self,
        what: &'static str,
        mut cmd: PassthruCmd,
        len: usize,
    ) -> Result<Vec<u8>, NvmeError> {
        let mut buf = vec![0u8; len];
        self.admin(what, &mut cmd, Some(&mut buf))?;
        Ok(buf)
    }

    /// Identify Controller (CNS 01h), 4096 bytes. Needs no privilege since Linux 6.2.
    pub fn identify_controller(&self) -> Result<Vec<u8>, NvmeError> {
        let cmd = PassthruCmd {
            opcode: OPC_IDENTIFY,
            cdw10: 1,
            ..Default::default()
        };
        self.with_buffer("Identify Controller", cmd, super::identify::IDENTIFY_LEN)
    }

    /// Get Log Page, SMART / Health (LID 02h, controller-wide), 512 bytes.
    pub fn smart_log(&self) -> Result<Vec<u8>, NvmeError> {
        let len = super::smart_log::SMART_LOG_LEN;
        let numd = (len / 4 - 1) as u32;
        let cmd = PassthruCmd {
            opcode: OPC_GET_LOG_PAGE,
            nsid: 0xFFFF_FFFF,
            cdw10: 0x02 | (numd << 16),
            ..Default::default()
        };
        self.with_buffer("SMART log", cmd, len)
    }

    /// Get Features 02h (Power Management): the current power state.
    pub fn power_state(&self) -> Result<u8, NvmeError> {
        let mut cmd = PassthruCmd {
            opcode: OPC_GET_FEATURES,
            cdw10: 0x02,
            ..Default::default()
        };
        let result = self.admin("Get Features (power management)", &mut cmd, None)?;
        Ok((result & 0x1F) as u8)
    }
}
