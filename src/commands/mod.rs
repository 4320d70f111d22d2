//! The subcommands, each in its own file, each returning a typed error to `main`.

pub mod compare;
pub mod report;
pub mod run;
pub mod run_session;
