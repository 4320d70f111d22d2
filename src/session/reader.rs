//! Loads a session, in either form (the autosave stream or the single document of the
//! final save), and keeps what is valid when the file is truncated or hand-edited: a
//! document that does not parse is read key by key, a list that does not parse item by
//! item, and every part dropped is named with file:line:column.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::error::SessionError;
use super::merge::{merge, take_key};
use super::model::{Event, IntervalRecord, Session, StepRecord, SCHEMA_VERSION};
use super::pieces::{is_blank, line_col, split_documents, split_where, top_level_key, Piece};
use super::sample::Sample;

/// A loaded session and what was dropped to load it.
#[derive(Debug)]
pub struct Loaded {
    pub session: Session,
    /// One message per dropped part, `FILE:LINE:COLUMN: …`.
    pub warnings: Vec<String>,
    /// YAML documents in the file (1 after a final save; more for an autosave stream).
    pub documents: usize,
}

/// List items parsed together by the YAML parser (one at a time only when a batch fails).
const BATCH_ITEMS: usize = 2000;

/// Drop messages listed one by one per list; the rest are counted.
const MAX_ITEM_MESSAGES: usize = 5;

struct Ctx<'a> {
    path: &'a Path,
    warnings: Vec<String>,
}

impl Ctx<'_> {
    fn at(&self, line: usize, column: usize) -> String {
        format!("{}:{line}:{column}", self.path.display())
    }

    fn warn_err(&mut self, piece: Piece<'_>, e: &serde_yaml::Error, what: &str) {
        let (line, col) = locate(piece, e);
        let msg = format!("{}: {what}: {}", self.at(line, col), strip_location(e));
        self.warnings.push(msg);
    }
}

fn locate(piece: Piece<'_>, e: &serde_yaml::Error) -> (usize, usize) {
    let lines = piece.text.lines().count().max(1);
    match e.location() {
        // libyaml puts an unexpected end of input one line past the text: point at the
        // end of the last line instead.
        Some(l) if l.line() > lines => {
            let last = piece.text.lines().last().unwrap_or("");
            (piece.line + lines - 1, last.chars().count() + 1)
        }
        Some(l) => (piece.line + l.line().saturating_sub(1), l.column()),
        None => (piece.line, 1),
    }
}

/// serde_yaml's message without its own "at line N column M" (we give file:line:column)
/// and without the path into the one-item list an item is parsed as.
fn strip_location(e: &serde_yaml::Error) -> String {
    let mut s = e.to_string();
    while let Some(i) = s.find(" at line ") {
        let rest = &s[i + " at line ".len()..];
        let digits = |t: &str| t.chars().take_while(char::is_ascii_digit).count();
        let n1 = digits(rest);
        let after = &rest[n1..];
        let len = if let Some(c) = after.strip_prefix(" column ") {
            " at line ".len() + n1 + " column ".len() + digits(c)
        } else {
            " at line ".len() + n1
        };
        s.replace_range(i..i + len, "");
    }
    match s.strip_prefix(".[0].").or_else(|| s.strip_prefix("[0].")) {
        Some(rest) => rest.to_string(),
        None => s.strip_prefix(".[0]: ").unwrap_or(&s).to_string(),
    }
}

/// The largest session read (it is held whole while it is read): months of intervals.
pub const MAX_BYTES: u64 = 1024 * crate::user_file::MIB;

/// The deepest nesting of flow collections (`[`, `{`) read: sessions nest a few levels;
/// the YAML parser's time grows with the square of the depth.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Reads and loads the session at `path` (a regular file of at most [`MAX_BYTES`]).
pub fn load(path: &Path) -> Result<Loaded, SessionError> {
    let bytes = crate::user_file::read_input(path, MAX_BYTES, "session")?;
    let mut pre = Vec::new();
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let (line, col) = line_col(&bytes[..at]);
            pre.push(format!(
                "{}:{line}:{col}: bytes that are not UTF-8 (replaced; what they break is dropped)",
                path.display()
            ));
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    let mut loaded = parse(path, &text)?;
    pre.append(&mut loaded.warnings);
    loaded.warnings = pre;
    Ok(loaded)
}

