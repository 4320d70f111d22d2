//! HdrHistogram construction and the latency summaries (µs) derived from it.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Lowest latency told apart: 1 µs, in nanoseconds.
pub const LOWEST_NS: u64 = 1_000;
/// Highest latency tracked: 60 s, in nanoseconds; longer ones are clamped to it.
pub const HIGHEST_NS: u64 = 60_000_000_000;
/// Significant digits kept.
pub const SIGFIG: u8 = 3;

/// A histogram with drivescope's bounds (1 µs to 60 s, 3 significant digits, ns units).
pub fn new_histogram() -> Histogram<u64> {
    match Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGFIG) {
        Ok(h) => h,
        // The bounds are constants that hdrhistogram accepts; this arm is unreachable in
        // practice, and a default histogram is still correct (just wider).
        Err(_) => Histogram::new(SIGFIG).unwrap_or_else(|_| Histogram::new(2).expect("hdr")),
    }
}

/// The latency histograms of one worker or of a merged interval: service time (completion
/// minus submission) per direction and, for rate-limited steps, response time (completion
/// minus intended issue time) per direction. Index 0 is read, 1 is write, 2 is trim.
#[derive(Debug, Clone)]
pub struct LatHists {
    pub service: [Histogram<u64>; 3],
    pub response: Option<[Histogram<u64>; 3]>,
}

impl LatHists {
    pub fn new(paced: bool) -> Self {
        let three = || [new_histogram(), new_histogram(), new_histogram()];
        LatHists {
            service: three(),
            response: paced.then(three),
        }
    }

    pub fn reset(&mut self) {
        for h in &mut self.service {
            h.reset();
        }
        if let Some(r) = &mut self.response {
            for h in r {
                h.reset();
            }
        }
    }

    /// Adds `other` into `self` (same bounds, so this cannot fail in practice).
    pub fn add(&mut self, other: &LatHists) {
        for (a, b) in self.service.iter_mut().zip(&other.service) {
            let _ = a.add(b);
        }
        if let (Some(a), Some(b)) = (&mut self.response, &other.response) {
            for (x, y) in a.iter_mut().zip(b) {
                let _ = x.add(y);
            }
        }
    }

    /// Service latency of every direction together.
    pub fn service_all(&self) -> Histogram<u64> {
        all(&self.service)
    }

    /// Response latency of every direction together (service latency when not paced).
    pub fn response_all(&self) -> Histogram<u64> {
        match &self.response {
            Some(r) => all(r),
            None => self.service_all(),
        }
    }

    /// Response latency of one direction (service latency when not paced).
    pub fn response_dir(&self, dir: usize) -> &Histogram<u64> {
        match &self.response {
            Some(r) => &r[dir],
            None => &self.service[dir],
        }
    }
}

/// The histograms of every direction added up.
fn all(dirs: &[Histogram<u64>; 3]) -> Histogram<u64> {
    let mut h = dirs[0].clone();
    for d in &dirs[1..] {
        let _ = h.add(d);
    }
    h
}

/// Latency figures in microseconds, from one histogram.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatSummary {
    pub samples: u64,
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
    /// Absent in sessions of releases before it was recorded.
    #[serde(rename = "p99.999", default, skip_serializing_if = "Option::is_none")]
    pub p99_999: Option<f64>,
    pub max: f64,
}

impl LatSummary {
    /// No I/O measured (a direction a session leaves out of its file).
    pub fn is_empty(&self) -> bool {
        self.samples == 0
    }

    pub fn from_hist(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return LatSummary::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatSummary {
            samples: h.len(),
            min: us(h.min()),
            mean: h.mean() / 1000.0,
            stddev: h.stdev() / 1000.0,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            p99_999: Some(us(h.value_at_quantile(0.99999))),
            max: us(h.max()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_merged_histogram() {
        // Two workers: one fast, one slow. Averaging their p50s would give 5.5 ms; the
        // merged histogram's p50 is the slow worker's because it holds most samples.
        let mut a = LatHists::new(false);
        let mut b = LatHists::new(false);
        for _ in 0..100 {
            a.service[0].saturating_record(1_000_000);
        }
        for _ in 0..300 {
            b.service[0].saturating_record(10_000_000);
        }
        a.add(&b);
        let s = LatSummary::from_hist(&a.service_all());
        assert_eq!(s.samples, 400);
        assert!((s.p50 - 10_000.0).abs() / 10_000.0 < 0.001, "{s:?}");
        assert!((s.min - 1_000.0).abs() / 1_000.0 < 0.001, "{s:?}");
    }

    #[test]
    fn bounds_clamp_and_keep_three_digits() {
        let mut h = new_histogram();
        h.saturating_record(123_456); // 123.456 µs
        h.saturating_record(HIGHEST_NS * 10); // clamped to 60 s
        let s = LatSummary::from_hist(&h);
        assert!((s.min - 123.456).abs() / 123.456 < 0.001, "{s:?}");
        assert!((s.max - 60_000_000.0).abs() / 60_000_000.0 < 0.001, "{s:?}");
        assert_eq!(LatSummary::from_hist(&new_histogram()).samples, 0);
    }

    #[test]
    fn response_falls_back_to_service_when_not_paced() {
        let mut h = LatHists::new(false);
        h.service[1].saturating_record(5_000);
        assert_eq!(h.response_all().len(), 1);
        let mut p = LatHists::new(true);
        p.service[1].saturating_record(5_000);
        assert_eq!(p.response_all().len(), 0);
    }
}
