//! The subcommands' implementations, one module each; `main` parses the command line and
//! dispatches here.

pub mod compare;
pub mod dashboard;
pub mod devices;
mod error;
pub mod live;
pub mod open;
pub mod presets;
pub mod report;
pub mod run;
pub mod run_preset;
pub mod run_session;
pub mod smart;

pub use error::CommandError;
