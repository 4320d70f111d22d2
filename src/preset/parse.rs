//! Reading a preset from YAML text: serde (with `deny_unknown_fields`) for types and units,
//! `serde_path_to_error` for the field path, serde_yaml's location for `line:column`, then
//! [`super::validate`] for cross-field rules, located in the text by [`super::locate`].

use std::path::Path;

use super::error::{Diagnostic, PresetError};
use super::locate::{format_path, locate, locate_key, Seg};
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

/// The 1-based line of a `---` that starts a second document, if the text has one.
fn second_document(text: &str) -> Option<usize> {
    let mut content = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("---") && content {
            return Some(i + 1);
        }
        let t = line.trim_start();
        if !t.is_empty() && !t.starts_with('#') && !line.starts_with("---") {
            content = true;
        }
    }
    None
}

fn raw_is_unknown_key(e: &serde_yaml::Error) -> bool {
    e.to_string().contains("unknown field `")
}

/// Reads a path as serde_path_to_error prints it (`phases[2].workload.bs`).
fn parse_path(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                out.push(Seg::Key(rest[..i].to_string()));
            }
            rest = &rest[i..];
            while let Some(inner) = rest.strip_prefix('[') {
                let Some((num, after)) = inner.split_once(']') else {
                    break;
                };
                if let Ok(n) = num.parse() {
                    out.push(Seg::Index(n));
                }
                rest = after;
            }
        } else if !rest.is_empty() {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

/// Parses and validates a preset. `origin` names the text in errors (a path, or
/// `builtin:ID`).
pub fn parse_str(text: &str, origin: &str) -> Result<Preset, PresetError> {
    if let Some(line) = second_document(text) {
        return Err(PresetError::Invalid(Box::new(Diagnostic {
            origin: origin.to_string(),
            line,
            column: 1,
            path: String::new(),
            message: "a second YAML document ('---'): a preset file holds one preset".to_string(),
            suggestion: None,
        })));
    }
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
            let mark = format!(" at line {line} column {column}");
            let full = inner.to_string();
            // A path ending in a key serde could not name (`phases[0].?`) locates only the
            // enclosing mapping.
            let unnamed = path.split('.').any(|seg| seg.starts_with('?'));
            // serde_yaml places other errors at the start of the enclosing mapping; the
            // field path finds the key or value itself.
            let (line, column) = if path.is_empty() || unnamed {
                (line, column)
            } else {
                let at = if raw_is_unknown_key(&inner) {
                    locate_key(text, &parse_path(&path))
                } else {
                    locate(text, &parse_path(&path))
                };
                // A syntax error names its places ("did not find expected '-' indicator at
                // line 26 column 3, while parsing a block collection at line 16 column
                // 3"): the path's place if it is one of them (the quote that never
                // closes), else serde_yaml's, not the key of a list the error is deep in.
                let named = |(l, c): (usize, usize)| {
                    full.contains(&format!(" at line {l} column {c},"))
                        || full.ends_with(&format!(" at line {l} column {c}"))
                };
                if full.contains(&format!("{mark}, while ")) && !named(at) {
                    (line, column)
                } else {
                    at
                }
            };
            let mut raw = full;
            if let Some(stripped) = raw.strip_suffix(&mark) {
                raw = stripped.to_string();
            }
            // serde_yaml names the path too (the enclosing map's): drop it, ours is finer.
            if let Some((head, rest)) = raw.split_once(": ") {
                if !head.contains(' ') && path.starts_with(head) {
                    raw = rest.to_string();
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

/// The largest preset file read.
pub const MAX_FILE_BYTES: u64 = crate::user_file::MIB;

/// Reads, parses and validates a preset file (a regular file of at most
/// [`MAX_FILE_BYTES`], or `-` for standard input).
pub fn parse_file(path: &Path) -> Result<Preset, PresetError> {
    let text = crate::user_file::read_text_or_stdin(path, MAX_FILE_BYTES, "preset file")?;
    parse_str(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_paths_back() {
        assert_eq!(
            parse_path("phases[2].workload.bs"),
            vec![
                Seg::Key("phases".into()),
                Seg::Index(2),
                Seg::Key("workload".into()),
                Seg::Key("bs".into())
            ]
        );
        assert_eq!(format_path(&parse_path("a[1][2].b")), "a[1][2].b");
        assert!(parse_path("").is_empty());
    }

    #[test]
    fn one_document_per_file() {
        assert_eq!(second_document("---\nid: a\n"), None);
        assert_eq!(second_document("# c\n---\nid: a\n---\nid: b\n"), Some(4));
        assert_eq!(second_document("id: a\ndescription: '---'\n"), None);
    }
}
