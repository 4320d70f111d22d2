//! Which physical drive(s) a target lives on, and what they are: a file → its file
//! system's block device → through partitions, device-mapper and md → the whole disks;
//! a block device → itself; an NVMe controller (`/dev/nvme0`) → its namespaces.

mod identity;
pub mod in_use;
pub mod mounts;
mod resolve;
mod sysroot;
mod zoned;
pub mod zones;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use identity::{disk_identity, list_disks};
#[cfg(test)]
pub use resolve::RESOLVED;
pub use resolve::{block_namespace, default_target, disks_under, resolve, resolve_in};
pub use sysroot::SysRoot;
pub use zoned::{ZoneModel, Zones};

/// How a disk is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Nvme,
    Sata,
    Scsi,
    Usb,
    Virtio,
    Loop,
    /// Anything else (zram, ram disks, md without members, unknown buses).
    Other,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Nvme => "nvme",
            Transport::Sata => "sata",
            Transport::Scsi => "scsi",
            Transport::Usb => "usb",
            Transport::Virtio => "virtio",
            Transport::Loop => "loop",
            Transport::Other => "other",
        }
    }
}

/// One whole disk and its identity, from sysfs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name, as in `/sys/block/NAME` (`nvme0n1`, `sda`, `vda`, `loop0`).
    pub name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: u64,
    pub logical_block_size: u32,
    pub physical_block_size: u32,
    pub rotational: bool,
    pub transport: Transport,
    /// The NVMe controller (`nvme0`) for admin commands and hwmon, if NVMe.
    pub nvme_controller: Option<String>,
    /// A loop device's backing file.
    pub backing_file: Option<PathBuf>,
    /// A zoned device's zones (NVMe ZNS, SMR); `None` when it is not zoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
}

impl Disk {
    /// `/dev/NAME`.
    pub fn dev_path(&self) -> PathBuf {
        PathBuf::from("/dev").join(&self.name)
    }
}

/// A target resolved to its drive(s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriveInfo {
    /// The path asked about.
    pub target: PathBuf,
    /// The block device the target sits on or is (`vda1`, `dm-0`, `sda`).
    pub block_device: String,
    /// `block_device` relative to `/sys/block` (`vda/vda1` for a partition): the stat file
    /// that counts exactly this target's device, for `telemetry::blockstat::read`.
    pub stat_name: String,
    /// The whole disks underneath, in name order (several for md or dm over many disks).
    pub disks: Vec<Disk>,
}

impl DriveInfo {
    /// The first whole disk (the only one unless the target spans several).
    pub fn primary(&self) -> Option<&Disk> {
        self.disks.first()
    }
}

/// Errors resolving a target.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: no part of this path exists")]
    NothingExists { path: PathBuf },
    #[error("{path} is on {fstype} ({source_name}), which has no block device")]
    NotOnBlockDevice {
        path: PathBuf,
        fstype: String,
        source_name: String,
    },
    #[error("{path}: device {major}:{minor} is not in {sys}")]
    UnknownDevice {
        path: PathBuf,
        major: u32,
        minor: u32,
        sys: PathBuf,
    },
    #[error("{path} is a character device that is not an NVMe controller")]
    NotADrive { path: PathBuf },
    #[error("{path}: no whole disk found beneath {block_device}")]
    NoDisk { path: PathBuf, block_device: String },
}
