//! The dashboard without a live engine: `update` driven by message sequences, every panel
//! and overlay rendered from synthetic state (insta snapshots at 120×40 and 80×24), and
//! the event loop run on ratatui's TestBackend.

mod drives;
mod filter;
mod fixtures;
mod method;
mod panels;
mod runtime;
mod status;
mod update;
mod zoom;
