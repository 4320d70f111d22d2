//! What a run is asked to do ([`RunRequest`]) and what it becomes once the target is
//! ready ([`Prepared`]): a preset expanded for the target, or one workload made a
//! one-phase plan, so every kind of run goes through the same runner.

use std::path::PathBuf;
use std::time::Duration;

use super::error::RunError;
use crate::dut::{self, PreparedTarget, TargetRequest};
use crate::engine::{self, StepTarget};
use crate::plan::{self, Plan, PlanOptions, PlanPhase, PlanStep, StepRate, TargetFacts};
use crate::preset::Preset;
use crate::workload::{Arrivals, EngineKind, StepEnd, Workload};

/// Which target, and how it may be made ready.
#[derive(Debug, Clone, Default)]
pub struct TargetChoice {
    /// The file or block device; `None` is the built-in test file.
    pub path: Option<PathBuf>,
    /// Size of the region (a new test file is created this large).
    pub size: Option<u64>,
    /// The path the user named to confirm that writes may destroy its data.
    pub destroy_data: Option<PathBuf>,
    /// Create a missing file (1 GiB) even without a size, as the built-in one is.
    pub create_missing: bool,
    /// What the drive is called in a run of several (tables, legends, `--json`'s
    /// `target`); its path when none.
    pub label: Option<String>,
}

/// One workload run once (a plain `drivescope run`).
#[derive(Debug, Clone)]
pub struct SingleStep {
    /// The region's `len` of 0 means "to the end of the target".
    pub workload: Workload,
    pub ramp: Duration,
    pub duration: Duration,
}

/// What to run.
#[derive(Debug, Clone)]
pub enum RunWhat {
    Preset(Box<Preset>),
    Single(SingleStep),
}

/// A run, as asked.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub target: TargetChoice,
    pub what: RunWhat,
    /// Time scale, seed, reporting interval and engine of the plan.
    pub plan: PlanOptions,
    /// Verify the data (`--verify`); a preset's `verify:` asks too.
    pub verify: Option<super::VerifyAsk>,
}

/// What a prepared run came from.
#[derive(Debug, Clone)]
pub enum RunKind {
    Preset(Box<Preset>),
    /// A plain run: one step, described by its ramp and duration.
    Single {
        ramp: Duration,
        duration: Duration,
    },
}

/// A run ready to go: its plan and the target it runs on.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub kind: RunKind,
    pub plan: Plan,
    pub target: PreparedTarget,
    /// The target was the built-in test file.
    pub default_target: bool,
    pub options: PlanOptions,
    /// What the drive is called in a run of several: the label asked for, else the path.
    pub label: String,
    /// A verified run's state.
    pub verify: Option<std::sync::Arc<crate::verify::VerifyState>>,
}

impl Prepared {
    /// The target as the engine needs it.
    pub fn step_target(&self) -> StepTarget {
        StepTarget {
            path: self.target.path.clone(),
            size: self.target.size,
            align: self.target.align,
            verify: self.verify.clone(),
        }
    }

    /// Does any step read, or write?
    pub fn io(&self) -> (bool, bool) {
        plan_io(&self.plan)
    }

    /// The preset, for a preset run.
    pub fn preset(&self) -> Option<&Preset> {
        match &self.kind {
            RunKind::Preset(p) => Some(p),
            RunKind::Single { .. } => None,
        }
    }

    /// The name dated session files get: the preset's id, or the access pattern.
    pub fn name(&self) -> &str {
        match &self.kind {
            RunKind::Preset(p) => &p.id,
            RunKind::Single { .. } => &self.plan.preset_id,
        }
    }
}

/// (reads, writes) of a plan.
fn plan_io(plan: &Plan) -> (bool, bool) {
    let mut reads = false;
    let mut writes = false;
    for s in plan.steps.iter().filter(|s| s.engine != EngineKind::Idle) {
        let p = s.workload.rw.read_percent(s.workload.rwmixread);
        writes |= p < 100;
        reads |= p > 0;
    }
    (reads, writes)
}

