//! A paced step whose workers are starved of CPU, simulated on an injected clock: each
//! worker turns only when the simulation lets it (descheduled for long stretches, as on a
//! loaded machine, and across the ramp's end), takes the I/Os due into its free slots as
//! the io_uring loop does, and reports its intervals through the real tally and holds;
//! the collector's merger and totals make the step's figures. However late the workers
//! ran, the step's I/Os are at most its rate times its measured time, plus one per job.

use std::sync::mpsc;

use super::iogen::IoDir;
use super::merger::Merger;
use super::pacer::{stagger_ns, Pacer, POISSON_BLOCK};
use super::pause::Holds;
use super::schedule::Schedule;
use super::tally::IntervalTally;
use super::totals::Totals;
use super::WorkerMsg;
use crate::engine::Rng;
use crate::workload::Arrivals;

const MS: u64 = 1_000_000;

/// One simulated step.
struct Sim {
    rate: f64,
    jobs: usize,
    depth: usize,
    arrivals: Arrivals,
    /// How long each I/O takes at the device (ns).
    service_ns: u64,
    schedule: Schedule,
    /// The step's end (ns since its start): the ramp and the duration.
    end_ns: u64,
    /// The worker runs for up to `on_ns` (at random), then is descheduled for up to
    /// `off_ns`, and so on.
    on_ns: u64,
    off_ns: u64,
    /// Every worker is descheduled over this span (ns), whatever its turns.
    stretch: (u64, u64),
    /// The user pauses over this span (the flag as the workers read it).
    pause: Option<(u64, u64)>,
    /// The whole process stands still over this span; the collector leaves the intervals
    /// it touches out, the workers do not see it (no evidence of a suspension reaches
    /// them) and catch up after it.
    suspension: Option<(u64, u64)>,
}

/// What the simulated step measured.
struct Measured {
    /// The step's I/Os, as the summary counts them.
    ios: u64,
    /// Its measured time (s).
    runtime_s: f64,
    /// The I/Os completed in its measured intervals, as counted before (by completion).
    completed_in_window: u64,
}

/// Runs job `job`'s worker on the injected clock, its intervals sent to `tx`.
fn worker(sim: &Sim, job: usize, tx: mpsc::Sender<WorkerMsg>) {
    let (_spare_tx, spare) = mpsc::channel();
    let mut rec = IntervalTally::new(job, sim.schedule, true, tx, &spare);
    let job_rate = sim.rate / sim.jobs as f64;
    let start = stagger_ns(job, sim.jobs as u32, job_rate);
    let mut pacer = Pacer::new(start, job_rate, sim.arrivals, 7 + job as u64);
    let mut rng = Rng::new(0x5EED ^ job as u64);
    let mut holds = Holds::new(0);
    // In flight: (completes at, submitted at, intended).
    let mut inflight: Vec<(u64, u64, u64)> = Vec::new();
    let mut end = sim.end_ns;
    let mut stopping = false;
    let mut paused = false;
    let mut now = 0u64;
    let mut off_at = rng.below(sim.on_ns);
    loop {
        if !stopping {
            let flag = sim.pause.is_some_and(|(a, b)| (a..b).contains(&now));
            let resumed;
            (paused, resumed) = holds.turn(flag, now, &mut rec);
            if resumed > 0 {
                end += resumed;
                pacer.shift(resumed);
            }
            if !paused && now >= end {
                stopping = true;
            } else {
                rec.maybe_flush(now);
            }
        }
        inflight.retain(|&(done, submit, intended)| {
            let reaped = done <= now;
            if reaped {
                rec.complete(IoDir::Read, 4096, 0, 4096, submit, intended, now);
            }
            !reaped
        });
        if stopping && inflight.is_empty() {
            break;
        }
        while !stopping && !paused && inflight.len() < sim.depth {
            let Some(t) = pacer.take_due(now) else { break };
            rec.arrived(t);
            inflight.push((now + sim.service_ns, now, t));
        }
        // The next turn: the next completion, due I/O, boundary or end, as the loop waits
        // for them; then perhaps descheduled.
        let mut next = inflight.iter().map(|i| i.0).min().unwrap_or(u64::MAX);
        if !stopping {
            next = next.min(rec.next_boundary()).min(end);
            if paused {
                next = next.min(now + 20 * MS);
            } else if inflight.len() < sim.depth {
                next = next.min(pacer.next_due());
            }
        }
        next = next.max(now + 2_000);
        if next >= off_at {
            next += rng.below(sim.off_ns);
            off_at = next + rng.below(sim.on_ns);
        }
        for (a, b) in [Some(sim.stretch), sim.suspension].into_iter().flatten() {
            if (a..b).contains(&next) {
                next = b + rng.below(MS);
            }
        }
        now = next;
    }
    holds.close(now, &mut rec);
    rec.flush(now, true);
}

