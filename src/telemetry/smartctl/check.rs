//! Whether a JSON document is a smartctl output that read its device: an object with a
//! `smartctl` object in it, whose `exit_status` bits 0–1 are clear (bit 0: the command
//! line did not parse; bit 1: the device could not be opened, did not identify itself or
//! is in a low-power mode), and that holds something besides smartctl's own messages.

use std::fmt;

use serde_json::Value;

/// What a JSON document that is not a smartctl output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonShape {
    Array,
    Null,
    Number,
    String,
    Bool,
    /// An object without a `smartctl` object in it (`{}` among them).
    ObjectWithoutSmartctl,
}

impl fmt::Display for JsonShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JsonShape::Array => "an array",
            JsonShape::Null => "null",
            JsonShape::Number => "a number",
            JsonShape::String => "a string",
            JsonShape::Bool => "true or false",
            JsonShape::ObjectWithoutSmartctl => "an object without a \"smartctl\" object",
        })
    }
}

/// Why a smartctl output has no reading of its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `exit_status` bit 0.
    CommandLine { status: u64 },
    /// `exit_status` bit 1.
    DeviceOpen { status: u64 },
    /// Nothing but smartctl's envelope (`smartctl`, `device`, `json_format_version`,
    /// `local_time`).
    OnlyMessages,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::CommandLine { status } => {
                write!(f, "exit status {status}: the command line did not parse")
            }
            Refusal::DeviceOpen { status } => write!(
                f,
                "exit status {status}: the device could not be opened, did not identify \
                 itself or is in a low-power mode"
            ),
            Refusal::OnlyMessages => f.write_str("the output holds only smartctl's messages"),
        }
    }
}

/// Why a document is not a reading of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    NotSmartctl(JsonShape),
    Refused(Refusal),
}

/// The members of every smartctl output, whatever it read.
const ENVELOPE: [&str; 4] = ["json_format_version", "smartctl", "local_time", "device"];

fn shape(doc: &Value) -> Option<JsonShape> {
    match doc {
        Value::Object(m) if m.get("smartctl").is_some_and(Value::is_object) => None,
        Value::Object(_) => Some(JsonShape::ObjectWithoutSmartctl),
        Value::Array(_) => Some(JsonShape::Array),
        Value::Null => Some(JsonShape::Null),
        Value::Number(_) => Some(JsonShape::Number),
        Value::String(_) => Some(JsonShape::String),
        Value::Bool(_) => Some(JsonShape::Bool),
    }
}

/// Checks `doc` is a smartctl output with a reading of its device.
pub fn check_output(doc: &Value) -> Result<(), Unfit> {
    if let Some(s) = shape(doc) {
        return Err(Unfit::NotSmartctl(s));
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
    Ok(())
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
    }

    #[test]
    fn exit_status_bits_and_messages() {
        let out = |status: u64| json!({"smartctl": {"exit_status": status}, "model_name": "X"});
        assert_eq!(check_output(&out(0)), Ok(()));
        assert_eq!(
            check_output(&out(4)),
            Ok(()),
            "bit 2: some command failed, data kept"
        );
        assert_eq!(check_output(&out(64)), Ok(()), "bit 6: errors logged");
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
