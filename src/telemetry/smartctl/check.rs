//! Whether a JSON document is a smartctl output that read its device: an object with a
//! `smartctl` object in it, whose `exit_status` bits 0–1 are clear (bit 0: the command
//! line did not parse; bit 1: the device could not be opened, did not identify itself or
//! is in a low-power mode), and that holds something besides smartctl's own messages. An
//! object whose `smartctl` header was cut away (monitoring tools often keep only the
//! device part) is read when it holds smartctl's device fields, and said to be so.

use serde_json::Value;

/// What a JSON document that is not a smartctl output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JsonShape {
    #[error("an array")]
    Array,
    #[error("null")]
    Null,
    #[error("a number")]
    Number,
    #[error("a string")]
    String,
    #[error("true or false")]
    Bool,
    /// An object with neither a `smartctl` object nor any of smartctl's device fields in
    /// it (`{}` among them).
    #[error("an object without a \"smartctl\" object or any of smartctl's device fields")]
    ObjectWithoutSmartctl,
}

/// Why a smartctl output has no reading of its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// `exit_status` bit 0.
    #[error("exit status {status}: the command line did not parse")]
    CommandLine { status: u64 },
    /// `exit_status` bit 1.
    #[error("exit status {status}: the device could not be opened, did not identify itself or is in a low-power mode")]
    DeviceOpen { status: u64 },
    /// Nothing but smartctl's envelope (`smartctl`, `device`, `json_format_version`,
    /// `local_time`).
    #[error("the output holds only smartctl's messages")]
    OnlyMessages,
}

/// Why a document is not a reading of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    NotSmartctl(JsonShape),
    Refused(Refusal),
}

/// The members of every smartctl output, whatever it read.
const ENVELOPE: [&str; 4] = ["json_format_version", "smartctl", "local_time", "device"];

/// What a smartctl output is, besides being one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// With its `smartctl` object (version, exit status, messages).
    Kept,
    /// Without it, read from smartctl's device fields.
    CutAway,
}

/// smartctl's members that say what device it read (identity, SMART status, a log of
/// one protocol): found in an output whose header was cut away, they make it one.
const DEVICE_FIELDS: [&str; 6] = [
    "model_name",
    "serial_number",
    "smart_status",
    "firmware_version",
    "vendor",
    "product",
];

fn is_device_field(key: &str, v: &Value) -> bool {
    DEVICE_FIELDS.contains(&key)
        || ["ata_", "nvme_", "scsi_"]
            .iter()
            .any(|p| key.starts_with(p))
        || (key == "device" && (v.get("name").is_some() || v.get("protocol").is_some()))
}

fn shape(doc: &Value) -> Option<JsonShape> {
    match doc {
        Value::Object(m) if m.get("smartctl").is_some_and(Value::is_object) => None,
        Value::Object(m)
            if !m.contains_key("smartctl") && m.iter().any(|(k, v)| is_device_field(k, v)) =>
        {
            None
        }
        Value::Object(_) => Some(JsonShape::ObjectWithoutSmartctl),
        Value::Array(_) => Some(JsonShape::Array),
        Value::Null => Some(JsonShape::Null),
        Value::Number(_) => Some(JsonShape::Number),
        Value::String(_) => Some(JsonShape::String),
        Value::Bool(_) => Some(JsonShape::Bool),
    }
}

/// Checks `doc` is a smartctl output with a reading of its device; whether it kept its
/// `smartctl` header.
pub fn check_output(doc: &Value) -> Result<Header, Unfit> {
    if let Some(s) = shape(doc) {
        return Err(Unfit::NotSmartctl(s));
    }
    if !doc["smartctl"].is_object() {
        return Ok(Header::CutAway);
    }
    let status = doc["smartctl"]["exit_status"].as_u64().unwrap_or(0);
    if status & 0b01 != 0 {
        return Err(Unfit::Refused(Refusal::CommandLine { status }));
    }
    if status & 0b10 != 0 {
        return Err(Unfit::Refused(Refusal::DeviceOpen { status }));
    }
    let has_data = doc
        .as_object()
        .is_some_and(|m| m.keys().any(|k| !ENVELOPE.contains(&k.as_str())));
    if !has_data {
        return Err(Unfit::Refused(Refusal::OnlyMessages));
    }
    Ok(Header::Kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes() {
        let not = |v: Value| match check_output(&v) {
            Err(Unfit::NotSmartctl(s)) => s,
            other => panic!("{v}: {other:?}"),
        };
        assert_eq!(not(json!([])), JsonShape::Array);
        assert_eq!(not(json!(null)), JsonShape::Null);
        assert_eq!(not(json!(7)), JsonShape::Number);
        assert_eq!(not(json!("x")), JsonShape::String);
        assert_eq!(not(json!(true)), JsonShape::Bool);
        assert_eq!(not(json!({})), JsonShape::ObjectWithoutSmartctl);
        assert_eq!(
            not(json!({"smartctl": 1, "model_name": "X"})),
            JsonShape::ObjectWithoutSmartctl
        );
        assert_eq!(
            not(json!({"temperature": {"current": 30}})),
            JsonShape::ObjectWithoutSmartctl,
            "a temperature alone is anybody's"
        );
        assert_eq!(
            not(json!({"device": "x", "power_on_time": {"hours": 1}})),
            JsonShape::ObjectWithoutSmartctl
        );
    }

    #[test]
    fn a_cut_header_is_read_from_the_device_fields() {
        for doc in [
            json!({"model_name": "X"}),
            json!({"device": {"name": "/dev/sda", "protocol": "ATA"}}),
            json!({"nvme_smart_health_information_log": {"temperature": 30}}),
            json!({"scsi_grown_defect_list": 0}),
        ] {
            assert_eq!(check_output(&doc), Ok(Header::CutAway), "{doc}");
        }
    }

    #[test]
    fn exit_status_bits_and_messages() {
        let out = |status: u64| json!({"smartctl": {"exit_status": status}, "model_name": "X"});
        assert_eq!(check_output(&out(0)), Ok(Header::Kept));
        assert_eq!(
            check_output(&out(4)),
            Ok(Header::Kept),
            "bit 2: some command failed, data kept"
        );
        assert_eq!(
            check_output(&out(64)),
            Ok(Header::Kept),
            "bit 6: errors logged"
        );
        assert_eq!(
            check_output(&out(1)),
            Err(Unfit::Refused(Refusal::CommandLine { status: 1 }))
        );
        assert_eq!(
            check_output(&out(2)),
            Err(Unfit::Refused(Refusal::DeviceOpen { status: 2 }))
        );
        let only = json!({"json_format_version": [1, 0], "smartctl": {"messages": []},
                          "device": {"name": "/dev/sda"}, "local_time": {}});
        assert_eq!(
            check_output(&only),
            Err(Unfit::Refused(Refusal::OnlyMessages))
        );
    }
}
