//! The engine's error: why a step could not start or had to stop.

use thiserror::Error;

use super::invalid::InvalidStep;
use crate::workload::EngineKind;

/// A process that has a file open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opener {
    pub pid: u32,
    /// Its command line, as /proc shows it (arguments joined by spaces).
    pub command: String,
}

/// A process holding drivescope's lock on a target (another run on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locker {
    pub pid: u32,
    /// Its command line, as /proc shows it (arguments joined by spaces).
    pub command: String,
    /// It holds the lock exclusively: its run writes the target.
    pub writes: bool,
}

/// Why a step could not start or had to stop.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("cannot open {path} for {mode}: {source}{hint}")]
    Open {
        path: String,
        mode: &'static str,
        source: std::io::Error,
        hint: &'static str,
    },
    #[error(transparent)]
    Invalid(#[from] InvalidStep),
    #[error("job {job}: {message}")]
    Worker { job: usize, message: String },
    #[error("{}: {}", .path.display(), in_use_text(.by, *.block_device))]
    InUse {
        path: std::path::PathBuf,
        by: Vec<Opener>,
        block_device: bool,
    },
    /// Another run holds the target's lock: a run that writes the target when this one
    /// reads or writes it, or any run when this one writes it.
    #[error("{}: {}", .path.display(), locked_text(.by))]
    Locked {
        path: std::path::PathBuf,
        by: Vec<Locker>,
    },
    #[error("the {engine} engine needs io_uring: {reason}")]
    NeedsUring { engine: EngineKind, reason: String },
    #[error("cannot start worker thread: {0}")]
    Spawn(std::io::Error),
    #[error("filling {path} failed: {message}")]
    Fill { path: String, message: String },
    /// An engine's own error (one in a child process, say), in its words.
    #[error(transparent)]
    Engine(Box<dyn std::error::Error + Send + Sync>),
    /// The target's host (an agent over ssh) could not run the step, in its words.
    #[error("{host}: {message}")]
    Remote { host: String, message: String },
    /// The link to the target's host broke mid-step.
    #[error("{host}: {why}")]
    Lost { host: String, why: String },
}

/// Why a target's lock is refused, naming the runs that hold it where /proc says.
fn locked_text(by: &[Locker]) -> String {
    let who: Vec<String> = by
        .iter()
        .map(|l| {
            let does = if l.writes { "writes" } else { "reads" };
            format!("PID {} ({}) {does} it", l.pid, l.command)
        })
        .collect();
    let who = match who.is_empty() {
        true => "another drivescope run holds its lock".to_string(),
        false => who.join(", "),
    };
    format!(
        "in use by another run: {who}; a run that writes a target needs it to itself, runs \
         that only read it may share it"
    )
}

/// Why a target is in use, naming who has it open where /proc says.
fn in_use_text(by: &[Opener], block_device: bool) -> String {
    let who: Vec<String> = by
        .iter()
        .map(|o| format!("PID {} ({})", o.pid, o.command))
        .collect();
    match (who.is_empty(), block_device) {
        (false, _) => format!("in use, open by {}", who.join(", ")),
        (true, true) => "in use (mounted, active swap, held by device-mapper, md or LVM, \
                         or open exclusively by another process)"
            .to_string(),
        (true, false) => {
            "another process is writing it (it holds drivescope's write lock)".to_string()
        }
    }
}
