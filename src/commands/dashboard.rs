//! `drivescope` with no subcommand: the dashboard's arguments become its options.

use std::io::ErrorKind;

use crate::cli::DashboardArgs;
use crate::dashboard::{self, Options};
use crate::output::ColorChoice;
use crate::remote::{RemoteOptions, SshCommand};
use crate::run::{targets, Where};
use crate::test_target;
use crate::tui::{DashboardError, Exit};

pub fn run(a: &DashboardArgs, color: ColorChoice) -> Result<Exit, DashboardError> {
    let targets = match &a.targets {
        Some(file) => targets::read_file(file),
        None => targets::from_args(&a.target, &[], &[], a.size),
    }
    .map_err(DashboardError::from)?;
    // A target that does not exist is created only with a size: refused here, before the
    // terminal is set up, by the rule `run` follows (a typo never becomes a test file).
    for t in targets.iter().filter(|t| !t.choice.at.is_remote()) {
        if let Some(p) = &t.choice.path {
            if std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
                let default = *p == test_target::default_target_path();
                test_target::new_file_size(p, t.choice.size, default)?;
            }
        }
    }
    // A misspelt preset or theme is refused here too, with the nearest name, before the
    // terminal is set up (as `run` refuses a misspelt preset).
    if let Some(id) = &a.preset {
        crate::preset::check_id(id)?;
    }
    if let Some(name) = &a.theme {
        crate::theme::check(name, crate::app::keymap::config_dir().as_deref())?;
    }
    // Listening before the terminal is taken: an address in use is refused on the shell.
    let metrics = match &a.metrics {
        Some(addr) => {
            let m = crate::metrics::MetricsServer::start(addr)?;
            crate::output::err_line(&format!("drivescope: metrics on http://{}/metrics", m.addr));
            Some(m)
        }
        None => None,
    };
    let remote = RemoteOptions {
        ssh: SshCommand::choose(a.ssh_command.as_deref())?,
        program: a.remote_drivescope.clone(),
        agent_metrics: None,
    };
    dashboard::run(&Options {
        targets: targets
            .into_iter()
            .map(|t| {
                let mut c = t.choice;
                if let Where::Remote(h) = &mut c.at {
                    h.options = remote.clone();
                }
                c
            })
            .collect(),
        targets_file: a.targets.is_some(),
        preset: a.preset.clone(),
        theme: a.theme.clone(),
        mouse: a.mouse,
        colour: color.colour(true),
        time_scale: a.time_scale,
        note: a.note.clone(),
        metrics,
    })
}
