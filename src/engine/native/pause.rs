//! Pausing a running step: workers stop issuing, drain what is in flight, keep reporting
//! (empty) intervals, and on resume shift their rate schedule and end time by the paused
//! span, so a paused step still measures its full duration and does not burst to catch up.
//! A suspension of the process the worker saw moves them on the same way ([`Holds`]); each
//! span a worker held its schedule still goes to the collector, which leaves it out of the
//! step's measured time.

use super::suspend::SuspendWatch;
use super::tally::IntervalTally;

/// One worker's view of the pause flag.
#[derive(Debug, Default, Clone, Copy)]
pub struct PauseTracker {
    since: Option<u64>,
}

impl PauseTracker {
    /// Given the flag and the time, returns (paused now, span just resumed from in ns).
    #[inline]
    pub fn update(&mut self, flag: bool, now: u64) -> (bool, u64) {
        match (flag, self.since) {
            (true, None) => {
                self.since = Some(now);
                (true, 0)
            }
            (true, Some(_)) => (true, 0),
            (false, Some(s)) => {
                self.since = None;
                (false, now.saturating_sub(s))
            }
            (false, None) => (false, 0),
        }
    }
}

/// One worker's holds on its schedule and end: the user's pause, and the suspensions of
/// the process it saw.
#[derive(Debug)]
pub(crate) struct Holds {
    pause: PauseTracker,
    suspended: SuspendWatch,
}

impl Holds {
    pub fn new(now: u64) -> Self {
        Holds {
            pause: PauseTracker::default(),
            suspended: SuspendWatch::new(now),
        }
    }

    /// Given the pause flag and the time: whether the step is paused now, and how far its
    /// schedule and end move on (a pause or a suspension that just ended, each recorded
    /// in `rec` as a span the schedule was held).
    #[inline]
    pub fn turn(&mut self, flag: bool, now: u64, rec: &mut IntervalTally) -> (bool, u64) {
        let (paused, resumed) = self.pause.update(flag, now);
        if resumed > 0 {
            rec.held(now - resumed, now);
        }
        let gap = match self.suspended.turn(now) {
            Some((from, gap)) => {
                rec.held(from, from + gap);
                gap
            }
            None => 0,
        };
        (paused, resumed + gap)
    }

    /// A pause still on when the worker ends (the step was stopped while paused): its span
    /// so far, recorded in `rec`.
    pub fn close(&mut self, now: u64, rec: &mut IntervalTally) {
        if let Some(s) = self.pause.since.take() {
            rec.held(s, now.max(s));
        }
    }
}

/// Longest sleep while paused with nothing in flight (ns).
pub const PAUSE_NAP_NS: u64 = 20_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_span_once_on_resume() {
        let mut p = PauseTracker::default();
        assert_eq!(p.update(false, 10), (false, 0));
        assert_eq!(p.update(true, 100), (true, 0));
        assert_eq!(p.update(true, 150), (true, 0));
        assert_eq!(p.update(false, 400), (false, 300));
        assert_eq!(p.update(false, 500), (false, 0));
    }
}
