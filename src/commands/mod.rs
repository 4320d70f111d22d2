//! The subcommands' implementations, one module each; `main` parses the command line and
//! dispatches here.

pub mod devices;
mod error;
pub mod presets;
pub mod run;
pub mod run_preset;
pub mod smart;

pub use error::CommandError;
