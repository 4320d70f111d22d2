//! Sweep maths: vdbench's rounding of curve targets and the resolution of a step's rate once
//! the measured maxima are known.

use thiserror::Error;

use super::StepRate;

/// Why a step's rate cannot be resolved, so the runner skips the step.
#[derive(Debug, Error, Clone, Copy, PartialEq)]
pub enum RateSkip {
    #[error("phase {} has no measured maximum yet", .phase + 1)]
    NoMeasurement { phase: usize },
    #[error("target {target:.1} IOPS is under 10 IOPS; vdbench drops such points")]
    BelowMinimum { target: f64 },
}

/// Rounds a curve target as vdbench does: above 1000 IOPS up to the next 100, otherwise up
/// to the next 10. Targets under 10 IOPS (and anything not a positive number) give `None`:
/// vdbench drops those points.
pub fn vdbench_round(target: f64) -> Option<f64> {
    if !target.is_finite() || target < 10.0 {
        return None;
    }
    let step = if target > 1000.0 { 100.0 } else { 10.0 };
    // Guard against 1200.0000000001 from float maths turning into 1300.
    let q = target / step;
    let q = if (q - q.round()).abs() < 1e-9 {
        q.round()
    } else {
        q.ceil()
    };
    Some(q * step)
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
            let target = max * percent / 100.0;
            vdbench_round(target)
                .map(Some)
                .ok_or(RateSkip::BelowMinimum { target })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_like_vdbench() {
        assert_eq!(vdbench_round(1234.0), Some(1300.0));
        assert_eq!(vdbench_round(1200.0), Some(1200.0));
        assert_eq!(vdbench_round(1000.5), Some(1100.0));
        assert_eq!(vdbench_round(1000.0), Some(1000.0));
        assert_eq!(vdbench_round(999.0), Some(1000.0));
        assert_eq!(vdbench_round(123.0), Some(130.0));
        assert_eq!(vdbench_round(10.0), Some(10.0));
        assert_eq!(vdbench_round(10.1), Some(20.0));
        assert_eq!(vdbench_round(9.99), None);
        assert_eq!(vdbench_round(0.0), None);
        assert_eq!(vdbench_round(f64::NAN), None);
        // 12% of 10000 in floating point is 1200.0000000000002.
        assert_eq!(vdbench_round(10000.0 * 12.0 / 100.0), Some(1200.0));
    }
}
