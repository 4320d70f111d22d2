//! The error of the `devices` and `smart` commands: what the edge prints.

use crate::drive::DriveError;
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
}