/// The `schema_version:` and `drivescope_version:` lines of the header, read as text so a
/// newer layout is recognised before anything else is parsed. The schema version is
/// `Err(value as written)` when it is there but not a version number.
fn header_versions(text: &str) -> (Option<Result<u32, String>>, String) {
    let mut schema = None;
    let mut writer = String::from("unknown");
    for l in text.lines().take(200) {
        if let Some(v) = l.strip_prefix("schema_version:") {
            let v = match v.find(" #") {
                Some(i) => &v[..i],
                None => v,
            }
            .trim();
            // `schema_version:` with nothing after it is no version at all.
            if v.is_empty() {
                continue;
            }
            schema = Some(match v.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(n),
                _ => Err(v.to_string()),
            });
        } else if let Some(v) = l.strip_prefix("drivescope_version:") {
            writer = v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
        } else if l == "---" || l.starts_with("--- ") {
            break;
        }
    }
    (schema, writer)
}

/// Loads a session from `text`; `path` only names it in messages.
pub fn parse(path: &Path, text: &str) -> Result<Loaded, SessionError> {
    if let Some((line, column)) = crate::user_file::flow_depth_over(text, MAX_FLOW_DEPTH) {
        return Err(SessionError::TooDeep {
            path: path.to_path_buf(),
            line,
            column,
            cap: MAX_FLOW_DEPTH,
        });
    }
    let mut ctx = Ctx {
        path,
        warnings: Vec::new(),
    };
    // Every save ends in a newline: a last line without one was cut short (a crash in
    // the middle of a write, a truncated copy).
    let text = match text.rfind('\n') {
        Some(i) if i + 1 < text.len() && !is_blank(&text[i + 1..]) => {
            let torn = &text[i + 1..];
            let line = text[..=i].matches('\n').count() + 1;
            ctx.warnings.push(format!(
                "{}: dropped the last line, cut short after {} characters",
                ctx.at(line, torn.chars().count() + 1),
                torn.chars().count()
            ));
            &text[..=i]
        }
        _ => text,
    };
    // The versions are read once a torn last line is gone (a cut inside
    // `schema_version: 12` must not read as version 1).
    let (schema, writer) = header_versions(text);
    match schema {
        Some(Ok(v)) if v > SCHEMA_VERSION => {
            return Err(SessionError::NewerSchema {
                path: path.to_path_buf(),
                found: v,
                supported: SCHEMA_VERSION,
                writer,
            })
        }
        Some(Err(value)) => {
            return Err(SessionError::BadSchemaVersion {
                path: path.to_path_buf(),
                value,
            })
        }
        _ => {}
    }
    let docs = split_documents(text);
    let mut session = Session::default();
    let mut documents = 0;
    for doc in &docs {
        if is_blank(doc.text) {
            continue;
        }
        documents += 1;
        let part = read_by_keys(&mut ctx, *doc);
        merge(&mut session, part);
    }
    let before = session.telemetry.len();
    session.telemetry.retain(|v| !v.is_null());
    if session.telemetry.len() < before {
        ctx.warnings.push(format!(
            "{}: dropped {} empty telemetry items",
            path.display(),
            before - session.telemetry.len()
        ));
    }
    if session.schema_version == 0 {
        let reason = match documents {
            0 => "the file is empty",
            _ => "no schema_version in its first document",
        };
        return Err(SessionError::NotASession {
            path: PathBuf::from(path),
            reason: reason.to_string(),
        });
    }
    Ok(Loaded {
        session,
        warnings: ctx.warnings,
        documents,
    })
}

const LIST_KEYS: [&str; 4] = ["intervals", "steps", "telemetry", "events"];

/// Whether `head` (a file's first bytes) starts with a session header that parses: the
/// first document's keys before the records (`intervals` … `summary`) read as a header
/// with a schema version from 1, the drivescope version and the start time. What merely
/// mentions `schema_version:` is not a session.
pub(crate) fn is_session_header(head: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        schema_version: u32,
        drivescope_version: String,
        started: String,
    }
    let text = String::from_utf8_lossy(head);
    if crate::user_file::flow_depth_over(&text, MAX_FLOW_DEPTH).is_some() {
        return false;
    }
    let Some(doc) = split_documents(&text)
        .into_iter()
        .find(|d| !is_blank(d.text))
    else {
        return false;
    };
    let records = split_where(doc, |l| top_level_key(l).is_some())
        .into_iter()
        .find(|sec| {
            sec.text
                .lines()
                .next()
                .and_then(top_level_key)
                .is_some_and(|k| LIST_KEYS.contains(&k) || k == "summary")
        });
    let end = records.map_or(doc.text.len(), |sec| {
        sec.text.as_ptr() as usize - doc.text.as_ptr() as usize
    });
    matches!(
        serde_yaml::from_str::<Head>(&doc.text[..end]),
        Ok(h) if h.schema_version >= 1 && !h.drivescope_version.is_empty() && !h.started.is_empty()
    )
}