fn prepare_target(
    c: &TargetChoice,
    engine: EngineKind,
    writes: bool,
    size: Option<u64>,
) -> Result<(PreparedTarget, bool), RunError> {
    if engine.targetless() {
        // The nop engine touches no target: none is prepared, not even the built-in file.
        return match c.path {
            Some(_) => Err(engine::EngineError::Invalid(engine::InvalidStep::NopTarget).into()),
            None => Ok((PreparedTarget::none(), false)),
        };
    }
    let (path, is_default) = match &c.path {
        Some(p) => (p.clone(), false),
        None => (dut::default_target_path(), true),
    };
    let req = TargetRequest {
        size,
        writes,
        destroy_data: c.destroy_data.clone(),
        create_default: is_default || c.create_missing,
    };
    Ok((dut::prepare(&path, &req)?, is_default))
}

/// A short name for a single step: pattern, block size, queue shape, rate.
pub fn step_label(w: &Workload) -> String {
    let rate = match (w.rate_iops, w.arrivals) {
        (None, _) => String::new(),
        (Some(r), Arrivals::Uniform) => format!(" at {r:.0} IOPS"),
        (Some(r), a) => format!(" at {r:.0} IOPS {a}"),
    };
    format!("{} {} QD{} × {}{rate}", w.rw, w.bs, w.iodepth, w.jobs)
}

/// One workload as a one-phase, one-step plan.
fn single_plan(s: &SingleStep, w: Workload, opts: &PlanOptions) -> Plan {
    let name = step_label(&w);
    let step = PlanStep {
        name: name.clone(),
        phase: 0,
        rate: w.rate_iops.map(StepRate::Iops).unwrap_or(StepRate::Max),
        workload: Workload {
            rate_iops: None,
            ..w
        },
        ramp: s.ramp,
        end: StepEnd {
            duration: Some(s.duration),
            bytes: None,
        },
        steady: None,
        round: None,
        tracked: false,
        sweep_point: None,
        closed_loop: false,
        interval: opts.interval,
        engine: opts.engine,
        engine_options: opts.engine_options,
        thermal: Default::default(),
    };
    Plan {
        preset_id: step.workload.rw.as_str().to_string(),
        steps: vec![step],
        phases: vec![PlanPhase {
            name,
            steps: 0..1,
            rounds: None,
            stop_curve: None,
        }],
        notes: Vec::new(),
    }
}

/// Checks every step of `plan` against the target before any I/O (rates aside, which
/// sweeps learn as they go).
fn validate_plan(plan: &Plan, t: &StepTarget) -> Result<(), RunError> {
    // A missing or too old fio is said before anything is created.
    if plan.steps.iter().any(|s| s.engine == EngineKind::Fio) {
        engine::fio::fio_version().map_err(engine::EngineError::from)?;
    }
    for step in &plan.steps {
        engine::validate(t, &step.to_step_spec(None))?;
    }
    // A target another process writes (or holds) is refused now, before the session.
    if let Some(w) = plan
        .steps
        .iter()
        .find(|s| s.workload.rw.read_percent(s.workload.rwmixread) < 100)
    {
        engine::check_claim(t, &w.to_step_spec(None))?;
    }
    Ok(())
}

