//! Reading typed values out of smartctl's JSON: absent, null or out-of-range values are
//! `None`, never a default.

use serde_json::Value;

pub(super) fn u64_of(v: &Value) -> Option<u64> {
    v.as_u64()
}

pub(super) fn i32_of(v: &Value) -> Option<i32> {
    v.as_i64().and_then(|x| i32::try_from(x).ok())
}

pub(super) fn u8_of(v: &Value) -> Option<u8> {
    v.as_u64().and_then(|x| u8::try_from(x).ok())
}

/// A string with its padding trimmed; empty is absent.
pub(super) fn str_of(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The first of `pointers` (JSON pointers into `doc`) that holds a value `f` accepts.
pub(super) fn first_of<T>(
    doc: &Value,
    pointers: &[&str],
    f: impl Fn(&Value) -> Option<T>,
) -> Option<T> {
    pointers.iter().find_map(|p| doc.pointer(p).and_then(&f))
}

/// smartctl's own messages (`smartctl.messages[].string`), in order.
pub(super) fn messages(doc: &Value) -> Vec<String> {
    doc.pointer("/smartctl/messages")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|m| str_of(&m["string"])).collect())
        .unwrap_or_default()
}