/// Reads a document one top-level key at a time, dropping the keys and list items that do
/// not parse. Lists are read item by item as JSON (how the writer puts them, one a line)
/// and in batches as YAML where that fails, which also bounds the parser's memory.
fn read_by_keys(ctx: &mut Ctx<'_>, doc: Piece<'_>) -> Session {
    let mut session = Session::default();
    for sec in split_where(doc, |l| top_level_key(l).is_some()) {
        if is_blank(sec.text) {
            continue;
        }
        let key = sec
            .text
            .lines()
            .next()
            .and_then(top_level_key)
            .unwrap_or("")
            .to_string();
        if LIST_KEYS.contains(&key.as_str()) {
            let mut part = Session::default();
            match key.as_str() {
                "intervals" => part.intervals = read_list(ctx, sec, "interval"),
                "steps" => part.steps = read_list::<StepRecord>(ctx, sec, "step"),
                "telemetry" => part.telemetry = read_list::<Sample>(ctx, sec, "sample"),
                _ => part.events = read_list::<Event>(ctx, sec, "event"),
            }
            merge(&mut session, part);
            continue;
        }
        match serde_yaml::from_str::<Session>(sec.text) {
            Ok(part) => take_key(&mut session, part, &key),
            Err(e) if key.is_empty() => ctx.warn_err(sec, &e, "dropped text that is not a key"),
            Err(e) => ctx.warn_err(sec, &e, &format!("dropped `{key}`")),
        }
    }
    session
}

/// Reads the list of section `sec` (`key:` then items, or `key: [...]` on one line) in
/// batches, keeping the items that parse and naming the rest.
fn read_list<T: ListItem>(ctx: &mut Ctx<'_>, sec: Piece<'_>, noun: &str) -> Vec<T> {
    let first = sec.text.lines().next().unwrap_or("");
    let inline = first.split_once(':').map(|(_, v)| v.trim()).unwrap_or("");
    if !inline.is_empty() && !inline.starts_with('#') {
        // `key: []` or a flow list on the key's line: small, parse it whole.
        #[derive(serde::Deserialize)]
        struct One<T> {
            #[serde(flatten)]
            map: std::collections::BTreeMap<String, Vec<T>>,
        }
        return match serde_yaml::from_str::<One<T>>(sec.text) {
            Ok(mut one) => one.map.pop_first().map(|(_, v)| v).unwrap_or_default(),
            Err(e) => {
                ctx.warn_err(sec, &e, &format!("dropped the {noun}s"));
                Vec::new()
            }
        };
    }
    let body_start = sec.text.find('\n').map(|i| i + 1).unwrap_or(sec.text.len());
    let body = Piece {
        text: &sec.text[body_start..],
        line: sec.line + 1,
    };
    // Indentation in spaces (bytes, so no slicing can land inside a character).
    let spaces = |l: &str| l.bytes().take_while(|&b| b == b' ').count();
    let indent = body
        .text
        .lines()
        .find(|l| l.as_bytes().get(spaces(l)) == Some(&b'-'))
        .map(spaces)
        .unwrap_or(0);
    let is_item = |l: &str| spaces(l) == indent && l.as_bytes().get(indent) == Some(&b'-');
    let items = split_where(body, is_item);
    let mut kept = Vec::with_capacity(items.len());
    let mut dropped = 0usize;
    for batch in items.chunks(BATCH_ITEMS) {
        let (Some(a), Some(b)) = (batch.first(), batch.last()) else {
            continue;
        };
        // The batch's text is one slice of the body: from its first item to its last.
        let from = a.text.as_ptr() as usize - body.text.as_ptr() as usize;
        let to = b.text.as_ptr() as usize - body.text.as_ptr() as usize + b.text.len();
        if let Some(mut v) = json_items::<T>(batch) {
            kept.append(&mut v);
            continue;
        }
        if let Ok(mut v) = serde_yaml::from_str::<Vec<T>>(&body.text[from..to]) {
            if v.len() == batch.iter().filter(|i| !is_blank(i.text)).count() {
                kept.append(&mut v);
                continue;
            }
        }
        for item in batch {
            if is_blank(item.text) {
                continue;
            }
            match serde_yaml::from_str::<Vec<T>>(item.text) {
                Ok(mut v) => kept.append(&mut v),
                Err(e) => {
                    dropped += 1;
                    if dropped <= MAX_ITEM_MESSAGES {
                        ctx.warn_err(*item, &e, &format!("dropped one {noun}"));
                    }
                }
            }
        }
    }
    if dropped > MAX_ITEM_MESSAGES {
        ctx.warnings.push(format!(
            "{}: dropped {dropped} {noun}s in all from the list starting here ({} more not listed above)",
            ctx.at(sec.line, 1),
            dropped - MAX_ITEM_MESSAGES
        ));
    }
    kept
}

