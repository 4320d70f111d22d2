//! What a run asks a host to make ready, and what the host answers: the target as its
//! guard prepared it, the engine it needs and the drive under it (also the agent's
//! protocol's `prepare` and `prepared` records).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::drive::DriveInfo;
use crate::test_target::{FileId, PreparedTarget};
use crate::workload::EngineKind;

/// What the controller asks to be made ready.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrepareRequest {
    /// `None`: the built-in test file of the agent's host.
    pub path: Option<PathBuf>,
    pub size: Option<u64>,
    pub writes: bool,
    /// The writes are at random offsets (a zoned device takes only sequential ones).
    #[serde(default)]
    pub random_writes: bool,
    /// The path the user typed to confirm that writes may destroy its data.
    pub destroy_data: Option<PathBuf>,
    pub create_missing: bool,
    /// The engine asked for (the agent says which the target needs).
    pub engine: EngineKind,
}

/// The prepared target and the drive under it, as the agent's host sees them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PreparedReply {
    pub target: PreparedTarget,
    /// The engine the target needs (uring-cmd on an NVMe generic device).
    pub engine: EngineKind,
    pub drive: Option<DriveInfo>,
    /// Why there is no drive identity or telemetry.
    pub notes: Vec<String>,
    /// Which file or device the target is on its host (an older agent sends none).
    pub file: Option<FileId>,
}
