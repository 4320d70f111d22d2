//! `drivescope host install HOST [--dir DIR]` arguments.

use clap::{Args, Subcommand};

use super::parse::parse_host;

/// `drivescope host ACTION`.
#[derive(Debug, Args)]
pub struct HostArgs {
    #[command(subcommand)]
    pub action: HostAction,
}

#[derive(Debug, Subcommand)]
pub enum HostAction {
    /// Copy this drivescope to a host over ssh (to ~/.local/bin, where a `--host` run looks
    /// first) when it is missing there or of another version, and check that it runs there.
    Install(HostInstallArgs),
}

/// `drivescope host install`.
#[derive(Debug, Args)]
pub struct HostInstallArgs {
    /// The host, as `--host` names it: [USER@]HOST[:PORT].
    #[arg(value_name = "[USER@]HOST[:PORT]", value_parser = parse_host)]
    pub host: crate::remote::Host,
    /// The directory on the host (a relative one is relative to the remote home; default
    /// .local/bin). Runs then need --remote-drivescope DIR/drivescope.
    #[arg(long, value_name = "DIR", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub dir: Option<String>,
    /// The ssh command that reaches the host (default: $DRIVESCOPE_SSH, else `ssh`).
    #[arg(long, value_name = "COMMAND")]
    pub ssh_command: Option<String>,
}
