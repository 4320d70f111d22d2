//! Expansion of a preset into a plan for one target: regions to bytes, matrices to steps,
//! sweeps to a probe plus one step per point, rounds to their most rounds.

use std::time::Duration;

mod rounds;
mod shape;

use rounds::round_steps;
use shape::{phase_err, scale, StepShape, Variant, MAX_PHASE_STEPS};

use super::{
    Plan, PlanError, PlanOptions, PlanPhase, PlanStep, Rounds, StepRate, TargetFacts,
    TempSteadyRule, ThermalEnd,
};
use crate::preset::model::{Phase, RunsSpec, SweepSpec, Work, WorkloadSpec};
use crate::preset::values::RateValue;
use crate::preset::Preset;
use crate::units::format_size;
use crate::workload::{BlockSizes, EngineKind, Region, RunOf, RwMode, StepEnd, Workload};

/// fio's default read share for mixed patterns.
const DEFAULT_RWMIXREAD: u8 = 50;

/// Expands `preset` for a target. Pure: the same inputs always give the same plan.
pub fn expand(
    preset: &Preset,
    target: &TargetFacts,
    opts: &PlanOptions,
) -> Result<Plan, PlanError> {
    if !opts.time_scale.is_finite() || opts.time_scale <= 0.0 {
        return Err(PlanError::TimeScale(opts.time_scale));
    }
    if opts.interval.is_zero() {
        return Err(PlanError::Interval);
    }
    if target.capacity_bytes == 0 {
        return Err(PlanError::EmptyTarget);
    }
    if !target.logical_block_size.is_power_of_two() {
        return Err(PlanError::BlockSizeOfTarget(target.logical_block_size));
    }
    let mut plan = Plan {
        preset_id: preset.id.clone(),
        steps: Vec::new(),
        phases: Vec::new(),
        notes: Vec::new(),
        time_scale: opts.time_scale,
    };
    for (index, phase) in preset.phases.iter().enumerate() {
        let first = plan.steps.len();
        let rounds = expand_phase(preset, index, phase, target, opts, &mut plan)?;
        let shape_from = shape_from(preset, index, phase, &plan)?;
        plan.phases.push(PlanPhase {
            name: phase.name.clone(),
            steps: first..plan.steps.len(),
            rounds,
            stop_curve: phase.sweep.as_ref().and_then(|s| s.stopcurve).map(|d| d.0),
            shape_from,
            preparation: phase.preparation,
        });
    }
    if let Some(n) = opts.outstanding {
        set_outstanding(&mut plan, n);
    }
    Ok(plan)
}

