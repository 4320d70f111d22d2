//! Interval boundaries of a step on the engine's clock (ns since the step's start): the ramp
//! is cut into intervals ending exactly at the ramp's end, then measured intervals follow.
//! Every worker computes the same boundaries, so the collector merges interval k of each.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub interval_ns: u64,
    pub ramp_ns: u64,
    ramp_intervals: u64,
}

impl Schedule {
    pub fn new(interval: Duration, ramp: Duration) -> Self {
        let interval_ns = (interval.as_nanos() as u64).max(1_000_000);
        let ramp_ns = ramp.as_nanos() as u64;
        Schedule {
            interval_ns,
            ramp_ns,
            ramp_intervals: ramp_ns.div_ceil(interval_ns),
        }
    }

    /// End of interval `k`.
    pub fn boundary(&self, k: u64) -> u64 {
        if k < self.ramp_intervals {
            ((k + 1) * self.interval_ns).min(self.ramp_ns)
        } else {
            self.ramp_ns + (k + 1 - self.ramp_intervals) * self.interval_ns
        }
    }

    /// Start of interval `k`.
    pub fn start(&self, k: u64) -> u64 {
        if k == 0 {
            0
        } else {
            self.boundary(k - 1)
        }
    }

    pub fn is_ramp(&self, k: u64) -> bool {
        k < self.ramp_intervals
    }

    /// The interval time `t` lies in (its start included, its end not).
    pub fn index_of(&self, t: u64) -> u64 {
        if t < self.ramp_ns {
            t / self.interval_ns
        } else {
            self.ramp_intervals + (t - self.ramp_ns) / self.interval_ns
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_intervals_end_at_the_ramp() {
        let s = Schedule::new(Duration::from_secs(1), Duration::from_millis(2500));
        let b: Vec<u64> = (0..5).map(|k| s.boundary(k) / 1_000_000).collect();
        assert_eq!(b, vec![1000, 2000, 2500, 3500, 4500]);
        assert!(s.is_ramp(2) && !s.is_ramp(3));
        assert_eq!(s.start(3), 2_500_000_000);
        let none = Schedule::new(Duration::from_millis(500), Duration::ZERO);
        assert_eq!(none.boundary(0), 500_000_000);
        assert!(!none.is_ramp(0));
    }

    #[test]
    fn a_time_lies_in_the_interval_whose_bounds_hold_it() {
        for s in [
            Schedule::new(Duration::from_secs(1), Duration::from_millis(2500)),
            Schedule::new(Duration::from_millis(250), Duration::from_millis(150)),
            Schedule::new(Duration::from_millis(500), Duration::ZERO),
        ] {
            for t in (0..6_000_000_000u64).step_by(10_000_000) {
                let k = s.index_of(t);
                assert!(s.start(k) <= t && t < s.boundary(k), "{s:?}: {t} in {k}");
            }
        }
    }
}
