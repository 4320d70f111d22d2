//! The host seam: what a run asks of the machine its target is on ([`TargetHost`]), made
//! once per target and held by the pipeline, which never asks which machine it is. This
//! machine is [`LocalHost`] (the guard in `test_target`, the drive in `drive`, the telemetry
//! poller, the in-process engines); another one is `remote::RemoteHost`, over its agent's
//! link, whose agent serves the requests on its own `LocalHost`.

pub mod error;
pub mod local;
pub mod prepare;
pub mod zone_reset;

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use crate::engine::{Engine, StepControl, StepTarget};
use crate::engine_list::TargetLock;
use crate::stats::StepSummary;
use crate::telemetry::TelemetrySample;
use crate::test_target::PreparedTarget;
use crate::workload::{EngineKind, StepSpec};

pub use error::{HostFailure, RemoteError};
pub use local::LocalHost;
pub use prepare::{PrepareRequest, PreparedReply};

/// A fill's answer: what it did (the session's fill event), or `None` when the target
/// needed none, with what was said instead.
pub type Filled = (Option<StepSummary>, Vec<String>);

/// The machine a run's target is on, as the run pipeline uses it.
pub trait TargetHost: Send + Sync + std::fmt::Debug {
    /// The host as a run names it (`HOST` of `HOST:PATH`, the session's and `--json`'s
    /// `host`); `None` for this machine, whose targets are named by their path alone.
    fn name(&self) -> Option<String>;

    /// Makes the target ready: the write guard runs on the machine that owns it.
    fn prepare(&self, req: PrepareRequest) -> Result<PreparedReply, HostFailure>;

    /// Checks every step against the prepared target before any I/O; fio's version when a
    /// step runs on fio and the run's steps carry it (a remote host keeps its own).
    fn check(&self, target: &StepTarget, steps: &[StepSpec])
        -> Result<Option<String>, HostFailure>;

    /// Locks the prepared target for the whole run, before the session and any I/O:
    /// exclusively when the run writes it (or fills it), else shared; refused at once when
    /// another run holds it. The lock is the returned value's, for as long as it lives; a
    /// remote host's agent holds its own until it ends (`None`).
    fn lock(
        &self,
        target: &PreparedTarget,
        exclusive: bool,
    ) -> Result<Option<TargetLock>, HostFailure>;

    /// Fills a never-written test file before reads (`direct`: with O_DIRECT); `show`
    /// hears its progress.
    fn fill(
        &self,
        target: &PreparedTarget,
        direct: bool,
        ctl: &StepControl,
        show: &mut dyn FnMut(&str),
    ) -> Result<Filled, HostFailure>;

    /// The host's own stream of its drive's telemetry, on the run's clock (origin `t0`),
    /// with what the host says of itself; `None` where the run polls the drive itself
    /// (this machine: one poller per physical drive, or the dashboard's).
    fn telemetry(&self, t0: Instant) -> Option<(Receiver<TelemetrySample>, Vec<String>)>;

    /// The engine that runs a step of `kind` on the target.
    fn engine(&self, kind: EngineKind) -> Box<dyn Engine>;

    /// The run has started (past every refusal): what the host made for it stays. A remote
    /// host's agent removes a test file it made unless told so before it ends; this
    /// machine's are the run's own ([`MadeFile`](crate::test_target::MadeFile)s it keeps).
    fn started(&self);

    /// The target's path on this machine, where its verify state and the test file a
    /// run made are kept; `None` for a target on another host (they are that host's).
    fn path_here<'a>(&self, target: &'a PreparedTarget) -> Option<&'a Path>;
}
