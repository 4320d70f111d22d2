//! Waking a paced worker on time. A sleep ends late by the timer's and the scheduler's
//! latency (13-27 µs on this project's VM even with 1 µs timer slack, a few µs on bare
//! metal), and a paced I/O issued that late shows the lateness in its response time. So a
//! paced worker goes to sleep that much before the I/O is due and spins the rest, as fio's
//! `usec_sleep` sleeps its calibrated `ns_granularity` short and spins. The lead is measured
//! by each paced worker as it sets up, before the step's clock starts: a high percentile of
//! how late its own sleeps end, so a sleep rarely ends after the I/O is due.
//!
//! The lead is not learned while the step runs: a worker that spins through gaps shorter
//! than its lead never sleeps, so it would never see a lead come down again.
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

/// The sleeps measured: each length (ns) this many times, in turn.
const PROBE_LENGTHS_NS: [u64; 4] = [2_000, 10_000, 30_000, 60_000];
const PROBE_ROUNDS: usize = 12;

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

/// A spin with more than this left (ns) yields the CPU at each turn (a system call); closer
/// to the I/O it only spins.
const YIELD_ABOVE_NS: u64 = 2_000;

/// How early a paced worker must go to sleep to wake when an I/O is due.
#[derive(Debug)]
pub(crate) struct WakeLead {
    lead_ns: u64,
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
    /// as the run will have it): about 2-5 ms. The worker counts as paced until the lead
    /// is dropped.
    pub(crate) fn measure() -> Self {
        let mut late: Vec<u64> = Vec::with_capacity(PROBE_LENGTHS_NS.len() * PROBE_ROUNDS);
        for _ in 0..PROBE_ROUNDS {
            for ns in PROBE_LENGTHS_NS {
                let t = Instant::now();
                std::thread::sleep(Duration::from_nanos(ns));
                late.push((t.elapsed().as_nanos() as u64).saturating_sub(ns));
            }
        }
        let mut lead = Self::from_lateness(&mut late);
        PACED.fetch_add(1, Ordering::Relaxed);
        lead.counted = true;
        lead
    }

    /// The lead of a worker that is not paced (it never sleeps for an I/O).
    pub(crate) fn none() -> Self {
        WakeLead {
            lead_ns: MIN_LEAD_NS,
            counted: false,
        }
    }

    /// The lead for sleeps that ended this late (ns).
    fn from_lateness(late: &mut [u64]) -> Self {
        late.sort_unstable();
        let at = ((late.len() as f64 * PERCENTILE) as usize).min(late.len().saturating_sub(1));
        WakeLead {
            lead_ns: late
                .get(at)
                .copied()
                .unwrap_or(MIN_LEAD_NS)
                .clamp(MIN_LEAD_NS, MAX_LEAD_NS),
            counted: false,
        }
    }

    /// The lead (ns).
    #[cfg(test)]
    pub(crate) fn ns(&self) -> u64 {
        self.lead_ns
    }

    /// Whether the worker may spin to an I/O now: fewer paced workers than CPUs.
    pub(crate) fn spinning(&self) -> bool {
        PACED.load(Ordering::Relaxed) < cpus()
    }

    /// The lead now: none while the worker may not spin.
    fn now_ns(&self) -> u64 {
        if self.spinning() {
            self.lead_ns
        } else {
            0
        }
    }

    /// Whether `due` is too close to sleep for: the worker spins (or polls) until then.
    pub(crate) fn spin_to(&self, now: u64, due: u64) -> bool {
        due <= now.saturating_add(self.now_ns())
    }

    /// When to end a sleep for an I/O due at `due`.
    pub(crate) fn wake_for(&self, due: u64) -> u64 {
        due.saturating_sub(self.now_ns())
    }

    /// Sleeps until the lead before `due`, then spins until `due` (a sleep is never longer
    /// than the longest wait without looking at the stop flag); returns the time then.
    pub(crate) fn sleep_until(&self, t0: Instant, now: u64, due: u64) -> u64 {
        let asked = self.wake_for(due);
        if asked > now {
            let ns = asked - now;
            if ns > MAX_WAIT_NS {
                std::thread::sleep(Duration::from_nanos(MAX_WAIT_NS));
                return ns_since(t0);
            }
            std::thread::sleep(Duration::from_nanos(ns));
        }
        let mut now = ns_since(t0);
        while now < due {
            if due - now > YIELD_ABOVE_NS {
                // Another thread this CPU should run (a loop device's worker, another
                // job) runs now; with none, this returns at once.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
            now = ns_since(t0);
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lead_is_a_high_percentile_of_the_lateness_within_bounds() {
        let mut late: Vec<u64> = (1..=100).map(|i| i * 1_000).collect();
        assert_eq!(WakeLead::from_lateness(&mut late).ns(), 91_000);
        assert_eq!(WakeLead::from_lateness(&mut [5; 10]).ns(), MIN_LEAD_NS);
        assert_eq!(
            WakeLead::from_lateness(&mut [10_000_000; 10]).ns(),
            MAX_LEAD_NS
        );
        assert_eq!(WakeLead::from_lateness(&mut []).ns(), MIN_LEAD_NS);
    }

    #[test]
    fn a_measured_lead_is_within_bounds() {
        let l = WakeLead::measure().ns();
        assert!((MIN_LEAD_NS..=MAX_LEAD_NS).contains(&l), "{l}");
    }

    #[test]
    fn sleep_until_returns_no_earlier_than_due_and_spins_inside_the_lead() {
        let t0 = Instant::now();
        let w = WakeLead {
            lead_ns: 30_000,
            counted: false,
        };
        if !w.spinning() {
            return; // a one-CPU machine: never spins
        }
        for gap in [0, 10_000, 50_000, 200_000] {
            let now = ns_since(t0);
            assert_eq!(w.spin_to(now, now + gap), gap <= 30_000);
            let woke = w.sleep_until(t0, now, now + gap);
            assert!(woke >= now + gap);
        }
    }
}
