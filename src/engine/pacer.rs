//! Absolute rate schedule (as wrk2 and fio's `rate_iops`): I/O number i is due at
//! `start + i / rate`. A worker issues an I/O only when it is due, sleeps only when ahead,
//! and never bursts beyond its free queue slots; a late I/O keeps its intended time, so
//! response latency counts the wait a stalled drive caused (no coordinated omission).

/// Where job `job` of `jobs`, each paced at `job_rate`, starts its schedule: the jobs'
/// schedules interleave evenly (job j one whole-step period after job j-1), so the step's
/// I/Os are spaced as one schedule at the total rate, not `jobs` at a time.
pub fn stagger_ns(job: usize, jobs: u32, job_rate: f64) -> u64 {
    let total = job_rate * f64::from(jobs.max(1));
    (job as f64 * 1e9 / total) as u64
}

#[derive(Debug, Clone)]
pub struct Pacer {
    start_ns: u64,
    period_ns: f64,
    issued: u64,
}

impl Pacer {
    /// `rate` in I/Os per second (> 0).
    pub fn new(start_ns: u64, rate: f64) -> Self {
        Pacer {
            start_ns,
            period_ns: 1e9 / rate,
            issued: 0,
        }
    }

    /// Intended issue time of the next I/O.
    #[inline]
    pub fn next_due(&self) -> u64 {
        self.start_ns + (self.issued as f64 * self.period_ns) as u64
    }

    /// Moves the whole schedule later by `ns` (after a pause).
    pub fn shift(&mut self, ns: u64) {
        self.start_ns += ns;
    }

    /// Takes the next I/O if it is due at `now`, returning its intended time.
    #[inline]
    pub fn take_due(&mut self, now: u64) -> Option<u64> {
        let due = self.next_due();
        if due <= now {
            self.issued += 1;
            Some(due)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_schedule_does_not_drift_or_burst_past_due() {
        let mut p = Pacer::new(1_000, 1000.0); // one per ms
        assert_eq!(p.take_due(1_000), Some(1_000));
        assert_eq!(p.take_due(1_000), None);
        // Late by 3.5 ms: the three due ones come out with their intended times, then none.
        let got: Vec<u64> = std::iter::from_fn(|| p.take_due(4_501_000)).collect();
        assert_eq!(got, vec![1_001_000, 2_001_000, 3_001_000, 4_001_000]);
        assert_eq!(p.next_due(), 5_001_000);
    }

    #[test]
    fn jobs_interleave_into_one_schedule() {
        // 1 IOPS over 4 jobs: one I/O every second in all, not four at t0.
        let starts: Vec<u64> = (0..4).map(|j| stagger_ns(j, 4, 0.25)).collect();
        assert_eq!(starts, vec![0, 1_000_000_000, 2_000_000_000, 3_000_000_000]);
        let mut due: Vec<u64> = (0..4)
            .flat_map(|j| {
                let mut p = Pacer::new(starts[j], 0.25);
                std::iter::from_fn(move || p.take_due(7_999_999_999)).collect::<Vec<_>>()
            })
            .collect();
        due.sort_unstable();
        assert_eq!(due, (0..8).map(|i| i * 1_000_000_000).collect::<Vec<_>>());
    }
}
