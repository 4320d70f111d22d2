//! What a run is asked to do ([`RunRequest`]) and what it becomes once the target is
//! ready ([`Prepared`]): a preset expanded for the target, or one workload made a
//! one-phase plan, so every kind of run goes through the same runner.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use super::choice::{label_of, TargetChoice, Where};
use super::error::RunError;
use crate::engine::{self, StepTarget};
use crate::host::{LocalHost, PrepareRequest, PreparedReply, TargetHost};
use crate::plan::{self, Plan, PlanOptions, PlanStep, StepRate, TargetFacts};
use crate::preset::Preset;
use crate::remote::RemoteHost;
use crate::test_target::{FileId, MadeFile, PreparedTarget};
use crate::workload::{Arrivals, EngineKind, StepEnd, Workload};

/// One workload run once (a plain `drivescope run`).
#[derive(Debug, Clone)]
pub struct SingleStep {
    /// The region's `len` of 0 means "to the end of the target".
    pub workload: Workload,
    pub ramp: Duration,
    pub duration: Duration,
    /// The step also ends once it has moved this many bytes, ramp included (fio's
    /// `io_size`; `--io-size`), whichever comes first.
    pub io_size: Option<u64>,
}

/// An fio job file to run (`--fio-job`), with the write confirmations given for it.
#[derive(Debug, Clone)]
pub struct FioJobRequest {
    pub file: PathBuf,
    /// Each names a file or device a job of the file writes.
    pub destroy_data: Vec<PathBuf>,
    /// The folder fio's logs go to (`--fio-logs`); `None`: a new one beside the session.
    pub logs: Option<PathBuf>,
}

/// What a run runs: a preset, one workload, or an fio job file (its targets its own). `J`
/// is what is known of a job file: as asked ([`FioJobRequest`], a [`RunRequest`]'s), or
/// read and checked once the run is prepared ([`FioRun`], a [`Prepared`]'s).
#[derive(Debug, Clone)]
pub enum RunWhat<J = FioJobRequest> {
    Preset(Box<Preset>),
    /// A plain run: one step (its workload as asked; the plan's step is the one run).
    Single(SingleStep),
    FioJob(J),
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

/// What a prepared job-file run came from: the file, the text fio runs, fio's version and
/// every target with whether it is written.
#[derive(Debug, Clone)]
pub struct FioRun {
    pub file: PathBuf,
    pub text: String,
    pub version: String,
    pub targets: Vec<(PathBuf, bool)>,
    /// Every target but the first (the run's own), as prepared: each new file among them
    /// is filled before fio reads it, as the first is.
    pub also: Vec<PreparedTarget>,
    /// The folder asked for fio's logs (`--fio-logs`); `None`: one made beside the
    /// session when the run starts (`super::fio_logs`).
    pub logs: Option<PathBuf>,
}

/// A run ready to go: its plan and the target it runs on.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// What the run came from; a job file's as read (a step for each group of jobs fio
    /// runs together).
    pub kind: RunWhat<Box<FioRun>>,
    pub plan: Plan,
    pub target: PreparedTarget,
    /// The target was the built-in test file.
    pub default_target: bool,
    pub options: PlanOptions,
    /// What the drive is called in a run of several: the label asked for, else the path
    /// (`HOST:PATH` on a remote host).
    pub label: String,
    /// The machine the target is on.
    pub host: Arc<dyn TargetHost>,
    /// What its host told of the target when it prepared it.
    pub told: DriveFacts,
    /// A verified run's state.
    pub verify: Option<std::sync::Arc<crate::verify::VerifyState>>,
    /// The targets of this host the run writes without verifying: their own verify states
    /// are retired when it starts ([`super::verify::retire_state`]).
    pub retires: Vec<PathBuf>,
    /// The test files this run created on this host: removed when the run is refused before
    /// it starts ([`Prepared::started`] keeps them).
    pub made: Vec<Arc<MadeFile>>,
    /// The run's locks on its targets, held while it lives (a copy holds none).
    pub locks: super::RunLocks,
}

/// What a target's host told of it when it prepared it: the drive there, why there is no
/// drive identity or telemetry, which file or device it is.
#[derive(Debug, Clone, Default)]
pub struct DriveFacts {
    pub drive: Option<crate::drive::DriveInfo>,
    pub notes: Vec<String>,
    pub file: Option<FileId>,
}

impl DriveFacts {
    /// What this machine tells of a target of its own: the drive under it, resolved once
    /// here (none without a target, the nop engine's).
    pub(super) fn here(t: &PreparedTarget) -> DriveFacts {
        if t.path.as_os_str().is_empty() {
            return DriveFacts::default();
        }
        let (drive, notes) = LocalHost.drive_of(&t.path);
        DriveFacts {
            drive,
            notes,
            file: None,
        }
    }
}

impl Prepared {
    /// The run goes through the page cache: a step without O_DIRECT (`--direct 0`, a job
    /// file's `direct=0`). Its figures are the cache's as much as the drive's.
    pub fn page_cache(&self) -> bool {
        self.plan.steps.iter().any(|s| !s.workload.direct)
    }

