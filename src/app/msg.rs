//! Messages into the app ([`Msg`]) and effects out of it ([`Effect`]): the whole interface
//! between the pure state machine and the runtime that owns the terminal and the engine.

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};

use super::view::{
    CurvePoint, DriveView, EventView, PresetEntry, SteadyView, StepInfo, TargetEntry, TelemetryView,
};
use crate::stats::IntervalReport;

/// Everything that can change the app's state.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// The clock: seconds since the dashboard started.
    Tick {
        now_s: f64,
    },
    /// The terminal's new size (columns, rows).
    Resize(u16, u16),
    /// The runner accepted a start: the run is under way.
    RunStarted {
        preset_id: String,
        target: PathBuf,
    },
    Interval(Box<IntervalReport>),
    /// The labels of the plan's steps, in order (sent as the run starts): what remains.
    PlanSteps(Vec<String>),
    StepStarted(StepInfo),
    StepFinished(CurvePoint, Box<crate::session::StepResult>),
    /// The grid of a run whose tests' runs make one figure (diskmark), as it fills: each
    /// test's best (or mean) so far.
    Grid(Vec<crate::session::GridCell>),
    /// The finished step as its PTS method's figure needs it (after its `StepFinished`).
    Method(Box<super::method::MethodPoint>),
    Telemetry(Box<TelemetryView>),
    Drive(DriveView),
    SteadyState(SteadyView),
    Event(EventView),
    /// A thermal event of the run (run clock, seconds), for the soak's figures.
    Thermal {
        t_s: f64,
        event: crate::thermal::ThermalEvent,
    },
    /// A verified run's totals so far (each interval).
    Integrity(crate::verify::VerifyTotals),
    /// A verified run's latest finding, described.
    IntegrityFinding(String),
    /// The run ended: how, why it failed (if it did), and where the session was saved.
    RunEnded {
        outcome: RunEnd,
        error: Option<String>,
        saved_to: Option<PathBuf>,
    },
    /// New lists (e.g. after a device scan).
    Presets(Vec<PresetEntry>),
    Targets(Vec<TargetEntry>),
    /// A one-line notice for the status bar.
    Notice(String),
    /// SIGTERM or SIGHUP: stop the run (the session is saved) and quit.
    Signal(i32),
    /// Replay: forget the run shown so far; the messages up to the new time follow.
    ReplayReset,
    /// A message of one drive (its index) of a run of several.
    OnDrive(usize, Box<Msg>),
    /// One drive of a run of several ended on its own terms (the others may go on).
    DriveEnded {
        drive: usize,
        outcome: crate::outcome::RunOutcome,
    },
    /// Replay: the messages up to `at_s` (of `end_s`) have been sent.
    ReplayAt {
        at_s: f64,
        end_s: f64,
    },
}

/// How a dashboard run ended, as the runtime reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Completed,
    Stopped,
    Failed,
    /// It could not start (preset, target or session refused).
    NotStarted,
}

impl RunEnd {
    pub fn label(self) -> &'static str {
        match self {
            RunEnd::Completed => "completed",
            RunEnd::Stopped => "stopped",
            RunEnd::Failed => "failed",
            RunEnd::NotStarted => "not started",
        }
    }
}

impl From<&crate::outcome::RunOutcome> for RunEnd {
    fn from(o: &crate::outcome::RunOutcome) -> Self {
        use crate::outcome::RunOutcome as O;
        match o {
            O::Completed { .. } => RunEnd::Completed,
            O::Stopped(_) => RunEnd::Stopped,
            O::Failed { .. } => RunEnd::Failed,
        }
    }
}

/// Where to move a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seek {
    Back,
    Forward,
    Start,
    End,
}

/// What the runtime carries out on the app's behalf.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    StartRun {
        preset_id: String,
        target: PathBuf,
        /// The user typed the device's name: writes may destroy its data.
        destroy_data: Option<PathBuf>,
    },
    /// An fio job file from the preset picker; a device it writes is confirmed by its typed
    /// name, as a preset's target is.
    StartFioJob {
        preset_id: String,
        file: PathBuf,
        destroy_data: Option<PathBuf>,
    },
    /// The highlighted preset on every drive at once; `destroy_data` says, drive by
    /// drive, which the user confirmed by typing its name.
    StartDrives {
        preset_id: String,
        destroy_data: Vec<Option<PathBuf>>,
    },
    Pause,
    Resume,
    Stop,
    /// Stop one drive (its index) of a run of several; the others go on.
    StopDrive(usize),
    SkipStep,
    Snapshot,
    /// A note the user wrote, to record in the running session.
    Note(String),
    /// The user chose another target between runs: watch its drive (telemetry and the
    /// header's identity) as the run will.
    WatchTarget(PathBuf),
    /// The user chose another theme (by name), for the runtime to remember.
    SetTheme(String),
    /// Replay: move through the session's time.
    Seek(Seek),
    Quit,
}

/// Where the run is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RunState {
    #[default]
    Idle,
    /// Asked to start; waiting for the runner.
    Starting,
    Running,
    Paused,
    /// Asked to stop; waiting for the runner.
    Stopping,
    /// The last run ended (completed, stopped, failed).
    Ended {
        outcome: String,
    },
}

impl RunState {
    /// A run is going (or about to): quitting must ask first.
    pub fn is_active(&self) -> bool {
        matches!(
            self,
            RunState::Starting | RunState::Running | RunState::Paused | RunState::Stopping
        )
    }

    pub fn label(&self) -> String {
        match self {
            RunState::Idle => "idle".into(),
            RunState::Starting => "starting".into(),
            RunState::Running => "running".into(),
            RunState::Paused => "paused".into(),
            RunState::Stopping => "stopping".into(),
            RunState::Ended { outcome } => outcome.clone(),
        }
    }
}
