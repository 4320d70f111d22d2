//! Absolute rate schedule (as wrk2 and fio's `rate_iops`): I/O number i is due at
//! `start + i / rate`. A worker issues an I/O only when it is due, sleeps only when ahead,
//! and never bursts beyond its free queue slots; a late I/O keeps its intended time, so
//! response latency counts the wait a stalled drive caused (no coordinated omission).
//!
//! Poisson arrivals (vdbench's default) keep that schedule's anchors: the I/Os are taken in
//! blocks of [`POISSON_BLOCK`], and within a block the gaps are seeded exponential draws
//! scaled so the block's last I/O is due exactly when the even schedule's would be. That is
//! a Poisson process conditioned on its count per block: the gaps' coefficient of variation
//! is √((n−1)/(n+1)) ≈ 0.996, the rate is exact at every block's end, and the count of I/Os
//! due by any time is never a block away from the even schedule's, however low the rate.

use crate::engine::Rng;
use crate::workload::{Arrivals, Workload};

/// I/Os per block of a Poisson schedule.
pub const POISSON_BLOCK: usize = 256;

/// Where, in periods from the block's start, each I/O of a Poisson block is due.
#[derive(Debug, Clone)]
struct PoissonBlocks {
    rng: Rng,
    /// Cumulative offsets; the last is exactly `POISSON_BLOCK`.
    due: Box<[f64]>,
}

impl PoissonBlocks {
    fn new(seed: u64) -> Self {
        let mut b = PoissonBlocks {
            rng: Rng::new(seed),
            due: vec![0.0; POISSON_BLOCK].into_boxed_slice(),
        };
        b.draw();
        b
    }

    /// The next block's gaps: exponential, scaled to add up to the block's length.
    fn draw(&mut self) {
        let mut sum = 0.0;
        for d in self.due.iter_mut() {
            sum += self.rng.exp1();
            *d = sum;
        }
        let scale = POISSON_BLOCK as f64 / sum;
        for d in self.due.iter_mut() {
            *d *= scale;
        }
        if let Some(last) = self.due.last_mut() {
            *last = POISSON_BLOCK as f64;
        }
    }
}

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
    poisson: Option<PoissonBlocks>,
}

impl Pacer {
    /// `rate` in I/Os per second (> 0), arriving as `arrivals` says; `seed` draws the
    /// Poisson gaps.
    pub fn new(start_ns: u64, rate: f64, arrivals: Arrivals, seed: u64) -> Self {
        Pacer {
            start_ns,
            period_ns: 1e9 / rate,
            issued: 0,
            poisson: match arrivals {
                Arrivals::Uniform => None,
                Arrivals::Poisson => Some(PoissonBlocks::new(seed)),
            },
        }
    }

    /// Job `job`'s pacer for its share `rate` of a step's rate, if the step is paced: its
    /// own seed, so jobs' Poisson streams are independent (and their sum Poisson too).
    pub fn for_job(w: &Workload, job: usize, rate: Option<f64>) -> Option<Pacer> {
        let seed = w.seed ^ 0xA881_7A15 ^ (job as u64).rotate_left(32);
        rate.map(|r| Pacer::new(stagger_ns(job, w.jobs, r), r, w.arrivals, seed))
    }

    /// Intended issue time of the next I/O.
    #[inline]
    pub fn next_due(&self) -> u64 {
        let periods = match &self.poisson {
            None => self.issued as f64,
            Some(b) => {
                let block = self.issued / POISSON_BLOCK as u64;
                let k = (self.issued % POISSON_BLOCK as u64) as usize;
                (block * POISSON_BLOCK as u64) as f64 + b.due[k]
            }
        };
        self.start_ns + (periods * self.period_ns) as u64
    }

