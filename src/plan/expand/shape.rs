//! What every step of an I/O phase shares ([`StepShape`]: its workload, region, end,
//! steady-state rule, ramp, thermal end and engine) and the variants it is made for, with
//! the small conversions of the phase's values (time scale, intervals, region) they need.

use std::time::Duration;

use crate::plan::{
    secs_saturating, PlanError, PlanOptions, PlanStep, SteadyRule, StepRate, TargetFacts,
    ThermalEnd,
};
use crate::preset::model::{Phase, RegionSpec, WorkloadSpec};
use crate::preset::values::DataAmount;
use crate::units::format_size;
use crate::workload::{BlockSizes, EngineOptions, Region, RwMode, SqPoll, StepEnd, Workload};

/// The most steps one phase may expand to; more is a mistake, not a test.
pub(super) const MAX_PHASE_STEPS: usize = 100_000;

pub(super) fn phase_err(phase: &Phase, message: impl Into<String>) -> PlanError {
    PlanError::Phase {
        phase: phase.name.clone(),
        message: message.into(),
    }
}

pub(super) fn scale(d: Duration, opts: &PlanOptions) -> Duration {
    secs_saturating(d.as_secs_f64() * opts.time_scale)
}

/// Number of whole intervals in `d` (at least `min`).
pub(super) fn intervals(d: Duration, opts: &PlanOptions, min: usize) -> usize {
    let n = (d.as_secs_f64() / opts.interval.as_secs_f64()).ceil();
    if n.is_finite() && n >= 0.0 {
        (n as usize).max(min)
    } else {
        min
    }
}

/// The region in bytes, aligned to `align` (offset up, length down).
pub(super) fn region(
    spec: Option<&RegionSpec>,
    target: &TargetFacts,
    align: u64,
    phase: &Phase,
) -> Result<Region, PlanError> {
    let cap = target.capacity_bytes;
    let (offset, size) = match spec {
        None => (0, None),
        Some(r) => (r.offset.bytes(cap), r.size.map(|s| s.bytes(cap))),
    };
    if offset >= cap {
        return Err(phase_err(
            phase,
            format!(
                "region offset {} is at or past the end of the target ({})",
                format_size(offset),
                format_size(cap)
            ),
        ));
    }
    let offset = offset.div_ceil(align) * align;
    // A size past the end is clamped to the end of the target.
    let len = size.unwrap_or(cap).min(cap.saturating_sub(offset));
    let len = len / align * align;
    if len == 0 {
        return Err(phase_err(
            phase,
            format!(
                "the region holds no whole block of {} on a target of {}",
                format_size(align),
                format_size(cap)
            ),
        ));
    }
    Ok(Region { offset, len })
}

/// A mixed pattern at 100% or 0% reads is the plain read or write pattern.
pub(super) fn normalise(rw: RwMode, rwmixread: u8) -> RwMode {
    match (rw, rwmixread) {
        (RwMode::Rw, 100) => RwMode::Read,
        (RwMode::Rw, 0) => RwMode::Write,
        (RwMode::RandRw, 100) => RwMode::RandRead,
        (RwMode::RandRw, 0) => RwMode::RandWrite,
        (other, _) => other,
    }
}

/// One workload variant of a phase (a matrix cell, or the phase's only workload).
pub(super) struct Variant {
    pub(super) label: String,
    pub(super) rwmixread: u8,
    pub(super) bs: BlockSizes,
    pub(super) jobs: u32,
    pub(super) iodepth: u32,
}

/// What every step of an I/O phase shares: its workload, region, end, steady-state rule,
/// ramp, thermal end and engine; a step adds its variant, name and rate.
pub(super) struct StepShape<'a> {
    pub(super) index: usize,
    pub(super) phase: &'a Phase,
    pub(super) w: &'a WorkloadSpec,
    pub(super) opts: &'a PlanOptions,
    pub(super) region: Region,
    /// The target's logical block size.
    pub(super) lbs: u64,
    pub(super) end: StepEnd,
    pub(super) steady: Option<SteadyRule>,
    pub(super) ramp: Duration,
    pub(super) thermal: ThermalEnd,
}

