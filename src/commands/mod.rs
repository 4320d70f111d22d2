//! Subcommands other than `run`, each with its clap `Args` and a `run` function.

pub mod devices;
mod error;
pub mod smart;
pub use error::CommandError;
