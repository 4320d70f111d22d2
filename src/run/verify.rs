//! A verified run's state (`--verify`, a preset's `verify:`): opened for the target when
//! the run is prepared (the target's own unless a path is given), checked against the
//! plan's block sizes, and the plan given its read-back pass.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::RunError;
use crate::plan::{Plan, PlanPhase, PlanStep};
use crate::test_target::PreparedTarget;
use crate::verify::state::{dir_for, retire, Retirement};
use crate::verify::{VerifyError, VerifyMode, VerifyState};
use crate::workload::{BlockSizes, EngineKind, RwMode, StepEnd, Workload};

/// A verified run, as asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyAsk {
    pub mode: VerifyMode,
    /// The state's folder; `None`: the target's own in the data directory.
    pub state: Option<PathBuf>,
    /// Start a new state (a new id, every block never written).
    pub reset: bool,
    /// Only the read-back pass (`drivescope verify`): the plan is replaced by it.
    pub pass_only: bool,
}

/// Where verify states are kept: `verify/` beside the sessions folder.
pub fn states_root() -> PathBuf {
    let sessions = crate::session::paths::sessions_dir();
    sessions
        .parent()
        .map_or_else(|| sessions.join("verify"), |p| p.join("verify"))
}

/// The folder of `target`'s own verify state in the data directory.
pub fn dir_for_target(target: &Path) -> PathBuf {
    dir_for(&states_root(), target)
}

/// Retires the verify state of `target` (the one named, else the target's own in the data
/// directory), if there is one: `why` says what made it stale. A state another process
/// uses now is refused ([`VerifyError::InUse`]). Returns the state's folder when there was
/// one to retire.
pub fn retire_state(
    state: Option<&Path>,
    target: &Path,
    why: Retirement,
) -> Result<Option<PathBuf>, RunError> {
    let dir = state.map_or_else(|| dir_for(&states_root(), target), Path::to_path_buf);
    Ok(retire(&dir, &target.display().to_string(), why)?.then_some(dir))
}

/// A target drivescope has just created: any verify state of that path describes a file
/// that is gone, and is retired.
pub fn retire_if_created(ask: Option<&VerifyAsk>, target: &PreparedTarget) -> Result<(), RunError> {
    if target.created {
        retire_state(
            ask.and_then(|a| a.state.as_deref()),
            &target.path,
            Retirement::Recreated,
        )?;
    }
    Ok(())
}

/// Opens the verify state for a prepared target and plan, and makes the plan's read-back
/// pass. Only the io_uring engine verifies.
pub fn open(
    ask: &VerifyAsk,
    target: &PreparedTarget,
    plan: &mut Plan,
) -> Result<Arc<VerifyState>, RunError> {
    if let Some(s) = plan
        .steps
        .iter()
        .find(|s| !matches!(s.engine, EngineKind::IoUring | EngineKind::Idle))
    {
        return Err(RunError::VerifyEngine(s.engine));
    }
    let block = plan
        .steps
        .iter()
        .filter(|s| s.engine != EngineKind::Idle)
        .map(|s| s.workload.bs.min())
        .min()
        .unwrap_or(4096)
        .max(target.align)
        .max(512);
    let dir = ask
        .state
        .clone()
        .unwrap_or_else(|| dir_for(&states_root(), &target.path));
    let state = VerifyState::open(
        &dir,
        &target.path.display().to_string(),
        target.size,
        block,
        target.align,
        ask.reset,
        !ask.pass_only,
    )?;
    let b = state.meta.block;
    // Every I/O is checked against whole blocks of the state: a region that starts within
    // a block would be checked against the wrong ones (a check pass included); a run's
    // block sizes must be whole blocks too (the check pass reads in whole blocks).
    for s in plan.steps.iter().filter(|s| s.engine != EngineKind::Idle) {
        let w = &s.workload;
        if (!ask.pass_only && w.bs.split.iter().any(|&(bs, _)| !bs.is_multiple_of(b)))
            || !w.region.offset.is_multiple_of(b)
        {
            return Err(VerifyError::BlockSize {
                path: dir.clone(),
                state: b,
            }
            .into());
        }
    }
    let writes = plan
        .steps
        .iter()
        .any(|s| s.workload.rw.read_percent(s.workload.rwmixread) < 100);
    if ask.pass_only {
        let first = plan.steps.first().cloned();
        if let Some(first) = first {
            *plan = one_step_plan(readback_step(&first, b));
        }
    } else if writes && !state.clean() {
        return Err(VerifyError::Unclean {
            target: target.path.display().to_string(),
        }
        .into());
    } else if ask.mode == VerifyMode::Readback {
        if let Some(last) = plan.steps.last().cloned() {
            let step = readback_step(&last, b);
            let steps = plan.steps.len()..plan.steps.len() + 1;
            plan.phases.push(PlanPhase::new(step.name.clone(), steps));
            plan.steps.push(step);
        }
    }
    Ok(Arc::new(state))
}

/// The read-back pass over `like`'s region: sequential reads of every block, once.
fn readback_step(like: &PlanStep, block: u64) -> PlanStep {
    let region = like.workload.region;
    let bs = if region.len.is_multiple_of(block * 32) {
        block * 32
    } else {
        block
    };
    let workload = Workload {
        rw: RwMode::Read,
        rwmixread: 100,
        rwmixtrim: 0,
        bs: BlockSizes::single(bs),
        iodepth: 16,
        jobs: 1,
        rate_iops: None,
        ..like.workload.clone()
    };
    let end = StepEnd {
        duration: None,
        bytes: Some(region.len / bs * bs),
    };
    let name = "verify: read back".to_string();
    PlanStep {
        engine: like.engine,
        engine_options: like.engine_options,
        thermal: like.thermal,
        fio_file: like.fio_file.clone(),
        fio_version: like.fio_version.clone(),
        ..PlanStep::new(name, like.phase + 1, workload, end, like.interval)
    }
}

fn one_step_plan(mut step: PlanStep) -> Plan {
    step.phase = 0;
    Plan::one_phase("verify".to_string(), step.name.clone(), vec![step])
}