impl<'a> StepShape<'a> {
    pub(super) fn of(
        index: usize,
        phase: &'a Phase,
        w: &'a WorkloadSpec,
        variants: &[Variant],
        target: &TargetFacts,
        opts: &'a PlanOptions,
        thermal: ThermalEnd,
    ) -> Result<Self, PlanError> {
        let lbs = u64::from(target.logical_block_size);
        let align = variants
            .iter()
            .map(|v| v.bs.max())
            .max()
            .unwrap_or(lbs)
            .max(lbs);
        let region = region(w.region.as_ref(), target, align, phase)?;
        let end = StepEnd {
            duration: phase.end.duration.map(|d| scale(d.0, opts)),
            bytes: phase.end.data.map(|d| match d {
                DataAmount::Bytes(b) => b,
                DataAmount::Multiple(m) => (region.len as f64 * m).round() as u64,
            }),
        };
        if end.duration.is_none() && end.bytes.is_none() {
            return Err(phase_err(
                phase,
                "it has no end: give end.duration or end.data",
            ));
        }
        let steady = phase.end.steady.map(|s| SteadyRule::Fio {
            metric: s.criterion.metric,
            slope: s.criterion.slope,
            limit_percent: s.criterion.limit_percent,
            window: intervals(scale(s.window.0, opts), opts, 2),
            ramp: intervals(scale(s.ramp.0, opts), opts, 0),
            sample_secs: opts.interval.as_secs_f64(),
        });
        let ramp = scale(phase.ramp.0, opts);
        Ok(StepShape {
            index,
            phase,
            w,
            opts,
            region,
            lbs,
            end,
            steady,
            ramp,
            thermal,
        })
    }

    /// One step of variant `v`.
    pub(super) fn step(&self, v: &Variant, name: String, rate: StepRate) -> PlanStep {
        let (w, opts) = (self.w, self.opts);
        let trim = match w.rw.is_mixed() {
            true => w.rwmixtrim.map_or(0, |t| t.0),
            false => 0,
        };
        let workload = Workload {
            // A mix with a trim share stays a mix whatever its read share.
            rw: match trim {
                0 => normalise(w.rw, v.rwmixread),
                _ => w.rw,
            },
            // The actual read share, also for plain read (100) and write (0) patterns.
            rwmixread: w.rw.read_percent(v.rwmixread),
            rwmixtrim: trim,
            bs: v.bs.clone(),
            iodepth: v.iodepth,
            jobs: v.jobs,
            region: self.region,
            rate_iops: None,
            arrivals: w.arrivals.unwrap_or_default(),
            seed: opts.seed,
            direct: true,
            job_region: w.job_region.unwrap_or_default(),
            access: w.random_distribution.clone().unwrap_or_default(),
            zone_append: w.zone_append.unwrap_or(false),
        };
        PlanStep {
            rate,
            ramp: self.ramp,
            steady: self.steady,
            engine: w.engine.unwrap_or(opts.engine),
            engine_options: EngineOptions {
                hipri: w.hipri.unwrap_or(opts.engine_options.hipri),
                sqpoll: match w.sqpoll {
                    None => opts.engine_options.sqpoll,
                    Some(false) => None,
                    Some(true) => opts.engine_options.sqpoll.or(Some(SqPoll {
                        idle_ms: SqPoll::DEFAULT_IDLE_MS,
                        cpu: None,
                    })),
                },
            },
            thermal: self.thermal,
            ..PlanStep::new(name, self.index, workload, self.end, opts.interval)
        }
    }

    /// A step's name: the phase's, what the step is (`probe`, `50%`, `r3`), the variant's.
    pub(super) fn named(&self, v: &Variant, extra: &str) -> String {
        let mut parts = vec![self.phase.name.clone()];
        if !extra.is_empty() {
            parts.push(extra.to_string());
        }
        if !v.label.is_empty() {
            parts.push(v.label.clone());
        }
        parts.join(" ")
    }

    pub(super) fn too_many(&self, n: usize) -> PlanError {
        phase_err(
            self.phase,
            format!("it would expand to {n} steps, more than the {MAX_PHASE_STEPS} allowed"),
        )
    }
}
