//! How long a plan takes: the sum of its steps' ramps and lengths. Steps that end on an
//! amount of data are timed at an assumed throughput the caller states; steady-state steps
//! and SNIA rounds give a range from the earliest possible end to the latest.

use crate::units::{format_size, readable_duration};
use std::time::Duration;

use super::{mul_saturating, secs_saturating, Plan, PlanStep, SteadyRule};

/// A plan's expected duration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// If every steady state is reached as early as possible.
    pub min: Duration,
    /// If no steady state is reached early.
    pub max: Duration,
    /// Whether some step's length depends on the assumed throughput.
    pub assumes_throughput: bool,
}

fn step_time(step: &PlanStep, bytes_per_sec: f64) -> (Duration, bool) {
    let by_data = step
        .end
        .bytes
        .map(|b| secs_saturating(b as f64 / bytes_per_sec.max(1.0)));
    let measured = match (step.end.duration, by_data) {
        (Some(d), Some(b)) => d.min(b),
        (Some(d), None) => d,
        (None, Some(b)) => b,
        (None, None) => Duration::ZERO,
    };
    // With data-amount ends the ramp's I/O counts towards the amount.
    let total = if step.end.duration.is_none() {
        measured.max(step.ramp)
    } else {
        step.ramp.saturating_add(measured)
    };
    (total, by_data.is_some())
}

impl Plan {
    /// The plan's duration, timing data-amount ends at `bytes_per_sec`.
    pub fn estimate(&self, bytes_per_sec: f64) -> Estimate {
        let mut est = Estimate {
            min: Duration::ZERO,
            max: Duration::ZERO,
            assumes_throughput: false,
        };
        for phase in &self.phases {
            let min_round = phase.rounds.map(|r| match r.rule {
                SteadyRule::Snia { window, .. } => window as u32,
                SteadyRule::Fio { .. } => r.max_rounds,
            });
            for step in self.steps.get(phase.steps.clone()).unwrap_or_default() {
                let (t, by_data) = step_time(step, bytes_per_sec);
                est.assumes_throughput |= by_data;
                est.max = est.max.saturating_add(t);
                if let (Some(round), Some(min)) = (step.round, min_round) {
                    if round > min {
                        continue;
                    }
                }
                let t_min = match step.steady {
                    Some(SteadyRule::Fio { window, ramp, .. }) => {
                        let earliest = mul_saturating(step.interval, window.saturating_add(ramp));
                        t.min(step.ramp.saturating_add(earliest))
                    }
                    _ => t,
                };
                est.min = est.min.saturating_add(t_min);
            }
        }
        est
    }
}

/// The throughput every estimate assumes for steps that end on an amount of data, unless
/// `presets list --assume-throughput` says otherwise: the preset picker, `presets list`,
/// `presets plan` and a run's ETA all time such steps at it.
pub const ASSUMED_BYTES_PER_S: u64 = 1 << 30;

/// What the `*` of an estimate means, at `bytes_per_sec`.
pub fn estimate_footnote(bytes_per_sec: u64) -> String {
    format!(
        "* phases that end on an amount of data, timed at an assumed {}/s",
        format_size(bytes_per_sec)
    )
}

/// "40 s", "4 h 40 min – 23 h 20 min" ([`readable_duration`]), with `*` when it depends on
/// the assumed throughput ([`estimate_footnote`]).
pub fn estimate_text(plan: &Plan, bytes_per_sec: f64) -> String {
    let e = plan.estimate(bytes_per_sec);
    let mut s = if readable_duration(e.min) == readable_duration(e.max) {
        readable_duration(e.max)
    } else {
        format!(
            "{} – {}",
            readable_duration(e.min),
            readable_duration(e.max)
        )
    };
    if e.assumes_throughput {
        s.push('*');
    }
    s
}
