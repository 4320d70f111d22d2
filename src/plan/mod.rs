//! Plans: the pure expansion of a preset for one target into the steps the engine runs.
//!
//! [`expand`] turns a [`Preset`](crate::preset::Preset) plus the target's facts into a
//! [`Plan`]: a flat list of [`PlanStep`]s, each with its workload (region resolved to bytes,
//! aligned), rate, ramp, end and optional live steady-state rule, and a list of
//! [`PlanPhase`]s telling which steps belong to which phase. Nothing here touches a device.
//!
//! # How a runner walks a plan
//! 1. For each step in order, resolve its rate with [`resolve_rate`], giving it the
//!    *measured maximum* of a phase: the achieved IOPS of that phase's last step run at rate
//!    `max` (for a sweep phase, its probe), rounded by [`vdbench_round`]. A sweep point whose
//!    rate is 0 in vdbench's integer arithmetic ([`RateSkip::BelowMinimum`]) ends the curve:
//!    it and the sweep's later points are skipped, as vdbench stops its curve there.
//! 2. Build the engine's [`StepSpec`] with [`PlanStep::to_step_spec`] and run it.
//! 3. If the step has `steady: Some(rule)` (fio style), feed every interval's value of the
//!    rule's metric to a [`SteadyState`]; when it says [`SteadyVerdict::Reached`], end the
//!    step early. When the step ends otherwise, [`SteadyState::finish`] says why it was not
//!    reached.
//!    In a sweep phase with [`PlanPhase::stop_curve`], once a point's mean response time
//!    is above it, skip the phase's remaining points (vdbench's `stopcurve`).
//! 4. Rounds (SNIA): a phase with [`PlanPhase::rounds`] is expanded to its *most* rounds;
//!    each of its steps carries `round: Some(n)` (1-based) and exactly one step per round has
//!    `tracked: true`. After a tracked step, push its summary value of
//!    [`Rounds::metric`] into the phase's detector (`SteadyState::new(&rounds.rule)`). On
//!    `Reached { round }` run that round's remaining steps (a round is whole, as SNIA
//!    judges steady state after each round), then skip to [`PlanPhase::steps`]`.end`: the
//!    later rounds are not run. If the steps run out first, the detector has already said `NotReached` with why.
//!
//! Durations (step lengths, ramps, steady-state windows) are multiplied by
//! [`PlanOptions::time_scale`]; amounts of data are not.

mod estimate;
mod expand;
pub mod fio;
mod listing;
pub mod operating;
mod presets_text;
mod steady;
mod sweep;

use std::ops::Range;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::workload::{EngineKind, EngineOptions, StepEnd, StepSpec, Workload};

pub use estimate::{estimate_footnote, estimate_text, Estimate, ASSUMED_BYTES_PER_S};
pub use expand::expand;
pub use listing::{plan_rows, plan_table, planned_steps, PlannedEnd, PlannedStep, PLAN_COLUMNS};
pub use presets_text::{plan_text, preset_text, presets_table};
pub use steady::{round_value, SteadyState, SteadyVerdict, WindowFit};
pub use sweep::{resolve_rate, vdbench_round, CurveWalk, RateSkip};

/// `secs` as a duration, saturating at [`Duration::MAX`] (and 0 for NaN or negatives), so
/// no input makes the plan panic.
pub(crate) fn secs_saturating(secs: f64) -> Duration {
    if secs.is_nan() || secs <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX)
}

/// `d` × `n`, saturating.
pub(crate) fn mul_saturating(d: Duration, n: usize) -> Duration {
    u32::try_from(n)
        .ok()
        .and_then(|n| d.checked_mul(n))
        .unwrap_or(Duration::MAX)
}

pub use crate::preset::Metric;

/// A steady-state rule, evaluated on a series of values pushed one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyRule {
    /// SNIA PTS: over the last `window` values, max − min ≤ `range_percent` of the window
    /// average and the least-squares line's excursion across the window ≤ `slope_percent`
    /// of it; at most `max_rounds` values.
    Snia {
        window: usize,
        range_percent: f64,
        slope_percent: f64,
        max_rounds: usize,
    },
    /// fio `ss=`: the first `ramp` samples are left out (`ss_ramp`); then over the last
    /// `window` samples (`ss_dur`), either every sample lies less than `limit_percent` of
    /// the window mean from it, or (`slope`) 100·|least-squares slope per second| / mean <
    /// `limit_percent`, the slope taken with samples `sample_secs` apart (fio samples once a
    /// second; the runner pushes one value per reporting interval). Both strictly under the
    /// limit, as fio's `steadystate.c` has it.
    Fio {
        metric: Metric,
        slope: bool,
        limit_percent: f64,
        window: usize,
        ramp: usize,
        sample_secs: f64,
    },
}

