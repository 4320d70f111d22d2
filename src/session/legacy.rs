//! Sessions of older or hand-made formats read into the typed record: the one place of the
//! session that knows a shape drivescope no longer writes, and the one that holds YAML as
//! it was written rather than as a type.
//!
//! - A drive identity written flat (a disk's `model`, `serial`, `firmware`, … at the top
//!   instead of under `disks`, as hand-made sessions and `examples/gen_session.rs` once
//!   wrote it) reads as that one disk.
//! - The resolved preset and the plan are kept as the [`Document`]s they were written as:
//!   their types are the plans layer's (above the session, which cannot name them), their
//!   keys have changed from release to release (a release's plan that this one no longer
//!   reads is still shown as its text), and a session rewritten (the final save, a merge)
//!   must keep every key of them. Readers take the typed view they need
//!   ([`Document::read`]: the plans layer's `Plan`, the session's `PresetInfo`, …).
//! - [`lenient`]: a field of such a view that reads as none when it is of another shape,
//!   so one odd key does not lose the rest.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_yaml::Value;

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

/// A document kept as it was written (the preset, the plan): written back key for key,
/// read as whatever type a reader knows it by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Document(Value);

impl Document {
    /// The document of any serializable value; none for one that is null or does not
    /// serialize.
    pub fn of(v: impl Serialize) -> Option<Document> {
        serde_yaml::to_value(v)
            .ok()
            .filter(|v| !v.is_null())
            .map(Document)
    }

    /// The document of a YAML text; none for one that does not parse or is null.
    pub fn from_yaml(text: &str) -> Option<Document> {
        serde_yaml::from_str::<Value>(text)
            .ok()
            .filter(|v| !v.is_null())
            .map(Document)
    }

    /// The document as a `T`; none when it is not of that shape.
    pub fn read<T: DeserializeOwned>(&self) -> Option<T> {
        T::deserialize(&self.0).ok()
    }

    /// The document's YAML text, as a session holds it.
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(&self.0).unwrap_or_default()
    }
}

/// A field read as a `T` when it is one, none when it is missing or of another shape.
pub fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(&v).ok())
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

    #[test]
    fn a_document_is_written_back_as_it_was_and_read_as_a_type() {
        let text =
            "id: p\nphases:\n- name: a\n  rounds:\n    window: 5\nextra:\n  b: 1\n  a:\n  - 2\n";
        let d = Document::from_yaml(text).unwrap();
        assert_eq!(d.to_yaml(), text);
        assert_eq!(serde_yaml::to_string(&d).unwrap(), text);
        #[derive(Deserialize)]
        struct Id {
            id: String,
        }
        assert_eq!(d.read::<Id>().map(|i| i.id).as_deref(), Some("p"));
        assert!(d.read::<Vec<u8>>().is_none());
        assert!(Document::from_yaml("null").is_none());
        assert!(Document::of(Option::<u8>::None).is_none());
    }

    #[test]
    fn a_lenient_field_of_another_shape_is_none_and_the_rest_reads() {
        #[derive(Deserialize)]
        struct View {
            #[serde(default, deserialize_with = "lenient")]
            n: Option<u64>,
            #[serde(default, deserialize_with = "lenient")]
            s: Option<String>,
        }
        let v: View = serde_yaml::from_str("{n: [1], s: x}").unwrap();
        assert_eq!((v.n, v.s.as_deref()), (None, Some("x")));
        let v: View = serde_yaml::from_str("{}").unwrap();
        assert_eq!((v.n, v.s), (None, None));
    }
}
