//! Why a file of ours was not made, replaced or removed.

use std::path::{Path, PathBuf};

/// Why a file of ours was not written, replaced or removed.
#[derive(Debug, thiserror::Error)]
pub enum OwnedError {
    /// The name holds something drivescope did not make (or no longer the file it made):
    /// left as it is.
    #[error("{}: holds a file that is not drivescope's (left as it is)", path.display())]
    NotOurs { path: PathBuf },
    /// A new file was to be made and the name is taken.
    #[error("{}: already there (a new file is made, never one replaced)", path.display())]
    Exists { path: PathBuf },
    #[error("{}: {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl OwnedError {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> OwnedError {
        OwnedError::Io {
            path: path.to_path_buf(),
            what: if what.is_empty() {
                "cannot write"
            } else {
                what
            },
            source,
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OwnedError::NotOurs { path } | OwnedError::Exists { path } => path,
            OwnedError::Io { path, .. } => path,
        }
    }
}
