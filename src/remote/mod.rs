//! Remote hosts: a run's target on another machine, reached with the system's OpenSSH
//! client (drivescope opens no port of its own). On the host, `drivescope agent` speaks
//! JSON lines on stdin and stdout ([`proto`]) and serves each request on that machine's
//! `LocalHost`; here, a [`RemoteHost`] per target is the host seam over a [`Link`]: it
//! prepares the target there (the write guard runs on the host that owns the device),
//! streams its telemetry and runs its steps through the engine seam ([`RemoteEngine`]).

pub mod agent;
pub mod host;
mod inbox;
pub mod install;
mod job;
pub mod link;
mod outbox;
pub mod proto;
pub mod remote_host;

pub use host::{Host, HostError, SshCommand, SSH_ENV};
pub use install::{install, InstallError, InstallOutcome, InstallRequest};
pub use link::{Clock, Link, RemoteEngine, RemoteError, RemoteOptions, RemoteTarget};
pub use proto::{PrepareRequest, PreparedReply, PROTOCOL};
pub use remote_host::RemoteHost;
