//! What every run carries beside the engine, headless or in the dashboard: the drive under
//! the target and a telemetry poller (samples go into the session), and the recording of a
//! plan's steps, intervals and events into its session.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;

use crate::drive::{self, DriveInfo};
use crate::dut::fill::fill_if_unwritten;
use crate::dut::{PreparedTarget, TargetKind};
use crate::plan::Plan;
use crate::preset::{self, Preset};
use crate::runner::RunEvent;
use crate::session::{
    paths, RecorderOptions, SessionError, SessionRecorder, SessionStart, TargetInfo,
};
use crate::telemetry::{Poller, TelemetrySample, DEFAULT_PERIOD};

/// The drive under a target and its telemetry poller.
pub struct Live {
    pub drive: Option<DriveInfo>,
    poller: Option<(Poller, Receiver<TelemetrySample>)>,
    /// Why there is no drive identity or telemetry, said once.
    pub notes: Vec<String>,
}

impl Live {
    /// Resolves the drive under `target` and starts polling it every `period` (2 s by
    /// default), timestamps relative to `t0`.
    pub fn start(target: &Path, period: Option<Duration>, t0: Instant) -> Live {
        match drive::resolve(target) {
            Ok(d) => {
                let (p, rx) = Poller::spawn(&d, period.unwrap_or(DEFAULT_PERIOD), t0);
                Live {
                    drive: Some(d),
                    poller: Some((p, rx)),
                    notes: Vec::new(),
                }
            }
            Err(e) => Live {
                drive: None,
                poller: None,
                notes: vec![format!("no drive telemetry: {e}")],
            },
        }
    }

    /// The samples that arrived since the last call (never blocks).
    pub fn drain(&self) -> Vec<TelemetrySample> {
        match &self.poller {
            Some((_, rx)) => rx.try_iter().collect(),
            None => Vec::new(),
        }
    }

    /// Stops the poller.
    pub fn stop(&mut self) {
        if let Some((p, _)) = self.poller.take() {
            p.stop();
        }
    }
}

/// The session target record of a prepared target.
pub fn target_info(t: &PreparedTarget) -> TargetInfo {
    TargetInfo {
        path: t.path.display().to_string(),
        kind: match t.kind {
            TargetKind::File => "file",
            TargetKind::BlockDevice => "block_device",
        }
        .into(),
        size_bytes: t.size,
        align_bytes: t.align,
    }
}

/// The session file of a preset run: `--session`, or a dated file named for the preset,
/// claimed in the sessions folder.
pub fn plan_session_path(
    explicit: Option<&Path>,
    preset_id: &str,
) -> Result<std::path::PathBuf, SessionError> {
    match explicit {
        Some(p) => Ok(p.to_path_buf()),
        None => paths::claim_session_file(&paths::sessions_dir(), SystemTime::now(), preset_id),
    }
}

/// Creates the session of a preset run, before any I/O.
pub fn create_plan_session(
    path: &Path,
    t: &PreparedTarget,
    preset: &Preset,
    plan: &Plan,
    drive: Option<&DriveInfo>,
    opts: RecorderOptions,
    command: Option<String>,
) -> Result<SessionRecorder, SessionError> {
    let start = SessionStart {
        target: target_info(t),
        command,
        drive: drive
            .and_then(|d| serde_yaml::to_value(d).ok())
            .unwrap_or(serde_yaml::Value::Null),
        preset: preset::to_yaml(preset)
            .ok()
            .and_then(|y| serde_yaml::from_str(&y).ok())
            .unwrap_or(serde_yaml::Value::Null),
        plan: serde_yaml::to_value(plan).unwrap_or(serde_yaml::Value::Null),
    };
    SessionRecorder::create(path, start, opts)
}

/// Records one runner event into the session.
pub fn record_run_event(rec: &mut SessionRecorder, ev: &RunEvent<'_>) {
    match ev {
        RunEvent::StepStarted {
            step, target_iops, ..
        } => {
            let point = json!({
                "phase": step.phase,
                "round": step.round,
                "sweep_point": step.sweep_point,
                "target_iops": target_iops,
            });
            let mut w = step.workload.clone();
            w.rate_iops = *target_iops;
            rec.begin_step(step.name.clone(), point, Some(w));
        }
        RunEvent::Interval { report, .. } => rec.push_interval(report),
        RunEvent::StepFinished(r) => {
            rec.end_step(r.summary.clone());
        }
        RunEvent::Event(e) => rec.push_event(&e.kind, e.text.clone()),
    }
}

/// Fills a never-written test file before reads (see [`fill_if_unwritten`]), saying so on
/// the printer and in the session.
pub fn fill_recorded(
    t: &PreparedTarget,
    stop: &std::sync::atomic::AtomicBool,
    printer: &mut crate::output::Printer,
    rec: &mut SessionRecorder,
) -> Result<(), crate::engine::EngineError> {
    let mut notes = Vec::new();
    let filled = fill_if_unwritten(t, stop, &mut |n: &str| {
        printer.note(n);
        notes.push(n.to_string());
    })?;
    match filled {
        Some(s) => rec.push_event_data("fill", format!("filled {}", t.path.display()), &s),
        None => notes.into_iter().for_each(|n| rec.push_event("note", n)),
    }
    Ok(())
}
