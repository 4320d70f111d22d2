//! The drive a session ran on, as it records it: [`DriveIdentity`] (the target, its block
//! device and the whole disks beneath), saved as the session's `drive` and each of
//! `drives`' `identity`.

use serde::{Deserialize, Serialize};

/// What the target was on: the path asked about, the block device it sits on or is, and
/// the whole disks underneath (several for md or dm over many disks).
///
/// Written with the keys (and in the order) the drive layer's `DriveInfo` has always had:
/// `target`, `block_device`, `stat_name`, `disks`. Every key may be missing when read, and
/// a key of no field is ignored. (A session's `drive` and `identity` are read through
/// `legacy::identity`, which also takes an identity written flat.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DriveIdentity {
    /// The path asked about.
    pub target: String,
    /// The block device the target sits on or is (`vda1`, `dm-0`, `sda`).
    pub block_device: String,
    /// `block_device` relative to `/sys/block` (`vda/vda1` for a partition).
    pub stat_name: String,
    /// The whole disks underneath, in name order.
    pub disks: Vec<DiskIdentity>,
}

/// One whole disk and its identity, as sysfs told it. Written with every key (`null` for
/// one not known), `zones` only for a zoned device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskIdentity {
    /// Kernel name, as in `/sys/block/NAME` (`nvme0n1`, `sda`).
    pub name: String,
    pub model: Option<String>,
    /// The serial exactly as the drive gives it (digits stay text).
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    /// How it is attached, as the drive layer names it (`nvme`, `sata`, `virtio`, …).
    pub transport: Option<String>,
    /// The NVMe controller (`nvme0`), if NVMe.
    pub nvme_controller: Option<String>,
    /// A loop device's backing file.
    pub backing_file: Option<String>,
    /// A zoned device's zones; none when it is not zoned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zones: Option<DiskZones>,
}

/// A zoned device's zones, as sysfs tells them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskZones {
    /// `host-aware` or `host-managed`.
    pub model: String,
    pub zone_bytes: u64,
    pub count: u64,
    /// Most zones open at once; none: no limit.
    pub max_open: Option<u64>,
    /// Most zones active at once; none: no limit.
    pub max_active: Option<u64>,
}

impl DriveIdentity {
    /// The first whole disk (the only one unless the target spans several).
    pub fn primary(&self) -> Option<&DiskIdentity> {
        self.disks.first()
    }

    /// The drive's model: its first disk's, when it has one that is not blank.
    pub fn model(&self) -> Option<&str> {
        self.primary()?.model.as_deref().filter(|m| !m.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the drive layer writes a disk (`DriveInfo` through serde_yaml), and as the golden
    /// sessions of the previous release hold it.
    const WRITTEN: &str = "target: /tmp/golden/gen/dm.bin
block_device: vda
stat_name: vda
disks:
- name: vda
  model: null
  serial: overlayblk
  firmware: null
  capacity_bytes: 274877906944
  logical_block_size: 512
  physical_block_size: 4096
  rotational: true
  transport: virtio
  nvme_controller: null
  backing_file: null
";

    #[test]
    fn an_identity_reads_and_writes_back_with_the_keys_and_order_it_had() {
        let d: DriveIdentity = serde_yaml::from_str(WRITTEN).unwrap();
        assert_eq!(d.block_device, "vda");
        let disk = d.primary().unwrap();
        assert_eq!(disk.serial.as_deref(), Some("overlayblk"));
        assert_eq!(disk.capacity_bytes, Some(274877906944));
        assert_eq!(disk.transport.as_deref(), Some("virtio"));
        assert_eq!(d.model(), None);
        assert_eq!(serde_yaml::to_string(&d).unwrap(), WRITTEN);
    }

    #[test]
    fn a_zoned_disk_keeps_its_zones() {
        let text = WRITTEN.to_string()
            + "  zones:\n    model: host-managed\n    zone_bytes: 268435456\n    count: 100\n    max_open: 14\n    max_active: null\n";
        let d: DriveIdentity = serde_yaml::from_str(&text).unwrap();
        let z = d.primary().and_then(|d| d.zones.clone()).unwrap();
        assert_eq!(
            (z.model.as_str(), z.count, z.max_open),
            ("host-managed", 100, Some(14))
        );
        assert_eq!(serde_yaml::to_string(&d).unwrap(), text);
    }
}
