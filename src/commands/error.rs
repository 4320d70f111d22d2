//! The errors of the commands that are not runs (`devices`, `smart`, `report`, `compare`):
//! what the edge prints.

use std::path::PathBuf;

use crate::drive::DriveError;
use crate::report::ReportError;
use crate::session::SessionError;
use crate::telemetry::smartctl::SmartctlError;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    Smartctl(#[from] SmartctlError),
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write YAML: {0}")]
    Yaml(#[from] serde_yaml::Error),
    #[error("{0}")]
    Usage(String),
    #[error("{}: no such {}", .path.display(), if *.device { "device" } else { "file or device" })]
    NoSuchPath { path: PathBuf, device: bool },
}

/// The error of `report` and `compare`.
#[derive(Debug, thiserror::Error)]
pub enum ReportCmdError {
    #[error("{}: no histograms were saved with this session (run with --histograms)", .0.display())]
    NoHistograms(PathBuf),
    #[error(
        "{}: its `histograms:` entry `{name}` is not the name of a file beside the session",
        session.display()
    )]
    HistogramsName { session: PathBuf, name: String },
    #[error("{}: no interval histogram lies within {span}{}", path.display(), why.as_ref().map(|w| format!(": {w}")).unwrap_or_default())]
    EmptySpan {
        path: PathBuf,
        span: String,
        /// Why reading stopped, when it stopped before the end.
        why: Option<String>,
    },
    #[error(
        "{}: no step matches one of the baseline {} (by label and workload): nothing to compare",
        new.display(),
        base.display()
    )]
    NothingMatched { base: PathBuf, new: PathBuf },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error(transparent)]
    Record(#[from] crate::run::power_cut::RecordError),
}

/// Why `drivescope host` failed.
#[derive(Debug, thiserror::Error)]
pub enum HostCmdError {
    #[error(transparent)]
    Ssh(#[from] crate::remote::HostError),
    #[error(transparent)]
    Install(#[from] crate::remote::InstallError),
}
