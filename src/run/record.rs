//! The session side of a run: what the session starts with, and each [`RunEvent`] recorded
//! into the [`SessionRecorder`].

use serde_json::json;

use super::event::{Happening, RunEvent};
use super::request::{Prepared, RunKind};
use crate::drive::DriveInfo;
use crate::dut::PreparedTarget;
use crate::plan::StepRate;
use crate::preset;
use crate::session::{EventKind, SessionRecorder, SessionStart, StepPoint, TargetInfo};

/// The session's record of a prepared target (on `host`, when it is another one).
pub fn target_info(t: &PreparedTarget, host: Option<String>) -> TargetInfo {
    TargetInfo {
        path: crate::ostext::escaped(t.path.as_os_str()),
        kind: match t.kind {
            crate::dut::TargetKind::File => crate::session::TargetKind::File,
            crate::dut::TargetKind::BlockDevice => crate::session::TargetKind::BlockDevice,
            crate::dut::TargetKind::NvmeGeneric => crate::session::TargetKind::NvmeGeneric,
            crate::dut::TargetKind::None => crate::session::TargetKind::None,
        },
        size_bytes: t.size,
        align_bytes: t.align,
        host,
        page_cache: false,
    }
}

/// The session's record of a run's target.
pub fn run_target_info(run: &Prepared) -> TargetInfo {
    let host = run.host.name();
    TargetInfo {
        page_cache: run.page_cache(),
        ..target_info(&run.target, host)
    }
}

/// What the session holds before the first record.
pub fn session_start(
    run: &Prepared,
    drive: Option<&DriveInfo>,
    command: Option<String>,
) -> SessionStart {
    let to_value = |v: serde_json::Value| serde_yaml::to_value(v).unwrap_or_default();
    let preset = run
        .preset()
        .and_then(|p| preset::to_yaml(p).ok())
        .and_then(|y| serde_yaml::from_str(&y).ok())
        .unwrap_or(serde_yaml::Value::Null);
    let plan = match &run.kind {
        RunKind::Preset(_) => serde_yaml::to_value(&run.plan).unwrap_or_default(),
        // A plain run records its one step as the plan, as it always has.
        RunKind::Single { ramp, duration } => to_value(json!({
            "steps": run.plan.steps.iter().map(|s| json!({
                "label": s.name,
                "workload": single_workload(s),
                "ramp_s": ramp.as_secs_f64(),
                "duration_s": duration.as_secs_f64(),
                "interval_s": s.interval.as_secs_f64(),
            })).collect::<Vec<_>>(),
        })),
        // A job file's run records fio's version, the file and the very text fio ran.
        RunKind::FioJob(f) => to_value(json!({
            "fio_job": {
                "file": crate::ostext::escaped(f.file.as_os_str()),
                "fio": f.version,
                "text": f.text,
                "targets": f.targets.iter().map(|(p, w)| json!({
                    "path": crate::ostext::escaped(p.as_os_str()),
                    "writes": w,
                })).collect::<Vec<_>>(),
            },
            "steps": run.plan.steps.iter().map(|s| json!({
                "label": s.name,
                "jobs": s.fio_file.as_ref().map(|f| f.sections.clone()).unwrap_or_default(),
                "interval_s": s.interval.as_secs_f64(),
            })).collect::<Vec<_>>(),
        })),
    };
    SessionStart {
        target: run_target_info(run),
        command,
        note: None,
        drive: drive
            .and_then(|d| serde_yaml::to_value(d).ok())
            .unwrap_or(serde_yaml::Value::Null),
        preset,
        plan,
        drives: Vec::new(),
    }
}

/// A single step's workload with its fixed rate, as the user asked for it.
pub fn single_workload(s: &crate::plan::PlanStep) -> crate::workload::Workload {
    let mut w = s.workload.clone();
    w.rate_iops = match s.rate {
        StepRate::Iops(r) => Some(r),
        StepRate::Max | StepRate::PercentOfPhase { .. } => None,
    };
    w
}

