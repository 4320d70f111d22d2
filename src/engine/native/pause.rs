//! Pausing a running step: workers stop issuing, drain what is in flight, keep reporting
//! (empty) intervals, and on resume shift their rate schedule and end time by the paused
//! span, so a paused step still measures its full duration and does not burst to catch up.

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
