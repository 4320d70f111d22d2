//! Steady-state detection, live: values are pushed one at a time (one per interval for fio's
//! rule, one per round for SNIA's) and each push says whether the series is steady yet.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Metric, SteadyRule};

/// What the detector says after a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyVerdict {
    /// Not steady yet; keep going.
    Pending,
    /// Steady at value number `round` (1-based, counting every value pushed).
    Reached { round: usize },
    /// The rule's most rounds have run without steady state, or the step ended first.
    NotReached { reason: String },
}

impl std::fmt::Display for SteadyVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SteadyVerdict::Pending => f.write_str("steady state not reached yet"),
            SteadyVerdict::Reached { round } => {
                write!(f, "steady state reached at round {round}")
            }
            SteadyVerdict::NotReached { reason } => {
                write!(f, "steady state not reached: {reason}")
            }
        }
    }
}

/// A step's figure of `m`, as measured (I/Os a second, bytes a second, µs): the value a
/// SNIA round pushes to its phase's detector, and a steady-state page's per-round figure.
pub fn round_value(m: Metric, s: &crate::stats::StepSummary) -> f64 {
    match m {
        Metric::Iops => s.iops,
        Metric::Bw => s.bw_bytes(),
        Metric::MeanLatency => s.lat_us.mean,
    }
}

/// A live steady-state detector for one rule.
#[derive(Debug, Clone)]
pub struct SteadyState {
    rule: SteadyRule,
    /// What the values are, for the verdict's text (in its unit: IOPS, MB/s, µs).
    metric: Metric,
    window: VecDeque<f64>,
    pushed: usize,
    verdict: SteadyVerdict,
}

/// The window's statistics, relative to its mean (percent).
struct WindowStats {
    mean: f64,
    range_pct: f64,
    max_dev_pct: f64,
    /// Least-squares slope per value, in percent of the mean.
    slope_pct: f64,
}

/// A window of values (one per round, the first at x = 0) and its least-squares line:
/// what SNIA's steady-state rule and its verification plot are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowFit {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// The least-squares line `intercept + slope · x`, x the value's place from 0.
    pub slope: f64,
    pub intercept: f64,
    /// How many values.
    pub n: usize,
}

impl WindowFit {
    /// The fit of `values`; none for fewer than two.
    pub fn of(values: &[f64]) -> Option<WindowFit> {
        let n = values.len();
        if n < 2 {
            return None;
        }
        let nf = n as f64;
        let mean = values.iter().sum::<f64>() / nf;
        let max = values.iter().copied().fold(f64::MIN, f64::max);
        let min = values.iter().copied().fold(f64::MAX, f64::min);
        let x_mean = (nf - 1.0) / 2.0;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for (i, v) in values.iter().enumerate() {
            let dx = i as f64 - x_mean;
            sxy += dx * (v - mean);
            sxx += dx * dx;
        }
        let slope = sxy / sxx;
        Some(WindowFit {
            mean,
            min,
            max,
            slope,
            intercept: mean - slope * x_mean,
            n,
        })
    }

    /// max − min, in percent of the mean (SNIA's range, or data excursion).
    pub fn range_pct(&self) -> f64 {
        100.0 * (self.max - self.min) / self.mean
    }

    /// How far the least-squares line moves across the window (its value at the last
    /// point minus at the first), in percent of the mean (SNIA's slope excursion).
    pub fn excursion_pct(&self) -> f64 {
        100.0 * (self.slope * (self.n - 1) as f64).abs() / self.mean
    }
}

fn stats(values: &VecDeque<f64>) -> Option<WindowStats> {
    let v: Vec<f64> = values.iter().copied().collect();
    let f = WindowFit::of(&v)?;
    if !f.mean.is_finite() || f.mean <= 0.0 {
        return None;
    }
    let max_dev = v.iter().map(|x| (x - f.mean).abs()).fold(0.0, f64::max);
    Some(WindowStats {
        mean: f.mean,
        range_pct: f.range_pct(),
        max_dev_pct: 100.0 * max_dev / f.mean,
        slope_pct: 100.0 * f.slope.abs() / f.mean,
    })
}

/// A slope per sample as a slope per second, for samples `sample_secs` apart.
fn per_second(slope_per_sample: f64, sample_secs: f64) -> f64 {
    if sample_secs.is_finite() && sample_secs > 0.0 {
        slope_per_sample / sample_secs
    } else {
        slope_per_sample
    }
}

