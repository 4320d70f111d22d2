//! fio's errors: why fio could not run a step or a job file, and the bounds on what is read of its output.

use crate::engine::EngineError;

/// Why fio could not run a step; fio's own words where it gave them.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("fio is not installed (or not on PATH): {0}")]
    Missing(String),
    #[error("fio {found} is too old: drivescope needs fio 3.0 or later (json+ status dumps)")]
    TooOld { found: String },
    #[error("fio refused the job: {0}")]
    Refused(String),
    #[error("fio refused the job file {}: {said}", .path.display())]
    RefusedFile {
        path: std::path::PathBuf,
        said: String,
    },
    #[error("{version}'s json+ output has no {field}, which drivescope reads; drivescope needs fio 3.0 or later")]
    Lacks { version: String, field: String },
    #[error("fio's output is not what drivescope reads: {0}")]
    Output(String),
    /// A line, or a JSON document, of fio's output past its bound ([`FIO_LINE_MAX`],
    /// [`FIO_DOC_MAX`]): fio was ended and read no further.
    #[error("fio's output is not what drivescope reads: {what} longer than {limit} bytes")]
    TooLong { what: FioText, limit: usize },
    /// fio gave no status dump for far longer than the interval it was asked for (it gives
    /// them on time even while it lays out files): it is stuck, and was ended.
    #[error("fio gave no status for {}s although asked for one every {}ms: it is stuck (fio's own watchdog waits 300s), and was ended with its process group", .silent.as_secs(), .every.as_millis())]
    Silent {
        silent: std::time::Duration,
        every: std::time::Duration,
    },
    #[error(transparent)]
    JobFile(#[from] crate::user_file::InputError),
    #[error("fio's cage: {0}")]
    Cage(#[from] super::cage::CageError),
    #[error("fio could not be started in its cage: {0}")]
    Start(std::io::Error),
    /// fio ended the job on an error of its own (not the device's), or exited non-zero.
    #[error("fio failed: {said}{}", cage_hint_text(*.cage_hint))]
    Failed {
        /// fio's own words (its `fio: … error=…` line, or its first lines on stderr).
        said: String,
        /// The error is one the cage gives (read-only, not permitted, not there).
        cage_hint: bool,
    },
    /// drivescope's own refusal: where in the job file (a job and its section's line, a
    /// line, the file) and why.
    #[error("{}: {why}; refused before fio starts", super::refusal::location(.job, .line))]
    Unsafe {
        job: Option<String>,
        line: Option<usize>,
        why: super::refusal::Refusal,
    },
}

/// Why fio did not start: not there, or its cage could not be built.
pub(super) fn spawn_error(e: std::io::Error) -> FioError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FioError::Missing(e.to_string())
    } else if e.raw_os_error() == Some(libc::ESTALE) {
        // The cage's child found another folder where the log folder was.
        FioError::Cage(super::cage::CageError::LogDirReplaced)
    } else {
        FioError::Start(e)
    }
}

/// What a failure the cage may have caused adds to fio's words.
fn cage_hint_text(hint: bool) -> &'static str {
    if hint {
        "; fio's cage lets a job write only the targets drivescope guarded, and read only the files the job names"
    } else {
        ""
    }
}

/// What of fio's output went past its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FioText {
    #[error("a line")]
    Line,
    #[error("a JSON document")]
    Document,
}

/// The longest line of fio's output read: fio pretty-prints its JSON, one field a line,
/// so its longest lines are its messages and a job's name (well under a KiB); 16 MiB is
/// a bound no fio reaches, which still keeps a runaway output from filling memory.
pub const FIO_LINE_MAX: usize = 16 << 20;
/// The largest json+ document read: one job's report with its completion-latency bins is
/// 100-300 KiB, so 64 MiB holds a job file of a few hundred jobs reported one by one.
pub const FIO_DOC_MAX: usize = 64 << 20;

impl From<FioError> for EngineError {
    fn from(e: FioError) -> Self {
        EngineError::Engine(Box::new(e))
    }
}
