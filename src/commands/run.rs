//! `drivescope run`: prepare the target (create, check, fill), run one workload headless,
//! print intervals and the summary, and record it all in a session
//! (see [`run_session`](super::run_session)).

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;

use serde_json::json;
use thiserror::Error;

use crate::cli::RunArgs;
use crate::dut::{self, PreparedTarget, TargetError, TargetKind, TargetRequest};
use crate::engine::{self, Control, EngineError, StepTarget};
use crate::output::{Format, Printer};
use crate::session::{SessionError, SessionRecorder};
use crate::units::{format_duration, format_size};
use crate::workload::{BlockSizes, Region, StepEnd, StepSpec, Workload};

#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// How a headless run ended, for the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Completed; `errors` I/Os failed, the first of them described by `first`.
    Completed { errors: u64, first: Option<String> },
    /// The device failed (every I/O of an interval failed, or it went away): the run
    /// stopped, for this reason.
    AllFailed(String),
    /// Stopped by the user (a signal).
    Stopped,
}

/// The workload the command line asks for, before the target is known.
fn workload_from_args(a: &RunArgs) -> Result<Workload, RunError> {
    let bs = match &a.bssplit {
        Some(s) => BlockSizes::parse_split(s).map_err(RunError::Invalid)?,
        None => BlockSizes::single(a.bs),
    };
    if a.iodepth == 0 {
        return Err(RunError::Invalid(
            "--iodepth 0: at least one I/O must be in flight".into(),
        ));
    }
    if a.jobs == 0 {
        return Err(RunError::Invalid(
            "--jobs 0: at least one job must run".into(),
        ));
    }
    Ok(Workload {
        rw: a.rw,
        rwmixread: a.rwmixread,
        bs,
        iodepth: a.iodepth,
        jobs: a.jobs,
        region: Region {
            offset: a.offset,
            len: 0,
        },
        rate_iops: a.rate_iops,
        seed: a.seed,
        direct: a.direct,
    })
}

fn describe(w: &Workload, t: &PreparedTarget, a: &RunArgs) -> String {
    let kind = match t.kind {
        TargetKind::File => "file",
        TargetKind::BlockDevice => "block device",
    };
    let mix = if w.rw.is_mixed() {
        format!(" {}% read", w.rwmixread)
    } else {
        String::new()
    };
    let rate = w
        .rate_iops
        .map(|r| format!(" at {r:.0} IOPS"))
        .unwrap_or_default();
    let ramp = if a.ramp.is_zero() {
        String::new()
    } else {
        format!(" after a {} ramp", format_duration(a.ramp))
    };
    format!(
        "{}{mix} {} QD{} × {} job{} on {} ({kind}, {}, region {}+{}){rate}, {}{ramp}",
        w.rw,
        w.bs,
        w.iodepth,
        w.jobs,
        if w.jobs == 1 { "" } else { "s" },
        t.path.display(),
        format_size(t.size),
        format_size(w.region.offset),
        format_size(w.region.len),
        format_duration(a.duration),
    )
}

/// Resolves `--target` (or the built-in default) and prepares it for a workload that
/// writes or not. Returns the target and whether it is the built-in default.
pub fn prepare_target(
    a: &RunArgs,
    writes: bool,
    size: Option<u64>,
) -> Result<(PreparedTarget, bool), RunError> {
    let (path, is_default) = match &a.target {
        Some(p) => (p.clone(), false),
        None => (dut::default_target_path(), true),
    };
    let req = TargetRequest {
        size,
        writes,
        destroy_data: a.destroy_data.clone(),
        create_default: is_default,
    };
    Ok((dut::prepare(&path, &req)?, is_default))
}

