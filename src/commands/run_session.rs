//! The session of a headless run: created before the run (so an unwritable path fails
//! first), fed by the run, finalized on every way out, its path printed.

use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::json;

use super::run::{Outcome, RunError};
use crate::cli::RunArgs;
use crate::dut::PreparedTarget;
use crate::output::Printer;
use crate::session::{
    paths, RecorderOptions, SessionError, SessionRecorder, SessionStart, SessionState,
};
use crate::workload::StepSpec;

/// The command line as typed, quoted where a shell would need it.
pub fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The session path: `--session`, or a dated file claimed in the sessions folder.
pub fn session_path(a: &RunArgs) -> Result<PathBuf, SessionError> {
    match &a.session {
        Some(p) => Ok(p.clone()),
        None => paths::claim_session_file(&paths::sessions_dir(), SystemTime::now(), a.rw.as_str()),
    }
}

/// How the session of `a` is saved.
fn recorder_options(a: &RunArgs) -> RecorderOptions {
    RecorderOptions {
        autosave_every: a.autosave,
        snapshot_every: a.snapshot_every,
        snapshot_dir: None,
        histograms: a.histograms,
    }
}

/// Refuses, before the target is touched, a `--session` (or a file that goes beside it)
/// that drivescope may not write; a dated session is claimed when it is created.
pub fn check_outputs(a: &RunArgs) -> Result<(), RunError> {
    if let Some(p) = &a.session {
        crate::session::check_session_paths(p, &recorder_options(a))?;
    }
    Ok(())
}

/// Creates the session of a `drivescope run` (one step, no preset).
pub fn create(
    a: &RunArgs,
    t: &PreparedTarget,
    spec: &StepSpec,
    label: &str,
) -> Result<SessionRecorder, RunError> {
    let start = SessionStart {
        target: super::live::target_info(t),
        command: Some(command_line()),
        drive: crate::drive::resolve(&t.path)
            .ok()
            .and_then(|d| serde_yaml::to_value(d).ok())
            .unwrap_or(serde_yaml::Value::Null),
        preset: serde_yaml::Value::Null,
        plan: serde_yaml::to_value(json!({
            "steps": [{
                "label": label,
                "workload": spec.workload,
                "ramp_s": spec.ramp.as_secs_f64(),
                "duration_s": spec.end.duration.map(|d| d.as_secs_f64()),
                "interval_s": spec.interval.as_secs_f64(),
            }]
        }))
        .unwrap_or(serde_yaml::Value::Null),
    };
    let opts = recorder_options(a);
    Ok(SessionRecorder::create(&session_path(a)?, start, opts)?)
}

/// The final save, whatever `result` is; prints where the session went. A failed save
/// turns a good run into an error (the autosaved stream is still there, and the message
/// says where).
pub fn finish(
    rec: SessionRecorder,
    result: &Result<Outcome, RunError>,
    printer: &mut Printer,
) -> Result<(), RunError> {
    let (state, ended_by) = match result {
        Ok(Outcome::Completed { errors: 0, .. }) => {
            (SessionState::Complete, "completed".to_string())
        }
        Ok(Outcome::Completed { errors, first }) => (
            SessionState::Complete,
            match first {
                Some(f) => format!("completed with {errors} I/O errors (first: {f})"),
                None => format!("completed with {errors} I/O errors"),
            },
        ),
        Ok(Outcome::AllFailed(reason)) => (SessionState::Failed, reason.clone()),
        Ok(Outcome::Stopped) => (SessionState::Stopped, "stopped by a signal".to_string()),
        Err(e) => (SessionState::Failed, format!("error: {e}")),
    };
    let path = rec.path().to_path_buf();
    match rec.finalize(state, &ended_by) {
        Ok(p) => {
            printer.session(&p);
            Ok(())
        }
        Err(e) if result.is_ok() => Err(e.into()),
        Err(e) => {
            printer.note(&format!(
                "{e} (the autosaved session is in {})",
                path.display()
            ));
            Ok(())
        }
    }
}
