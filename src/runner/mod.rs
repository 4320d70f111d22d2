//! Runs a [`Plan`] on a target, step by step, through the engine: resolves each step's rate
//! from the measured maxima (sweeps), ends steps early on live steady state (fio style),
//! tracks SNIA rounds and skips the remaining rounds once steady, and reports everything
//! as [`RunEvent`]s. Headless `drivescope run --preset` and the dashboard both drive it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::{self, Control, EngineError, EngineKind, StepTarget};
use crate::plan::{resolve_rate, Metric, Plan, PlanStep, SteadyState, SteadyVerdict};
use crate::stats::{IntervalReport, StepSummary};

/// One finished step: a point of the latency-vs-IOPS curve.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepRecord {
    pub index: usize,
    pub name: String,
    pub phase: usize,
    pub phase_name: String,
    pub round: Option<u32>,
    pub sweep_point: Option<f64>,
    /// The rate the step ran at; `None` for a closed-loop (max) step.
    pub target_iops: Option<f64>,
    pub summary: StepSummary,
}

/// Something that happened in a run, for the log, the events panel and the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEventRecord {
    /// Seconds since the plan started.
    pub t_s: f64,
    /// `phase`, `step`, `steady_state`, `skip`, `errors`, `note`.
    pub kind: String,
    pub text: String,
}

/// What the runner reports as it goes.
#[derive(Debug)]
pub enum RunEvent<'a> {
    StepStarted {
        index: usize,
        step: &'a PlanStep,
        target_iops: Option<f64>,
    },
    Interval {
        index: usize,
        report: &'a IntervalReport,
    },
    StepFinished(&'a StepRecord),
    Event(&'a RunEventRecord),
}

/// Shared controls: `stop` ends the plan, `skip` ends the current step only, `pause`
/// holds the I/O (the step's time and rate schedule resume where they were).
#[derive(Debug, Default)]
pub struct RunControl {
    pub stop: AtomicBool,
    pub skip: AtomicBool,
    pub pause: Arc<AtomicBool>,
}

/// How the plan ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanOutcome {
    Completed,
    Stopped,
    /// A step saw every I/O fail; the plan stopped there.
    Failed(String),
}

fn metric_value(m: Metric, s: &StepSummary) -> f64 {
    match m {
        Metric::Iops => s.iops,
        Metric::Bw => s.read_bw_bytes + s.write_bw_bytes,
        Metric::MeanLatency => s.lat_us.mean,
    }
}

fn interval_value(m: Metric, r: &IntervalReport) -> f64 {
    match m {
        Metric::Iops => r.iops(),
        Metric::Bw => r.bw_bytes(),
        Metric::MeanLatency => r.lat_us.mean,
    }
}

