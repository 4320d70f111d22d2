//! What the exporter holds between scrapes: per drive, the counters and the latest
//! interval's figures and telemetry, updated once per interval by the hub's sink.

use hdrhistogram::Histogram;

use crate::stats::{IntervalReport, LatSummary};
use crate::telemetry::SmartReading;

/// The histogram's upper bounds, seconds: 1-2-5 from 10 µs to 10 s (a 4K read of a fast
/// NVMe drive to a stalled HDD), then +Inf.
pub const LATENCY_BUCKETS_S: [f64; 19] = [
    10e-6, 20e-6, 50e-6, 100e-6, 200e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3,
    200e-3, 500e-3, 1.0, 2.0, 5.0, 10.0,
];

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunState {
    #[default]
    Starting,
    Running,
    Completed,
    Stopped,
    Failed,
}

impl RunState {
    pub const ALL: [RunState; 5] = [
        RunState::Starting,
        RunState::Running,
        RunState::Completed,
        RunState::Stopped,
        RunState::Failed,
    ];

    pub fn word(self) -> &'static str {
        match self {
            RunState::Starting => "starting",
            RunState::Running => "running",
            RunState::Completed => "completed",
            RunState::Stopped => "stopped",
            RunState::Failed => "failed",
        }
    }
}

/// One direction's latency histogram: counts per bucket of [`LATENCY_BUCKETS_S`] (and one
/// past the last, +Inf), with the sum of the latencies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyCounts {
    pub buckets: [u64; LATENCY_BUCKETS_S.len() + 1],
    pub sum_s: f64,
    pub count: u64,
}

impl LatencyCounts {
    /// Adds every I/O of an interval's histogram (nanoseconds).
    pub fn add(&mut self, h: &Histogram<u64>) {
        for v in h.iter_recorded() {
            let n = v.count_at_value();
            let s = h.median_equivalent(v.value_iterated_to()) as f64 / 1e9;
            let i = LATENCY_BUCKETS_S
                .iter()
                .position(|b| s <= *b)
                .unwrap_or(LATENCY_BUCKETS_S.len());
            self.buckets[i] += n;
            self.sum_s += s * n as f64;
            self.count += n;
        }
    }
}

/// One drive's figures.
#[derive(Debug, Clone, Default)]
pub struct DriveFigures {
    pub label: String,
    pub host: String,
    /// I/Os and bytes completed since the run started: reads, writes, trims.
    pub ios: [u64; 3],
    pub bytes: [u64; 3],
    pub errors: u64,
    /// The latest interval's rates: reads, writes, trims.
    pub iops: [f64; 3],
    pub bandwidth: [f64; 3],
    pub latency: [LatencyCounts; 3],
    /// The latest interval's percentiles of every I/O, microseconds.
    pub interval_latency: Option<LatSummary>,
    pub smart: Option<SmartReading>,
    pub preset: String,
    pub phase: String,
    pub step: String,
    pub target_iops: Option<f64>,
    /// How this drive's part of the run ended; `None` while it goes on.
    pub ended: Option<RunState>,
}

impl DriveFigures {
    pub fn new(label: String, host: String) -> DriveFigures {
        DriveFigures {
            label,
            host,
            ..DriveFigures::default()
        }
    }

    /// Adds a merged interval: its counts, its rates as the latest, its histograms.
    pub fn interval(&mut self, r: &IntervalReport) {
        for (d, c) in [&r.read, &r.write, &r.trim].into_iter().enumerate() {
            self.ios[d] += c.ios;
            self.bytes[d] += c.bytes;
        }
        self.errors += r.errors;
        self.iops = [r.read_iops, r.write_iops, r.trim_iops];
        self.bandwidth = [r.read_bw_bytes, r.write_bw_bytes, r.trim_bw_bytes];
        self.interval_latency = Some(r.lat_us);
        if let Some(h) = &r.hists {
            // The histogram `lat_us` describes: response latency when paced, else service.
            let hists = h.response.as_ref().unwrap_or(&h.service);
            for (d, hist) in hists.iter().enumerate() {
                self.latency[d].add(hist);
            }
        }
    }
}

impl RunState {
    /// The run's state from its drives': running while any goes on, else the worst end
    /// (failed over stopped over completed).
    pub fn of(drives: &[DriveFigures]) -> RunState {
        let mut state = RunState::Completed;
        for d in drives {
            match d.ended {
                None => return RunState::Running,
                Some(RunState::Failed) => state = RunState::Failed,
                Some(RunState::Stopped) if state != RunState::Failed => state = RunState::Stopped,
                Some(_) => {}
            }
        }
        state
    }
}

/// Everything the exporter shows.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub drives: Vec<DriveFigures>,
    pub state: RunState,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_land_in_their_buckets_with_their_sum() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
        h.record_n(15_000, 3).unwrap(); // 15 µs: the 20 µs bucket
        h.record(3_000_000).unwrap(); // 3 ms: the 5 ms bucket
        h.record(30_000_000_000).unwrap(); // 30 s: +Inf
        let mut c = LatencyCounts::default();
        c.add(&h);
        assert_eq!(c.count, 5);
        assert_eq!(c.buckets[1], 3);
        assert_eq!(c.buckets[8], 1);
        assert_eq!(c.buckets[LATENCY_BUCKETS_S.len()], 1);
        assert!(
            (c.sum_s - (45e-6 + 3e-3 + 30.0)).abs() < 0.05,
            "{}",
            c.sum_s
        );
    }

    #[test]
    fn a_run_of_several_drives_runs_until_the_last_ends_and_says_the_worst_end() {
        let mut d = vec![DriveFigures::default(), DriveFigures::default()];
        d[0].ended = Some(RunState::Completed);
        assert_eq!(RunState::of(&d), RunState::Running);
        d[1].ended = Some(RunState::Stopped);
        assert_eq!(RunState::of(&d), RunState::Stopped);
        d[0].ended = Some(RunState::Failed);
        assert_eq!(RunState::of(&d), RunState::Failed);
        d[0].ended = Some(RunState::Completed);
        d[1].ended = Some(RunState::Completed);
        assert_eq!(RunState::of(&d), RunState::Completed);
    }
}