/// A happening as the session keeps it: its kind, its text and its data (the figures a
/// reader takes back: a health change's new verdict, a thermal event, a finding, a steady
/// state verdict…; none for the others). The dashboard shows a run's happenings from this
/// record too, so that a replay of the session shows what the live run showed.
pub fn happening_record(what: &Happening) -> (EventKind, String, serde_yaml::Value) {
    let data = match what {
        // A health change keeps the new verdict as data, its reasons as values.
        Happening::Health(c) => serde_yaml::to_value(&c.to),
        // A thermal event keeps its figures, for the report's soak section.
        Happening::Thermal(t) => serde_yaml::to_value(t),
        Happening::VerifyFinding(x) => serde_yaml::to_value(x.as_ref()),
        Happening::Verified(t) => serde_yaml::to_value(t),
        Happening::DriveErrors(n) => serde_yaml::to_value(n),
        Happening::VerifyUnsaved { unsaved, .. } => serde_yaml::to_value(unsaved),
        Happening::Steady { verdict, .. } => serde_yaml::to_value(verdict),
        Happening::Note(_)
        | Happening::Phase { .. }
        | Happening::Skipped { .. }
        | Happening::Errors { .. } => Ok(serde_yaml::Value::Null),
    };
    (what.kind(), what.to_string(), data.unwrap_or_default())
}

/// Records one run event into the session.
pub fn record(rec: &mut SessionRecorder, run: &Prepared, ev: &RunEvent) {
    match ev {
        RunEvent::StepStarted {
            step, target_iops, ..
        } => {
            // A preset's step has its place in the plan; a plain run's or a job file's none.
            let point = match run.kind {
                RunKind::Preset(_) => Some(StepPoint {
                    phase: Some(step.phase as u64),
                    round: step.round,
                    sweep_point: step.sweep_point,
                    target_iops: *target_iops,
                    closed_loop: step.closed_loop,
                    run: step.run,
                    // Only a round's pre-write says so.
                    prewrite: step.prewrite,
                    // Likewise a step of a phase that prepares the drive (SNIA's WIPC).
                    preparation: run
                        .plan
                        .phases
                        .get(step.phase)
                        .is_some_and(|p| p.preparation),
                }),
                RunKind::Single { .. } | RunKind::FioJob(_) => None,
            };
            // What the engine ran: a closed-loop point had a target but no pacing.
            let w = step.to_step_spec(*target_iops).workload;
            rec.begin_step(step.name.clone(), point, Some(w));
        }
        // An idle step's time is no time of I/O: kept out of the session's rates.
        RunEvent::Interval { report, index } => {
            let idle = run
                .plan
                .steps
                .get(*index)
                .is_some_and(|s| s.engine == crate::workload::EngineKind::Idle);
            rec.push_interval_counted(report, !idle)
        }
        RunEvent::StepFinished(r) => {
            rec.end_step(r.summary.clone());
        }
        // A plain run's one phase is not news: its session has no phase event, as always.
        RunEvent::Happened(e)
            if matches!(run.kind, RunKind::Single { .. })
                && matches!(e.what, Happening::Phase { .. }) => {}
        RunEvent::Happened(e) => {
            let (kind, text, data) = happening_record(&e.what);
            rec.push_event_data(kind, text, data)
        }
        RunEvent::Note(n) => rec.push_event(EventKind::Note, n.to_string()),
        RunEvent::Telemetry(s) => rec.push_telemetry(s.as_ref()),
        RunEvent::Wear(w) => {
            let what = match w.step {
                Some(i) => format!("what step {} did to the drive", i + 1),
                None => "what the run did to the drive".to_string(),
            };
            rec.push_event_data(EventKind::DriveWear, what, w)
        }
        RunEvent::Started { .. }
        | RunEvent::SessionNotice(_)
        | RunEvent::Snapshot(_)
        | RunEvent::Soak(_)
        | RunEvent::Ended { .. }
        | RunEvent::Saved { .. }
        | RunEvent::Verify(_) => {}
    }
}