/// Runs `plan` to its end. `stop` (e.g. set by a signal handler) ends the plan after the
/// current interval, like `ctl.stop`.
pub fn run_plan(
    plan: &Plan,
    target: &StepTarget,
    kind: EngineKind,
    ctl: &RunControl,
    stop: &AtomicBool,
    mut on: impl FnMut(RunEvent<'_>),
) -> Result<PlanOutcome, EngineError> {
    let t0 = std::time::Instant::now();
    let mut measured_max: Vec<Option<f64>> = vec![None; plan.phases.len()];
    let event = |on: &mut dyn FnMut(RunEvent<'_>), kind: &str, text: String| {
        let e = RunEventRecord {
            t_s: t0.elapsed().as_secs_f64(),
            kind: kind.to_string(),
            text,
        };
        on(RunEvent::Event(&e));
    };
    for n in &plan.notes {
        event(&mut on, "note", n.clone());
    }
    for (pi, phase) in plan.phases.iter().enumerate() {
        event(
            &mut on,
            "phase",
            format!("phase {} of {}: {}", pi + 1, plan.phases.len(), phase.name),
        );
        let mut rounds = phase.rounds.map(|r| (r, SteadyState::new(&r.rule)));
        let mut skip_rest = false;
        let mut announced = false;
        for index in phase.steps.clone() {
            if skip_rest {
                break;
            }
            if stop.load(Ordering::Relaxed) || ctl.stop.load(Ordering::Relaxed) {
                return Ok(PlanOutcome::Stopped);
            }
            let step = &plan.steps[index];
            let measured = |p: usize| measured_max.get(p).copied().flatten();
            let rate = match resolve_rate(&step.rate, &measured) {
                Ok(r) => r,
                Err(why) => {
                    event(&mut on, "skip", format!("{}: skipped: {why}", step.name));
                    continue;
                }
            };
            on(RunEvent::StepStarted {
                index,
                step,
                target_iops: rate,
            });
            let spec = step.to_step_spec(rate);
            let mut live = step.steady.map(|r| (r, SteadyState::new(&r)));
            let mut steady_note: Option<String> = None;
            ctl.skip.store(false, Ordering::Relaxed);
            let summary = engine::run_step_ctl(
                target,
                &spec,
                kind,
                stop,
                &ctl.pause,
                |r| {
                    on(RunEvent::Interval { index, report: r });
                    if ctl.stop.load(Ordering::Relaxed) {
                        return Control::Stop("stopped".into());
                    }
                    if ctl.skip.swap(false, Ordering::Relaxed) {
                        return Control::Stop("skipped".into());
                    }
                    if r.ramp {
                        return Control::Continue;
                    }
                    if let Some((rule, det)) = &mut live {
                        let metric = match rule {
                            crate::plan::SteadyRule::Fio { metric, .. } => *metric,
                            crate::plan::SteadyRule::Snia { .. } => Metric::Iops,
                        };
                        if let SteadyVerdict::Reached { round } =
                            det.push(interval_value(metric, r))
                        {
                            steady_note = Some(format!(
                                "{}: steady state reached at interval {round}",
                                step.name
                            ));
                            return Control::Stop("steady state".into());
                        }
                    }
                    Control::Continue
                },
                |_| {},
            )?;
            if let Some(n) = steady_note {
                event(&mut on, "steady_state", n);
            } else if let Some((_, det)) = &live {
                event(
                    &mut on,
                    "steady_state",
                    format!(
                        "{}: {}",
                        step.name,
                        det.finish(&format!("ended by {}", summary.ended_by))
                    ),
                );
            }
            if let Some(note) = &summary.engine_note {
                event(&mut on, "note", note.clone());
            }
            if summary.errors > 0 {
                event(
                    &mut on,
                    "errors",
                    format!("{}: {} I/O errors", step.name, summary.errors),
                );
            }
            if rate.is_none() {
                measured_max[step.phase] = Some(summary.iops);
            }
            let ended_by = summary.ended_by.clone();
            let record = StepRecord {
                index,
                name: step.name.clone(),
                phase: step.phase,
                phase_name: phase.name.clone(),
                round: step.round,
                sweep_point: step.sweep_point,
                target_iops: rate,
                summary,
            };
            on(RunEvent::StepFinished(&record));
            if let Some((r, det)) = &mut rounds {
                if step.tracked {
                    let v = metric_value(r.metric, &record.summary);
                    match det.push(v) {
                        SteadyVerdict::Reached { round } => {
                            event(
                                &mut on,
                                "steady_state",
                                format!("{}: steady state reached at round {round}", phase.name),
                            );
                            skip_rest = true;
                        }
                        SteadyVerdict::NotReached { reason } if !announced => {
                            announced = true;
                            event(
                                &mut on,
                                "steady_state",
                                format!("{}: steady state not reached: {reason}", phase.name),
                            );
                        }
                        SteadyVerdict::NotReached { .. } => {}
                        SteadyVerdict::Pending => {}
                    }
                }
            }
            if let (Some(limit), Some(_)) = (phase.stop_curve, record.sweep_point) {
                let mean_ms = record.summary.lat_us.mean / 1000.0;
                if mean_ms > limit.as_secs_f64() * 1000.0 {
                    event(
                        &mut on,
                        "skip",
                        format!(
                            "{}: mean response {mean_ms:.2} ms is above stopcurve {:.2} ms; \
                             the rest of the curve is skipped",
                            record.name,
                            limit.as_secs_f64() * 1000.0
                        ),
                    );
                    skip_rest = true;
                }
            }
            if crate::engine::is_failure(&ended_by) {
                return Ok(PlanOutcome::Failed(format!("{}: {ended_by}", record.name)));
            }
            if ended_by == "stopped" {
                return Ok(PlanOutcome::Stopped);
            }
        }
        if let Some((_, det)) = &rounds {
            if !skip_rest && !announced {
                if let SteadyVerdict::NotReached { reason } = det.finish("the rounds ran out") {
                    if det.pushed() > 0 {
                        event(
                            &mut on,
                            "steady_state",
                            format!("{}: steady state not reached: {reason}", phase.name),
                        );
                    }
                }
            }
        }
    }
    Ok(PlanOutcome::Completed)
}