impl SteadyState {
    /// A detector of `rule`'s values: fio's rule's own metric, else IOPS until
    /// [`SteadyState::tracking`] says otherwise.
    pub fn new(rule: &SteadyRule) -> Self {
        let metric = match rule {
            SteadyRule::Fio { metric, .. } => *metric,
            SteadyRule::Snia { .. } => Metric::Iops,
        };
        SteadyState {
            rule: *rule,
            metric,
            window: VecDeque::new(),
            pushed: 0,
            verdict: SteadyVerdict::Pending,
        }
    }

    /// The values pushed are `metric`'s (a SNIA round's tracked figure), for the text.
    pub fn tracking(mut self, metric: Metric) -> Self {
        self.metric = metric;
        self
    }

    /// How many values have been pushed.
    pub fn pushed(&self) -> usize {
        self.pushed
    }

    /// Adds the next value and says where the series stands. Once the verdict is
    /// `Reached` or `NotReached` it stays so; later values are ignored.
    pub fn push(&mut self, value: f64) -> SteadyVerdict {
        if self.verdict != SteadyVerdict::Pending {
            return self.verdict.clone();
        }
        self.pushed = self.pushed.saturating_add(1);
        let (window, skip) = match self.rule {
            SteadyRule::Snia { window, .. } => (window, 0),
            SteadyRule::Fio { window, ramp, .. } => (window, ramp),
        };
        if self.pushed <= skip {
            return SteadyVerdict::Pending;
        }
        self.window.push_back(value);
        while self.window.len() > window.max(2) {
            self.window.pop_front();
        }
        if self.window.len() >= window.max(2) && self.holds() {
            self.verdict = SteadyVerdict::Reached { round: self.pushed };
            return self.verdict.clone();
        }
        if let SteadyRule::Snia { max_rounds, .. } = self.rule {
            if self.pushed >= max_rounds {
                self.verdict = SteadyVerdict::NotReached {
                    reason: format!(
                        "not steady after the most rounds, {max_rounds}: {}",
                        self.describe()
                    ),
                };
            }
        }
        self.verdict.clone()
    }

    /// The verdict when the step or phase ends for another reason (its duration or data
    /// ran out, or it was stopped): `Reached` if it was, else `NotReached` saying why.
    pub fn finish(&self, why_ended: &str) -> SteadyVerdict {
        match &self.verdict {
            SteadyVerdict::Pending => SteadyVerdict::NotReached {
                reason: format!("{why_ended} before steady state: {}", self.describe()),
            },
            done => done.clone(),
        }
    }

    fn holds(&self) -> bool {
        let Some(s) = stats(&self.window) else {
            return false;
        };
        match self.rule {
            SteadyRule::Snia {
                window,
                range_percent,
                slope_percent,
                ..
            } => {
                let excursion = s.slope_pct * (window.max(2) - 1) as f64;
                s.range_pct <= range_percent && excursion <= slope_percent
            }
            SteadyRule::Fio {
                slope,
                limit_percent,
                sample_secs,
                ..
            } => {
                // fio's steadystate.c: steady when `criterion < limit`, strictly, for both.
                let criterion = if slope {
                    per_second(s.slope_pct, sample_secs)
                } else {
                    s.max_dev_pct
                };
                criterion < limit_percent
            }
        }
    }

