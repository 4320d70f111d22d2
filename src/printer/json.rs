//! The version of the JSON lines drivescope prints (`run --json`, `verify --json`, `presets
//! plan --json`): every object carries `"format": JSON_FORMAT`, so that a script reading one
//! line alone (`tail -n 1 | jq`, a `grep`ped line, `jq -c 'select(.type == "interval")'`)
//! can tell which fields to expect. The number grows when a field changes its meaning or
//! goes away; new fields and new `type`s keep it.

use serde_json::Value;

/// The format of the JSON lines printed today.
pub const JSON_FORMAT: u64 = 1;

/// `v` with `"format"` set, when it is an object.
pub fn versioned(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.insert("format".into(), Value::from(JSON_FORMAT));
    }
    v
}
