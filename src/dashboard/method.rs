//! Which PTS method figure a plan has, read from its shape (never from names), and the
//! [`MethodPoint`] of each finished step for it.

use crate::app::method::{MethodKind, MethodPoint, StepRole};
use crate::plan::{Plan, PlanStep, SteadyRule};
use crate::stats::StepSummary;
use crate::workload::EngineKind;

/// A plan's method figure and its rounds' steady-state window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MethodOf {
    pub kind: MethodKind,
    pub window: usize,
}

/// The figure of `plan`: a demand-intensity curve when a phase of rounds runs several
/// threads x queue depth combinations; a recovery view when phases run standalone runs
/// (runs no figure is picked from); else none.
pub(super) fn method_of(plan: &Plan) -> Option<MethodOf> {
    let window = plan
        .phases
        .iter()
        .find_map(|p| match p.rounds.as_ref().map(|r| r.rule) {
            Some(SteadyRule::Snia { window, .. }) => Some(window),
            _ => None,
        })
        .unwrap_or(1);
    let matrix = plan.phases.iter().filter(|p| p.rounds.is_some()).any(|p| {
        let steps = plan.steps.get(p.steps.clone()).unwrap_or_default();
        let first = steps.first().map(shape);
        steps.iter().any(|s| Some(shape(s)) != first)
    });
    if matrix {
        return Some(MethodOf {
            kind: MethodKind::DemandIntensity,
            window,
        });
    }
    let runs: Vec<&PlanStep> = plan
        .steps
        .iter()
        .filter(|s| s.run.is_some_and(|r| r.pick.is_none()))
        .collect();
    let first = runs.first()?;
    let by_bytes = runs.iter().any(|s| s.workload.bs != first.workload.bs);
    Some(MethodOf {
        kind: MethodKind::Recovery { by_bytes },
        window,
    })
}

fn shape(s: &PlanStep) -> (u32, u32) {
    (s.workload.jobs, s.workload.iodepth)
}

/// The point of finished step `step` of phase `phase`, ended at `t_s` on the run clock;
/// `None` for a step of no I/O (a run's idle time) and a round's pre-write.
pub(super) fn point(
    m: MethodOf,
    step: &PlanStep,
    phase: &str,
    t_s: f64,
    s: &StepSummary,
) -> Option<MethodPoint> {
    // A round's pre-write is no point of the method's figure.
    if step.engine == EngineKind::Idle || step.prewrite {
        return None;
    }
    let role = match (step.round, step.run) {
        (Some(round), _) => StepRole::Round {
            round,
            tracked: step.tracked,
        },
        (None, Some(_)) => StepRole::Run,
        (None, None) => StepRole::Other,
    };
    Some(MethodPoint {
        kind: m.kind,
        window: m.window,
        phase: phase.to_string(),
        role,
        jobs: step.workload.jobs,
        iodepth: step.workload.iodepth,
        t_s,
        iops: s.iops,
        bw_bytes: s.bw_bytes(),
        mean_us: s.service_lat().mean,
        p99_us: s.service_lat().p99,
        p99_999_us: s.service_lat().p99_999,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{expand, PlanOptions, TargetFacts};

    fn of(id: &str) -> Option<MethodKind> {
        let p = crate::preset::load_builtin(id).expect("preset");
        let facts = TargetFacts {
            capacity_bytes: 64 << 30,
            logical_block_size: 512,
        };
        let plan = expand(&p, &facts, &PlanOptions::default()).expect("plan");
        method_of(&plan).map(|m| m.kind)
    }

    #[test]
    fn the_pts_methods_have_their_figures_and_other_presets_none() {
        assert_eq!(
            of("snia-hir"),
            Some(MethodKind::Recovery { by_bytes: false })
        );
        assert_eq!(
            of("snia-xsr"),
            Some(MethodKind::Recovery { by_bytes: true })
        );
        assert_eq!(of("snia-dirth"), Some(MethodKind::DemandIntensity));
        // Best-of runs (diskmark) and SNIA rounds of one workload per round are not.
        assert_eq!(of("diskmark"), None);
        assert_eq!(of("quick-look"), None);
        assert_eq!(of("snia-iops"), None);
        assert_eq!(of("snia-latency"), None);
    }
}
