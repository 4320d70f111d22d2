//! How long the collector waits for workers once they should stop. A device that stalls
//! (dm-delay, a hung controller) holds its I/Os; the step does not wait for them beyond a
//! grace of one interval (at least 1 s) after a stop was asked or after the step's end was
//! due, whichever comes first. A device that is still completing I/O (a deep queue
//! draining) is not stalled: it is stalled only when a whole grace passes with no
//! completion. Time the process spent suspended counts as neither.

use std::time::{Duration, Instant};

/// The longest wait for a device that is still completing I/O after the stop.
pub(crate) const DRAIN_CAP: Duration = Duration::from_secs(10);

pub(crate) struct StopClock {
    grace: Duration,
    started: Instant,
    /// The step's end, from its start (without pauses).
    end: Option<Duration>,
    paused_for: Duration,
    last_tick: Instant,
    asked: Option<Instant>,
    /// Completions counted so far, and when that count last moved.
    /// `None` until the first count, which is only the baseline.
    progress: Option<u64>,
    progressed: Option<Instant>,
}

impl StopClock {
    pub fn new(started: Instant, end_ns: Option<u64>, interval: Duration) -> Self {
        StopClock {
            grace: interval.max(Duration::from_secs(1)),
            started,
            end: end_ns.map(Duration::from_nanos),
            paused_for: Duration::ZERO,
            last_tick: Instant::now(),
            asked: None,
            progress: None,
            progressed: None,
        }
    }

    /// The process was suspended for `gap`: the step's end and any wait move by as much.
    pub fn suspended(&mut self, gap: Duration) {
        self.paused_for += gap;
        if let Some(a) = &mut self.asked {
            *a += gap;
        }
        if let Some(p) = &mut self.progressed {
            *p += gap;
        }
    }

    /// Waits `d` longer before giving up (once asked workers for their last figures).
    pub fn extend(&mut self, d: Duration) {
        if let Some(t) = Instant::now().checked_sub(self.grace) {
            self.asked = Some(t + d);
        }
    }

    /// The workers' completions so far.
    pub fn progress(&mut self, total: u64) {
        match self.progress.replace(total) {
            Some(before) if before != total => self.progressed = Some(Instant::now()),
            _ => {}
        }
    }

    /// The device completed I/O within the last grace.
    pub fn progressing(&self) -> bool {
        self.progressed.is_some_and(|p| p.elapsed() <= self.grace)
    }

    /// Called on every turn of the collector's loop with the pause flag (sampled: the
    /// grace covers the error). True when the step's end is more than the grace past due
    /// and the workers have not been told to stop: the caller tells them now.
    pub fn overdue(&mut self, paused: bool) -> bool {
        let now = Instant::now();
        if paused {
            self.paused_for += now - self.last_tick;
        }
        self.last_tick = now;
        if self.asked.is_some() {
            return false;
        }
        let Some(end) = self.end else { return false };
        let due = self.started + end + self.paused_for;
        if now > due + self.grace {
            // The grace has run since the end was due: do not wait another one.
            self.asked = Some(due);
            return true;
        }
        false
    }

    /// The workers were told to stop (the first call counts).
    pub fn asked(&mut self) {
        self.asked.get_or_insert_with(Instant::now);
    }

    /// How long since the stop was asked, once that is beyond the grace.
    ///
    /// A device still completing I/O is waited for longer, up to [`DRAIN_CAP`]: a deep
    /// queue drains, and its last I/Os belong to the step's figures.
    pub fn given_up(&self) -> Option<Duration> {
        let waited = self.asked?.elapsed();
        let limit = if self.progressing() {
            DRAIN_CAP
        } else {
            self.grace
        };
        (waited > limit).then_some(waited)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_up_a_grace_after_the_stop_or_the_due_end() {
        let t0 = Instant::now() - Duration::from_secs(10);
        let mut c = StopClock::new(t0, Some(2_000_000_000), Duration::from_millis(500));
        assert!(c.overdue(false), "end due 8 s ago");
        assert!(!c.overdue(false), "said once");
        assert!(c.given_up().is_some_and(|w| w > Duration::from_secs(7)));

        let mut c = StopClock::new(Instant::now(), Some(60_000_000_000), Duration::ZERO);
        assert!(!c.overdue(false));
        assert!(c.given_up().is_none());
        c.asked();
        assert!(c.given_up().is_none(), "within the 1 s grace");
    }

    #[test]
    fn a_device_that_completes_nothing_after_the_end_is_given_up_on_after_the_grace() {
        let t0 = Instant::now() - Duration::from_secs(10);
        let mut c = StopClock::new(t0, Some(2_000_000_000), Duration::ZERO);
        c.progress(5_000); // the first count is a baseline, not progress
        assert!(!c.progressing());
        assert!(c.overdue(false));
        c.asked();
        assert!(
            c.given_up().is_some(),
            "no progress: the 1 s grace is long past"
        );

        let mut c = StopClock::new(t0, Some(2_000_000_000), Duration::ZERO);
        c.progress(5_000);
        c.progress(6_000);
        assert!(c.progressing());
        assert!(c.overdue(false));
        c.asked();
        assert!(
            c.given_up().is_none(),
            "still completing: waited for up to DRAIN_CAP"
        );
    }
}
