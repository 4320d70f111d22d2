//! The session's YAML text: the header document, the autosave documents that append new
//! records to it, and the single document of the final save.
//!
//! ```yaml
//! # drivescope session …
//! schema_version: 1
//! drivescope_version: 0.1.0
//! host: {…}
//! drive: …
//! target: {…}
//! preset: …
//! plan: …
//! ---                      # one document per autosave (the stream form only)
//! intervals:
//! - {t: 1.0, dt: 1.0, step: 0, read_iops: 25031.5, …, lat_us: {p50: 81.2, …}, errors: 0}
//! steps: […]
//! telemetry: […]
//! events: […]
//! ```
//!
//! The final save rewrites all of it as one document with every top-level key, ending in
//! `summary`.

use serde::Serialize;

use std::io::Write;

use super::model::{Event, IntervalRecord, Session, SessionState, SessionSummary, StepRecord};
use super::sample::Sample;
use crate::yaml_flow::{write, write_list};

const HEADER_COMMENT: &str =
    "# drivescope session (YAML). While the run goes on, each autosave appends a document\n\
# whose lists add to the ones before; the final save rewrites the file as one document.\n";

/// The first document: everything but the records and the summary (which a session's
/// own serialization leaves out).
pub fn header(s: &Session) -> Result<String, serde_yaml::Error> {
    let mut out = String::from(HEADER_COMMENT);
    out.push_str(&serde_yaml::to_string(s)?);
    Ok(out)
}

#[derive(Serialize)]
struct Steps<'a> {
    steps: &'a [StepRecord],
}

#[derive(Serialize)]
struct Tail<'a> {
    summary: &'a SessionSummary,
}

/// The state, changed after the header was written (by the final save).
#[derive(Serialize)]
struct State {
    state: SessionState,
}

/// New records since the last autosave.
pub struct Chunk<'a> {
    pub state: Option<SessionState>,
    pub intervals: &'a [IntervalRecord],
    pub steps: &'a [StepRecord],
    pub telemetry: &'a [Sample],
    pub events: &'a [Event],
    pub summary: Option<&'a SessionSummary>,
}

impl Chunk<'_> {
    pub fn is_empty(&self) -> bool {
        self.state.is_none()
            && self.intervals.is_empty()
            && self.steps.is_empty()
            && self.telemetry.is_empty()
            && self.events.is_empty()
            && self.summary.is_none()
    }
}

/// One autosave document (starting with `---`); its cost is the size of the new records.
pub fn chunk(c: &Chunk<'_>) -> Result<String, serde_yaml::Error> {
    let mut out = String::from("---\n");
    if let Some(state) = c.state {
        out.push_str(&serde_yaml::to_string(&State { state })?);
    }
    if !c.intervals.is_empty() {
        write_list(&mut out, "intervals", c.intervals)?;
    }
    if !c.steps.is_empty() {
        out.push_str(&serde_yaml::to_string(&Steps { steps: c.steps })?);
    }
    if !c.telemetry.is_empty() {
        write_samples(&mut out, "telemetry", c.telemetry);
    }
    if !c.events.is_empty() {
        write_list(&mut out, "events", c.events)?;
    }
    if let Some(summary) = c.summary {
        out.push_str(&serde_yaml::to_string(&Tail { summary })?);
    }
    Ok(out)
}

/// The whole session as one document (tests, tools); see [`write_full`].
pub fn full(s: &Session) -> Result<String, serde_yaml::Error> {
    let mut out = Vec::new();
    write_full(&mut out, s)
        .map_err(|e| <serde_yaml::Error as serde::ser::Error>::custom(e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn yaml_err(e: serde_yaml::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// Writes `items` under `key`, one flow line each, through one reused buffer.
fn write_items<T: Serialize>(w: &mut dyn Write, key: &str, items: &[T]) -> std::io::Result<()> {
    if items.is_empty() {
        return writeln!(w, "{key}: []");
    }
    writeln!(w, "{key}:")?;
    let mut line = String::with_capacity(512);
    for item in items {
        line.clear();
        line.push_str("- ");
        write(&mut line, item).map_err(yaml_err)?;
        line.push('\n');
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes the whole session as one document (the final save, snapshots), streaming: its
/// memory is one record at a time, not the file.
pub fn write_full(w: &mut dyn Write, s: &Session) -> std::io::Result<()> {
    w.write_all(header(s).map_err(yaml_err)?.as_bytes())?;
    write_items(w, "intervals", &s.intervals)?;
    w.write_all(
        serde_yaml::to_string(&Steps { steps: &s.steps })
            .map_err(yaml_err)?
            .as_bytes(),
    )?;
    if s.telemetry.is_empty() {
        w.write_all(b"telemetry: []\n")?;
    } else {
        w.write_all(b"telemetry:\n")?;
        for x in &s.telemetry {
            w.write_all(b"- ")?;
            w.write_all(x.as_str().as_bytes())?;
            w.write_all(b"\n")?;
        }
    }
    write_items(w, "events", &s.events)?;
    match &s.summary {
        Some(summary) => w.write_all(
            serde_yaml::to_string(&Tail { summary })
                .map_err(yaml_err)?
                .as_bytes(),
        ),
        None => w.write_all(b"summary: ~\n"),
    }
}

/// Appends `key:` and the samples, one line each.
fn write_samples(out: &mut String, key: &str, samples: &[Sample]) {
    if samples.is_empty() {
        out.push_str(key);
        out.push_str(": []\n");
        return;
    }
    out.push_str(key);
    out.push_str(":\n");
    for l in samples {
        out.push_str("- ");
        out.push_str(l.as_str());
        out.push('\n');
    }
}
