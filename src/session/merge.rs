//! How the parts of a session file combine: a key read alone goes to its field, a later
//! document adds to what came before (header keys from the first that has them, changed
//! ones from later documents, lists appended).

use super::model::{Session, SessionState};

/// Moves the field named `key` from `part` (parsed from that key's text alone).
pub(super) fn take_key(into: &mut Session, part: Session, key: &str) {
    match key {
        "schema_version" => into.schema_version = part.schema_version,
        "drivescope_version" => into.drivescope_version = part.drivescope_version,
        "started" => into.started = part.started,
        "state" => into.state = part.state,
        "command" => into.command = part.command,
        "note" => into.note = part.note,
        "host" => into.host = part.host,
        "drive" => into.drive = part.drive,
        "target" => into.target = part.target,
        "drives" => into.drives = part.drives,
        "preset" => into.preset = part.preset,
        "plan" => into.plan = part.plan,
        "histograms" => into.histograms = part.histograms,
        "summary" => into.summary = part.summary,
        // Keys this version does not know are left alone.
        _ => {}
    }
}

/// Adds a later document to what came before: header keys from the first document that
/// has them (changed ones from later documents), lists appended.
pub(super) fn merge(into: &mut Session, part: Session) {
    if into.schema_version == 0 && part.schema_version != 0 {
        into.schema_version = part.schema_version;
        into.drivescope_version = part.drivescope_version;
        into.started = part.started;
        into.command = part.command;
        into.note = part.note;
        into.host = part.host;
    }
    if part.state != SessionState::Running {
        into.state = part.state;
    }
    into.drive = part.drive.or(into.drive.take());
    if part.target != Default::default() {
        into.target = part.target;
    }
    if !part.drives.is_empty() {
        into.drives = part.drives;
    }
    into.preset = part.preset.or(into.preset.take());
    into.plan = part.plan.or(into.plan.take());
    into.histograms = part.histograms.or(into.histograms.take());
    extend(&mut into.intervals, part.intervals);
    extend(&mut into.steps, part.steps);
    extend(&mut into.telemetry, part.telemetry);
    extend(&mut into.events, part.events);
    into.summary = part.summary.or(into.summary.take());
}

fn extend<T>(into: &mut Vec<T>, mut more: Vec<T>) {
    if into.is_empty() {
        *into = more;
    } else {
        into.append(&mut more);
    }
}
