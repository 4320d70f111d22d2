//! The subcommands, each in its own file, each returning a typed error to `main`.

pub mod dashboard;
pub mod run;