    /// The run has started: the test files it created stay, here and on its host.
    pub fn started(&self) {
        for m in &self.made {
            m.keep();
        }
        self.host.started();
    }

    /// The target as the engine needs it.
    pub fn step_target(&self) -> StepTarget {
        self.target.step_target(self.verify.clone())
    }

    /// Does any step read, or write?
    pub fn io(&self) -> (bool, bool) {
        plan_io(&self.plan)
    }

    /// The preset, for a preset run.
    pub fn preset(&self) -> Option<&Preset> {
        match &self.kind {
            RunWhat::Preset(p) => Some(p),
            RunWhat::Single(_) | RunWhat::FioJob(_) => None,
        }
    }

    /// The name dated session files get: the preset's id, or the access pattern.
    pub fn name(&self) -> &str {
        match &self.kind {
            RunWhat::Preset(p) => &p.id,
            RunWhat::Single(_) | RunWhat::FioJob(_) => &self.plan.preset_id,
        }
    }
}

/// (reads, writes) of a plan: whether any step that does I/O reads, or writes.
pub fn plan_io(plan: &Plan) -> (bool, bool) {
    let mut reads = false;
    let mut writes = false;
    for s in plan.steps.iter().filter(|s| s.engine != EngineKind::Idle) {
        let p = s.workload.rw.read_percent(s.workload.rwmixread);
        writes |= p < 100;
        reads |= p > 0;
    }
    (reads, writes)
}

/// Makes the target ready on its host (its write guard decides): what the host answered,
/// and whether the target is the built-in test file. The nop engine's step has no target.
fn prepare_target(
    c: &TargetChoice,
    engine: EngineKind,
    writes: bool,
    random_writes: bool,
    size: Option<u64>,
    host: &dyn TargetHost,
) -> Result<(PreparedReply, bool), RunError> {
    if engine.targetless() {
        // The nop engine touches no target: none is prepared, not even the built-in file.
        return match c.path {
            Some(_) => Err(engine::EngineError::Invalid(engine::InvalidStep::NopTarget).into()),
            None => Ok((
                PreparedReply {
                    target: PreparedTarget::none(),
                    engine,
                    drive: None,
                    notes: Vec::new(),
                    file: None,
                },
                false,
            )),
        };
    }
    let reply = host.prepare(PrepareRequest {
        path: c.path.clone(),
        size,
        writes,
        random_writes,
        destroy_data: c.destroy_data.clone(),
        create_missing: c.create_missing,
        engine,
    })?;
    Ok((reply, c.path.is_none()))
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
    let rate = w.rate_iops.map(StepRate::Iops).unwrap_or(StepRate::Max);
    let preset_id = w.rw.as_str().to_string();
    let end = StepEnd {
        duration: Some(s.duration),
        bytes: s.io_size,
    };
    let workload = Workload {
        rate_iops: None,
        ..w
    };
    let step = PlanStep {
        rate,
        ramp: s.ramp,
        engine: opts.engine,
        engine_options: opts.engine_options,
        ..PlanStep::new(name.clone(), 0, workload, end, opts.interval)
    };
    Plan::one_phase(preset_id, name, vec![step])
}

/// The target a run writes without verifying, on this host (a target on another host has
/// its states there); none for a run that only reads, verifies, or has no target.
fn unverified_writes(t: &PreparedTarget, unverified: bool, host: &dyn TargetHost) -> Vec<PathBuf> {
    match host.path_here(t) {
        Some(p) if unverified && !p.as_os_str().is_empty() => vec![p.to_path_buf()],
        _ => Vec::new(),
    }
}

