//! Reading a preset from YAML text: serde (with `deny_unknown_fields`) for types and units,
//! `serde_path_to_error` for the field path, serde_yaml's location for `line:column`, then
//! [`super::validate`] for cross-field rules, located in the text by [`super::locate`].

use std::path::Path;

use super::error::{Diagnostic, PresetError};
use super::locate::{format_path, locate};
use super::model::Preset;
use super::suggest;
use super::validate::validate;

/// fio option names people reach for, and the preset key that means the same.
const FIO_ALIASES: [(&str, &str); 7] = [
    ("numjobs", "jobs"),
    ("runtime", "duration"),
    ("ramp_time", "ramp"),
    ("blocksize", "bs"),
    ("size", "region"),
    ("rate_iops", "rate"),
    ("io_size", "data"),
];

/// The words between backticks in serde's messages: `unknown field `x`, expected one of `a`,
/// `b``.
fn backticked(msg: &str) -> Vec<&str> {
    msg.split('`').skip(1).step_by(2).collect()
}

/// Rewrites serde's message into ours and finds a suggestion for a misspelt key or value.
fn explain(raw: &str) -> (String, Option<String>) {
    for (prefix, what) in [("unknown field", "key"), ("unknown variant", "value")] {
        if raw.starts_with(prefix) {
            let words = backticked(raw);
            let Some((bad, valid)) = words.split_first() else {
                break;
            };
            let alias = FIO_ALIASES
                .iter()
                .find(|(fio, ours)| fio == bad && valid.contains(ours))
                .map(|(_, ours)| ours.to_string());
            let suggestion = alias.or_else(|| suggest::nearest(bad, valid.iter().copied()));
            let list = if valid.is_empty() {
                "none here".to_string()
            } else {
                valid.join(", ")
            };
            return (
                format!("unknown {what} `{bad}` (valid: {list})"),
                suggestion,
            );
        }
    }
    (raw.to_string(), None)
}

/// Parses and validates a preset. `origin` names the text in errors (a path, or
/// `builtin:ID`).
pub fn parse_str(text: &str, origin: &str) -> Result<Preset, PresetError> {
    let de = serde_yaml::Deserializer::from_str(text);
    let mut preset: Preset = match serde_path_to_error::deserialize(de) {
        Ok(p) => p,
        Err(e) => {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let inner = e.into_inner();
            let (line, column) = inner
                .location()
                .map(|l| (l.line(), l.column()))
                .unwrap_or((1, 1));
            let mut raw = inner.to_string();
            let mark = format!(" at line {line} column {column}");
            if let Some(stripped) = raw.strip_suffix(&mark) {
                raw = stripped.to_string();
            }
            if !path.is_empty() {
                if let Some(stripped) = raw.strip_prefix(&format!("{path}: ")) {
                    raw = stripped.to_string();
                }
            }
            let (message, suggestion) = explain(&raw);
            return Err(PresetError::Invalid(Box::new(Diagnostic {
                origin: origin.to_string(),
                line,
                column,
                path,
                message,
                suggestion,
            })));
        }
    };
    if let Some(v) = validate(&preset).into_iter().next() {
        let (line, column) = locate(text, &v.path);
        return Err(PresetError::Invalid(Box::new(Diagnostic {
            origin: origin.to_string(),
            line,
            column,
            path: format_path(&v.path),
            message: v.message,
            suggestion: v.suggestion,
        })));
    }
    preset.origin = origin.to_string();
    Ok(preset)
}

/// Reads, parses and validates a preset file.
pub fn parse_file(path: &Path) -> Result<Preset, PresetError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| PresetError::Io {
        path: shown.clone(),
        source,
    })?;
    parse_str(&text, &shown)
}
