//! Several drives in one dashboard: the drives table, the picked drive and what a run of
//! every drive does to each one's state. Each drive's state, run figures and telemetry are
//! in its [`DriveSlot`] (`App::drives`); the panels draw the picked one
//! (`App::picked_slot`), so picking a drive moves nothing.

use std::path::PathBuf;

use super::msg::RunEnd;
use super::state::App;
use crate::outcome::RunOutcome;

pub use super::slot::{DriveRun, DriveSetup, DriveSlot, DriveState, TelemetryState};

/// Several drives are shown (a table, a picked drive).
pub fn many(app: &App) -> bool {
    app.drives.len() > 1
}

/// "1 drive ", "3 drives ": how many drives a run of the table goes on.
pub fn count(n: usize) -> String {
    format!("{} ", crate::units::count(n, "drive"))
}

/// The drives table is open (a targets file's drives, one or more): runs start on them as
/// the file says, each with its label and confirmation.
pub fn table(app: &App) -> bool {
    app.table
}

/// Makes drive `j` the one the panels show.
pub fn pick(app: &mut App, j: usize) {
    if j == app.picked || j >= app.drives.len() {
        return;
    }
    app.picked = j;
    app.dirty = true;
}

/// Moves the pick one drive up or down (wrapping).
pub fn pick_step(app: &mut App, down: bool) {
    let n = app.drives.len();
    if n < 2 {
        return;
    }
    let j = if down {
        (app.picked + 1) % n
    } else {
        (app.picked + n - 1) % n
    };
    pick(app, j);
}

/// Drive `i` ended on its own terms.
pub fn ended(app: &mut App, i: usize, outcome: RunOutcome) {
    if !app.table {
        return;
    }
    let Some(d) = app.drives.get_mut(i) else {
        return;
    };
    let text = match outcome.failure() {
        Some(why) => format!("[{}] failed: {why}", d.label),
        None => format!("[{}] {}", d.label, outcome.word()),
    };
    let failed = matches!(outcome, RunOutcome::Failed { .. });
    d.state = DriveState::Ended(outcome);
    let kind = if failed {
        super::EventCategory::Error
    } else {
        super::EventCategory::Info
    };
    app.push_event(kind, text);
}

/// The run ended: drives that did not say how they ended take the run's end.
pub fn run_ended(app: &mut App, end: RunEnd) {
    for d in &mut app.drives {
        if !matches!(d.state, DriveState::Ended(_) | DriveState::Idle) {
            d.state = DriveState::EndedWithRun(end);
        }
    }
}

/// A run of every drive is starting: each drive's figures start afresh.
pub fn starting(app: &mut App) {
    for d in &mut app.drives {
        d.state = DriveState::Starting;
        d.reset();
    }
}

/// The first drive of the table whose device still needs its typed name.
pub fn next_unconfirmed(app: &App) -> Option<usize> {
    app.table_drives()
        .iter()
        .position(|d| d.target.needs_typed_confirmation() && !d.confirmed)
}

/// What each drive's run may destroy: its path when the user confirmed it.
pub fn destroy_data(app: &App) -> Vec<Option<PathBuf>> {
    app.table_drives()
        .iter()
        .map(|d| {
            (d.target.needs_typed_confirmation() && d.confirmed).then(|| d.target.path.clone())
        })
        .collect()
}

/// The rows of the drives table shown at once when `rows` fit, and the first one: the
/// page that holds the picked drive.
pub fn page(app: &App, rows: usize) -> (usize, usize) {
    let rows = rows.max(1);
    let n = app.table_drives().len();
    let first = (app.picked / rows) * rows;
    (first, (n - first.min(n)).min(rows))
}
