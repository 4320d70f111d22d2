//! `drivescope open SESSION.yaml`: the session replayed in the dashboard.

use crate::cli::OpenArgs;
use crate::dashboard::replay::{self, OpenError};
use crate::output::ColorChoice;
use crate::tui::Exit;

pub fn run(a: &OpenArgs, color: ColorChoice) -> Result<Exit, OpenError> {
    // A misspelt theme is refused before the terminal is set up.
    if let Some(name) = &a.theme {
        crate::theme::check(name, crate::app::keymap::config_dir().as_deref())
            .map_err(crate::tui::DashboardError::from)?;
    }
    replay::run(&a.session, a.theme.clone(), color.colour(true))
}
