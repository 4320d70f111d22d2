//! NVMe admin passthrough (`NVME_IOCTL_ADMIN_CMD`) on a controller character device:
//! Identify Controller, Get Log Page (SMART / Health, OCP SMART extended), Get Features
//! (power management, temperature threshold, host controlled thermal management).

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

/// Command dword 10 of a Get Log Page of `len` bytes (a multiple of 4, at most 256 KiB:
/// NUMDL alone counts it): LID in bits 7:0, NUMDL (dwords − 1) in bits 31:16.
fn log_page_cdw10(lid: u8, len: usize) -> u32 {
    let numd = u32::try_from(len / 4)
        .unwrap_or(u32::MAX)
        .saturating_sub(1)
        .min(0xFFFF);
    u32::from(lid) | (numd << 16)
}

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

    /// Get Log Page `lid` (controller-wide), `len` bytes.
    fn log_page(&self, what: &'static str, lid: u8, len: usize) -> Result<Vec<u8>, NvmeError> {
        let cmd = PassthruCmd {
            opcode: OPC_GET_LOG_PAGE,
            nsid: 0xFFFF_FFFF,
            cdw10: log_page_cdw10(lid, len),
            ..Default::default()
        };
        self.with_buffer(what, cmd, len)
    }

    /// Get Features `fid` (current value, SEL 0) with `cdw11`: completion dword 0.
    fn get_features(&self, what: &'static str, fid: u8, cdw11: u32) -> Result<u32, NvmeError> {
        let mut cmd = PassthruCmd {
            opcode: OPC_GET_FEATURES,
            cdw10: u32::from(fid),
            cdw11,
            ..Default::default()
        };
        self.admin(what, &mut cmd, None)
    }
}

/// The admin commands a reading sends: a controller ([`NvmeDevice`]) or a test's stand-in.
pub trait AdminCommands {
    fn power_state(&self) -> Result<u8, NvmeError>;
    fn identify_controller(&self) -> Result<Vec<u8>, NvmeError>;
    fn smart_log(&self) -> Result<Vec<u8>, NvmeError>;
    /// Get Features 10h: completion dword 0.
    fn host_thermal_management(&self) -> Result<u32, NvmeError>;
    /// Get Features 04h with this command dword 11: completion dword 0.
    fn temperature_threshold(&self, cdw11: u32) -> Result<u32, NvmeError>;
    /// Get Log Page C0h, 512 bytes.
    fn ocp_smart_log(&self) -> Result<Vec<u8>, NvmeError>;
}

impl AdminCommands for NvmeDevice {
    /// Identify Controller (CNS 01h), 4096 bytes. Needs no privilege since Linux 6.2.
    fn identify_controller(&self) -> Result<Vec<u8>, NvmeError> {
        let cmd = PassthruCmd {
            opcode: OPC_IDENTIFY,
            cdw10: 1,
            ..Default::default()
        };
        self.with_buffer("Identify Controller", cmd, super::identify::IDENTIFY_LEN)
    }

    /// Get Log Page, SMART / Health (LID 02h, controller-wide), 512 bytes.
    fn smart_log(&self) -> Result<Vec<u8>, NvmeError> {
        self.log_page("SMART log", 0x02, super::smart_log::SMART_LOG_LEN)
    }

    /// Get Log Page C0h, the OCP SMART / Health Information Extended log, 512 bytes. A
    /// controller without it answers Invalid Log Page or Invalid Field
    /// ([`NvmeError::is_unsupported`]); one with a vendor's own C0h log answers another
    /// log (told apart by its GUID when decoded).
    fn ocp_smart_log(&self) -> Result<Vec<u8>, NvmeError> {
        let len = super::ocp_smart::OCP_SMART_LEN;
        self.log_page(
            "OCP SMART extended log (C0h)",
            super::ocp_smart::OCP_SMART_LID,
            len,
        )
    }

    /// Get Features 02h (Power Management): the current power state.
    fn power_state(&self) -> Result<u8, NvmeError> {
        let result = self.get_features("Get Features (power management)", 0x02, 0)?;
        Ok((result & 0x1F) as u8)
    }

    /// Get Features 10h (Host Controlled Thermal Management): dword 0, TMT1 in bits 31:16
    /// and TMT2 in bits 15:0 (see [`super::thermal_mgmt::HostThermalManagement`]).
    fn host_thermal_management(&self) -> Result<u32, NvmeError> {
        self.get_features(
            "Get Features (host controlled thermal management)",
            super::thermal_mgmt::FID_HCTM,
            0,
        )
    }

    /// Get Features 04h (Temperature Threshold) with `cdw11` selecting the sensor and the
    /// kind ([`super::thermal_mgmt::threshold_cdw11`]): dword 0, TMPTH in bits 15:0.
    fn temperature_threshold(&self, cdw11: u32) -> Result<u32, NvmeError> {
        self.get_features(
            "Get Features (temperature threshold)",
            super::thermal_mgmt::FID_TEMPERATURE_THRESHOLD,
            cdw11,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_page_dword_10() {
        // TELEMETRY.md: the 512-byte SMART log is cdw10 = 0x007F0002.
        assert_eq!(log_page_cdw10(0x02, 512), 0x007F_0002);
        assert_eq!(log_page_cdw10(0xC0, 512), 0x007F_00C0);
        assert_eq!(log_page_cdw10(0x02, 4), 0x0000_0002);
    }
}
