//! SNIA's rounds expanded: every variant once a round, the tracked one marked, each round
//! opened by its pre-write when the phase has one.

use std::time::Duration;

use super::shape::{phase_err, scale, StepShape, Variant, MAX_PHASE_STEPS};
use crate::plan::{Metric, Plan, PlanError, PlanStep, Rounds, SteadyRule, StepRate};
use crate::preset::model::{Prewrite, RoundsSpec};
use crate::units::format_size;
use crate::workload::{BlockSizes, StepEnd};

/// SNIA's rounds: every variant once a round, the tracked one marked, up to the most
/// rounds.
pub(super) fn round_steps(
    shape: &StepShape,
    variants: &[Variant],
    r: &RoundsSpec,
    rate: StepRate,
    plan: &mut Plan,
) -> Result<Rounds, PlanError> {
    let phase = shape.phase;
    let tracked: Vec<bool> = variants
        .iter()
        .map(|v| {
            r.track.rwmixread.is_none_or(|m| m.0 == v.rwmixread)
                && r.track
                    .bs
                    .is_none_or(|b| v.bs.is_single() && v.bs.max() == b.0)
                && r.track.jobs.is_none_or(|j| j.0 == v.jobs)
                && r.track.iodepth.is_none_or(|d| d.0 == v.iodepth)
        })
        .collect();
    match tracked.iter().filter(|t| **t).count() {
        1 => {}
        0 => return Err(phase_err(phase, "rounds.track matches none of its steps")),
        n => {
            return Err(phase_err(
                phase,
                format!("rounds.track matches {n} of its steps; it must pick exactly one"),
            ))
        }
    }
    let rule = SteadyRule::Snia {
        window: r.window.0 as usize,
        range_percent: r.range.0,
        slope_percent: r.slope.0,
        max_rounds: r.max.0 as usize,
    };
    let per_round = variants.len() + usize::from(r.prewrite.is_some());
    let n = per_round.saturating_mul(r.max.0 as usize);
    if n > MAX_PHASE_STEPS {
        return Err(shape.too_many(n));
    }
    let prewrite = r
        .prewrite
        .as_ref()
        .map(|p| prewrite_step(shape, p))
        .transpose()?;
    for round in 1..=r.max.0 {
        if let Some(p) = &prewrite {
            let mut step = p.clone();
            step.name = format!("{} r{round} prewrite", shape.phase.name);
            step.round = Some(round);
            plan.steps.push(step);
        }
        for (v, t) in variants.iter().zip(&tracked) {
            let mut step = shape.step(v, shape.named(v, &format!("r{round}")), rate);
            step.round = Some(round);
            step.tracked = *t;
            plan.steps.push(step);
        }
    }
    let metric: Metric = r.track.metric;
    Ok(Rounds {
        max_rounds: r.max.0,
        steps_per_round: per_round,
        metric,
        rule,
    })
}

/// The step of a round's pre-write: the phase's workload (region, block sizes, access
/// distribution) as its write pattern at its own shape, for its (time-scaled) duration,
/// no ramp and no fio steady state; its round is set by the caller.
pub(super) fn prewrite_step(shape: &StepShape, p: &Prewrite) -> Result<PlanStep, PlanError> {
    let bs = match (p.bs, shape.w.bs, &shape.w.bssplit) {
        (Some(b), _, _) | (None, Some(b), _) => BlockSizes::single(b.0),
        (None, None, Some(split)) => split.0.clone(),
        (None, None, None) => {
            return Err(phase_err(
                shape.phase,
                "the workload has neither bs nor bssplit",
            ))
        }
    };
    if let Some(&(b, _)) = bs.split.iter().find(|(b, _)| !b.is_multiple_of(shape.lbs)) {
        return Err(phase_err(
            shape.phase,
            format!(
                "the pre-write's block size {} is not a multiple of the target's logical block size ({})",
                format_size(b),
                format_size(shape.lbs)
            ),
        ));
    }
    let v = Variant {
        label: String::new(),
        rwmixread: 0,
        bs,
        jobs: p.jobs.0,
        iodepth: p.iodepth.0,
    };
    let mut step = shape.step(&v, String::new(), StepRate::Max);
    step.workload.rw = p.rw;
    step.workload.rwmixread = 0;
    step.workload.rwmixtrim = 0;
    if !p.rw.is_random() {
        step.workload.access = Default::default();
    }
    step.end = StepEnd {
        duration: Some(scale(p.duration.0, shape.opts)),
        bytes: None,
    };
    step.ramp = Duration::ZERO;
    step.steady = None;
    step.prewrite = true;
    Ok(step)
}
