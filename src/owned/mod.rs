//! Files drivescope writes for itself, one way for every writer: a folder held open for the
//! whole operation ([`Folder`]: names resolved in it, never through a link), files made
//! exclusively, replaced or removed only while the name still holds the file we made
//! ([`Mine`], checked by a `RENAME_EXCHANGE`), the kernel's identity of a file
//! ([`Identity`]: device, inode and file handle) for what "ours" means, and lock files
//! made exclusively ([`lock`]). A file that is not provably ours is the user's: it is never
//! truncated, renamed over or removed.

mod folder;
mod identity;
pub mod lock;

use std::path::{Path, PathBuf};

pub use folder::{Folder, Mine};
pub use identity::Identity;

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
