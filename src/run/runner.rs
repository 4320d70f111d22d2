//! Runs a [`Plan`] on a target, step by step, each step on the engine it names (through the
//! engine seam): resolves each step's rate from the measured maxima (sweeps), ends steps
//! early on live steady state (fio style), tracks SNIA rounds and skips the remaining rounds
//! once steady, stops a curve past vdbench's `stopcurve`, takes the user's commands, and
//! reports everything to a [`RunObserver`]. Every kind of run goes through here.

use std::time::Instant;

use super::control::{RunCmd, RunControl};
use super::event::{FinishedStep, Happening, RunEvent, SkipWhy, SteadyScope, Timed};
use super::tally::Tally;
use crate::engine::{self, Control, EngineError, StepObserver, StepTarget};
use crate::outcome::{EndedBy, RunOutcome};
use crate::plan::{CurveWalk, Metric, Plan, SteadyRule, SteadyState, SteadyVerdict};
use crate::stats::{IntervalReport, StepSummary};

/// What the runner reports to.
pub trait RunObserver {
    fn event(&mut self, ev: RunEvent<'_>);
    /// The user asked for a snapshot of the session so far.
    fn snapshot(&mut self);
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

/// The plan's clock and the observer, for events.
struct Reporter<'o> {
    t0: Instant,
    obs: &'o mut dyn RunObserver,
}

impl Reporter<'_> {
    fn happened(&mut self, what: Happening) {
        let e = Timed {
            t_s: self.t0.elapsed().as_secs_f64(),
            what,
        };
        self.obs.event(RunEvent::Happened(&e));
    }
}

/// One running step, as the engine's observer: intervals go out as events, the user's
/// commands come in, the step's live steady-state rule is judged.
struct StepWatch<'a, 'o> {
    index: usize,
    rep: &'a mut Reporter<'o>,
    ctl: &'a RunControl,
    live: Option<(Metric, SteadyState)>,
    reached: Option<usize>,
    tally: &'a mut Tally,
}

impl StepObserver for StepWatch<'_, '_> {
    fn interval(&mut self, r: &IntervalReport) -> Control {
        if self.tally.first_error.is_none() {
            self.tally.first_error = engine::first_error(r).map(|e| e.message.clone());
        }
        self.rep.obs.event(RunEvent::Interval {
            index: self.index,
            report: r,
        });
        let mut answer = Control::Continue;
        for cmd in self.ctl.take() {
            match cmd {
                RunCmd::Skip => answer = Control::Stop(EndedBy::Skipped),
                RunCmd::Snapshot => self.rep.obs.snapshot(),
                RunCmd::Stop | RunCmd::Pause | RunCmd::Resume => {}
            }
        }
        if self.ctl.stop_requested() {
            return Control::Stop(EndedBy::Stopped);
        }
        if answer != Control::Continue || r.excluded() {
            return answer;
        }
        if let Some((metric, det)) = &mut self.live {
            if let SteadyVerdict::Reached { round } = det.push(interval_value(*metric, r)) {
                self.reached = Some(round);
                return Control::Stop(EndedBy::SteadyState);
            }
        }
        Control::Continue
    }

    fn note(&mut self, note: &str) {
        self.rep.happened(Happening::Note(note.to_string()));
    }
}

