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