/// The rate a step runs at, before the measured maxima are known.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepRate {
    /// Closed loop, as fast as it goes.
    Max,
    /// A fixed total rate.
    Iops(f64),
    /// A percentage of phase `phase`'s measured maximum, rounded as vdbench rounds.
    PercentOfPhase { phase: usize, percent: f64 },
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    /// Human-readable, unique within the plan: `sweep 50%`, `iops r1 65%read 4KiB`.
    pub name: String,
    /// Index of the preset phase it comes from.
    pub phase: usize,
    /// The workload; its `rate_iops` is `None` here and filled by [`Self::to_step_spec`].
    pub workload: Workload,
    pub rate: StepRate,
    pub ramp: Duration,
    pub end: StepEnd,
    /// A live, per-interval steady-state rule that may end the step early (fio style).
    pub steady: Option<SteadyRule>,
    /// Round number (1-based) for steps of a phase run in SNIA rounds.
    pub round: Option<u32>,
    /// This step's summary is the value tracked by its phase's rounds.
    pub tracked: bool,
    /// The write that opens its round (`rounds.prewrite`): run, shown and saved as any
    /// step, but none of the round's combinations (never tracked, never an operating point).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prewrite: bool,
    /// The sweep percentage this step runs at; `None` for the probe and other steps.
    pub sweep_point: Option<f64>,
    /// Which run it is of a phase whose steps run several times (`runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<crate::workload::RunOf>,
    /// Runs closed-loop at its queue depth although it has a target: a sweep point at or
    /// above 100% of the probe. vdbench's threads bound the outstanding I/O, so such a
    /// point shows the drive at full queue, never a backlog that grows with the step.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed_loop: bool,
    /// The reporting interval.
    pub interval: Duration,
    /// Which engine runs it.
    #[serde(default, skip_serializing_if = "EngineKind::is_default")]
    pub engine: EngineKind,
    /// How the engine sets up its rings (polled I/O, SQPOLL).
    #[serde(default, skip_serializing_if = "EngineOptions::is_default")]
    pub engine_options: EngineOptions,
    /// Ends judged on the drive's temperature and throttling, as telemetry arrives.
    #[serde(default, skip_serializing_if = "ThermalEnd::is_none")]
    pub thermal: ThermalEnd,
    /// The jobs of an fio job file this step runs (`--fio-job`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_file: Option<crate::workload::FioFileStep>,
    /// A step on the fio engine: the fio that the run's check found (`fio-3.33`), so fio is
    /// asked its version once a run; not saved.
    #[serde(skip)]
    pub fio_version: Option<String>,
}

/// A step's thermal ends, judged on the drive's telemetry as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ThermalEnd {
    /// Steady temperature: the least-squares line through the last `window` of
    /// temperatures moves less than `limit_c` across it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<TempSteadyRule>,
    /// The drive has throttled and stayed throttled this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_for: Option<Duration>,
    /// The temperature is back within this many °C of the run's first (a cool-down).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooled_within_c: Option<f64>,
}

impl ThermalEnd {
    /// No thermal end: the step ends as any other.
    pub fn is_none(&self) -> bool {
        *self == ThermalEnd::default()
    }

    /// Each end in words ("temperature steady (under 0.5 °C across 5m)"), for plans and
    /// exported job files.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(s) = self.steady {
            out.push(format!(
                "temperature steady (under {} °C across {})",
                s.limit_c,
                crate::units::format_duration(s.window)
            ));
        }
        if let Some(d) = self.throttled_for {
            out.push(format!(
                "throttled for {}",
                crate::units::format_duration(d)
            ));
        }
        if let Some(c) = self.cooled_within_c {
            out.push(format!("cooled to within {c} °C of the start"));
        }
        out
    }
}

/// Steady state on temperature: under `limit_c` across `window` (0.5 °C per 5 minutes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TempSteadyRule {
    pub limit_c: f64,
    pub window: Duration,
}

impl Plan {
    /// Some step ends on the drive's temperature or throttling: the run needs a drive
    /// that reports its temperature.
    pub fn needs_temperature(&self) -> bool {
        self.steps.iter().any(|s| !s.thermal.is_none())
    }
}

impl PlanStep {
    /// Step `name` of phase `phase`: `workload` until `end`, reported every `interval`; as
    /// fast as it goes, no ramp, no steady rule, no round, on the default engine. A caller
    /// that sets more uses update syntax: `PlanStep { ramp, ..PlanStep::new(..) }`.
    pub fn new(
        name: String,
        phase: usize,
        workload: Workload,
        end: StepEnd,
        interval: Duration,
    ) -> PlanStep {
        PlanStep {
            name,
            phase,
            workload,
            rate: StepRate::Max,
            ramp: Duration::ZERO,
            end,
            steady: None,
            round: None,
            tracked: false,
            prewrite: false,
            sweep_point: None,
            run: None,
            closed_loop: false,
            interval,
            engine: EngineKind::default(),
            engine_options: EngineOptions::default(),
            thermal: ThermalEnd::default(),
            fio_file: None,
            fio_version: None,
        }
    }

