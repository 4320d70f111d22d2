//! Waking a paced worker on time. A sleep ends late by the timer's and the scheduler's
//! latency (13-28 µs on this project's VM even with 1 µs timer slack, a few µs on bare
//! metal), and a paced I/O issued that late shows the lateness in its response time. So a
//! paced worker goes to sleep that much before the I/O is due and spins the rest, as fio's
//! `usec_sleep` sleeps its calibrated `ns_granularity` short and spins. The lead is measured
//! by each paced worker as it sets up, before the step's clock starts: a high percentile of
//! how late its own sleeps end, for short, middling and long waits apart (a longer sleep
//! ends later on a VM: a deeper idle, a halt the host must wake), so a sleep rarely ends
//! after the I/O is due.
//!
//! The lead then follows what the worker's sleeps show while the step runs (on a VM the
//! host's halt polling adapts, so a sleep ends later or sooner than it did while the lead
//! was measured): a quarter of the way up to a sleep that ended later than its lead, a
//! sixty-fourth of the way down to one that ended sooner, so it stays near a high
//! percentile. A class's lead stays under its shortest wait, so its waits keep sleeping
//! and its lead keeps learning.
//!
//! Spinning takes a CPU. Where paced workers (of every drive this process runs) are as
//! many as the CPUs, a spinning worker would take the CPU the device's own completions
//! need (a loop device's worker thread, the interrupt's task work) and the drive would
//! look slower than it is: there the workers sleep until each I/O is due, as before, and
//! the timer's lateness shows in response time only (never in service time).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{ns_since, MAX_WAIT_NS};
use crate::outcome::Pacing;

/// The sleeps measured, each this many times in turn: one length (ns) for each class of
/// wait (13-20 µs late for 10 µs, 24-28 µs for 170 µs on this project's VM).
const PROBE_LENGTHS_NS: [u64; 3] = [10_000, 50_000, 200_000];
const PROBE_ROUNDS: usize = 16;

/// The longest wait (ns) of each class but the last, which takes every longer wait.
const CLASS_BOUNDS_NS: [u64; 2] = [30_000, 120_000];

/// The largest lead of each class (ns): no more than its shortest wait, so every wait of
/// the class but the shortest still sleeps and its lead keeps learning (a lead over a
/// class's waits would spin them all and never come down).
const CLASS_MAX_LEAD_NS: [u64; 3] = [30_000, 30_000, MAX_LEAD_NS];

/// Which of the measured latenesses is the lead: the 90th percentile.
const PERCENTILE: f64 = 0.9;

/// The lead is kept within these (ns): a machine too busy while it was measured spins at
/// most this long before an I/O.
const MIN_LEAD_NS: u64 = 1_000;
const MAX_LEAD_NS: u64 = 100_000;

/// Paced workers running in this process (each holds a [`WakeLead`] from `measure`).
static PACED: AtomicUsize = AtomicUsize::new(0);

/// The CPUs this process may run on.
fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The lead for sleeps that ended this late (ns): their 90th percentile, within bounds.
fn lead_of(late: &mut [u64]) -> u64 {
    late.sort_unstable();
    let at = ((late.len() as f64 * PERCENTILE) as usize).min(late.len().saturating_sub(1));
    late.get(at)
        .copied()
        .unwrap_or(MIN_LEAD_NS)
        .clamp(MIN_LEAD_NS, MAX_LEAD_NS)
}

/// The class of a wait of `gap` ns.
fn class_of(gap: u64) -> usize {
    CLASS_BOUNDS_NS.iter().take_while(|&&b| gap > b).count()
}

/// How early a paced worker must go to sleep to wake when an I/O is due.
#[derive(Debug)]
pub(crate) struct WakeLead {
    /// The lead for each class of wait (ns).
    lead_ns: [u64; 3],
    /// Counted in [`PACED`] (until dropped).
    counted: bool,
}

