//! `drivescope open SESSION.yaml`: the session replayed in the dashboard.

use crate::cli::OpenArgs;
use crate::dashboard::replay::{self, OpenError};
use crate::tui::Exit;

pub fn run(a: &OpenArgs) -> Result<Exit, OpenError> {
    replay::run(&a.session, a.theme.clone())
}
