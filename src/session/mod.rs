//! Sessions: the record of a run, saved as YAML while it runs and read back by `report`
//! and `compare`.
//!
//! Writing: [`SessionRecorder::create`] writes the header (failing early on an
//! unwritable path, or one that holds anything but nothing or drivescope's own file: see
//! [`outputs`]); the run pushes intervals, steps, telemetry samples and events;
//! [`SessionRecorder::tick`] appends what is new every autosave period (one YAML document
//! per autosave, synced, on its own thread: a crash loses at most one period);
//! [`SessionRecorder::finalize`] (or `Drop`) rewrites the file atomically as one document.
//!
//! Reading: [`load`] accepts both forms, keeps what parses and names what it dropped with
//! file:line:column. The layout is in `docs/SESSIONS.md`.

pub mod best_of;
mod error;
mod event_data;
pub mod histlog;
mod host;
mod identity;
mod kind;
mod legacy;
mod merge;
pub mod method;
mod model;
mod options;
pub mod outputs;
pub mod paths;
mod pieces;
mod point;
mod reader;
mod recorder;
pub mod results;
mod sample;
mod setup;
mod text;
pub mod time;
mod writer;

pub use best_of::{
    grid, grid_of, phase_name, phase_of, run_series, GridCell, GridDir, GridRun, RunSeries,
};
pub use error::SessionError;
pub use event_data::{IoErrorData, PowerCutData, ResumedData};
pub use host::Host;
pub use identity::{DiskIdentity, DiskZones, DriveIdentity};
pub use kind::EventKind;
pub use legacy::Document;
pub use method::{off_method, off_method_text, OffMethod};
pub use model::{
    round, DriveEntry, Event, IntervalRecord, LatPoint, RunEnd, Session, SessionState,
    SessionSummary, StepRecord, TargetInfo, TargetKind, Word, ONE_DRIVE_SCHEMA_VERSION,
    SCHEMA_VERSION,
};
pub use options::{
    RecorderOptions, SessionStart, SnapshotCheck, SnapshotExporter, DEFAULT_AUTOSAVE,
};
pub use outputs::{check_session_paths, SessionPaths};
pub use point::StepPoint;
pub use reader::{load, parse, Loaded, MAX_BYTES, MAX_FLOW_DEPTH};
pub use recorder::SessionRecorder;
pub use results::{step_results, Direction, StepResult};
pub use sample::Sample;
pub use setup::{PhaseInfo, PlanInfo, PlanStepInfo, PresetInfo, RoundsInfo};
pub use text::{full as to_yaml, write_full as write_yaml};
pub use writer::{ensure_parent, write_atomic, write_atomic_with, OutFolder, Output, Written};

#[cfg(test)]
mod tests;
