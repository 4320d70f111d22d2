//! `drivescope host install HOST`: the request made from the arguments, the install done by
//! [`crate::remote::install`], what it did printed on stdout.

use super::error::HostCmdError;
use crate::cli::{HostAction, HostArgs};
use crate::output::out_line;
use crate::remote::{install, InstallRequest, SshCommand};

/// Runs `drivescope host ACTION`.
pub fn run(args: &HostArgs) -> Result<(), HostCmdError> {
    match &args.action {
        HostAction::Install(a) => {
            let req = InstallRequest {
                host: a.host.clone(),
                ssh: SshCommand::choose(a.ssh_command.as_deref())?,
                dir: a.dir.clone(),
            };
            out_line(&install(&req)?.to_string());
            Ok(())
        }
    }
}
