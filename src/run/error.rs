//! Why a run could not start or broke off: each layer's own error, kept whole up to the
//! edge (`main`), which prints it.

use std::path::PathBuf;

use thiserror::Error;

use crate::engine::EngineError;
use crate::plan::PlanError;
use crate::preset::PresetError;
use crate::session::SessionError;
use crate::test_target::TargetError;
use crate::units::format_size;

#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Preset(#[from] PresetError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The snapshot folder refused by the caller's check
    /// ([`RecorderOptions::snapshot_check`](crate::session::RecorderOptions::snapshot_check)).
    #[error("{0}")]
    Snapshot(Box<dyn std::error::Error + Send + Sync>),
    #[error("{}: {why}; this preset ends steps on the drive's temperature, so it needs a drive that reports one", .target.display())]
    NoTemperature { target: PathBuf, why: String },
    #[error(transparent)]
    Targets(#[from] super::targets::TargetsError),
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
    #[error(transparent)]
    Host(#[from] crate::remote::HostError),
    #[error("no host could be reached: {0}")]
    NoneReachable(String),
    #[error("the nop engine has no target, so --host has nothing to run there")]
    TargetlessOnHost,
    #[error("{} and {} are both on drive {disk}: several targets on one drive may be read together, not written (each drive's figures would hold the other's)", .first.display(), .second.display())]
    SharedDriveWrites {
        first: PathBuf,
        second: PathBuf,
        disk: String,
    },
    /// Two targets of one run, on this host and another or on two hosts, are one file or
    /// device (told by the machine's boot id and the file's device and inode).
    #[error("{first} and {second} are the same file (one machine, one device and inode): a run tests each file once")]
    SameFile { first: String, second: String },
    #[error("{}: another target of this run is on the same drive; a preset that ends steps on the drive's temperature runs on one target per drive", .target.display())]
    SharedThermal { target: PathBuf },
    /// The folder for fio's logs (`--fio-logs`, or beside the session) cannot be made or
    /// used.
    #[error("fio's log folder {}: {why}", .path.display())]
    FioLogs { path: PathBuf, why: String },
    #[error("--destroy-data {} names no file or device the fio job file writes", .path.display())]
    DestroyDataUnused { path: PathBuf },
    #[error(transparent)]
    Verify(#[from] crate::verify::VerifyError),
    #[error(transparent)]
    PowerCut(#[from] super::cut_error::PowerCutError),
    #[error("--verify runs on the io_uring engine, not {0}")]
    VerifyEngine(crate::workload::EngineKind),
    /// For a target on another host (`--host`): its verify state would be this host's.
    #[error("{0}: --verify checks targets on this host only")]
    VerifyRemote(String),
    /// A front end the command set up failed before the run (the metrics endpoint's
    /// address): its own error, kept whole.
    #[error(transparent)]
    Frontend(Box<dyn std::error::Error + Send + Sync>),
    #[error("no target to run on")]
    NoTargets,
    #[error("cannot start a drive's thread: {0}")]
    Thread(String),
    #[error("--outstanding sets a preset's queues; a plain run has --iodepth and --jobs")]
    OutstandingNeedsPreset,
    #[error("--rwmixtrim: {0}")]
    TrimShare(crate::workload::TrimShareProblem),
    #[error("--offset {} is at or past the end of {} ({})", format_size(*.offset), .path.display(), format_size(*.size))]
    OffsetPastEnd {
        offset: u64,
        path: PathBuf,
        size: u64,
    },
}

impl From<crate::host::HostFailure> for RunError {
    /// A host's failure is the guard's, the engine's or the link's, as each is on its own.
    fn from(e: crate::host::HostFailure) -> RunError {
        use crate::host::HostFailure;
        match e {
            HostFailure::Target(e) => RunError::Target(e),
            HostFailure::Engine(e) => RunError::Engine(e),
            HostFailure::Remote(e) => RunError::Remote(e),
        }
    }
}