    fn describe(&self) -> String {
        let (window, ramp) = match self.rule {
            SteadyRule::Snia { window, .. } => (window.max(2), 0),
            SteadyRule::Fio { window, ramp, .. } => (window.max(2), ramp),
        };
        if self.pushed <= ramp {
            return format!("still in the ramp ({} of {ramp} values)", self.pushed);
        }
        let Some(s) = stats(&self.window) else {
            return format!(
                "window not filled ({} of {window} values) or its mean is not above 0",
                self.window.len()
            );
        };
        if self.window.len() < window {
            return format!(
                "window not filled ({} of {window} values)",
                self.window.len()
            );
        }
        match self.rule {
            SteadyRule::Snia {
                range_percent,
                slope_percent,
                ..
            } => format!(
                "last window: mean {}, range {:.1}% (limit {range_percent}%), slope excursion {:.1}% (limit {slope_percent}%)",
                self.metric.show(s.mean),
                s.range_pct,
                s.slope_pct * (window - 1) as f64
            ),
            SteadyRule::Fio {
                slope: true,
                limit_percent,
                sample_secs,
                ..
            } => format!(
                "last window: mean {}, slope {:.2}% of the mean per second (limit {limit_percent}%)",
                self.metric.show(s.mean),
                per_second(s.slope_pct, sample_secs)
            ),
            SteadyRule::Fio { limit_percent, .. } => format!(
                "last window: mean {}, a sample {:.1}% from the mean (limit {limit_percent}%)",
                self.metric.show(s.mean),
                s.max_dev_pct
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Metric;
    use SteadyVerdict::*;

    fn snia() -> SteadyRule {
        SteadyRule::Snia {
            window: 5,
            range_percent: 20.0,
            slope_percent: 10.0,
            max_rounds: 25,
        }
    }

    fn run(rule: &SteadyRule, values: &[f64]) -> SteadyVerdict {
        let mut d = SteadyState::new(rule);
        let mut last = Pending;
        for v in values {
            last = d.push(*v);
            if last != Pending {
                break;
            }
        }
        last
    }

    #[test]
    fn snia_flat_series_is_steady_at_round_five() {
        assert_eq!(run(&snia(), &[1000.0; 10]), Reached { round: 5 });
    }

    #[test]
    fn snia_decaying_ramp_settles_when_the_window_flattens() {
        // Fresh-out-of-box decay: 100k, 80k, 64k, ... each round 80% of the one before,
        // levelling at 20k.
        let mut values = Vec::new();
        let mut v = 100_000.0;
        for _ in 0..25 {
            values.push(f64::max(v, 20_000.0));
            v *= 0.8;
        }
        // Round 8 is the first at 20k (100k·0.8^7 = 20.97k > 20k, 0.8^8 = 16.8k → 20k);
        // window 4..8 = 51.2k..20k is not steady; the first window that is must hold
        // values within 20% of each other.
        let verdict = run(&snia(), &values);
        let Reached { round } = verdict else {
            panic!("expected steady state, got {verdict:?}");
        };
        let w = &values[round - 5..round];
        let mean = w.iter().sum::<f64>() / 5.0;
        let range =
            w.iter().copied().fold(f64::MIN, f64::max) - w.iter().copied().fold(f64::MAX, f64::min);
        assert!(range <= 0.2 * mean);
        assert_eq!(round, 12);
    }

    #[test]
    fn snia_a_linear_ramp_never_settles() {
        // +3% per round: over any 5 rounds the range is ~12% of the average (within the
        // range rule) but the line's excursion is ~12% too (over 10%), forever.
        let values: Vec<f64> = (0..30).map(|i| 1000.0 * 1.03f64.powi(i)).collect();
        let verdict = run(&snia(), &values);
        match verdict {
            NotReached { reason } => {
                assert!(reason.contains("25"), "{reason}");
                assert!(reason.contains("slope excursion"), "{reason}");
            }
            other => panic!("expected not reached, got {other:?}"),
        }
    }

    #[test]
    fn snia_noisy_plateau_within_limits_is_steady() {
        // ±8% noise around 50k: range 16% ≤ 20%, no trend.
        let values = [54_000.0, 46_000.0, 52_000.0, 48_000.0, 50_000.0, 51_000.0];
        assert_eq!(run(&snia(), &values), Reached { round: 5 });
        // ±15% noise: range 30% > 20%, never steady.
        let loud: Vec<f64> = (0..25)
            .map(|i| if i % 2 == 0 { 57_500.0 } else { 42_500.0 })
            .collect();
        assert!(matches!(run(&snia(), &loud), NotReached { .. }));
    }

    #[test]
    fn verdict_sticks_and_finish_reports() {
        let mut d = SteadyState::new(&snia());
        for _ in 0..5 {
            d.push(10.0);
        }
        assert_eq!(d.push(99999.0), Reached { round: 5 });
        assert_eq!(d.push(1.0).to_string(), "steady state reached at round 5");
        assert_eq!(d.finish("time ran out"), Reached { round: 5 });
        let mut e = SteadyState::new(&snia());
        e.push(10.0);
        match e.finish("the step's duration ran out") {
            NotReached { reason } => {
                assert!(
                    reason.starts_with("the step's duration ran out"),
                    "{reason}"
                );
                assert!(reason.contains("1 of 5"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    fn fio(slope: bool, limit: f64, window: usize, ramp: usize) -> SteadyRule {
        SteadyRule::Fio {
            metric: Metric::Iops,
            slope,
            limit_percent: limit,
            window,
            ramp,
            sample_secs: 1.0,
        }
    }

    #[test]
    fn fio_slope_is_per_second() {
        // +1% of the mean per sample: steady under a 1.5%/s limit at one sample a second,
        // not at one sample every half second (+2%/s).
        let values: Vec<f64> = (0..30).map(|i| 1000.0 * 1.01f64.powi(i)).collect();
        let per_second = fio(true, 1.5, 10, 0);
        assert!(matches!(run(&per_second, &values), Reached { round: 10 }));
        let half = SteadyRule::Fio {
            metric: Metric::Iops,
            slope: true,
            limit_percent: 1.5,
            window: 10,
            ramp: 0,
            sample_secs: 0.5,
        };
        assert_eq!(run(&half, &values), Pending);
    }

    #[test]
    fn fio_deviation_rule() {
        // Flat after a 3-sample ramp that would break the rule if it counted.
        let mut values = vec![1.0, 500.0, 5.0];
        values.extend([1000.0; 10]);
        assert_eq!(run(&fio(false, 5.0, 4, 3), &values), Reached { round: 7 });
        // A sample 10% off the mean fails a 5% limit until it leaves the window.
        let values = [
            1000.0, 1000.0, 1120.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0,
        ];
        assert_eq!(run(&fio(false, 5.0, 4, 0), &values), Reached { round: 7 });
    }

    #[test]
    fn fio_slope_rule() {
        // +2% per sample: the slope is always ~2% of the mean.
        let rising: Vec<f64> = (0..60).map(|i| 1000.0 * 1.02f64.powi(i)).collect();
        let mut d = SteadyState::new(&fio(true, 1.0, 10, 0));
        for v in &rising {
            assert_eq!(d.push(*v), Pending);
        }
        assert!(matches!(
            d.finish("runtime ran out"),
            NotReached { reason } if reason.contains("slope")
        ));
        // Noisy but flat: alternating ±2% has a tiny slope once the window is even.
        let noisy: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1020.0 } else { 980.0 })
            .collect();
        assert!(matches!(
            run(&fio(true, 1.0, 10, 0), &noisy),
            Reached { .. }
        ));
    }

    #[test]
    fn fio_criterion_must_be_strictly_below_the_limit() {
        // 950 and 1050: every sample exactly 5% from the mean; fio wants under 5%.
        let at_limit = [950.0, 1050.0, 950.0, 1050.0];
        assert_eq!(run(&fio(false, 5.0, 2, 0), &at_limit), Pending);
        assert_eq!(
            run(&fio(false, 5.01, 2, 0), &at_limit),
            Reached { round: 2 }
        );
        // A flat series never meets a 0% limit: 0 is not under 0.
        assert_eq!(run(&fio(false, 0.0, 2, 0), &[1000.0; 6]), Pending);
        // 990 then 1010: a slope of exactly 2% of the mean per second.
        let rising = [990.0, 1010.0];
        assert_eq!(run(&fio(true, 2.0, 2, 0), &rising), Pending);
        assert_eq!(run(&fio(true, 2.01, 2, 0), &rising), Reached { round: 2 });
    }

    #[test]
    fn the_verdict_gives_the_window_mean_in_the_tracking_variables_unit() {
        let mut d = SteadyState::new(&snia()).tracking(Metric::Bw);
        for v in [1.9e9, 1.2e9, 2.4e9, 1.0e9, 2.0e9] {
            d.push(v);
        }
        let NotReached { reason } = d.finish("the rounds ran out") else {
            panic!("a range of 82% is not steady");
        };
        assert!(reason.contains("mean 1700.00 MB/s,"), "{reason}");
        assert_eq!(Metric::Iops.show(25_381.4), "25381 IOPS");
        assert_eq!(Metric::MeanLatency.show(85.25), "85.2 µs");
    }

    #[test]
    fn the_window_fit_is_the_least_squares_line_and_its_excursion() {
        // y = 100 + 10x over x = 0..4: mean 120, excursion 40 (33.3%), range 40.
        let f = WindowFit::of(&[100.0, 110.0, 120.0, 130.0, 140.0]).unwrap();
        assert_eq!((f.mean, f.slope, f.intercept, f.n), (120.0, 10.0, 100.0, 5));
        assert!((f.excursion_pct() - 100.0 * 40.0 / 120.0).abs() < 1e-9);
        assert!((f.range_pct() - 100.0 * 40.0 / 120.0).abs() < 1e-9);
        assert!(WindowFit::of(&[1.0]).is_none());
    }

    #[test]
    fn zero_mean_is_never_steady() {
        assert_eq!(run(&snia(), &[0.0; 10]), Pending);
    }
}