/// Runs `plan` to its end, or until the device fails or the user stops it.
pub fn run_plan(
    plan: &Plan,
    target: &StepTarget,
    ctl: &RunControl,
    obs: &mut dyn RunObserver,
) -> Result<(RunOutcome, Tally), EngineError> {
    let mut rep = Reporter {
        t0: Instant::now(),
        obs,
    };
    let mut tally = Tally {
        steps: plan.steps.len(),
        ..Tally::default()
    };
    let mut measured_max: Vec<Option<f64>> = vec![None; plan.phases.len()];
    for n in &plan.notes {
        rep.happened(Happening::Note(n.clone()));
    }
    let stopped = |ctl: &RunControl, tally: Tally| (RunOutcome::Stopped(ctl.stopped_by()), tally);
    for (pi, phase) in plan.phases.iter().enumerate() {
        rep.happened(Happening::Phase {
            index: pi,
            count: plan.phases.len(),
            name: phase.name.clone(),
        });
        let mut rounds = phase.rounds.map(|r| (r, SteadyState::new(&r.rule)));
        let mut skip_rest = false;
        let mut announced = false;
        let mut curve = CurveWalk::default();
        for index in phase.steps.clone() {
            if skip_rest {
                break;
            }
            if ctl.stop_requested() {
                return Ok(stopped(ctl, tally));
            }
            let step = &plan.steps[index];
            let measured = |p: usize| measured_max.get(p).copied().flatten();
            let rate = match curve.resolve(step, &measured) {
                Ok(r) => r,
                Err(why) => {
                    rep.happened(Happening::Skipped {
                        step: step.name.clone(),
                        why: SkipWhy::Rate(why),
                    });
                    continue;
                }
            };
            rep.obs.event(RunEvent::StepStarted {
                index,
                step,
                target_iops: rate,
            });
            let spec = step.to_step_spec(rate);
            // Commands sent between steps (a skip meant for the last one) are spent.
            let _ = ctl.take();
            let live = step.steady.map(|rule| {
                let metric = match rule {
                    SteadyRule::Fio { metric, .. } => metric,
                    SteadyRule::Snia { .. } => Metric::Iops,
                };
                (metric, SteadyState::new(&rule))
            });
            let mut watch = StepWatch {
                index,
                rep: &mut rep,
                ctl,
                live,
                reached: None,
                tally: &mut tally,
            };
            let summary =
                engine::engine_for(spec.engine).run_step(target, &spec, ctl.flags(), &mut watch)?;
            let (reached, live) = (watch.reached, watch.live);
            let name = || step.name.clone();
            if let Some(round) = reached {
                rep.happened(Happening::Steady {
                    scope: SteadyScope::Step(name()),
                    verdict: SteadyVerdict::Reached { round },
                });
            } else if let Some((_, det)) = &live {
                rep.happened(Happening::Steady {
                    scope: SteadyScope::Step(name()),
                    verdict: det.finish(&format!("ended by {}", summary.ended_by)),
                });
            }
            if summary.errors > 0 {
                rep.happened(Happening::Errors {
                    step: name(),
                    count: summary.errors,
                });
            }
            if rate.is_none() {
                measured_max[step.phase] = Some(summary.iops);
            }
            tally.steps_run += 1;
            tally.errors += summary.errors;
            let record = FinishedStep {
                index,
                name: name(),
                phase: step.phase,
                phase_name: phase.name.clone(),
                round: step.round,
                sweep_point: step.sweep_point,
                target_iops: rate,
                closed_loop: step.closed_loop,
                service_lat_us: *summary.service_lat(),
                response_from_schedule_lat_us: summary.response_from_schedule().copied(),
                summary,
            };
            rep.obs.event(RunEvent::StepFinished(&record));
            if let Some((r, det)) = &mut rounds {
                if step.tracked {
                    match det.push(metric_value(r.metric, &record.summary)) {
                        SteadyVerdict::Reached { round } => {
                            rep.happened(Happening::Steady {
                                scope: SteadyScope::Phase(phase.name.clone()),
                                verdict: SteadyVerdict::Reached { round },
                            });
                            skip_rest = true;
                        }
                        v @ SteadyVerdict::NotReached { .. } if !announced => {
                            announced = true;
                            rep.happened(Happening::Steady {
                                scope: SteadyScope::Phase(phase.name.clone()),
                                verdict: v,
                            });
                        }
                        SteadyVerdict::NotReached { .. } | SteadyVerdict::Pending => {}
                    }
                }
            }
            if let (Some(limit), Some(_)) = (phase.stop_curve, record.sweep_point) {
                // vdbench's response time runs from the I/O's issue: the service latency.
                let mean_ms = record.service_lat_us.mean / 1000.0;
                let limit_ms = limit.as_secs_f64() * 1000.0;
                if mean_ms > limit_ms {
                    rep.happened(Happening::Skipped {
                        step: record.name.clone(),
                        why: SkipWhy::StopCurve { mean_ms, limit_ms },
                    });
                    skip_rest = true;
                }
            }
            match record.summary.ended_by {
                EndedBy::Device(_) => {
                    let outcome = RunOutcome::Failed {
                        step: Some(record.name.clone()),
                        ended_by: record.summary.ended_by.clone(),
                    };
                    return Ok((outcome, tally));
                }
                EndedBy::Stopped => return Ok(stopped(ctl, tally)),
                _ => {}
            }
        }
        if let Some((_, det)) = &rounds {
            if !skip_rest && !announced && det.pushed() > 0 {
                let v = det.finish("the rounds ran out");
                if matches!(v, SteadyVerdict::NotReached { .. }) {
                    rep.happened(Happening::Steady {
                        scope: SteadyScope::Phase(phase.name.clone()),
                        verdict: v,
                    });
                }
            }
        }
    }
    let outcome = RunOutcome::Completed {
        errors: tally.errors,
        first_error: tally.first_error.clone(),
    };
    Ok((outcome, tally))
}
