//! Sessions of older or hand-made formats read into the typed record: the one place that
//! knows a shape drivescope no longer writes.
//!
//! - A drive identity written flat (a disk's `model`, `serial`, `firmware`, … at the top
//!   instead of under `disks`, as hand-made sessions and `examples/gen_session.rs` once
//!   wrote it) reads as that one disk.

use serde::{Deserialize, Deserializer};

use super::identity::{DiskIdentity, DiskZones, DriveIdentity};

/// A `drive` (or a drive's `identity`) as any version wrote it: the drive layer's keys,
/// and a disk's keys at the top.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct AnyIdentity {
    target: String,
    block_device: String,
    stat_name: String,
    disks: Vec<DiskIdentity>,
    // A disk's keys, flat.
    name: String,
    model: Option<String>,
    serial: Option<String>,
    firmware: Option<String>,
    capacity_bytes: Option<u64>,
    logical_block_size: Option<u64>,
    physical_block_size: Option<u64>,
    rotational: Option<bool>,
    transport: Option<String>,
    nvme_controller: Option<String>,
    backing_file: Option<String>,
    zones: Option<DiskZones>,
}

impl From<AnyIdentity> for DriveIdentity {
    fn from(a: AnyIdentity) -> DriveIdentity {
        let flat = DiskIdentity {
            name: a.name,
            model: a.model,
            serial: a.serial,
            firmware: a.firmware,
            capacity_bytes: a.capacity_bytes,
            logical_block_size: a.logical_block_size,
            physical_block_size: a.physical_block_size,
            rotational: a.rotational,
            transport: a.transport,
            nvme_controller: a.nvme_controller,
            backing_file: a.backing_file,
            zones: a.zones,
        };
        let mut disks = a.disks;
        if disks.is_empty() && flat != DiskIdentity::default() {
            disks.push(flat);
        }
        DriveIdentity {
            target: a.target,
            block_device: a.block_device,
            stat_name: a.stat_name,
            disks,
        }
    }
}

/// A session's `drive` (`null`: none) or a drive's `identity`, in any form it was written.
pub fn identity<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DriveIdentity>, D::Error> {
    Ok(Option::<AnyIdentity>::deserialize(d)?.map(DriveIdentity::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "identity")]
        drive: Option<DriveIdentity>,
    }

    fn read(text: &str) -> Option<DriveIdentity> {
        serde_yaml::from_str::<Holder>(text).unwrap().drive
    }

    #[test]
    fn a_flat_identity_reads_as_its_one_disk_with_digits_as_text() {
        let d = read("drive: {model: Generated NVMe 1TB, serial: 0042, firmware: 1.0}").unwrap();
        assert_eq!(d.model(), Some("Generated NVMe 1TB"));
        let disk = d.primary().unwrap();
        assert_eq!(disk.serial.as_deref(), Some("0042"));
        assert_eq!(disk.firmware.as_deref(), Some("1.0"));
        assert!(d.target.is_empty());
    }

    #[test]
    fn none_and_the_drive_layers_form_read_as_they_were() {
        assert_eq!(read("drive: null"), None);
        assert_eq!(read("{}"), None);
        let d = read("drive: {target: /x, disks: [{name: sda, model: M}, {name: sdb}]}").unwrap();
        assert_eq!(d.disks.len(), 2);
        assert_eq!(d.model(), Some("M"));
    }
}
