//! drivescope: an interactive terminal dashboard for live drive testing.
//!
//! The crate is a library so that integration tests and benches reach every layer; the
//! binary (`src/main.rs`) is a thin edge over it. Data flows one way, as
//! `docs/ARCHITECTURE.md` lays out: preset → plan → run (runner → engine seam) → events →
//! session / printer / dashboard. Modules depend one way: `commands` on `cli` and the
//! library; `dashboard` on `run`, `app`, `ui` and `tui`; `run` on `engine`, `plan`,
//! `session`, `test_target` and `telemetry`; none of these on `commands` or `cli`.

#![deny(clippy::undocumented_unsafe_blocks)]
// Held by the tool, not by habit: production code prints only through `output` (a closed
// stdout is an end, never a panic), and neither unwraps nor panics. Tests may (clippy.toml).
#![deny(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::panic
)]

pub mod app;
pub mod children;
pub mod cli;
pub mod commands;
pub mod dashboard;
pub mod drive;
pub mod engine;
pub mod engine_list;
pub mod fio;
pub mod host;
pub mod lines;
pub mod test_target;
pub mod user_file;

pub mod metrics;
pub mod ostext;
pub mod outcome;
pub mod output;
pub mod owned;
pub mod plan;
pub mod preset;
pub mod printer;
pub mod remote;
pub mod report;
pub mod run;
pub mod session;
pub mod stats;
pub mod telemetry;
#[cfg(test)]
mod test_support;
pub mod theme;
pub mod thermal;
pub mod tui;
pub mod ui;
pub mod units;
pub mod verify;
pub mod workload;
pub mod yaml_flow;
pub mod yaml_pos;
