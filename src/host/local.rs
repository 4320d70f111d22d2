//! This machine as a target's host: the write guard and the fill of `test_target`, the drive of
//! `drive`, the telemetry poller and the in-process engines (chosen by `engine_for`).

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Filled, HostFailure, PrepareRequest, PreparedReply, TargetHost};
use crate::drive::DriveInfo;
use crate::engine::{Engine, StepControl, StepTarget};
use crate::engine_list::TargetLock;
use crate::telemetry::{Poller, TelemetrySample, DEFAULT_PERIOD, MIN_PERIOD};
use crate::test_target::{self, PreparedTarget, TargetRequest};
use crate::workload::{EngineKind, StepSpec};

/// This machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalHost;

impl LocalHost {
    /// This machine, as a run's targets hold it.
    pub fn shared() -> Arc<dyn TargetHost> {
        Arc::new(LocalHost)
    }

    /// Polls `drive` every `period` (2 s by default, at least the poller's minimum),
    /// timestamps relative to `origin`.
    pub fn poller(
        &self,
        drive: &DriveInfo,
        period: Option<Duration>,
        origin: Instant,
    ) -> (Poller, Receiver<TelemetrySample>) {
        let period = period.unwrap_or(DEFAULT_PERIOD).max(MIN_PERIOD);
        Poller::spawn(drive, period, origin)
    }

    /// The drive under the target at `path`, resolved once when the target is prepared (the
    /// run carries it from then on), or why there is no drive identity or telemetry.
    pub fn drive_of(&self, path: &Path) -> (Option<DriveInfo>, Vec<String>) {
        match crate::drive::resolve(path) {
            Ok(d) => (Some(d), Vec::new()),
            Err(e) => (None, vec![format!("no drive telemetry: {e}")]),
        }
    }
}

impl TargetHost for LocalHost {
    fn name(&self) -> Option<String> {
        None
    }

    fn prepare(&self, p: PrepareRequest) -> Result<PreparedReply, HostFailure> {
        let engine = crate::engine_list::engine_for_target(p.engine, p.path.as_deref());
        let path = p
            .path
            .clone()
            .unwrap_or_else(test_target::default_target_path);
        let req = TargetRequest {
            size: p.size,
            writes: p.writes,
            random_writes: p.random_writes,
            destroy_data: p.destroy_data,
            create_default: p.path.is_none() || p.create_missing,
        };
        let t = test_target::prepare(&path, &req)?;
        let (drive, notes) = self.drive_of(&t.path);
        Ok(PreparedReply {
            file: test_target::file_id(&t.path),
            target: t,
            engine,
            drive,
            notes,
        })
    }

    fn check(&self, t: &StepTarget, steps: &[StepSpec]) -> Result<Option<String>, HostFailure> {
        Ok(crate::engine_list::check_steps(t, steps)?)
    }

    fn lock(&self, t: &PreparedTarget, exclusive: bool) -> Result<Option<TargetLock>, HostFailure> {
        let mut locks = crate::engine_list::lock_targets(&[(t.path.clone(), exclusive)])?;
        Ok(locks.pop())
    }

    fn fill(
        &self,
        t: &PreparedTarget,
        direct: bool,
        ctl: &StepControl,
        show: &mut dyn FnMut(&str),
    ) -> Result<Filled, HostFailure> {
        let mut notes = Vec::new();
        let filled = test_target::fill::fill_if_unwritten(t, direct, ctl, &mut |n: &str| {
            show(n);
            notes.push(n.to_string());
        })?;
        Ok((filled, notes))
    }

    fn telemetry(&self, _t0: Instant) -> Option<(Receiver<TelemetrySample>, Vec<String>)> {
        None
    }

    /// The engine of `kind`, resetting the zones a step writes on a zoned device.
    fn engine(&self, kind: EngineKind) -> Box<dyn Engine> {
        Box::new(super::zone_reset::ZoneResetting(
            crate::engine_list::engine_for(kind),
        ))
    }

    /// Nothing to tell: the test files made here are the run's own to keep.
    fn started(&self) {}

    fn path_here<'a>(&self, t: &'a PreparedTarget) -> Option<&'a Path> {
        Some(&t.path)
    }
}
