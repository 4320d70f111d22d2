//! Why a target's host could not do what a run asked: the guard's refusal, the engine's
//! error, or (a host reached over ssh) the link's own reasons ([`RemoteError`]).

use thiserror::Error;

use crate::engine::EngineError;
use crate::test_target::TargetError;

/// What a [`super::TargetHost`] answers instead of doing what was asked.
#[derive(Debug, Error)]
pub enum HostFailure {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

/// Why a host cannot be used.
#[derive(Debug, Error)]
pub enum RemoteError {
    #[error("host {host}: cannot start ssh ({program}): {source}")]
    Spawn {
        host: String,
        program: String,
        source: std::io::Error,
    },
    #[error("host {host} is unreachable: {why}")]
    Unreachable { host: String, why: String },
    #[error("host {host}: no drivescope agent there ({why}); run `drivescope host install {host}` to put this drivescope there, or name one with --remote-drivescope")]
    NoAgent { host: String, why: String },
    #[error("host {host} runs drivescope {theirs} (protocol {their_protocol}); this is drivescope {ours} (protocol {our_protocol}): the protocols differ, use the same release on both")]
    Version {
        host: String,
        ours: String,
        our_protocol: u32,
        theirs: String,
        their_protocol: u32,
    },
    #[error("host {host}: {message}")]
    Refused { host: String, message: String },
    #[error("host {host}: {message}")]
    Failed { host: String, message: String },
    #[error("host {host}: {why}")]
    Lost { host: String, why: String },
    #[error("host {host}: the agent sent a line longer than {limit} bytes without its end; the link was closed")]
    LineTooLong { host: String, limit: usize },
    #[error("host {host}: the run was stopped before the host was ready")]
    Stopped { host: String },
}

impl RemoteError {
    /// The host could not be reached or has no agent: the run may go on without it
    /// (`--keep-going`).
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            RemoteError::Spawn { .. }
                | RemoteError::Unreachable { .. }
                | RemoteError::NoAgent { .. }
        )
    }
}

impl From<RemoteError> for EngineError {
    /// Mid-step, a link that ended is a lost host; anything else is the host's failure,
    /// in its words.
    fn from(e: RemoteError) -> EngineError {
        match e {
            RemoteError::Lost { host, why }
            | RemoteError::Unreachable { host, why }
            | RemoteError::NoAgent { host, why } => EngineError::Lost { host, why },
            RemoteError::Refused { host, message } | RemoteError::Failed { host, message } => {
                EngineError::Remote { host, message }
            }
            RemoteError::Spawn { ref host, .. }
            | RemoteError::Version { ref host, .. }
            | RemoteError::LineTooLong { ref host, .. }
            | RemoteError::Stopped { ref host } => EngineError::Remote {
                host: host.clone(),
                message: e.to_string(),
            },
        }
    }
}