    /// The engine's spec for this step at `resolved_rate` (from [`resolve_rate`]); a
    /// [`closed_loop`](Self::closed_loop) step runs unpaced whatever its target.
    pub fn to_step_spec(&self, resolved_rate: Option<f64>) -> StepSpec {
        let mut workload = self.workload.clone();
        workload.rate_iops = resolved_rate.filter(|_| !self.closed_loop);
        StepSpec {
            engine: self.engine,
            options: self.engine_options,
            workload,
            ramp: self.ramp,
            end: self.end,
            interval: self.interval,
            fio_file: self.fio_file.clone(),
            fio_version: self.fio_version.clone(),
        }
    }
}

/// SNIA rounds of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    pub max_rounds: u32,
    pub steps_per_round: usize,
    /// The value pushed once per round, from the tracked step's summary.
    pub metric: Metric,
    /// Always [`SteadyRule::Snia`].
    pub rule: SteadyRule,
}

/// Which steps a phase of the preset became.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPhase {
    pub name: String,
    /// Indices into [`Plan::steps`].
    pub steps: Range<usize>,
    pub rounds: Option<Rounds>,
    /// For a sweep with vdbench's `stopcurve`: once a point's mean response time is above
    /// this, the runner skips the phase's remaining sweep points. Not time-scaled.
    pub stop_curve: Option<Duration>,
    /// Every step's threads x queue depth come from an operating point of an earlier
    /// phase's last round, picked when the step starts ([`operating::pick`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape_from: Option<operating::ShapeFrom>,
    /// The preset's phase prepares the drive (`preparation: true`, SNIA's WIPC): its
    /// steps are saved with `preparation: true` in their point and are never a headline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preparation: bool,
}

/// A preset expanded for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub preset_id: String,
    pub steps: Vec<PlanStep>,
    pub phases: Vec<PlanPhase>,
    /// What the expansion changed or dropped for this target, for the user to read.
    pub notes: Vec<String>,
    /// Every duration of the preset multiplied by this (`--time-scale`); other than 1, the
    /// run is off its method's durations, and its session, report and compare say so.
    #[serde(default = "unscaled", skip_serializing_if = "is_unscaled")]
    pub time_scale: f64,
}

/// A plan's durations as its preset gives them.
fn unscaled() -> f64 {
    1.0
}

fn is_unscaled(x: &f64) -> bool {
    *x == 1.0
}

impl Plan {
    /// `steps` as one plain phase named `phase` of preset `preset_id`, at its durations.
    pub fn one_phase(preset_id: String, phase: String, steps: Vec<PlanStep>) -> Plan {
        Plan {
            preset_id,
            phases: vec![PlanPhase::new(phase, 0..steps.len())],
            steps,
            notes: Vec::new(),
            time_scale: 1.0,
        }
    }
}

impl PlanPhase {
    /// Phase `name` of `steps`: no rounds, no stop curve, no shape picked, no preparation.
    pub fn new(name: String, steps: Range<usize>) -> PlanPhase {
        PlanPhase {
            name,
            steps,
            rounds: None,
            stop_curve: None,
            shape_from: None,
            preparation: false,
        }
    }
}

/// What the plan needs to know about the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetFacts {
    pub capacity_bytes: u64,
    pub logical_block_size: u32,
}

/// Knobs of the expansion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanOptions {
    /// Multiplies every duration (step lengths, ramps, steady-state windows).
    pub time_scale: f64,
    pub seed: u64,
    /// Reporting interval; fio-style steady-state windows are counted in intervals.
    pub interval: Duration,
    /// The engine every step runs on.
    pub engine: EngineKind,
    /// The ring options every step runs with (polled I/O, SQPOLL).
    pub engine_options: EngineOptions,
    /// Outstanding I/Os of every step in all (jobs × iodepth), overriding the preset's.
    pub outstanding: Option<u32>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            time_scale: 1.0,
            seed: 0x5eed,
            interval: Duration::from_secs(1),
            engine: EngineKind::IoUring,
            engine_options: EngineOptions::default(),
            outstanding: None,
        }
    }
}

/// Why a preset cannot become a plan for this target.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlanError {
    #[error("time scale {0} must be a finite number above 0")]
    TimeScale(f64),
    #[error("the reporting interval must be above 0")]
    Interval,
    #[error("the target's capacity is 0 bytes")]
    EmptyTarget,
    #[error("the target's logical block size {0} is not a power of two")]
    BlockSizeOfTarget(u32),
    #[error("phase '{phase}': {message}")]
    Phase { phase: String, message: String },
}
