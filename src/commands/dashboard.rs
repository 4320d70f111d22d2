//! `drivescope` with no subcommand: the dashboard's arguments become its options.

use crate::cli::DashboardArgs;
use crate::dashboard::{self, Options};
use crate::tui::{DashboardError, Exit};

pub fn run(a: &DashboardArgs) -> Result<Exit, DashboardError> {
    dashboard::run(&Options {
        target: a.target.clone(),
        preset: a.preset.clone(),
        theme: a.theme.clone(),
        mouse: a.mouse,
        time_scale: a.time_scale,
    })
}
