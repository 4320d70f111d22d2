//! `drivescope` with no subcommand: the dashboard's arguments become its options.

use crate::cli::DashboardArgs;
use crate::dashboard::{self, Options};
use crate::remote::{RemoteOptions, SshCommand};
use crate::run::targets;
use crate::tui::{DashboardError, Exit};

pub fn run(a: &DashboardArgs) -> Result<Exit, DashboardError> {
    let targets = match &a.targets {
        Some(file) => targets::read_file(file),
        None => targets::from_args(&a.target, &[], &[], None),
    }
    .map_err(DashboardError::from)?;
    let remote = RemoteOptions {
        ssh: SshCommand::choose(a.ssh_command.as_deref())?,
        program: a.remote_drivescope.clone(),
    };
    dashboard::run(&Options {
        targets: targets
            .into_iter()
            .map(|t| {
                let mut c = t.choice;
                if let Some(h) = &mut c.host {
                    h.options = remote.clone();
                }
                c
            })
            .collect(),
        targets_file: a.targets.is_some(),
        preset: a.preset.clone(),
        theme: a.theme.clone(),
        mouse: a.mouse,
        time_scale: a.time_scale,
    })
}