impl Drop for WakeLead {
    fn drop(&mut self) {
        if self.counted {
            PACED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl WakeLead {
    /// Measures how late this thread's sleeps end (call it with the thread's timer slack
    /// as the run will have it): about 5 ms. The worker counts as paced until the lead is
    /// dropped.
    pub(crate) fn measure() -> Self {
        let mut late: [Vec<u64>; 3] = Default::default();
        for _ in 0..PROBE_ROUNDS {
            for (class, ns) in PROBE_LENGTHS_NS.into_iter().enumerate() {
                let t = Instant::now();
                std::thread::sleep(Duration::from_nanos(ns));
                late[class].push((t.elapsed().as_nanos() as u64).saturating_sub(ns));
            }
        }
        PACED.fetch_add(1, Ordering::Relaxed);
        let mut lead_ns = late.map(|mut l| lead_of(&mut l));
        for (l, max) in lead_ns.iter_mut().zip(CLASS_MAX_LEAD_NS) {
            *l = (*l).min(max);
        }
        WakeLead {
            lead_ns,
            counted: true,
        }
    }

    /// The lead of a worker that is not paced (it never sleeps for an I/O).
    pub(crate) fn none() -> Self {
        WakeLead {
            lead_ns: [MIN_LEAD_NS; 3],
            counted: false,
        }
    }

    /// Whether the worker may spin to an I/O now: fewer paced workers than CPUs.
    pub(crate) fn spinning(&self) -> bool {
        PACED.load(Ordering::Relaxed) < cpus()
    }

    /// The lead for a schedule whose I/Os are `period_ns` apart (on average), or none: the
    /// worker then sleeps to each I/O's due time, as it did before the lead. None while
    /// the worker may not spin, and none where the lead is over half the period: spinning
    /// most of each gap keeps a CPU busy, and on a busy machine that CPU was the one the
    /// device's own completions needed (a loop device's worker paced at 50k IOPS on two
    /// CPUs with a build running: service p50 23 -> 36-98 µs).
    pub(crate) fn lead(&self, period_ns: f64) -> Option<u64> {
        self.lead_if(self.spinning(), period_ns)
    }

    /// [`lead`](Self::lead) for a worker that may spin or not.
    fn lead_if(&self, may_spin: bool, period_ns: f64) -> Option<u64> {
        let l = self.lead_ns[class_of(period_ns as u64)];
        (may_spin && period_ns >= 2.0 * l as f64).then_some(l)
    }

    /// How this worker paces a schedule of `period_ns`, as the step's summary records it.
    pub(crate) fn pacing(&self, period_ns: f64) -> Pacing {
        let lead_us = self.lead_ns[class_of(period_ns as u64)] as f64 / 1000.0;
        match self.lead(period_ns) {
            Some(_) => Pacing::OnTime { lead_us },
            None if !self.spinning() => Pacing::NoSpareCpu {
                workers: PACED.load(Ordering::Relaxed),
                cpus: cpus(),
            },
            None => Pacing::LeadOverHalfPeriod {
                lead_us,
                period_us: period_ns / 1000.0,
            },
        }
    }

    /// A sleep on a schedule of `period_ns`, asked to end at `asked`, ended at `woke`: the
    /// lead of its class moves toward that lateness (up fast, down slowly).
    pub(crate) fn woke(&mut self, period_ns: f64, asked: u64, woke: u64) {
        let class = class_of(period_ns as u64);
        let late = woke.saturating_sub(asked).min(CLASS_MAX_LEAD_NS[class]);
        let lead = &mut self.lead_ns[class];
        if late > *lead {
            *lead += (late - *lead) / 8;
        } else {
            *lead -= (*lead - late) / 64;
        }
        *lead = (*lead).clamp(MIN_LEAD_NS, CLASS_MAX_LEAD_NS[class]);
    }

    /// Sleeps until the lead before `due` and spins until `due` (on a schedule of
    /// `period_ns`; without a lead it sleeps until `due`); returns the time then. A sleep is
    /// never longer than the longest wait without looking at the stop flag.
    pub(crate) fn sleep_until(&mut self, t0: Instant, now: u64, due: u64, period_ns: f64) -> u64 {
        let lead = self.lead(period_ns);
        let asked = due.saturating_sub(lead.unwrap_or(0));
        if asked > now {
            let ns = asked - now;
            if ns > MAX_WAIT_NS {
                std::thread::sleep(Duration::from_nanos(MAX_WAIT_NS));
                return ns_since(t0);
            }
            std::thread::sleep(Duration::from_nanos(ns));
            // Learnt from with a lead or without (a class whose lead grew past half its
            // period sleeps to the due time, and comes back when its sleeps end sooner).
            if self.spinning() {
                self.woke(period_ns, asked, ns_since(t0));
            }
        }
        let mut now = ns_since(t0);
        // A spin, not a yield: a yield that lets another thread run came back 4-5 µs late
        // (the median paced NOP's response at 5k IOPS, against 1 µs spinning).
        while now < due {
            std::hint::spin_loop();
            now = ns_since(t0);
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lead(lead_ns: [u64; 3]) -> WakeLead {
        WakeLead {
            lead_ns,
            counted: false,
        }
    }

    #[test]
    fn the_lead_is_a_high_percentile_of_the_lateness_within_bounds() {
        let mut late: Vec<u64> = (1..=100).map(|i| i * 1_000).collect();
        assert_eq!(lead_of(&mut late), 91_000);
        assert_eq!(lead_of(&mut [5; 10]), MIN_LEAD_NS);
        assert_eq!(lead_of(&mut [10_000_000; 10]), MAX_LEAD_NS);
        assert_eq!(lead_of(&mut []), MIN_LEAD_NS);
    }

    #[test]
    fn a_schedule_takes_the_lead_of_its_class_where_it_is_under_half_the_period() {
        let w = lead([5_000, 20_000, 40_000]);
        assert_eq!(w.lead_if(true, 10_000.0), Some(5_000));
        assert_eq!(w.lead_if(true, 9_000.0), None, "5 µs is over half of 9 µs");
        assert_eq!(w.lead_if(true, 50_000.0), Some(20_000));
        assert_eq!(w.lead_if(true, 35_000.0), None);
        assert_eq!(w.lead_if(true, 1_000_000.0), Some(40_000));
        assert_eq!(w.lead_if(false, 1_000_000.0), None, "no CPU to spare");
    }

    #[test]
    fn a_class_lead_rises_fast_to_lateness_and_falls_slowly() {
        let mut w = lead([20_000, 20_000, 20_000]);
        for _ in 0..80 {
            w.woke(200_000.0, 0, 60_000);
        }
        assert!(w.lead_ns[2] > 59_000, "{:?}", w.lead_ns);
        assert_eq!(w.lead_ns[..2], [20_000, 20_000], "other classes are left");
        w.woke(200_000.0, 0, 0);
        assert!(w.lead_ns[2] > 58_000, "one early wake barely moves it");
        for _ in 0..1000 {
            w.woke(200_000.0, 0, 3_000);
        }
        assert!((3_000..3_100).contains(&w.lead_ns[2]), "{:?}", w.lead_ns);
        w.woke(10_000.0, 0, 10_000_000);
        assert!(
            w.lead_ns[0] <= MAX_LEAD_NS,
            "a preemption moves it a bounded step"
        );
    }

    #[test]
    fn sleep_until_returns_no_earlier_than_due() {
        let t0 = Instant::now();
        let mut w = lead([10_000, 30_000, 30_000]);
        for (gap, period) in [
            (0, 1e6),
            (10_000, 1e6),
            (50_000, 1e6),
            (200_000, 1e6),
            (30_000, 1e3),
        ] {
            let now = ns_since(t0);
            let woke = w.sleep_until(t0, now, now + gap, period);
            assert!(woke >= now + gap);
        }
    }
}
