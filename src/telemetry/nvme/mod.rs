//! NVMe natively: admin passthrough ioctls and decoders of the structures they return.

pub mod identify;
pub mod ioctl;
mod le;
pub mod ocp_smart;
pub mod reading;
pub mod smart_log;
pub mod thermal_mgmt;

use std::path::PathBuf;

pub use identify::{IdentifyController, PowerState};
pub use ioctl::NvmeDevice;
pub use smart_log::SmartLog;

/// Errors of the NVMe source.
#[derive(Debug, thiserror::Error)]
pub enum NvmeError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open {path}: permission denied: run as root")]
    OpenDenied { path: PathBuf },
    #[error("{what}: permission denied, needs CAP_SYS_ADMIN: run as root")]
    PermissionDenied { what: &'static str },
    #[error("{what}: ioctl failed: {source}")]
    Ioctl {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{what}: the controller answered status {status:#x}")]
    Status { what: &'static str, status: i32 },
    #[error("{what}: {got} bytes, need {need}")]
    Short {
        what: &'static str,
        need: usize,
        got: usize,
    },
}

/// What a controller's refusal of a command says, from the status the kernel returns (the
/// completion's status field without its phase bit: SC in bits 7:0, SCT in bits 10:8, then
/// CRD, More and DNR, which do not change the meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Generic status 01h: the controller does not implement the opcode.
    #[error("invalid opcode")]
    InvalidOpcode,
    /// Generic status 02h: a field of the command (the feature identifier, the log page
    /// identifier on older controllers, the sensor selected) is not supported.
    #[error("invalid field in command")]
    InvalidField,
    /// Command specific status 09h of Get Log Page: no such log page.
    #[error("invalid log page")]
    InvalidLogPage,
}

impl Refusal {
    /// The refusal that says "not supported", or `None` for any other status (a failure
    /// worth retrying).
    pub fn of_status(status: i32) -> Option<Refusal> {
        let sc = status & 0xFF;
        let sct = (status >> 8) & 0x7;
        match (sct, sc) {
            (0, 0x01) => Some(Refusal::InvalidOpcode),
            (0, 0x02) => Some(Refusal::InvalidField),
            (1, 0x09) => Some(Refusal::InvalidLogPage),
            _ => None,
        }
    }
}

impl NvmeError {
    /// The controller's "not supported" answer, if this is one.
    pub fn refusal(&self) -> Option<Refusal> {
        match self {
            NvmeError::Status { status, .. } => Refusal::of_status(*status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_from_status_with_and_without_dnr() {
        // QEMU answers an unknown log page or feature with Invalid Field and DNR (0x4002).
        assert_eq!(Refusal::of_status(0x4002), Some(Refusal::InvalidField));
        assert_eq!(Refusal::of_status(0x0002), Some(Refusal::InvalidField));
        assert_eq!(Refusal::of_status(0x4001), Some(Refusal::InvalidOpcode));
        assert_eq!(Refusal::of_status(0x4109), Some(Refusal::InvalidLogPage));
        // Generic 09h (not the log page one) and a media error say nothing of support.
        assert_eq!(Refusal::of_status(0x0009), None);
        assert_eq!(Refusal::of_status(0x0281), None);
        assert_eq!(Refusal::of_status(0x0006), None, "internal error: retried");
    }
}
