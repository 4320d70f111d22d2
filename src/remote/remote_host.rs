//! Another machine as a target's host ([`RemoteHost`]): each request goes over the
//! [`Link`] to its agent, which serves it on that machine's own `LocalHost`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use super::link::{Link, RemoteEngine, RemoteError, RemoteTarget};
use super::proto::ToAgent;
use crate::engine::{Engine, StepControl, StepTarget};
use crate::engine_list::TargetLock;
use crate::host::{Filled, HostFailure, PrepareRequest, PreparedReply, TargetHost};
use crate::telemetry::TelemetrySample;
use crate::test_target::PreparedTarget;
use crate::workload::{EngineKind, StepSpec};

/// A target's host reached over ssh: the link to its agent.
#[derive(Debug)]
pub struct RemoteHost {
    pub link: Arc<Link>,
}

impl RemoteHost {
    /// Opens the link to the target's host (ssh, its agent, the handshake); a wait for the
    /// host ends when `stop` is set.
    pub fn open(
        t: &RemoteTarget,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<Arc<dyn TargetHost>, RemoteError> {
        Ok(Arc::new(RemoteHost {
            link: Arc::new(Link::open(&t.host, &t.options, stop)?),
        }))
    }
}

impl TargetHost for RemoteHost {
    fn name(&self) -> Option<String> {
        Some(self.link.host().to_string())
    }

    fn prepare(&self, req: PrepareRequest) -> Result<PreparedReply, HostFailure> {
        Ok(self.link.prepare(req)?)
    }

    fn check(&self, _t: &StepTarget, steps: &[StepSpec]) -> Result<Option<String>, HostFailure> {
        // The agent keeps fio's version as its own check found it.
        self.link.check(steps)?;
        Ok(None)
    }

    /// The agent locks the target on its host and holds the lock until it ends.
    fn lock(
        &self,
        _t: &PreparedTarget,
        exclusive: bool,
    ) -> Result<Option<TargetLock>, HostFailure> {
        self.link.lock(exclusive)?;
        Ok(None)
    }

    fn fill(
        &self,
        _t: &PreparedTarget,
        direct: bool,
        ctl: &StepControl,
        show: &mut dyn FnMut(&str),
    ) -> Result<Filled, HostFailure> {
        Ok(self.link.fill(direct, ctl, show)?)
    }

    /// The agent's samples, and what the link says of itself (the agent's version, the
    /// clock offset measured at the handshake).
    fn telemetry(&self, t0: Instant) -> Option<(Receiver<TelemetrySample>, Vec<String>)> {
        let link = &self.link;
        let c = link.clock;
        let notes = vec![format!(
            "host {}: drivescope {} agent; its clock is {:+.1} ms off ours (measured over a {:.1} ms round trip, applied to its samples)",
            link.host(),
            link.agent_version,
            c.wall_offset_ns as f64 / 1e6,
            c.rtt.as_secs_f64() * 1e3,
        )];
        Some((link.telemetry(t0), notes))
    }

    /// Each step runs on the target's host; an idle step (no I/O) runs here.
    fn engine(&self, kind: EngineKind) -> Box<dyn Engine> {
        match kind {
            EngineKind::Idle => crate::engine_list::engine_for(kind),
            kind => Box::new(RemoteEngine {
                link: self.link.clone(),
                kind,
            }),
        }
    }

    /// The agent keeps the test file it made (a broken link is found by the run's next
    /// request).
    fn started(&self) {
        let _ = self.link.send(&ToAgent::Started);
    }

    fn path_here<'a>(&self, _t: &'a PreparedTarget) -> Option<&'a Path> {
        None
    }
}
