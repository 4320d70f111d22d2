//! The collector's clock for one step: when the step started, how long to wait for
//! workers once they should stop ([`StopClock`]), and the spans the process was suspended,
//! whose intervals the step's figures leave out. (The spans the user paused are the
//! workers': each holds its own schedule still, and says for how long.)

use std::time::{Duration, Instant};

use super::stopclock::StopClock;
use super::suspend::SuspendWatch;

pub(super) struct Timeline {
    started: Instant,
    pub clock: StopClock,
    watch: SuspendWatch,
    /// Spans (ns since the start) the whole process was suspended.
    suspensions: Vec<(u64, u64)>,
}

impl Timeline {
    /// The clock of a step whose workers started at `started`.
    pub fn new(started: Instant, end_ns: Option<u64>, interval: Duration) -> Self {
        let clock = StopClock::new(started, end_ns, interval);
        let watch = SuspendWatch::new(since(started));
        Timeline {
            started,
            clock,
            watch,
            suspensions: Vec::new(),
        }
    }

    /// A new suspension of the process seen on this turn: its length (ns).
    pub fn suspension(&mut self) -> Option<u64> {
        let (from, gap) = self.watch.turn(since(self.started))?;
        self.suspensions.push((from, from + gap));
        self.clock.suspended(Duration::from_nanos(gap));
        Some(gap)
    }

    pub fn suspensions(&self) -> &[(u64, u64)] {
        &self.suspensions
    }
}

/// Nanoseconds from `started` to now.
fn since(started: Instant) -> u64 {
    Instant::now().saturating_duration_since(started).as_nanos() as u64
}
