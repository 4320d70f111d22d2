//! What a [`SessionRecorder`](super::SessionRecorder) is created with: its options and what
//! is known before the run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::session::identity::DriveIdentity;
use crate::session::legacy::Document;
use crate::session::model::{DriveEntry, Session, TargetInfo};

/// Default autosave period: a crash loses at most this much.
pub const DEFAULT_AUTOSAVE: Duration = Duration::from_secs(5);

/// Writes a snapshot of a session into a folder (the report layer's charts, CSV and HTML
/// beside the YAML); given by the caller, so the session layer does not depend on it.
pub type SnapshotExporter = fn(&Session, &mut super::OutFolder) -> Result<(), String>;

/// Refuses a snapshot folder whose files drivescope may not write (`inputs`: the files the
/// snapshot is made from, with what each is); given with the exporter, by the same caller.
pub type SnapshotCheck =
    fn(&Path, &[(&Path, &'static str)]) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// How the recorder saves.
#[derive(Debug, Clone)]
pub struct RecorderOptions {
    /// Append new records at most this often (and at least this often while records come).
    pub autosave_every: Duration,
    /// Export a snapshot (YAML, SVG charts, CSV, HTML) this often.
    pub snapshot_every: Option<Duration>,
    /// Where snapshots go; default `<session>-snapshot/` beside the session.
    pub snapshot_dir: Option<PathBuf>,
    /// Also keep every interval's latency histograms, in an HdrHistogram interval log
    /// beside the session (`<session>.hlog`).
    pub histograms: bool,
    /// What a snapshot writes beyond `session.yaml`; `None`: the YAML alone.
    pub exporter: Option<SnapshotExporter>,
    /// What the snapshot folder is checked with before the run; `None`: no check beyond
    /// the session's own paths.
    pub snapshot_check: Option<SnapshotCheck>,
    /// An earlier session (and its histogram log) at the path may be replaced
    /// (`--force`); without it, a path holding one is refused.
    pub replace: bool,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        RecorderOptions {
            autosave_every: DEFAULT_AUTOSAVE,
            snapshot_every: None,
            snapshot_dir: None,
            histograms: false,
            exporter: None,
            snapshot_check: None,
            replace: false,
        }
    }
}

/// What is known before the run starts. Parts owned by other layers are plain values:
/// fill them from the drive, preset and plan types with `serde_yaml::to_value`.
#[derive(Debug, Clone, Default)]
pub struct SessionStart {
    pub target: TargetInfo,
    pub command: Option<String>,
    /// What was tested, in the user's words (`--note`).
    pub note: Option<String>,
    pub drive: Option<DriveIdentity>,
    pub preset: Option<Document>,
    pub plan: Option<Document>,
    /// A session of several drives: each one's label, target and identity (`target` and
    /// `drive` above are then the first's). Empty, or one: a session of one drive.
    pub drives: Vec<DriveEntry>,
}
