//! Runs a [`Plan`] on a target, step by step, each step on the engine it names (through the
//! engine seam): resolves each step's rate from the measured maxima (sweeps), ends steps
//! early on live steady state (fio style), tracks SNIA rounds and skips the remaining rounds
//! once steady, stops a curve past vdbench's `stopcurve`, takes the user's commands, and
//! reports everything to a [`RunObserver`]. Every kind of run goes through here.

use std::time::Instant;

use super::control::{RunCmd, RunControl};
use super::event::{FinishedStep, RunEvent, SessionEvent, SkipWhy, SteadyScope, Timed};
use super::tally::Tally;
use crate::engine::{Control, Engine, EngineError, StepObserver, StepTarget};
use crate::outcome::{EndedBy, RunOutcome};
use crate::plan::operating::{self, ShapePoint};
use crate::plan::{
    CurveWalk, Metric, Plan, PlanPhase, PlanStep, Rounds, SteadyRule, SteadyState, SteadyVerdict,
};
use crate::stats::{IntervalReport, StepSummary};
use crate::telemetry::reading::SmartReading;
use crate::thermal::ThermalWatch;
use crate::workload::EngineKind;

/// What the runner reports to.
pub trait RunObserver {
    fn event(&mut self, ev: RunEvent);
    /// The user asked for a snapshot of the session so far.
    fn snapshot(&mut self);
    /// The drive's readings that arrived since the last call, with their times (seconds
    /// since the run started), for the thermal rules.
    fn readings(&mut self) -> Vec<(f64, SmartReading)> {
        Vec::new()
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
    /// Feeds the readings that arrived to the thermal watch and reports what it saw; the
    /// reason it gives to end the step, if any.
    fn thermal(&mut self, watch: &mut ThermalWatch) -> Option<EndedBy> {
        let mut end = None;
        for (t, r) in self.obs.readings() {
            let (events, stop) = watch.observe(t, &r);
            for e in events {
                self.happened(SessionEvent::Thermal(e));
            }
            end = end.or(stop);
        }
        end
    }

    fn happened(&mut self, what: SessionEvent) {
        let e = Timed {
            t_s: self.t0.elapsed().as_secs_f64(),
            what,
        };
        self.obs.event(RunEvent::Happened(e));
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
    thermal: &'a mut ThermalWatch,
    verify: Option<&'a crate::verify::VerifyState>,
}

/// Hands out a verified run's findings kept since the last call, as events.
fn verify_findings(rep: &mut Reporter<'_>, state: Option<&crate::verify::VerifyState>) {
    for f in state.map(|s| s.take_findings()).unwrap_or_default() {
        rep.happened(SessionEvent::VerifyFinding(Box::new(f)));
    }
}

impl StepObserver for StepWatch<'_, '_> {
    fn interval(&mut self, r: &IntervalReport) -> Control {
        if self.tally.first_error.is_none() {
            self.tally.first_error = r.first_error().map(|e| e.message.clone());
        }
        self.rep.obs.event(RunEvent::Interval {
            index: self.index,
            report: std::sync::Arc::new(r.clone()),
        });
        verify_findings(self.rep, self.verify);
        if let Some(state) = self.verify {
            self.rep.obs.event(RunEvent::Verify(state.totals()));
        }
        let thermal_end = self.rep.thermal(self.thermal);
        let mut answer = Control::Continue;
        for cmd in self.ctl.take() {
            match cmd {
                RunCmd::Skip => answer = Control::Stop(EndedBy::Skipped),
                RunCmd::Snapshot => self.rep.obs.snapshot(),
                RunCmd::Stop
                | RunCmd::Pause
                | RunCmd::Resume
                | RunCmd::StopDrive(_)
                | RunCmd::Note(_)
                | RunCmd::PowerCut(_) => {}
            }
        }
        if self.ctl.stop_requested() {
            return Control::Stop(EndedBy::Stopped);
        }
        if answer != Control::Continue {
            return answer;
        }
        if let Some(why) = thermal_end {
            return Control::Stop(why);
        }
        if r.excluded() {
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
        self.rep.happened(SessionEvent::Note(note.to_string()));
    }
}

/// Runs `plan` to its end, or until the device fails or the user stops it, each step on
/// the engine `engine_for` gives for its kind (its target's host's; the tests give one
/// that replays a series of intervals).
pub(crate) fn run_plan_on(
    plan: &Plan,
    target: &StepTarget,
    ctl: &RunControl,
    obs: &mut dyn RunObserver,
    engine_for: &mut dyn FnMut(EngineKind) -> Box<dyn Engine>,
) -> Result<(RunOutcome, Tally), EngineError> {
    let mut walk = PlanRun {
        plan,
        target,
        ctl,
        engine_for,
        rep: Reporter {
            t0: Instant::now(),
            obs,
        },
        tally: Tally {
            steps: plan.steps.len(),
            ..Tally::default()
        },
        measured_max: vec![None; plan.phases.len()],
        shapes: vec![Vec::new(); plan.phases.len()],
        thermal: ThermalWatch::new(plan.needs_temperature()),
    };
    for n in &plan.notes {
        walk.rep.happened(SessionEvent::Note(n.clone()));
    }
    for (pi, phase) in plan.phases.iter().enumerate() {
        if let Some(end) = walk.phase(pi, phase)? {
            return Ok((end, walk.tally));
        }
    }
    let outcome = RunOutcome::Completed {
        errors: walk.tally.errors,
        first_error: walk.tally.first_error.clone(),
    };
    Ok((outcome, walk.tally))
}

/// A plan being walked: what it runs on, what it measured so far.
struct PlanRun<'p, 'o> {
    plan: &'p Plan,
    target: &'p StepTarget,
    ctl: &'p RunControl,
    engine_for: &'p mut dyn FnMut(EngineKind) -> Box<dyn Engine>,
    rep: Reporter<'o>,
    tally: Tally,
    /// Each phase's maximum IOPS, once its unpaced step ran (what a sweep's rates are of).
    measured_max: Vec<Option<f64>>,
    /// Each phase of rounds' combinations, their latest round's figures (what a later
    /// phase's operating point is picked from).
    shapes: Vec<Vec<ShapePoint>>,
    thermal: ThermalWatch,
}

/// A phase being walked: its rounds' steady state, its curve.
struct PhaseWalk<'p> {
    phase: &'p PlanPhase,
    rounds: Option<(Rounds, SteadyState)>,
    /// The phase's remaining steps are skipped (its rounds reached steady state, its curve
    /// passed the stop).
    skip_rest: bool,
    /// The rounds reached steady state in this round: its remaining steps still run (the
    /// round is whole, as SNIA judges steady state after each round), later rounds do not.
    last_round: Option<u32>,
    /// The rounds' verdict that they did not reach steady state was said.
    announced: bool,
    curve: CurveWalk,
}

/// How a step's run on its engine ended, when it did not fail outright.
enum StepRan {
    /// The engine's summary, and what the step's live steady state saw.
    Summary(
        Box<StepSummary>,
        Option<usize>,
        Option<(Metric, SteadyState)>,
    ),
    /// The run of this drive ends here (its host is gone).
    Ended(RunOutcome),
}

impl PlanRun<'_, '_> {
    /// The run stopped by the user.
    fn stopped(&self) -> RunOutcome {
        RunOutcome::Stopped(self.ctl.stopped_by())
    }

    /// Walks phase `pi` step by step; the run's outcome when it ends in this phase.
    fn phase(&mut self, pi: usize, phase: &PlanPhase) -> Result<Option<RunOutcome>, EngineError> {
        self.rep.happened(SessionEvent::Phase {
            index: pi,
            count: self.plan.phases.len(),
            name: phase.name.clone(),
        });
        let mut walk = PhaseWalk {
            phase,
            rounds: phase
                .rounds
                .map(|r| (r, SteadyState::new(&r.rule).tracking(r.metric))),
            skip_rest: false,
            last_round: None,
            announced: false,
            curve: CurveWalk::default(),
        };
        for index in phase.steps.clone() {
            let past = |r: u32| self.plan.steps[index].round != Some(r);
            if walk.skip_rest || walk.last_round.is_some_and(past) {
                break;
            }
            if self.ctl.stop_requested() {
                return Ok(Some(self.stopped()));
            }
            if let Some(end) = self.step(&mut walk, index)? {
                return Ok(Some(end));
            }
        }
        if let Some((_, det)) = &walk.rounds {
            if !walk.skip_rest && walk.last_round.is_none() && !walk.announced && det.pushed() > 0 {
                let v = det.finish("the rounds ran out");
                if matches!(v, SteadyVerdict::NotReached { .. }) {
                    self.rep.happened(SessionEvent::Steady {
                        scope: SteadyScope::Phase(phase.name.clone()),
                        verdict: v,
                    });
                }
            }
        }
        Ok(None)
    }

    /// Runs step `index` of the phase and judges it; the run's outcome when it ends here.
    fn step(
        &mut self,
        walk: &mut PhaseWalk<'_>,
        index: usize,
    ) -> Result<Option<RunOutcome>, EngineError> {
        let plan = self.plan;
        let picked;
        let step = match walk.phase.shape_from {
            None => &plan.steps[index],
            Some(from) => {
                let points = self.shapes.get(from.phase).map_or(&[][..], Vec::as_slice);
                let Some((jobs, iodepth)) = operating::pick(points, from.point) else {
                    self.rep.happened(SessionEvent::Skipped {
                        step: plan.steps[index].name.clone(),
                        why: SkipWhy::NoOperatingPoint(from.point),
                    });
                    return Ok(None);
                };
                let mut s = plan.steps[index].clone();
                s.workload.jobs = jobs;
                s.workload.iodepth = iodepth;
                picked = s;
                &picked
            }
        };
        let measured_max = &self.measured_max;
        let measured = |p: usize| measured_max.get(p).copied().flatten();
        let rate = match walk.curve.resolve(step, &measured) {
            Ok(r) => r,
            Err(why) => {
                self.rep.happened(SessionEvent::Skipped {
                    step: step.name.clone(),
                    why: SkipWhy::Rate(why),
                });
                return Ok(None);
            }
        };
        self.rep.obs.event(RunEvent::StepStarted {
            index,
            step: std::sync::Arc::new(step.clone()),
            target_iops: rate,
        });
        let (summary, reached, live) = match self.run_step(index, step, rate)? {
            StepRan::Summary(s, reached, live) => (*s, reached, live),
            StepRan::Ended(end) => return Ok(Some(end)),
        };
        self.step_verdicts(step, &summary, reached, live);
        let verify = self.target.verify.as_deref().map(|state| {
            verify_findings(&mut self.rep, Some(state));
            let totals = state.totals();
            self.rep.happened(SessionEvent::Verified(totals));
            self.tally.findings = totals.findings();
            totals
        });
        if rate.is_none() {
            self.measured_max[step.phase] = Some(summary.iops);
        }
        if step.round.is_some() && !step.prewrite {
            if let Some(points) = self.shapes.get_mut(step.phase) {
                operating::keep_latest(
                    points,
                    ShapePoint {
                        jobs: step.workload.jobs,
                        iodepth: step.workload.iodepth,
                        iops: summary.iops,
                        mean_us: summary.service_lat().mean,
                    },
                );
            }
        }
        self.tally.steps_run += 1;
        self.tally.errors += summary.errors;
        let record = FinishedStep {
            index,
            name: step.name.clone(),
            phase: step.phase,
            phase_name: walk.phase.name.clone(),
            round: step.round,
            prewrite: step.prewrite,
            sweep_point: step.sweep_point,
            target_iops: rate,
            closed_loop: step.closed_loop,
            service_lat_us: *summary.service_lat(),
            response_from_schedule_lat_us: summary.response_from_schedule().copied(),
            verify,
            summary,
        };
        let record = std::sync::Arc::new(record);
        self.rep.obs.event(RunEvent::StepFinished(record.clone()));
        if record.summary.ended_by == EndedBy::Skipped {
            self.rep.happened(SessionEvent::Skipped {
                step: record.name.clone(),
                why: SkipWhy::User {
                    measured_s: record.summary.runtime_s,
                },
            });
        }
        self.judge_rounds(walk, step, &record);
        self.judge_curve(walk, &record);
        Ok(match record.summary.ended_by {
            EndedBy::Device(_) => Some(RunOutcome::Failed {
                step: Some(record.name.clone()),
                ended_by: record.summary.ended_by.clone(),
            }),
            EndedBy::Stopped => Some(self.stopped()),
            _ => None,
        })
    }

    /// Runs step `index` at `rate` on the engine its kind names, watching it.
    fn run_step(
        &mut self,
        index: usize,
        step: &PlanStep,
        rate: Option<f64>,
    ) -> Result<StepRan, EngineError> {
        let spec = step.to_step_spec(rate);
        // Commands sent between steps (a skip meant for the last one) are spent.
        let _ = self.ctl.take();
        self.rep.thermal(&mut self.thermal);
        self.thermal
            .begin_step(&step.name, step.thermal, step.engine == EngineKind::Idle);
        let live = step.steady.map(|rule| {
            let metric = match rule {
                SteadyRule::Fio { metric, .. } => metric,
                SteadyRule::Snia { .. } => Metric::Iops,
            };
            (metric, SteadyState::new(&rule))
        });
        let mut watch = StepWatch {
            index,
            rep: &mut self.rep,
            ctl: self.ctl,
            live,
            reached: None,
            tally: &mut self.tally,
            thermal: &mut self.thermal,
            verify: self.target.verify.as_deref(),
        };
        let mut engine = (self.engine_for)(spec.engine);
        match engine.run_step(self.target, &spec, self.ctl.flags(), &mut watch) {
            Ok(s) => Ok(StepRan::Summary(Box::new(s), watch.reached, watch.live)),
            // The target's host is gone: nothing more is known of the drive, which is not
            // blamed; this drive's run ends here.
            Err(EngineError::Lost { host, why }) => Ok(StepRan::Ended(RunOutcome::Failed {
                step: Some(step.name.clone()),
                ended_by: EndedBy::HostLost(format!("{host}: {why}")),
            })),
            Err(e) => Err(e),
        }
    }

    /// What a step that ran says of itself: the thermal watch's end, its live steady
    /// state's verdict, its errors, verify state left unsaved.
    fn step_verdicts(
        &mut self,
        step: &PlanStep,
        summary: &StepSummary,
        reached: Option<usize>,
        live: Option<(Metric, SteadyState)>,
    ) {
        for e in self.thermal.end_step() {
            self.rep.happened(SessionEvent::Thermal(e));
        }
        let name = || step.name.clone();
        if let Some(round) = reached {
            self.rep.happened(SessionEvent::Steady {
                scope: SteadyScope::Step(name()),
                verdict: SteadyVerdict::Reached { round },
            });
        } else if let Some((_, det)) = &live {
            self.rep.happened(SessionEvent::Steady {
                scope: SteadyScope::Step(name()),
                verdict: det.finish(&format!("ended by {}", summary.ended_by)),
            });
        }
        if summary.errors > 0 {
            self.rep.happened(SessionEvent::Errors {
                step: name(),
                count: summary.errors,
            });
        }
        if let Some(unsaved) = &summary.verify_unsaved {
            self.rep.happened(SessionEvent::VerifyUnsaved {
                step: name(),
                unsaved: unsaved.clone(),
            });
            self.tally
                .verify_unsaved
                .get_or_insert_with(|| unsaved.clone());
        }
    }

    /// SNIA rounds: a tracked step's figure pushed to the phase's steady state; once
    /// reached, the round's remaining steps run and the phase's later rounds are skipped.
    fn judge_rounds(&mut self, walk: &mut PhaseWalk<'_>, step: &PlanStep, record: &FinishedStep) {
        let Some((r, det)) = &mut walk.rounds else {
            return;
        };
        if !step.tracked {
            return;
        }
        match det.push(crate::plan::round_value(r.metric, &record.summary)) {
            SteadyVerdict::Reached { round } => {
                self.rep.happened(SessionEvent::Steady {
                    scope: SteadyScope::Phase(walk.phase.name.clone()),
                    verdict: SteadyVerdict::Reached { round },
                });
                walk.last_round = step.round;
                walk.skip_rest = step.round.is_none();
            }
            v @ SteadyVerdict::NotReached { .. } if !walk.announced => {
                walk.announced = true;
                self.rep.happened(SessionEvent::Steady {
                    scope: SteadyScope::Phase(walk.phase.name.clone()),
                    verdict: v,
                });
            }
            SteadyVerdict::NotReached { .. } | SteadyVerdict::Pending => {}
        }
    }

    /// vdbench's `stopcurve`: a curve point whose mean response time is past the limit
    /// skips the phase's remaining points.
    fn judge_curve(&mut self, walk: &mut PhaseWalk<'_>, record: &FinishedStep) {
        if let (Some(limit), Some(_)) = (walk.phase.stop_curve, record.sweep_point) {
            // vdbench's response time runs from the I/O's issue: the service latency.
            let mean_ms = record.service_lat_us.mean / 1000.0;
            let limit_ms = limit.as_secs_f64() * 1000.0;
            if mean_ms > limit_ms {
                self.rep.happened(SessionEvent::Skipped {
                    step: record.name.clone(),
                    why: SkipWhy::StopCurve { mean_ms, limit_ms },
                });
                walk.skip_rest = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The runner's live steady state on synthetic series, through a stand-in engine that
    //! reports given IOPS one interval at a time.

    use std::time::Duration;

    use super::*;
    use crate::plan::PlanStep;
    use crate::run::event::SteadyScope;
    use crate::stats::DirCounts;
    use crate::workload::{BlockSizes, Region, RwMode, StepEnd, StepSpec, Workload};

    const INTERVAL_S: f64 = 0.25;

    /// Reports `series` as its intervals (IOPS, 0.25 s each) until the observer stops it;
    /// then the step ends by its duration, or by what the observer said.
    struct Series(Vec<f64>);

    impl Engine for Series {
        fn kind(&self) -> EngineKind {
            EngineKind::IoUring
        }

        fn run_step(
            &mut self,
            _target: &StepTarget,
            _spec: &StepSpec,
            _ctl: &crate::engine::StepControl,
            obs: &mut dyn StepObserver,
        ) -> Result<StepSummary, EngineError> {
            let mut ended_by = EndedBy::Duration;
            let mut ios = 0u64;
            let mut n = 0usize;
            for (i, &iops) in self.0.iter().enumerate() {
                let count = (iops * INTERVAL_S) as u64;
                ios += count;
                n += 1;
                let r = IntervalReport {
                    index: i as u64,
                    start_s: i as f64 * INTERVAL_S,
                    end_s: (i + 1) as f64 * INTERVAL_S,
                    read: DirCounts {
                        ios: count,
                        bytes: count * 4096,
                    },
                    read_iops: iops,
                    read_bw_bytes: iops * 4096.0,
                    ..Default::default()
                };
                if let Control::Stop(why) = obs.interval(&r) {
                    ended_by = why;
                    break;
                }
            }
            let runtime_s = n as f64 * INTERVAL_S;
            Ok(StepSummary {
                runtime_s,
                ios,
                read_ios: ios,
                read_bytes: ios * 4096,
                iops: ios as f64 / runtime_s,
                read_iops: ios as f64 / runtime_s,
                read_bw_bytes: ios as f64 * 4096.0 / runtime_s,
                ended_by,
                ..Default::default()
            })
        }
    }

    #[derive(Default)]
    struct Seen {
        intervals: usize,
        verdicts: Vec<(SteadyScope, SteadyVerdict)>,
        ended_by: Vec<EndedBy>,
    }

    impl RunObserver for Seen {
        fn event(&mut self, ev: RunEvent) {
            match ev {
                RunEvent::Interval { .. } => self.intervals += 1,
                RunEvent::Happened(Timed {
                    what: SessionEvent::Steady { scope, verdict },
                    ..
                }) => self.verdicts.push((scope, verdict)),
                RunEvent::StepFinished(f) => self.ended_by.push(f.summary.ended_by.clone()),
                _ => {}
            }
        }
        fn snapshot(&mut self) {}
    }

    /// A one-step closed-loop plan whose step ends on fio's slope rule: |slope| under
    /// `limit` percent of the mean per second, over `window` intervals of 0.25 s.
    fn slope_plan(limit: f64, window: usize, intervals: usize) -> Plan {
        let workload = Workload::new(
            RwMode::RandWrite,
            BlockSizes::single(4096),
            8,
            Region {
                offset: 0,
                len: 1 << 20,
            },
            1,
        );
        let end = StepEnd {
            duration: Some(Duration::from_secs_f64(intervals as f64 * INTERVAL_S)),
            bytes: None,
        };
        let interval = Duration::from_secs_f64(INTERVAL_S);
        let step = PlanStep {
            steady: Some(SteadyRule::Fio {
                metric: Metric::Iops,
                slope: true,
                limit_percent: limit,
                window,
                ramp: 0,
                sample_secs: INTERVAL_S,
            }),
            ..PlanStep::new("settle".into(), 0, workload, end, interval)
        };
        Plan::one_phase("steady-test".into(), "settle".into(), vec![step])
    }

    fn run_series(plan: &Plan, series: Vec<f64>) -> (RunOutcome, Seen) {
        let target = StepTarget {
            path: "/nonexistent".into(),
            size: 1 << 20,
            align: 4096,
            verify: None,
        };
        let (_handle, ctl) = RunControl::new();
        let mut seen = Seen::default();
        let mut engines = move |_| -> Box<dyn Engine> { Box::new(Series(series.clone())) };
        let (outcome, _) = run_plan_on(plan, &target, &ctl, &mut seen, &mut engines).unwrap();
        (outcome, seen)
    }

    #[test]
    fn a_drifting_series_runs_its_full_duration_and_ends_not_reached() {
        // +2% an interval, about 8 %/s of the mean: every window of 8 fails a 5 %/s limit, though
        // each is within 15% of its mean (a deviation rule of 10% would pass some).
        let series: Vec<f64> = (0..40).map(|i| 10_000.0 * 1.02f64.powi(i)).collect();
        let (outcome, seen) = run_series(&slope_plan(5.0, 8, 40), series);
        assert!(
            matches!(outcome, RunOutcome::Completed { .. }),
            "{outcome:?}"
        );
        assert_eq!(seen.intervals, 40, "the step ran its full duration");
        assert_eq!(seen.ended_by, [EndedBy::Duration]);
        let [(scope, verdict)] = &seen.verdicts[..] else {
            panic!("one verdict for the step: {:?}", seen.verdicts);
        };
        assert_eq!(*scope, SteadyScope::Step("settle".into()));
        let SteadyVerdict::NotReached { reason } = verdict else {
            panic!("a drifting series is never steady: {verdict:?}");
        };
        assert!(
            reason.starts_with("ended by duration before steady state"),
            "{reason}"
        );
        assert!(
            reason.contains("slope 7.9") && reason.contains("(limit 5%)"),
            "the slope it measured and the limit: {reason}"
        );
    }

    #[test]
    fn a_series_that_levels_off_ends_the_step_at_the_first_flat_window() {
        // Rising 4% an interval for 12 intervals, then flat with ±1% noise: the step ends
        // steady at the first window of 8 whose slope is under the limit, and no later.
        let mut series: Vec<f64> = (0..12).map(|i| 10_000.0 * 1.04f64.powi(i)).collect();
        let top = series[11];
        series.extend((0..28).map(|i| top * if i % 2 == 0 { 1.01 } else { 0.99 }));
        let (_, seen) = run_series(&slope_plan(5.0, 8, 40), series.clone());
        let slope_pct_per_s = |w: &[f64]| {
            let n = w.len() as f64;
            let mean = w.iter().sum::<f64>() / n;
            let xm = (n - 1.0) / 2.0;
            let sxy: f64 = w
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64 - xm) * (v - mean))
                .sum();
            let sxx: f64 = (0..w.len()).map(|i| (i as f64 - xm).powi(2)).sum();
            100.0 * (sxy / sxx).abs() / mean / INTERVAL_S
        };
        let first = (8..=series.len())
            .find(|&k| slope_pct_per_s(&series[k - 8..k]) < 5.0)
            .unwrap();
        assert!(first > 12, "the rise itself is not steady: {first}");
        assert_eq!(seen.intervals, first, "ended at the first flat window");
        assert_eq!(seen.ended_by, [EndedBy::SteadyState]);
        assert_eq!(
            seen.verdicts,
            [(
                SteadyScope::Step("settle".into()),
                SteadyVerdict::Reached { round: first }
            )]
        );
    }
}
