//! A cut under way, written (synced) into the verify state's folder before the cut command
//! runs and removed once its cycle is recorded: when the cut takes the whole machine down,
//! `drivescope verify` after the restart finds it and finishes the cycle
//! ([`super::finish`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::run::RunError;
use crate::session::{Output, Written};

/// The marker's name in the verify state's folder.
pub const PENDING_FILE: &str = "power-cut-pending.yaml";

const HEAD: &str = "# drivescope power cut under way\n";

/// The marker as a file of ours, known by its first line.
const PENDING: Output = Output {
    what: "power-cut marker",
    ours: |b| b.starts_with(HEAD.as_bytes()),
};

/// What the marker holds: enough to finish the cycle without the process that cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCut {
    /// The power-cut record the cycle belongs to.
    pub record: PathBuf,
    pub cycle: u32,
    /// When the cut command was started, RFC 3339.
    pub cut_at: String,
    /// Seconds from the workload's start to the cut command's start.
    pub cut_after_s: f64,
}

/// The marker's path in the state folder `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(PENDING_FILE)
}

/// Writes the marker into `dir` (a new file, synced with its folder); held to be removed.
pub fn write(dir: &Path, p: &PendingCut) -> Result<Written, RunError> {
    let body = serde_yaml::to_string(p).unwrap_or_default();
    let text = format!("{HEAD}{body}");
    Ok(crate::session::write_atomic(
        &path_in(dir),
        PENDING,
        text.as_bytes(),
    )?)
}

/// The marker in `dir`, if a cut there never finished, taken as ours (to be removed).
pub fn read(dir: &Path) -> Result<Option<(PendingCut, Written)>, RunError> {
    let path = path_in(dir);
    // No state folder, or no marker in it: no cut under way (anything else there, a link
    // or a file not ours, is refused by the adoption below).
    if let Err(e) = std::fs::symlink_metadata(&path) {
        if e.kind() == std::io::ErrorKind::NotFound {
            return Ok(None);
        }
    }
    let Some((file, bytes)) = Written::adopt(&path, PENDING, 1 << 20)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let p = serde_yaml::from_str(&text).map_err(|e| {
        let (line, column) = crate::yaml_pos::of_error(&e);
        super::PowerCutError::Unreadable {
            path: path.clone(),
            line,
            column,
            message: e.to_string(),
        }
    })?;
    Ok(Some((p, file)))
}
