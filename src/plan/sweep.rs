//! Sweep maths: vdbench's rounding of curve targets and the resolution of a step's rate once
//! the measured maxima are known.

use thiserror::Error;

use super::{PlanStep, StepRate};

/// Why a step's rate cannot be resolved, so the runner skips the step.
#[derive(Debug, Error, Clone, Copy, PartialEq)]
pub enum RateSkip {
    #[error("phase {} has no measured maximum yet", .phase + 1)]
    NoMeasurement { phase: usize },
    #[error(
        "{percent}% of {max:.0} IOPS is 0 IOPS in vdbench's whole-number arithmetic; \
         vdbench's curve stops here and its later points are skipped"
    )]
    BelowMinimum { max: f64, percent: f64 },
    #[error("an earlier point's rate was 0 IOPS, where vdbench's curve stops")]
    CurveEnded,
}

/// vdbench's rate for a curve point at `percent` of a measured maximum of `max_iops`,
/// computed as its `For_loop.for_add_curve` does, in integer arithmetic: the maximum and the
/// percentage are each truncated to a whole number, multiplied, and divided by 100 (integer
/// division); a rate above 1000 then rounds up to the next multiple of 100, any other up to
/// the next multiple of 10. `None` when the rounded rate is under 10 (only a product of 0):
/// vdbench's curve stops at that point. Unlike vdbench's 32-bit `int` this cannot overflow.
pub fn vdbench_round(max_iops: f64, percent: f64) -> Option<u64> {
    // `as` truncates toward zero and saturates (NaN and negatives give 0), as a cast should.
    let rate = (max_iops as u64).saturating_mul(percent as u64) / 100;
    let step = if rate > 1000 { 100 } else { 10 };
    let rounded = rate.div_ceil(step).saturating_mul(step);
    (rounded >= 10).then_some(rounded)
}

/// The total IOPS a step runs at: `Ok(None)` for closed loop (`max`), `Ok(Some(iops))` for
/// a target. `measured_max(phase)` gives a phase's measured maximum in IOPS. Percentages
/// of it are rounded with [`vdbench_round`]; a fixed `Iops` figure is used as written.
pub fn resolve_rate(
    rate: &StepRate,
    measured_max: &impl Fn(usize) -> Option<f64>,
) -> Result<Option<f64>, RateSkip> {
    match *rate {
        StepRate::Max => Ok(None),
        StepRate::Iops(v) => Ok(Some(v)),
        StepRate::PercentOfPhase { phase, percent } => {
            let max = measured_max(phase).ok_or(RateSkip::NoMeasurement { phase })?;
            vdbench_round(max, percent)
                .map(|r| Some(r as f64))
                .ok_or(RateSkip::BelowMinimum { max, percent })
        }
    }
}

/// Walks a plan's steps in order, resolving each one's rate as the runner does, with
/// vdbench's curve stop: once a sweep point's rate is 0 ([`RateSkip::BelowMinimum`]), the
/// sweep's later points, up to the next step that is not a point (the next probe), are
/// skipped too ([`RateSkip::CurveEnded`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct CurveWalk {
    ended: bool,
}

