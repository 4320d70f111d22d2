//! `drivescope run --preset ID`: expand the preset for the target into a plan and run it
//! headless, printing the intervals, one line (or `"type": "step"` object) per step as it
//! ends, and the events (`"type": "event"`): phases, steady state, skips, errors.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde_json::json;

use super::live::{self, Live};
use super::run::{prepare_target, Outcome, RunError};
use crate::cli::RunArgs;
use crate::dut::PreparedTarget;
use crate::engine::StepTarget;
use crate::output::{Format, Printer};
use crate::plan::{self, Plan, PlanOptions, TargetFacts};
use crate::preset::{self, Preset};
use crate::runner::{run_plan, PlanOutcome, RunControl, RunEvent};
use crate::session::{RecorderOptions, SessionRecorder};
use crate::units::format_size;

fn load(a: &RunArgs) -> Result<Preset, RunError> {
    let r = match (&a.preset, &a.preset_file) {
        (_, Some(path)) => preset::parse_file(path),
        (Some(id), None) => preset::find(id),
        (None, None) => return Err(RunError::Invalid("no preset given".into())),
    };
    r.map_err(|e| RunError::Invalid(e.to_string()))
}

/// Does any step of the plan write, or read?
fn plan_io(plan: &Plan) -> (bool, bool) {
    let mut writes = false;
    let mut reads = false;
    for s in &plan.steps {
        let p = s.workload.rw.read_percent(s.workload.rwmixread);
        writes |= p < 100;
        reads |= p > 0;
    }
    (writes, reads)
}

pub fn run(a: &RunArgs, stop: &AtomicBool) -> Result<Outcome, RunError> {
    let preset = load(a)?;
    super::run_session::check_outputs(a)?;
    // The target must be known before the plan; its write check needs the plan. Prepare it
    // read-only first (creating the default file if needed), expand, then check writes.
    let (t, _) = prepare_target(a, false, a.size)?;
    let facts = TargetFacts {
        capacity_bytes: t.size,
        logical_block_size: t.align.min(u64::from(u32::MAX)) as u32,
    };
    let opts = PlanOptions {
        time_scale: a.time_scale,
        seed: a.seed,
        interval: a.interval,
    };
    let plan =
        plan::expand(&preset, &facts, &opts).map_err(|e| RunError::Invalid(e.to_string()))?;
    let (writes, _) = plan_io(&plan);
    let t = if writes {
        prepare_target(a, true, a.size)?.0
    } else {
        t
    };
    let mut printer = Printer::new(if a.json { Format::Json } else { Format::Text });
    let t0 = Instant::now();
    let mut live = Live::start(&t.path, None, t0);
    let opts = RecorderOptions {
        autosave_every: a.autosave,
        snapshot_every: a.snapshot_every,
        snapshot_dir: None,
        histograms: a.histograms,
    };
    let path = live::plan_session_path(a.session.as_deref(), &preset.id)?;
    let mut rec = live::create_plan_session(
        &path,
        &t,
        &preset,
        &plan,
        live.drive.as_ref(),
        opts,
        Some(super::run_session::command_line()),
    )
    .map_err(|e| RunError::Invalid(e.to_string()))?;
    for n in live.notes.clone() {
        printer.note(&n);
        rec.push_event("note", n);
    }
    let result = run_recorded(
        a,
        stop,
        &preset,
        &plan,
        &t,
        &mut live,
        &mut printer,
        &mut rec,
    );
    live.stop();
    super::run_session::finish(rec, &result, &mut printer)?;
    result
}

/// The plan itself, each interval, step and event going to the printer and the session.
#[allow(clippy::too_many_arguments)]
fn run_recorded(
    a: &RunArgs,
    stop: &AtomicBool,
    preset: &Preset,
    plan: &Plan,
    t: &PreparedTarget,
    live: &mut Live,
    printer: &mut Printer,
    rec: &mut SessionRecorder,
) -> Result<Outcome, RunError> {
    let (_, reads) = plan_io(plan);
    if reads {
        super::live::fill_recorded(t, stop, printer, rec)?;
    }
    printer.start(
        &format!(
            "preset {} ({}) on {} ({}): {} steps in {} phases",
            preset.id,
            preset.name,
            t.path.display(),
            format_size(t.size),
            plan.steps.len(),
            plan.phases.len()
        ),
        json!({
            "preset": preset.id,
            "target": t.path.display().to_string(),
            "target_size": t.size,
            "steps": plan.steps.len(),
            "time_scale": a.time_scale,
            "session": rec.path().display().to_string(),
        }),
    );
    let st = StepTarget {
        path: t.path.clone(),
        size: t.size,
        align: t.align,
    };
    let count = plan.steps.len();
    let ctl = RunControl::default();
    let mut steps_run = 0usize;
    let mut errors = 0u64;
    let outcome = run_plan(plan, &st, a.engine, &ctl, stop, |ev| {
        live::record_run_event(rec, &ev);
        match ev {
            RunEvent::StepStarted { .. } => {}
            RunEvent::Interval { report, .. } => {
                printer.interval(report);
                for sample in live.drain() {
                    for n in &sample.notes {
                        printer.note(n);
                    }
                    rec.push_telemetry(&sample);
                }
                for n in rec.tick() {
                    printer.note(&n);
                }
            }
            RunEvent::StepFinished(r) => {
                steps_run += 1;
                errors += r.summary.errors;
                printer.step(r, count);
            }
            RunEvent::Event(e) => printer.event(e),
        }
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            rec.push_event("error", e.to_string());
            return Err(e.into());
        }
    };
    let text = match &outcome {
        PlanOutcome::Completed => "completed".to_string(),
        PlanOutcome::Stopped => "stopped".to_string(),
        PlanOutcome::Failed(why) => format!("failed: {why}"),
    };
    match printer.format {
        Format::Text => println!(
            "preset {}: {text}, {steps_run} of {count} steps run, {errors} I/O errors",
            preset.id
        ),
        Format::Json => crate::output::json_line(&json!({
            "type": "plan_summary",
            "preset": preset.id,
            "outcome": text,
            "steps_run": steps_run,
            "steps": count,
            "errors": errors,
        })),
    }
    Ok(match outcome {
        PlanOutcome::Completed => Outcome::Completed {
            errors,
            first: None,
        },
        PlanOutcome::Stopped => Outcome::Stopped,
        PlanOutcome::Failed(reason) => Outcome::AllFailed(reason),
    })
}
