//! `drivescope open SESSION.yaml`: the session replayed in the dashboard.

use crate::cli::OpenArgs;
use crate::dashboard::replay::{self, OpenError};
use crate::output::ColorChoice;
use crate::tui::Exit;

pub fn run(a: &OpenArgs, color: ColorChoice) -> Result<Exit, OpenError> {
    replay::run(&a.session, a.theme.clone(), color.colour(true))
}
