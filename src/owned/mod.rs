//! Files drivescope writes for itself, one way for every writer: a folder held open for the
//! whole operation ([`Folder`]: names resolved in it, never through a link), files made
//! exclusively, replaced or removed only while the name still holds the file we made
//! ([`Mine`], checked by a `RENAME_EXCHANGE`), the kernel's identity of a file
//! ([`Identity`]: device, inode and file handle) for what "ours" means, and lock files
//! made exclusively ([`lock`]). A file that is not provably ours is the user's: it is never
//! truncated, renamed over or removed.

mod error;
mod folder;
mod identity;
pub mod lock;

pub use error::OwnedError;
pub use folder::{Folder, Mine};
pub use identity::Identity;
