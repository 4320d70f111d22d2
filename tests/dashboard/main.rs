//! The dashboard without a live engine: `update` driven by message sequences, every panel
//! and overlay rendered from synthetic state (insta snapshots at 120×40 and 80×24), and
//! the event loop run on ratatui's TestBackend.

mod diskmark;
mod drives;
mod filter;
mod fixtures;
mod keys;
mod method;
mod names;
mod new_file;
mod panels;
mod runtime;
mod sizes;
mod status;
mod update;
mod zones;
mod zoom;