/// Gives every step `n` outstanding I/Os in all (`--outstanding`): its jobs (at most `n`)
/// each at `n / jobs` rounded up, so a published queue (512 for StorageReview's 4K random
/// peaks, 64 for its 64K ones) can be asked for without editing the preset.
fn set_outstanding(plan: &mut Plan, n: u32) {
    let n = n.max(1);
    let mut shapes = Vec::new();
    for s in plan
        .steps
        .iter_mut()
        .filter(|s| s.engine != EngineKind::Idle)
    {
        let jobs = s.workload.jobs.min(n).max(1);
        s.workload.jobs = jobs;
        s.workload.iodepth = n.div_ceil(jobs);
        let shape = format!("{jobs} job(s) × iodepth {}", s.workload.iodepth);
        if !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    plan.notes.push(format!(
        "--outstanding {n}: every step runs {}",
        shapes.join(", ")
    ));
}

fn variants(phase: &Phase, w: &WorkloadSpec) -> Result<Vec<Variant>, PlanError> {
    let base_mix = w.rwmixread.map(|r| r.0).unwrap_or(DEFAULT_RWMIXREAD);
    let base_bs = match (&w.bs, &w.bssplit) {
        (Some(b), _) => Some(BlockSizes::single(b.0)),
        (None, Some(s)) => Some(s.0.clone()),
        (None, None) => None,
    };
    let no_bs = || phase_err(phase, "the workload has neither bs nor bssplit");
    let Some(m) = &phase.matrix else {
        return Ok(vec![Variant {
            label: String::new(),
            rwmixread: base_mix,
            bs: base_bs.ok_or_else(no_bs)?,
            jobs: w.jobs.0,
            iodepth: w.iodepth.0,
        }]);
    };
    let axis = |v: Vec<Option<u64>>| if v.is_empty() { vec![None] } else { v };
    let mixes = axis(m.rwmixread.iter().map(|r| Some(u64::from(r.0))).collect());
    let sizes = axis(m.bs.iter().map(|b| Some(b.0)).collect());
    let jobs = axis(m.jobs.iter().map(|c| Some(u64::from(c.0))).collect());
    let depths = axis(m.iodepth.iter().map(|c| Some(u64::from(c.0))).collect());
    let n = [mixes.len(), sizes.len(), jobs.len(), depths.len()]
        .iter()
        .fold(1usize, |a, b| a.saturating_mul(*b));
    if n > MAX_PHASE_STEPS {
        return Err(phase_err(
            phase,
            format!(
                "its matrix has {n} combinations, more than the {MAX_PHASE_STEPS} steps allowed"
            ),
        ));
    }
    let mut out = Vec::new();
    for mix in &mixes {
        for size in &sizes {
            for j in &jobs {
                for d in &depths {
                    let mut label = Vec::new();
                    if let Some(r) = mix {
                        label.push(format!("{r}%read"));
                    }
                    if let Some(b) = size {
                        label.push(format_size(*b));
                    }
                    let (jobs, iodepth) = (
                        j.map_or(w.jobs.0, |x| x as u32),
                        d.map_or(w.iodepth.0, |x| x as u32),
                    );
                    if j.is_some() || d.is_some() {
                        label.push(format!("QD{iodepth}×{jobs}"));
                    }
                    out.push(Variant {
                        label: label.join(" "),
                        rwmixread: mix.map_or(base_mix, |r| r as u8),
                        bs: match size {
                            Some(b) => BlockSizes::single(*b),
                            None => base_bs.clone().ok_or_else(no_bs)?,
                        },
                        jobs,
                        iodepth,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The phase's thermal ends, time-scaled as its other durations are.
fn thermal_end(phase: &Phase, opts: &PlanOptions) -> ThermalEnd {
    let end = &phase.end;
    ThermalEnd {
        steady: end.temperature.map(|t| TempSteadyRule {
            limit_c: t.slope.0,
            window: scale(t.window.0, opts),
        }),
        throttled_for: end.throttled.map(|d| scale(d.0, opts)),
        cooled_within_c: end.cooled.map(|c| c.0),
    }
}

/// An idle phase's one step: no I/O, on the idle engine, for at most its duration.
fn idle_step(
    index: usize,
    phase: &Phase,
    target: &TargetFacts,
    opts: &PlanOptions,
    thermal: ThermalEnd,
) -> Result<PlanStep, PlanError> {
    let Some(duration) = phase.end.duration else {
        return Err(phase_err(
            phase,
            "an idle phase needs a duration, the longest it may last",
        ));
    };
    Ok(idle_for(
        index,
        phase.name.clone(),
        scale(duration.0, opts),
        target,
        opts,
        thermal,
    ))
}

/// A step of no I/O on the idle engine, named `name`, for at most `duration` (scaled).
fn idle_for(
    index: usize,
    name: String,
    duration: Duration,
    target: &TargetFacts,
    opts: &PlanOptions,
    thermal: ThermalEnd,
) -> PlanStep {
    let lbs = u64::from(target.logical_block_size);
    let end = StepEnd {
        duration: Some(duration),
        bytes: None,
    };
    // Never run: the idle engine does no I/O. A read of one block keeps the step's
    // record a valid workload.
    let workload = Workload::new(
        RwMode::Read,
        BlockSizes::single(lbs),
        1,
        Region {
            offset: 0,
            len: target.capacity_bytes / lbs * lbs,
        },
        opts.seed,
    );
    PlanStep {
        engine: EngineKind::Idle,
        thermal,
        ..PlanStep::new(name, index, workload, end, opts.interval)
    }
}

fn phase_index(preset: &Preset, name: &str, phase: &Phase) -> Result<usize, PlanError> {
    preset
        .phases
        .iter()
        .position(|p| p.name == name)
        .ok_or_else(|| {
            phase_err(
                phase,
                format!("its rate refers to phase '{name}', which does not exist"),
            )
        })
}

fn expand_phase(
    preset: &Preset,
    index: usize,
    phase: &Phase,
    target: &TargetFacts,
    opts: &PlanOptions,
    plan: &mut Plan,
) -> Result<Option<Rounds>, PlanError> {
    let thermal = thermal_end(phase, opts);
    let w = match &phase.workload {
        Work::Io(w) => w,
        Work::Idle => {
            plan.steps
                .push(idle_step(index, phase, target, opts, thermal)?);
            return Ok(None);
        }
    };
    let variants = runnable_variants(phase, w, target, plan)?;
    let shape = StepShape::of(index, phase, w, &variants, target, opts, thermal)?;
    if let Some(sweep) = &phase.sweep {
        sweep_steps(&shape, &variants, sweep, plan)?;
        return Ok(None);
    }
    let rate = phase_rate(preset, index, phase)?;
    if let Some(runs) = &phase.runs {
        return runs_steps(&shape, &variants, runs, rate, target, plan).map(|()| None);
    }
    let Some(r) = &phase.rounds else {
        for v in &variants {
            plan.steps.push(shape.step(v, shape.named(v, ""), rate));
        }
        return Ok(None);
    };
    round_steps(&shape, &variants, r, rate, plan).map(Some)
}

/// The phase's variants (its matrix's cells) whose block sizes suit the target: a matrix
/// drops the others with a note; a phase without one fails on them.
fn runnable_variants(
    phase: &Phase,
    w: &WorkloadSpec,
    target: &TargetFacts,
    plan: &mut Plan,
) -> Result<Vec<Variant>, PlanError> {
    let lbs = u64::from(target.logical_block_size);
    let mut variants = variants(phase, w)?;
    let before = variants.len();
    let dropped: Vec<String> = variants
        .iter()
        .filter(|v| v.bs.split.iter().any(|(b, _)| b % lbs != 0))
        .map(|v| v.bs.to_string())
        .collect();
    if phase.matrix.is_some() {
        variants.retain(|v| v.bs.split.iter().all(|(b, _)| b % lbs == 0));
        if variants.len() < before {
            let mut sizes = dropped.clone();
            sizes.sort();
            sizes.dedup();
            plan.notes.push(format!(
                "phase '{}': {} of {before} combinations dropped: block size {} is not a multiple of the target's logical block size ({})",
                phase.name,
                before - variants.len(),
                sizes.join(", "),
                format_size(lbs)
            ));
        }
    } else if let Some(bs) = dropped.first() {
        return Err(phase_err(
            phase,
            format!(
                "block size {bs} is not a multiple of the target's logical block size ({})",
                format_size(lbs)
            ),
        ));
    }
    if variants.is_empty() {
        return Err(phase_err(
            phase,
            "no combination of its matrix can run on this target",
        ));
    }
    Ok(variants)
}

/// A sweep: per variant, a probe at the maximum rate, then one step per point.
fn sweep_steps(
    shape: &StepShape,
    variants: &[Variant],
    sweep: &SweepSpec,
    plan: &mut Plan,
) -> Result<(), PlanError> {
    let (phase, index) = (shape.phase, shape.index);
    let points = sweep.points.percents();
    if points.is_empty() {
        return Err(phase_err(phase, "its sweep has no points"));
    }
    let n = variants.len().saturating_mul(points.len() + 1);
    if n > MAX_PHASE_STEPS {
        return Err(shape.too_many(n));
    }
    for v in variants {
        plan.steps
            .push(shape.step(v, shape.named(v, "probe"), StepRate::Max));
        for p in &points {
            let mut step = shape.step(
                v,
                shape.named(v, &format!("{p}%")),
                StepRate::PercentOfPhase {
                    phase: index,
                    percent: *p,
                },
            );
            step.sweep_point = Some(*p);
            step.closed_loop = *p >= 100.0;
            plan.steps.push(step);
        }
    }
    Ok(())
}

/// Where the phase's threads x queue depth come from: an earlier phase of rounds.
fn shape_from(
    preset: &Preset,
    index: usize,
    phase: &Phase,
    plan: &Plan,
) -> Result<Option<super::operating::ShapeFrom>, PlanError> {
    let Some(from) = &phase.shape_from else {
        return Ok(None);
    };
    let p = preset.phases.iter().position(|p| p.name == from.phase);
    let p = p.filter(|&p| p < index && plan.phases.get(p).is_some_and(|q| q.rounds.is_some()));
    let Some(p) = p else {
        return Err(phase_err(
            phase,
            format!(
                "its shape_from refers to phase '{}', which is not a phase of rounds before it",
                from.phase
            ),
        ));
    };
    Ok(Some(super::operating::ShapeFrom {
        phase: p,
        point: from.point,
    }))
}

/// The phase's rate: the maximum, a number of IOPS, or a share of an earlier phase's.
fn phase_rate(preset: &Preset, index: usize, phase: &Phase) -> Result<StepRate, PlanError> {
    Ok(match &phase.rate {
        None | Some(RateValue::Max) => StepRate::Max,
        Some(RateValue::Iops(v)) => StepRate::Iops(*v),
        Some(RateValue::PercentOf { percent, phase: of }) => {
            let p = phase_index(preset, of, phase)?;
            if p >= index {
                return Err(phase_err(
                    phase,
                    format!("its rate refers to phase '{of}', which does not run before it"),
                ));
            }
            StepRate::PercentOfPhase {
                phase: p,
                percent: *percent,
            }
        }
    })
}

/// Runs: per variant, `count` runs one after the other (the first after the warm-up, each
/// followed by its idle time when the phase has one).
fn runs_steps(
    shape: &StepShape,
    variants: &[Variant],
    runs: &RunsSpec,
    rate: StepRate,
    target: &TargetFacts,
    plan: &mut Plan,
) -> Result<(), PlanError> {
    let count = runs.count.0;
    let idle = runs
        .idle
        .map(|d| scale(d.0, shape.opts))
        .filter(|d| !d.is_zero());
    let per_run = if idle.is_some() { 2 } else { 1 };
    let n = variants
        .len()
        .saturating_mul(count as usize)
        .saturating_mul(per_run);
    if n > MAX_PHASE_STEPS {
        return Err(shape.too_many(n));
    }
    let warmup = runs
        .warmup
        .map_or(Duration::ZERO, |d| scale(d.0, shape.opts));
    for v in variants {
        for i in 1..=count {
            let mut step = shape.step(v, shape.named(v, &format!("run{i}")), rate);
            step.run = Some(RunOf {
                n: i,
                of: count,
                pick: runs.pick,
            });
            if i == 1 {
                step.ramp = step.ramp.saturating_add(warmup);
            }
            plan.steps.push(step);
            if let Some(d) = idle {
                let name = shape.named(v, &format!("run{i} idle"));
                let thermal = ThermalEnd::default();
                plan.steps
                    .push(idle_for(shape.index, name, d, target, shape.opts, thermal));
            }
        }
    }
    Ok(())
}