/// Runs the step: every worker, then the collector over what they sent.
fn run(sim: &Sim) -> Measured {
    let (tx, rx) = mpsc::channel();
    for job in 0..sim.jobs {
        worker(sim, job, tx.clone());
    }
    drop(tx);
    let mut merger = Merger::new(sim.jobs, sim.schedule, true);
    let mut totals = Totals::new(true, sim.schedule);
    let suspensions: Vec<(u64, u64)> = sim.suspension.into_iter().collect();
    let mut completed_in_window = 0;
    for msg in rx.iter() {
        if let WorkerMsg::Interval(wi) = msg {
            merger.add(wi);
        }
        while let Some(m) = merger.next(&suspensions) {
            if !m.report.ramp && m.suspended_ns == 0 {
                completed_in_window += m.report.read.ios;
            }
            totals.count(&m);
        }
    }
    assert!(merger.finished(), "every interval handed on");
    Measured {
        ios: totals.dirs.iter().map(|d| d.ios).sum(),
        runtime_s: totals.runtime_s(merger.held()),
        completed_in_window,
    }
}

/// The sweep test's step: 8 jobs at QD16, a 150 ms ramp, 0.9 s measured, 250 ms intervals,
/// every worker off the CPU for 110 ms across the ramp's end, and otherwise on it for up
/// to 40 ms at a time and off it for up to 40 ms (half the time, as under two CPU burners
/// a core).
fn sweep_point(rate: f64, arrivals: Arrivals) -> Sim {
    let ramp = 150 * MS;
    Sim {
        rate,
        jobs: 8,
        depth: 16,
        arrivals,
        service_ns: 150_000,
        schedule: Schedule::new(
            std::time::Duration::from_millis(250),
            std::time::Duration::from_nanos(ramp),
        ),
        end_ns: ramp + 900 * MS,
        on_ns: 40 * MS,
        off_ns: 40 * MS,
        stretch: (ramp - 100 * MS, ramp + 10 * MS),
        pause: None,
        suspension: None,
    }
}

/// The bound: the schedule's I/Os in the measured time, plus one per job for each of the
/// `runs` stretches of measured intervals (a Poisson schedule's count is within a block of
/// the even one's at every time, so two blocks per job a stretch).
fn bound(sim: &Sim, runtime_s: f64, runs: f64) -> f64 {
    let per_job = match sim.arrivals {
        Arrivals::Uniform => 1.0,
        Arrivals::Poisson => 2.0 * POISSON_BLOCK as f64,
    };
    sim.rate * runtime_s + runs * per_job * sim.jobs as f64
}

impl Measured {
    /// Asserts that the step measured a time in `runtime` (s) and counted at most its
    /// schedule's I/Os in it, and at least `least` of them; returns the bound.
    fn within_schedule(
        &self,
        sim: &Sim,
        runtime: std::ops::Range<f64>,
        runs: f64,
        least: f64,
    ) -> f64 {
        let what = format!("{} I/Os in {} s at {}", self.ios, self.runtime_s, sim.rate);
        assert!(
            runtime.contains(&self.runtime_s),
            "{what}: not {runtime:?} s"
        );
        let limit = bound(sim, self.runtime_s, runs);
        assert!(self.ios as f64 <= limit, "{what}: the schedule's {limit}");
        assert!(
            self.ios as f64 >= least * sim.rate * self.runtime_s,
            "{what}: below {least} of it"
        );
        limit
    }

    /// Asserts that counted by completion the measured intervals held more than `limit`:
    /// the workers did catch up into them (what the sweep's points showed under load).
    fn caught_up(&self, limit: f64) {
        assert!(
            self.completed_in_window as f64 > limit,
            "no catch-up: {} completed in the window, the schedule's {limit}",
            self.completed_in_window
        );
    }
}

#[test]
fn a_starved_paced_step_never_counts_above_its_schedule() {
    for rate in [20_000.0, 60_000.0, 307_700.0] {
        let sim = sweep_point(rate, Arrivals::Uniform);
        let m = run(&sim);
        // The duration, and the last worker's drain (it may be descheduled meanwhile);
        // most of the schedule done.
        let limit = m.within_schedule(&sim, 0.9..0.95, 1.0, 0.9);
        m.caught_up(limit);
    }
}

#[test]
fn a_starved_poisson_step_stays_within_its_blocks() {
    let sim = sweep_point(60_000.0, Arrivals::Poisson);
    let m = run(&sim);
    m.within_schedule(&sim, 0.9..0.95, 1.0, 0.9);
    m.caught_up(bound(
        &Sim {
            arrivals: Arrivals::Uniform,
            ..sim
        },
        m.runtime_s,
        1.0,
    ));
}

#[test]
fn a_pause_leaves_the_held_span_out_of_the_measured_time() {
    let mut sim = sweep_point(20_000.0, Arrivals::Uniform);
    sim.pause = Some((400 * MS, 700 * MS));
    let m = run(&sim);
    // The step's end moved on by the pause: 0.9 s measured however late each worker saw
    // the flag, and the schedule resumed where it was (no catch-up of the paused span).
    m.within_schedule(&sim, 0.9..1.0, 1.0, 0.9);
}

#[test]
fn a_suspension_the_workers_missed_is_not_caught_up_into_the_figures() {
    // The process stood still for 0.4 s, up to just before an interval's end; the
    // collector left the intervals it touched out, the workers saw nothing and caught the
    // span's I/Os up after it, into the next interval.
    let mut sim = sweep_point(20_000.0, Arrivals::Uniform);
    sim.suspension = Some((500 * MS, 897 * MS));
    let m = run(&sim);
    // Intervals 1 (150-400 ms) and 4 (900 ms to the end) are measured, two stretches; 2
    // and 3 are left out.
    let limit = m.within_schedule(&sim, 0.35..0.45, 2.0, 0.5);
    m.caught_up(limit);
}