    /// The mean gap between this worker's I/Os (ns).
    pub fn period_ns(&self) -> f64 {
        self.period_ns
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
            if let Some(b) = &mut self.poisson {
                if self.issued.is_multiple_of(POISSON_BLOCK as u64) {
                    b.draw();
                }
            }
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
        let mut p = Pacer::new(1_000, 1000.0, Arrivals::Uniform, 0); // one per ms
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
                let mut p = Pacer::new(starts[j], 0.25, Arrivals::Uniform, 0);
                std::iter::from_fn(move || p.take_due(7_999_999_999)).collect::<Vec<_>>()
            })
            .collect();
        due.sort_unstable();
        assert_eq!(due, (0..8).map(|i| i * 1_000_000_000).collect::<Vec<_>>());
    }

    /// The intended times of the I/Os due in the first `secs` seconds.
    fn schedule(arrivals: Arrivals, rate: f64, secs: f64, seed: u64) -> Vec<u64> {
        let mut p = Pacer::new(0, rate, arrivals, seed);
        let end = (secs * 1e9) as u64;
        std::iter::from_fn(|| p.take_due(end)).collect()
    }

    /// Coefficient of variation of the gaps between consecutive times.
    fn gap_cv(times: &[u64]) -> f64 {
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
        var.sqrt() / mean
    }

    #[test]
    fn poisson_gaps_vary_as_exponential_ones_and_uniform_ones_do_not() {
        for rate in [200.0, 5_000.0, 150_000.0] {
            let poisson = schedule(Arrivals::Poisson, rate, 30.0, 7);
            let cv = gap_cv(&poisson);
            assert!((0.95..1.05).contains(&cv), "poisson at {rate}: CV {cv}");
            let uniform = schedule(Arrivals::Uniform, rate, 30.0, 7);
            let cv = gap_cv(&uniform);
            assert!(cv < 0.01, "uniform at {rate}: CV {cv}");
        }
    }

    #[test]
    fn poisson_keeps_the_rate_exact_over_a_step() {
        // Over a 30 s step (and shorter ones), the I/Os due are the rate's count to within
        // 0.5%, and never a block or more away from it, even at a slow disk's rate.
        for (rate, secs) in [
            (50.0, 30.0),
            (400.0, 30.0),
            (224_100.0, 30.0),
            (3_000.0, 2.0),
        ] {
            let want = rate * secs;
            for seed in 0..5 {
                let got = schedule(Arrivals::Poisson, rate, secs, seed).len() as f64;
                let off = (got - want).abs();
                assert!(
                    off < POISSON_BLOCK as f64,
                    "{rate} IOPS, seed {seed}: {got}"
                );
                assert!(
                    want < 5_000.0 || off / want < 0.005,
                    "{rate} IOPS for {secs} s, seed {seed}: {got} due, {want} expected"
                );
            }
        }
        // Every block ends where the even schedule's I/O of the same number is due.
        let poisson = schedule(Arrivals::Poisson, 1_000.0, 10.0, 3);
        let uniform = schedule(Arrivals::Uniform, 1_000.0, 10.0, 3);
        for k in (POISSON_BLOCK..poisson.len()).step_by(POISSON_BLOCK) {
            let (p, u) = (poisson[k - 1], uniform[k]);
            assert!(p.abs_diff(u) <= 1, "block end {k}: {p} vs {u}");
        }
    }

    #[test]
    fn poisson_is_seeded_and_jobs_differ() {
        assert_eq!(
            schedule(Arrivals::Poisson, 1_000.0, 1.0, 9),
            schedule(Arrivals::Poisson, 1_000.0, 1.0, 9)
        );
        let w = Workload {
            jobs: 2,
            rate_iops: Some(2_000.0),
            arrivals: Arrivals::Poisson,
            ..Workload::new(
                crate::workload::RwMode::RandRead,
                crate::workload::BlockSizes::single(4096),
                1,
                crate::workload::Region {
                    offset: 0,
                    len: 1 << 20,
                },
                1,
            )
        };
        let take = |job| {
            let mut p = Pacer::for_job(&w, job, Some(1_000.0)).expect("paced");
            std::iter::from_fn(|| p.take_due(1_000_000_000)).collect::<Vec<u64>>()
        };
        assert_ne!(take(0), take(1));
        assert!(Pacer::for_job(&w, 0, None).is_none(), "closed loop");
    }
}
