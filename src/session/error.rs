//! The typed errors of saving and loading sessions.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::user_file::{FileKind, InputError};

/// What can go wrong writing or reading a session.
#[derive(Debug, Error)]
pub enum SessionError {
    /// A file or folder could not be created, written, synced or read.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The session could not be turned into YAML (a value the format cannot hold).
    #[error("{}: could not encode the session: {message}", path.display())]
    Encode { path: PathBuf, message: String },
    /// The final rewrite failed; `stream` says what the autosaved file still holds.
    #[error("{}: the final save failed: {source}; {stream}", path.display())]
    FinalSave {
        path: PathBuf,
        #[source]
        source: Box<SessionError>,
        stream: String,
    },
    /// A path drivescope will not write (see [`outputs`](super::outputs)).
    #[error("{}: not writing the {what} there: {why}", path.display())]
    Refused {
        path: PathBuf,
        what: &'static str,
        why: Refusal,
    },
    /// Another process writes a session at this path now (its lock is held).
    #[error(
        "{}: another drivescope{} is writing a session there now; wait for it to end, or name \
         another --session", path.display(), holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse { path: PathBuf, holder: Option<u32> },
    /// A file to read that is not a regular file, or is too large.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A file of ours not made, replaced or removed (one that is not ours left as it is).
    #[error(transparent)]
    Owned(#[from] crate::owned::OwnedError),
    /// Flow collections nested deeper than a session ever is.
    #[error(
        "{}:{line}:{column}: brackets nest more than {cap} deep here; drivescope reads \
         sessions nested at most {cap} deep", path.display()
    )]
    TooDeep {
        path: PathBuf,
        line: usize,
        column: usize,
        cap: usize,
    },
    /// A `schema_version:` whose value is not a version number.
    #[error(
        "{}: `schema_version: {value}` is not a schema version (a whole number from 1, \
         unquoted)", path.display()
    )]
    BadSchemaVersion { path: PathBuf, value: String },
    /// A histogram log with no histogram drivescope can read.
    #[error("{}: {reason}", path.display())]
    Histograms { path: PathBuf, reason: String },
    /// Nothing in the file is a drivescope session.
    #[error("{}: not a drivescope session ({reason})", path.display())]
    NotASession { path: PathBuf, reason: String },
    /// Written by a newer drivescope whose format this one does not know.
    #[error(
        "{}: session schema version {found} is newer than this drivescope ({}) reads \
         (up to {supported}); it was written by drivescope {writer}: upgrade to read it",
        path.display(), env!("CARGO_PKG_VERSION")
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
        writer: String,
    },
}

impl SessionError {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> Self {
        SessionError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    }
}

/// Why a path is not written.
#[derive(Debug, Error)]
pub enum Refusal {
    #[error("it is {0}")]
    Kind(FileKind),
    #[error("it is a symbolic link to {} ({kind})", target.display())]
    LinkTo { target: PathBuf, kind: FileKind },
    #[error("it is a symbolic link to nothing")]
    Dangling,
    #[error("it is a regular file that drivescope did not write")]
    Foreign,
    #[error("it is a symbolic link to {}, a regular file that drivescope did not write", .0.display())]
    LinkToForeign(PathBuf),
    #[error("the {0} would be written there too")]
    Collides(&'static str),
    #[error("it is the {0} this command reads")]
    Input(&'static str),
    #[error("it holds an earlier report ({0} and maybe more); --force replaces it")]
    Earlier(String),
    #[error("it holds an earlier {0}; --force replaces it")]
    EarlierRun(&'static str),
}
