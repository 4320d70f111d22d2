//! Bounded histories: a ring buffer that drops its oldest entry when full, and the compact
//! per-interval and per-sample points the charts draw.

use std::collections::VecDeque;

use crate::stats::{IntervalReport, LatSummary};

/// Intervals kept for the charts (an hour at the default 1 s interval).
pub const INTERVAL_HISTORY: usize = 3600;
/// Telemetry samples kept.
pub const TELEMETRY_HISTORY: usize = 3600;
/// Events kept.
pub const EVENT_HISTORY: usize = 500;
/// Curve points kept (steps of sweeps).
pub const CURVE_HISTORY: usize = 1000;
/// Throttle marks kept (the latest ones).
pub const THROTTLE_MARKS: usize = 256;
/// Distinct "telemetry unavailable" reasons kept.
pub const UNAVAILABLE_REASONS: usize = 16;

/// A ring buffer of at most `cap` entries.
#[derive(Debug, Clone)]
pub struct Ring<T> {
    items: VecDeque<T>,
    cap: usize,
    /// Entries ever pushed (those dropped included).
    pushed: u64,
}

impl<T> Ring<T> {
    pub fn new(cap: usize) -> Self {
        Ring {
            items: VecDeque::with_capacity(cap.min(1024)),
            cap: cap.max(1),
            pushed: 0,
        }
    }

    /// How many entries were ever pushed (those dropped included).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> {
        self.items.iter_mut()
    }

    pub fn push(&mut self, item: T) {
        if self.items.len() == self.cap {
            self.items.pop_front();
        }
        self.items.push_back(item);
        self.pushed += 1;
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn last(&self) -> Option<&T> {
        self.items.back()
    }

    pub fn first(&self) -> Option<&T> {
        self.items.front()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        self.items.iter()
    }

    pub fn clear(&mut self) {
        self.items.clear();
    }

    /// Puts the entries in the order `cmp` gives, keeping the order they came in among
    /// equals (a stable sort; entries nearly in order already cost little).
    pub fn sort_by(&mut self, cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
        self.items.make_contiguous().sort_by(cmp);
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }
}

/// One interval as the charts need it, on the run's time axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalPoint {
    /// End of the interval, seconds since the run started.
    pub t_s: f64,
    /// Its length, seconds.
    pub dt_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw: f64,
    pub write_bw: f64,
    /// Trims (an fio job file's trim jobs).
    pub trim_iops: f64,
    pub trim_bw: f64,
    pub errors: u64,
    pub ramp: bool,
    /// Response latency (service latency when not rate-limited), µs.
    pub lat: LatSummary,
    pub service: Option<LatSummary>,
}

impl IntervalPoint {
    /// `step_start_s` places the step's own clock on the run's time axis.
    pub fn from_report(r: &IntervalReport, step_start_s: f64) -> Self {
        IntervalPoint {
            t_s: step_start_s + r.end_s,
            dt_s: (r.end_s - r.start_s).max(0.0),
            read_iops: r.read_iops,
            write_iops: r.write_iops,
            read_bw: r.read_bw_bytes,
            write_bw: r.write_bw_bytes,
            trim_iops: r.trim_iops,
            trim_bw: r.trim_bw_bytes,
            errors: r.errors,
            ramp: r.ramp,
            lat: r.lat_us,
            service: r.service_lat_us,
        }
    }

    /// Every direction's rate: reads, writes and trims.
    pub fn iops(&self) -> f64 {
        self.read_iops + self.write_iops + self.trim_iops
    }

    /// Bytes per second of every direction.
    pub fn bw(&self) -> f64 {
        self.read_bw + self.write_bw + self.trim_bw
    }
}

/// One telemetry sample as the thermal chart needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThermalPoint {
    pub t_s: f64,
    pub temperature_c: Option<f64>,
    pub sensors_c: Vec<f64>,
    pub power_w: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_drops_oldest_when_full() {
        let mut r = Ring::new(3);
        for i in 0..5 {
            r.push(i);
        }
        assert_eq!(r.len(), 3);
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(r.first(), Some(&2));
        assert_eq!(r.last(), Some(&4));
    }

    #[test]
    fn zero_capacity_still_holds_one() {
        let mut r = Ring::new(0);
        r.push(1);
        r.push(2);
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), vec![2]);
    }
}
