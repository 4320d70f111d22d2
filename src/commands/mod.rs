//! The subcommands, one module each: each turns its arguments (from [`crate::cli`]) into
//! calls on the library; no command module uses another.

pub mod agent;
pub mod compare;
pub mod dashboard;
pub mod devices;
pub mod docs;
mod error;
pub mod export;
pub mod host;
pub mod open;
pub mod presets;
pub mod report;
pub mod run;
pub mod smart;
pub mod verify;

pub use error::{CommandError, HostCmdError, ReportCmdError};