/// An item of a session's lists.
trait ListItem: DeserializeOwned {
    /// The item from one line of JSON, if it is one.
    fn from_json(line: &str) -> Option<Self> {
        serde_json::from_str(line).ok()
    }
}

impl ListItem for IntervalRecord {}
impl ListItem for StepRecord {}
impl ListItem for Event {}
impl ListItem for Sample {
    fn from_json(line: &str) -> Option<Self> {
        Sample::from_json_line(line)
    }
}

/// The items of a batch when each is one line of JSON (`- {...}`), else `None`.
fn json_items<T: ListItem>(batch: &[Piece<'_>]) -> Option<Vec<T>> {
    let mut out = Vec::with_capacity(batch.len());
    for item in batch {
        if is_blank(item.text) {
            continue;
        }
        let line = item.text.trim_end();
        let json = line.trim_start().strip_prefix("- ")?;
        if json.contains('\n') {
            return None;
        }
        out.push(T::from_json(json)?);
    }
    Some(out)
}

/// Intervals of a list that parses, for tests of the item reader.
#[cfg(test)]
fn intervals_of(text: &str) -> (Vec<IntervalRecord>, Vec<String>) {
    let mut ctx = Ctx {
        path: Path::new("t.yaml"),
        warnings: Vec::new(),
    };
    let v = read_list(&mut ctx, Piece { text, line: 1 }, "interval");
    (v, ctx.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_that_parse_are_kept_and_the_rest_named() {
        let text = "intervals:\n- {t: 1.0, read_iops: 10}\n- {t: 2.0, read_iops: abc}\n- {t: 3.0, read_iops: 30}\n- {t: 4.0, rea";
        let (v, w) = intervals_of(text);
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].t, 3.0);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("t.yaml:3:"), "{w:?}");
        assert!(w[0].contains("read_iops"), "{w:?}");
        assert!(w[1].starts_with("t.yaml:5:15:"), "{w:?}");
        assert!(!w[1].contains("at line"), "{w:?}");
        assert!(w[0].contains(": read_iops: invalid type"), "{w:?}");
    }

    #[test]
    fn newer_schema_is_refused_by_name() {
        let e = parse(
            Path::new("new.yaml"),
            "schema_version: 99\ndrivescope_version: 9.0.0\nintervals: []\n",
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("99") && m.contains("9.0.0") && m.contains("new.yaml"),
            "{m}"
        );
    }

    #[test]
    fn not_a_session() {
        for text in ["", "hello: world\n"] {
            let e = parse(Path::new("x"), text);
            assert!(
                matches!(e, Err(SessionError::NotASession { .. })),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_broken_key_is_dropped_and_the_rest_kept() {
        let text = "schema_version: 1\nhost: {hostname: [unclosed\nintervals:\n- {t: 1.0}\n";
        let l = parse(Path::new("h.yaml"), text).unwrap();
        assert_eq!(l.session.intervals.len(), 1);
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        assert!(l.warnings[0].starts_with("h.yaml:"), "{:?}", l.warnings);
        assert!(l.warnings[0].contains("dropped `host`"), "{:?}", l.warnings);
    }

    #[test]
    fn header_strings_that_look_like_timestamps_load() {
        let l = parse(
            Path::new("h.yaml"),
            "schema_version: 1\nstarted: 2026-11-30T09:21:14Z\ncommand: run\n",
        )
        .unwrap();
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        assert_eq!(l.session.started, "2026-11-30T09:21:14Z");
        assert_eq!(l.session.command.as_deref(), Some("run"));
    }
}
