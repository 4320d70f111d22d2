//! The idle engine: no I/O at all. An idle step (a cool-down) reports an empty interval
//! every reporting interval until its duration runs out, the user stops or skips it, or its
//! observer ends it (the drive cooled down), so the run's clock, telemetry and controls go
//! on as in any other step. Paused time does not count toward the duration.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::engine::{Control, Engine, EngineError, StepControl, StepObserver, StepTarget};
use crate::outcome::EndedBy;
use crate::stats::{IntervalReport, StepSummary};
use crate::workload::{EngineKind, StepSpec};

/// How often the idle loop looks at the stop and pause flags.
const TICK: Duration = Duration::from_millis(20);

/// The engine of `workload: idle` phases.
pub struct Idle;

fn empty_interval(index: u64, start_s: f64, end_s: f64) -> IntervalReport {
    IntervalReport {
        index,
        start_s,
        end_s,
        ..Default::default()
    }
}

fn summary(runtime_s: f64, ended_by: EndedBy) -> StepSummary {
    StepSummary {
        engine: EngineKind::Idle,
        runtime_s,
        ended_by,
        ..Default::default()
    }
}

impl Engine for Idle {
    fn kind(&self) -> EngineKind {
        EngineKind::Idle
    }

    fn run_step(
        &mut self,
        _target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        let interval = spec.interval.max(TICK);
        let limit = spec.end.duration.unwrap_or(Duration::MAX);
        // Measured time: wall time less the pauses.
        let mut measured = Duration::ZERO;
        let mut last = Instant::now();
        let mut reported = Duration::ZERO;
        let mut index = 0u64;
        loop {
            std::thread::sleep(TICK);
            let now = Instant::now();
            if !ctl.pause.load(Ordering::Relaxed) {
                measured += now - last;
            }
            last = now;
            if ctl.stop.load(Ordering::Relaxed) {
                return Ok(summary(measured.as_secs_f64(), EndedBy::Stopped));
            }
            let end = measured.min(limit);
            if end - reported >= interval || end >= limit {
                let r = empty_interval(index, reported.as_secs_f64(), end.as_secs_f64());
                index += 1;
                reported = end;
                if let Control::Stop(why) = obs.interval(&r) {
                    return Ok(summary(end.as_secs_f64(), why));
                }
            }
            if measured >= limit {
                return Ok(summary(limit.as_secs_f64(), EndedBy::Duration));
            }
        }
    }
}
