//! The typed errors of saving and loading sessions.

use std::path::{Path, PathBuf};

use thiserror::Error;

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
