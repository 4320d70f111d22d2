//! drivescope: an interactive terminal dashboard for live drive testing.
//!
//! The crate is a library so that integration tests and benches reach every layer; the
//! binary (`src/main.rs`) is a thin edge over it. Data flows one way, as
//! `../shared/DESIGN.md` lays out: preset → plan → engine → interval stats → app/session.

pub mod app;
pub mod cli;
pub mod commands;
pub mod drive;
pub mod dut;
pub mod engine;
pub mod input;
pub mod output;
pub mod plan;
pub mod preset;
pub mod report;
pub mod runner;
pub mod session;
pub mod stats;
pub mod telemetry;
pub mod tui;
pub mod ui;
pub mod units;
pub mod workload;
