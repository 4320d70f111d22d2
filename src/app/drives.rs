//! Several drives in one dashboard: each drive's own state, run figures and telemetry. The
//! panels draw `App::run` and `App::telemetry`, which hold the picked drive's figures; the
//! other drives' wait in their [`DriveSlot`]s, and a message for one of them is applied to
//! its figures by swapping them in for the time of the update.

use std::path::PathBuf;

use super::msg::{Effect, Msg, RunEnd};
use super::state::{App, RunView, TelemetryState};
use super::view::{DriveView, TargetEntry};
use crate::outcome::RunOutcome;

/// A drive the dashboard opens with, as the runtime (or a replay) knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveSetup {
    /// What the drive is called in the table and the legends.
    pub label: String,
    pub target: TargetEntry,
    pub drive: Option<DriveView>,
    /// Writes to it were confirmed already (a targets file's `destroy_data` naming it).
    pub confirmed: bool,
}

/// Where one drive of the run is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum DriveState {
    #[default]
    Idle,
    Starting,
    Running,
    /// Asked to stop (this drive alone, or the whole run).
    Stopping,
    /// The drive ended on its own terms: completed, stopped, or failed (and why).
    Ended(RunOutcome),
    /// The run ended without this drive saying how it ended (it could not start, or the
    /// run broke off): the run's end.
    EndedWithRun(RunEnd),
}

impl DriveState {
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            DriveState::Starting | DriveState::Running | DriveState::Stopping
        )
    }
}

/// One drive of several: its setup, state, and figures while it is not the picked one.
#[derive(Debug, Clone)]
pub struct DriveSlot {
    pub label: String,
    pub target: TargetEntry,
    pub confirmed: bool,
    pub state: DriveState,
    /// While not picked: the drive's identity, run figures and telemetry. While picked,
    /// these are in `App::drive`, `App::run` and `App::telemetry`.
    pub drive: Option<DriveView>,
    pub run: RunView,
    pub telemetry: TelemetryState,
}

impl DriveSlot {
    pub fn new(s: DriveSetup) -> Self {
        DriveSlot {
            label: s.label,
            target: s.target,
            confirmed: s.confirmed,
            state: DriveState::Idle,
            drive: s.drive,
            run: RunView::default(),
            telemetry: TelemetryState::new(),
        }
    }
}

/// Exchanges drive `i`'s own figures with the ones `App` holds (the run's state, preset and
/// end stay with the run).
fn swap(app: &mut App, i: usize) {
    let Some(slot) = app.drives.get_mut(i) else {
        return;
    };
    let (r, s) = (&mut app.run, &mut slot.run);
    std::mem::swap(&mut r.target, &mut s.target);
    std::mem::swap(&mut r.step, &mut s.step);
    std::mem::swap(&mut r.steady, &mut s.steady);
    std::mem::swap(&mut r.intervals, &mut s.intervals);
    std::mem::swap(&mut r.last, &mut s.last);
    std::mem::swap(&mut r.curve, &mut s.curve);
    std::mem::swap(&mut r.errors, &mut s.errors);
    std::mem::swap(&mut r.thermal, &mut s.thermal);
    std::mem::swap(&mut app.telemetry, &mut slot.telemetry);
    std::mem::swap(&mut app.drive, &mut slot.drive);
}

/// Several drives are shown (a table, a picked drive).
pub fn many(app: &App) -> bool {
    app.drives.len() > 1
}

/// "1 drive ", "3 drives ": how many drives a run of the table goes on.
pub fn count(n: usize) -> String {
    match n {
        1 => "1 drive ".to_string(),
        n => format!("{n} drives "),
    }
}

/// The drives table is open (a targets file's drives, one or more): runs start on them as
/// the file says, each with its label and confirmation.
pub fn table(app: &App) -> bool {
    !app.drives.is_empty()
}

/// Makes drive `j` the one the panels show.
pub fn pick(app: &mut App, j: usize) {
    if j == app.picked || j >= app.drives.len() {
        return;
    }
    swap(app, app.picked);
    swap(app, j);
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

/// Drive `i`'s run figures and telemetry, wherever they are kept now.
pub fn data(app: &App, i: usize) -> Option<(&RunView, &TelemetryState)> {
    if i == app.picked && i < app.drives.len() {
        return Some((&app.run, &app.telemetry));
    }
    app.drives.get(i).map(|d| (&d.run, &d.telemetry))
}

/// Applies a message of drive `i` to that drive's figures; events it adds name the drive.
pub fn on_drive(app: &mut App, i: usize, msg: Msg) -> Vec<Effect> {
    if i >= app.drives.len() {
        return super::update(app, msg);
    }
    if matches!(msg, Msg::RunStarted { .. } | Msg::StepStarted(_)) {
        let st = &mut app.drives[i].state;
        if matches!(st, DriveState::Idle | DriveState::Starting) {
            *st = DriveState::Running;
        }
    }
    let before = app.events.pushed();
    let picked = i == app.picked;
    if !picked {
        swap(app, i);
    }
    // Telemetry straight to the figures: `update` sends untagged samples to the first drive.
    let fx = match msg {
        Msg::Telemetry(t) => {
            super::update::telemetry(app, *t);
            Vec::new()
        }
        m => super::update(app, m),
    };
    if !picked {
        swap(app, i);
    }
    let added = app.events.pushed().saturating_sub(before) as usize;
    let label = app.drives[i].label.clone();
    for e in app.events.iter_mut().rev().take(added) {
        e.text = format!("[{label}] {}", e.text);
    }
    fx
}

/// Drive `i` ended on its own terms.
pub fn ended(app: &mut App, i: usize, outcome: RunOutcome) {
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
        d.run = RunView::default();
        d.telemetry = TelemetryState::new();
    }
}

/// The first drive whose device still needs its typed name.
pub fn next_unconfirmed(app: &App) -> Option<usize> {
    app.drives
        .iter()
        .position(|d| d.target.needs_typed_confirmation() && !d.confirmed)
}

/// What each drive's run may destroy: its path when the user confirmed it.
pub fn destroy_data(app: &App) -> Vec<Option<PathBuf>> {
    app.drives
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
    let first = (app.picked / rows) * rows;
    (
        first,
        (app.drives.len() - first.min(app.drives.len())).min(rows),
    )
}
