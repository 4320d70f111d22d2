//! `drivescope verify` arguments, and the verify options `run` shares.

use std::path::PathBuf;

use clap::Args;

use super::parse::parse_size_arg;

/// Where a target's verify state is, and whether to start a new one.
#[derive(Debug, Args, Clone, Default)]
pub struct VerifyStateArgs {
    /// The verify state's folder (default: the target's own, in the data directory's
    /// verify/ folder beside the sessions).
    #[arg(long, value_name = "PATH")]
    pub verify_state: Option<PathBuf>,
    /// Start a new verify state: a new id, every block never written.
    #[arg(long)]
    pub verify_reset: bool,
}

/// `drivescope verify`: the region read once, every block checked against the state.
#[derive(Debug, Args, Clone)]
pub struct VerifyArgs {
    /// The file or block device to check.
    #[arg(long, short = 't')]
    pub target: PathBuf,
    /// Start of the region to check.
    #[arg(long, value_parser = parse_size_arg, default_value = "0")]
    pub offset: u64,
    /// Size of the region to check. Default: the whole target from --offset.
    #[arg(long, value_parser = parse_size_arg)]
    pub size: Option<u64>,
    /// The verify state's folder (default: the target's own).
    #[arg(long, value_name = "PATH")]
    pub verify_state: Option<PathBuf>,
    /// One JSON object per line instead of text.
    #[arg(long)]
    pub json: bool,
    /// Where the session (YAML) is saved. Default: a dated file in the sessions folder.
    #[arg(long, value_name = "PATH")]
    pub session: Option<PathBuf>,
    /// Replace an earlier session at --session; without it, a path holding one is refused.
    #[arg(long, requires = "session")]
    pub force: bool,
}