/// Runs the command. `stop` is set by the signal handlers.
pub fn run(a: &RunArgs, stop: &AtomicBool) -> Result<Outcome, RunError> {
    if a.preset.is_some() || a.preset_file.is_some() {
        return super::run_preset::run(a, stop);
    }
    let mut w = workload_from_args(a)?;
    // What no target can fix is refused before the target is created or opened.
    engine::validate_shape(&w)?;
    let writes = w.rw.read_percent(w.rwmixread) < 100;
    super::run_session::check_outputs(a)?;
    let (t, _) = prepare_target(a, writes, a.size.map(|s| s + a.offset))?;
    let path = t.path.clone();
    if a.offset >= t.size {
        return Err(RunError::Invalid(format!(
            "--offset {} is at or past the end of {} ({})",
            format_size(a.offset),
            path.display(),
            format_size(t.size)
        )));
    }
    w.region.len = match a.size {
        Some(s) => s,
        None => t.size - a.offset,
    };
    let spec = StepSpec {
        workload: w,
        ramp: a.ramp,
        end: StepEnd {
            duration: Some(a.duration),
            bytes: None,
        },
        interval: a.interval,
    };
    let st = StepTarget {
        path: t.path.clone(),
        size: t.size,
        align: t.align,
    };
    engine::validate(&st, &spec)?;

    let mut printer = Printer::new(if a.json { Format::Json } else { Format::Text });
    let description = describe(&spec.workload, &t, a);
    let mut rec = super::run_session::create(a, &t, &spec, &step_label(&spec.workload))?;
    let result = run_recorded(
        a,
        stop,
        &t,
        &st,
        &spec,
        &description,
        &mut printer,
        &mut rec,
    );
    super::run_session::finish(rec, &result, &mut printer)?;
    result
}

/// The run itself, each interval, note and step going to the printer and the session.
#[allow(clippy::too_many_arguments)]
fn run_recorded(
    a: &RunArgs,
    stop: &AtomicBool,
    t: &PreparedTarget,
    st: &StepTarget,
    spec: &StepSpec,
    description: &str,
    printer: &mut Printer,
    rec: &mut SessionRecorder,
) -> Result<Outcome, RunError> {
    if spec.workload.rw.read_percent(spec.workload.rwmixread) > 0 {
        super::live::fill_recorded(t, stop, printer, rec)?;
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        rec.push_event("stopped", "stopped by a signal before the run started");
        return Ok(Outcome::Stopped);
    }

    printer.start(
        description,
        json!({
            "target": t.path.display().to_string(),
            "target_kind": t.kind,
            "target_size": t.size,
            "workload": spec.workload,
            "duration_s": a.duration.as_secs_f64(),
            "ramp_s": a.ramp.as_secs_f64(),
            "interval_s": a.interval.as_secs_f64(),
            "session": rec.path().display().to_string(),
        }),
    );
    rec.begin_step(
        step_label(&spec.workload),
        serde_yaml::Value::Null,
        Some(spec.workload.clone()),
    );
    let mut live = super::live::Live::start(&t.path, None, std::time::Instant::now());
    for n in &live.notes {
        printer.note(n);
        rec.push_event("note", n.clone());
    }
    let printer = RefCell::new(printer);
    let rec = RefCell::new(rec);
    let mut first_error: Option<String> = None;
    let summary = engine::run_step(
        st,
        spec,
        a.engine,
        stop,
        |r| {
            if first_error.is_none() {
                first_error = engine::first_error(r).map(|e| e.message.clone());
            }
            printer.borrow_mut().interval(r);
            let mut rec = rec.borrow_mut();
            rec.push_interval(r);
            for sample in live.drain() {
                for n in &sample.notes {
                    printer.borrow_mut().note(n);
                }
                rec.push_telemetry(&sample);
            }
            for n in rec.tick() {
                printer.borrow_mut().note(&n);
            }
            Control::Continue
        },
        |n| {
            printer.borrow_mut().note(n);
            rec.borrow_mut().push_event("note", n);
        },
    );
    live.stop();
    let printer = printer.into_inner();
    let rec = rec.into_inner();
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            rec.push_event("error", e.to_string());
            return Err(e.into());
        }
    };
    rec.end_step(summary.clone());
    printer.summary(&summary, json!({"target": t.path.display().to_string()}));
    Ok(if engine::is_failure(&summary.ended_by) {
        Outcome::AllFailed(summary.ended_by.clone())
    } else if summary.ended_by == "stopped" {
        rec.push_event("stopped", "stopped by a signal");
        Outcome::Stopped
    } else {
        Outcome::Completed {
            errors: summary.errors,
            first: first_error,
        }
    })
}

/// A short name for the step: pattern, block size, queue shape, rate.
fn step_label(w: &Workload) -> String {
    let rate = w
        .rate_iops
        .map(|r| format!(" at {r:.0} IOPS"))
        .unwrap_or_default();
    format!("{} {} QD{} × {}{rate}", w.rw, w.bs, w.iodepth, w.jobs)
}