/// Prepares every target of a run of several before any is changed: the targets that
/// exist first (each checked by the write guard; one refusal refuses the run, naming its
/// target), then the test files to create.
pub fn prepare_many(reqs: &[RunRequest]) -> Result<Vec<Prepared>, RunError> {
    if reqs.len() > 1 {
        check_shared_drives(reqs)?;
    }
    let exists = |r: &RunRequest| r.target.path.as_ref().is_some_and(|p| p.exists());
    let mut out: Vec<Option<Prepared>> = reqs.iter().map(|_| None).collect();
    for pass in [true, false] {
        for (slot, r) in out.iter_mut().zip(reqs) {
            if exists(r) == pass {
                *slot = Some(prepare(r)?);
            }
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// Whether a request writes: a plain run's pattern, or any phase of its preset.
fn writes(r: &RunRequest) -> bool {
    match &r.what {
        RunWhat::Single(s) => s.workload.rw.read_percent(s.workload.rwmixread) < 100,
        RunWhat::Preset(p) => p.phases.iter().any(|ph| {
            ph.workload.io().is_some_and(|w| {
                let mixes: Vec<u8> = ph
                    .matrix
                    .as_ref()
                    .map(|m| m.rwmixread.iter().map(|r| r.0).collect())
                    .filter(|v: &Vec<u8>| !v.is_empty())
                    .unwrap_or_else(|| vec![w.rwmixread.map_or(50, |r| r.0)]);
                mixes.iter().any(|m| w.rw.read_percent(*m) < 100)
            })
        }),
    }
}

/// Two targets on one physical drive may be read together (shown as sharing it) but not
/// written: each drive's figures would be the other's too.
fn check_shared_drives(reqs: &[RunRequest]) -> Result<(), RunError> {
    let disk = |r: &RunRequest| {
        let p = r.target.path.as_ref()?;
        let d = crate::drive::resolve(p).ok()?;
        Some((p.clone(), d.primary()?.name.clone()))
    };
    let disks: Vec<Option<(PathBuf, String)>> = reqs.iter().map(disk).collect();
    for (i, a) in disks.iter().enumerate() {
        for (j, b) in disks.iter().enumerate().take(i) {
            if let (Some((pa, da)), Some((pb, db))) = (a, b) {
                if da == db && (writes(&reqs[i]) || writes(&reqs[j])) {
                    return Err(RunError::SharedDriveWrites {
                        first: pb.clone(),
                        second: pa.clone(),
                        disk: da.clone(),
                    });
                }
            }
        }
    }
    Ok(())
}

/// The label of a target: the one asked for, else its path.
fn label_of(c: &TargetChoice, path: &std::path::Path) -> String {
    c.label
        .clone()
        .unwrap_or_else(|| crate::ostext::escaped(path.as_os_str()))
}

/// Makes the target ready and the plan for it. A preset's target is prepared read-only
/// first (creating the default test file if needed), the plan expanded for its facts, and
/// the target checked again for writes if the plan writes.
pub fn prepare(req: &RunRequest) -> Result<Prepared, RunError> {
    let mut req = req.clone();
    req.plan.engine = engine::engine_for_target(req.plan.engine, req.target.path.as_deref());
    let engine = req.plan.engine;
    match &req.what {
        RunWhat::Preset(p) => {
            let (t, is_default) = prepare_target(&req.target, engine, false, req.target.size)?;
            let facts = TargetFacts {
                capacity_bytes: t.size,
                logical_block_size: t.align.min(u64::from(u32::MAX)) as u32,
            };
            let mut plan = plan::expand(p, &facts, &req.plan)?;
            let (_, writes) = plan_io(&plan);
            let t = if writes {
                prepare_target(&req.target, engine, true, req.target.size)?.0
            } else {
                t
            };
            let ask = req.verify.clone().or_else(|| {
                p.verify.map(|mode| super::VerifyAsk {
                    mode,
                    ..Default::default()
                })
            });
            let verify = match &ask {
                Some(a) => Some(super::verify::open(a, &t, &mut plan)?),
                None => None,
            };
            let prepared = Prepared {
                verify,
                kind: RunKind::Preset(p.clone()),
                plan,
                default_target: is_default,
                options: req.plan,
                label: label_of(&req.target, &t.path),
                target: t,
            };
            validate_plan(&prepared.plan, &prepared.step_target())?;
            Ok(prepared)
        }
        RunWhat::Single(s) => {
            let mut w = s.workload.clone();
            // What no target can fix is refused before the target is created or opened.
            engine::validate_shape(&w)?;
            let writes = w.rw.read_percent(w.rwmixread) < 100;
            let offset = w.region.offset;
            let size = req.target.size.map(|s| s.saturating_add(offset));
            let (t, is_default) = prepare_target(&req.target, engine, writes, size)?;
            if offset >= t.size {
                return Err(RunError::OffsetPastEnd {
                    offset,
                    path: t.path.clone(),
                    size: t.size,
                });
            }
            w.region.len = req.target.size.unwrap_or(t.size - offset);
            let mut plan = single_plan(s, w, &req.plan);
            let verify = match &req.verify {
                Some(a) => Some(super::verify::open(a, &t, &mut plan)?),
                None => None,
            };
            let prepared = Prepared {
                verify,
                kind: RunKind::Single {
                    ramp: s.ramp,
                    duration: s.duration,
                },
                plan,
                default_target: is_default,
                options: req.plan,
                label: label_of(&req.target, &t.path),
                target: t,
            };
            validate_plan(&prepared.plan, &prepared.step_target())?;
            Ok(prepared)
        }
    }
}