impl CurveWalk {
    /// The rate `step` runs at, or why it is skipped; `measured_max` as for
    /// [`resolve_rate`].
    pub fn resolve(
        &mut self,
        step: &PlanStep,
        measured_max: &impl Fn(usize) -> Option<f64>,
    ) -> Result<Option<f64>, RateSkip> {
        if step.sweep_point.is_none() {
            self.ended = false;
        } else if self.ended {
            return Err(RateSkip::CurveEnded);
        }
        let rate = resolve_rate(&step.rate, measured_max);
        self.ended |= matches!(rate, Err(RateSkip::BelowMinimum { .. }));
        rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// vdbench's `for_add_curve`, transcribed line by line in 64-bit integers: the reference
    /// the implementation is checked against.
    fn vdbench_reference(max: f64, pct: f64) -> Option<u64> {
        let mut newrate: i64 = (max as i64) * (pct as i64) / 100;
        if newrate > 1000 {
            newrate = ((newrate + 99) / 100) * 100;
        } else {
            newrate = ((newrate + 9) / 10) * 10;
        }
        if newrate < 10 {
            return None;
        }
        u64::try_from(newrate).ok()
    }

    #[test]
    fn rounds_like_vdbench_at_the_edges() {
        // The example: 10% of 10,005 is 1000 in integers, not 1000.5 → 1100.
        assert_eq!(vdbench_round(10_005.0, 10.0), Some(1000));
        // 1001 is above 1000: up to the next 100.
        assert_eq!(vdbench_round(10_010.0, 10.0), Some(1100));
        assert_eq!(vdbench_round(10_000.0, 10.0), Some(1000));
        assert_eq!(vdbench_round(9_990.0, 10.0), Some(1000), "999 → 1000");
        assert_eq!(vdbench_round(9_900.0, 10.0), Some(990));
        assert_eq!(vdbench_round(12_000.0, 10.0), Some(1200));
        assert_eq!(vdbench_round(12_340.0, 10.0), Some(1300));
        assert_eq!(vdbench_round(1_230.0, 10.0), Some(130));
        // Targets under 10 run at 10; only a product of 0 stops the curve.
        assert_eq!(vdbench_round(50.0, 10.0), Some(10));
        assert_eq!(vdbench_round(10.0, 10.0), Some(10));
        assert_eq!(vdbench_round(85.0, 10.0), Some(10));
        assert_eq!(vdbench_round(9.0, 10.0), None);
        assert_eq!(vdbench_round(99.0, 1.0), None);
        assert_eq!(vdbench_round(100.0, 1.0), Some(10));
        // The maximum and the percentage are truncated first.
        assert_eq!(vdbench_round(10_005.99, 10.0), Some(1000));
        assert_eq!(vdbench_round(10_000.0, 12.9), Some(1200));
        assert_eq!(vdbench_round(10_000.0, 0.5), None);
        assert_eq!(vdbench_round(0.0, 50.0), None);
        assert_eq!(vdbench_round(f64::NAN, 50.0), None);
        assert_eq!(vdbench_round(-5.0, 50.0), None);
        // Points above 100% ask for more than the maximum.
        assert_eq!(vdbench_round(448_123.0, 120.0), Some(537_800));
    }

    #[test]
    fn every_point_from_0_to_120_matches_vdbench_over_many_probes() {
        let mut probes: Vec<f64> = (0..=25_000).map(f64::from).collect();
        // Around 1000 at every point, and the fractional parts a measurement has.
        for base in [999.0, 1000.0, 1001.0, 9_999.0, 10_000.0, 10_005.0, 10_010.0] {
            for frac in [0.0, 0.001, 0.5, 0.999] {
                probes.push(base + frac);
            }
        }
        // Drives: up to tens of millions, a geometric walk and its neighbours.
        let mut p = 25_000.0_f64;
        while p < 5e7 {
            for d in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                probes.push((p + d).max(0.0));
            }
            p *= 1.0137;
        }
        let mut differ_from_ceil = 0usize;
        for &max in &probes {
            for pct in 0..=120u32 {
                let pct = f64::from(pct);
                let got = vdbench_round(max, pct);
                assert_eq!(got, vdbench_reference(max, pct), "{pct}% of {max}");
                // The rule differs from rounding the fractional product up.
                let frac = max * pct / 100.0;
                let step = if frac > 1000.0 { 100.0 } else { 10.0 };
                let ceil = (frac >= 10.0).then(|| ((frac / step).ceil() * step) as u64);
                differ_from_ceil += usize::from(got != ceil);
            }
        }
        assert!(differ_from_ceil > 0, "the probes cover the edges");
    }

    #[test]
    fn targets_under_10_and_around_1000() {
        // Every product from 1 to 9 runs at 10.
        for max in 100..1000u32 {
            let r = vdbench_round(f64::from(max), 1.0).expect("runs");
            assert_eq!(r, 10, "1% of {max}");
        }
        // Products 991..=1000 round to 1000; 1001..=1100 to 1100.
        for product in 991..=1100u32 {
            let want = if product > 1000 { 1100 } else { 1000 };
            assert_eq!(vdbench_round(f64::from(product), 100.0), Some(want));
        }
    }
}
