//! The collector's clock for one step: when the step started, how long to wait for
//! workers once they should stop ([`StopClock`]), and the spans the process was suspended
//! and the user paused, which the step's figures leave out.

use std::time::{Duration, Instant};

use super::stopclock::StopClock;
use super::suspend::SuspendWatch;

pub(super) struct Timeline {
    started: Instant,
    pub clock: StopClock,
    watch: SuspendWatch,
    /// Spans (ns since the start) the whole process was suspended.
    suspensions: Vec<(u64, u64)>,
    /// Spans the user paused the step (sampled each turn).
    pauses: Vec<(u64, u64)>,
    paused_since: Option<u64>,
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
            pauses: Vec::new(),
            paused_since: None,
        }
    }

    /// A new suspension of the process seen on this turn: its length (ns).
    pub fn suspension(&mut self) -> Option<u64> {
        let (from, gap) = self.watch.turn(since(self.started))?;
        self.suspensions.push((from, from + gap));
        self.clock.suspended(Duration::from_nanos(gap));
        Some(gap)
    }

    /// Samples the user's pause flag on this turn.
    pub fn sample_pause(&mut self, paused: bool) {
        match (paused, self.paused_since) {
            (true, None) => self.paused_since = Some(since(self.started)),
            (false, Some(from)) => {
                self.pauses.push((from, since(self.started)));
                self.paused_since = None;
            }
            _ => {}
        }
    }

    /// Ends a pause still going on at the step's end.
    pub fn close_pause(&mut self) {
        if let Some(from) = self.paused_since.take() {
            self.pauses.push((from, since(self.started)));
        }
    }

    pub fn suspensions(&self) -> &[(u64, u64)] {
        &self.suspensions
    }

    pub fn pauses(&self) -> &[(u64, u64)] {
        &self.pauses
    }
}

/// Nanoseconds from `started` to now.
fn since(started: Instant) -> u64 {
    Instant::now().saturating_duration_since(started).as_nanos() as u64
}