/// The test file `t` when this run created it on this host (a remote host's is its own).
pub(super) fn made_here(t: &PreparedTarget, host: &dyn TargetHost) -> Vec<Arc<MadeFile>> {
    match host.path_here(t) {
        Some(p) if t.created => MadeFile::of(p).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// The test files the run just created on `reply`'s target, here (removed again should
/// the run be refused before it starts); a verify state of this host under a created
/// file's path is retired (a target on another host has its states there). The request
/// takes the engine the host runs.
fn made_for(
    req: &mut RunRequest,
    reply: &PreparedReply,
    host: &dyn TargetHost,
) -> Result<Vec<Arc<MadeFile>>, RunError> {
    let t = &reply.target;
    let made = made_here(t, host);
    if host.path_here(t).is_some() {
        super::verify::retire_if_created(req.verify.as_ref(), t)?;
    }
    req.plan.engine = reply.engine;
    Ok(made)
}

/// The host a request's target is on, reached (a wait for a remote one ending when `stop`
/// is set). A verify state is this host's: a target on another host is not verified from
/// here; the nop engine has no target, here or on a host.
pub(super) fn host_for(
    req: &RunRequest,
    stop: Option<&Arc<AtomicBool>>,
) -> Result<Arc<dyn TargetHost>, RunError> {
    let verifies =
        req.verify.is_some() || matches!(&req.what, RunWhat::Preset(p) if p.verify.is_some());
    Ok(match &req.target.at {
        Where::Remote(h) if verifies => return Err(RunError::VerifyRemote(h.host.to_string())),
        Where::Remote(_) if req.plan.engine.targetless() => return Err(RunError::TargetlessOnHost),
        Where::Remote(h) => RemoteHost::open(h, stop.cloned())?,
        Where::Here => LocalHost::shared(),
    })
}

/// A preset's run on `host`: its target prepared read-only first (creating the default
/// test file if needed), the plan expanded for its facts, and the target checked again for
/// writes if the plan writes.
pub(super) fn prepare_preset(
    mut req: RunRequest,
    p: &Preset,
    host: Arc<dyn TargetHost>,
) -> Result<Prepared, RunError> {
    let engine = req.plan.engine;
    let h = host.as_ref();
    let (reply, is_default) =
        prepare_target(&req.target, engine, false, false, req.target.size, h)?;
    let made = made_for(&mut req, &reply, h)?;
    let t = &reply.target;
    let facts = TargetFacts {
        capacity_bytes: t.size,
        logical_block_size: t.align.min(u64::from(u32::MAX)) as u32,
    };
    let plan = plan::expand(p, &facts, &req.plan)?;
    let (_, writes) = plan_io(&plan);
    // Whether a step writes at random offsets.
    let random = plan.steps.iter().any(|s| {
        let w = &s.workload;
        s.engine != EngineKind::Idle && w.rw.is_random() && w.rw.read_percent(w.rwmixread) < 100
    });
    let reply = if writes {
        prepare_target(&req.target, engine, true, random, req.target.size, h)?.0
    } else {
        reply
    };
    req.verify = req.verify.take().or_else(|| {
        p.verify.map(|mode| super::VerifyAsk {
            mode,
            ..Default::default()
        })
    });
    let kind = RunWhat::Preset(Box::new(p.clone()));
    finish(req, kind, plan, (reply, is_default), made, writes, host)
}

/// A plain run's one workload on `host`.
pub(super) fn prepare_single(
    mut req: RunRequest,
    s: &SingleStep,
    host: Arc<dyn TargetHost>,
) -> Result<Prepared, RunError> {
    let engine = req.plan.engine;
    let h = host.as_ref();
    let mut w = s.workload.clone();
    // What no target can fix is refused before the target is created or opened.
    engine::validate_shape(&w)?;
    let writes = w.rw.read_percent(w.rwmixread) < 100;
    let offset = w.region.offset;
    let size = req.target.size.map(|s| s.saturating_add(offset));
    let random = writes && w.rw.is_random();
    let (reply, is_default) = prepare_target(&req.target, engine, writes, random, size, h)?;
    let made = made_for(&mut req, &reply, h)?;
    let t = &reply.target;
    if offset >= t.size {
        return Err(RunError::OffsetPastEnd {
            offset,
            path: t.path.clone(),
            size: t.size,
        });
    }
    w.region.len = req.target.size.unwrap_or(t.size - offset);
    let plan = single_plan(s, w, &req.plan);
    let kind = RunWhat::Single(s.clone());
    finish(req, kind, plan, (reply, is_default), made, writes, host)
}

/// The run of `kind` on the target its host made ready (`reply`; whether it is the
/// built-in test file) with the test files it `made`: its verify state opened when asked,
/// what it `writes` unverified to retire, and every step checked against the target.
fn finish(
    req: RunRequest,
    kind: RunWhat<Box<FioRun>>,
    mut plan: Plan,
    (reply, is_default): (PreparedReply, bool),
    made: Vec<Arc<MadeFile>>,
    writes: bool,
    host: Arc<dyn TargetHost>,
) -> Result<Prepared, RunError> {
    let t = reply.target;
    let verify = match &req.verify {
        Some(a) => Some(super::verify::open(a, &t, &mut plan)?),
        None => None,
    };
    let mut p = Prepared {
        retires: unverified_writes(&t, writes && verify.is_none(), host.as_ref()),
        verify,
        made,
        kind,
        plan,
        default_target: is_default,
        options: req.plan,
        label: label_of(&req.target, &t.path),
        target: t,
        told: DriveFacts {
            drive: reply.drive,
            notes: reply.notes,
            file: reply.file,
        },
        host,
        locks: Default::default(),
    };
    // Every step checked against the target before any I/O (rates aside, which sweeps
    // learn as they go), on the target's own host; its steps on fio carry the version of
    // fio the check found.
    let specs: Vec<_> = p.plan.steps.iter().map(|s| s.to_step_spec(None)).collect();
    if let Some(v) = p.host.check(&p.step_target(), &specs)? {
        for s in p.plan.steps.iter_mut() {
            if s.engine == EngineKind::Fio {
                s.fio_version = Some(v.clone());
            }
        }
    }
    Ok(p)
}
