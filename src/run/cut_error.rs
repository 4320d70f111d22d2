//! Why a power-cut run (`run --verify --power-cut`) ends before its cycles are done, and
//! how the user's cut and restore commands ended.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Why a power-cut run ended before its cycles were done.
#[derive(Debug, thiserror::Error)]
pub enum PowerCutError {
    #[error("cycle {cycle}: the cut command `{cmd}` {status}; the run ends here and nothing is said about the drive")]
    CutFailed {
        cycle: u32,
        cmd: String,
        status: CommandStatus,
    },
    #[error("cycle {cycle}: the restore command `{cmd}` {status}; the run ends here and nothing is said about the drive")]
    RestoreFailed {
        cycle: u32,
        cmd: String,
        status: CommandStatus,
    },
    #[error("cycle {cycle}: {} came back as another drive ({what}); the loop stops", .path.display())]
    OtherDrive {
        cycle: u32,
        path: PathBuf,
        what: String,
    },
    #[error("cycle {cycle}: {} was not ready again within {:.0} s of the cut ({last}); the loop stops", .path.display(), .within.as_secs_f64())]
    NotBack {
        cycle: u32,
        path: PathBuf,
        within: Duration,
        last: String,
    },
    #[error("cycle {cycle}: the workload ended before the cut moment: give a --duration longer than --cut-at")]
    EndedFirst { cycle: u32 },
    #[error("{what} ({}) is on {disk}, the drive whose power is cut: keep it on another drive{hint}", .path.display())]
    SameDrive {
        what: &'static str,
        path: PathBuf,
        disk: String,
        hint: &'static str,
    },
    #[error("--power-cut needs {0}")]
    Needs(&'static str),
    /// A marker or record of an earlier cut that does not read.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Unreadable {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: a cut under way there was never finished (did it take the machine down?): `drivescope verify --target {} --verify-state {}` finishes its cycle first", state.display(), target.display(), state.display())]
    Unfinished { state: PathBuf, target: PathBuf },
    #[error("{}: the cut under way names the power-cut record {}, which {why}", state.display(), record.display())]
    RecordGone {
        state: PathBuf,
        record: PathBuf,
        why: String,
    },
    #[error("power cut: {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CommandStatus {
    /// Its exit status; `None`: killed by a signal, or it could not be started.
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl std::fmt::Display for CommandStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exited with status {c}"),
            (None, Some(s)) => write!(f, "was killed by signal {s}"),
            (None, None) => f.write_str("could not be started"),
        }
    }
}

/// The longest a cut or restore command may take before its group is killed: a PDU's or
/// BMC's CLI that hangs must not hang the run.
pub(super) const COMMAND_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Runs `cmd` by `sh -c` as the leader of a process group of its own (registered, so a
/// second Ctrl-C kills it too); a stop of the run, or [`COMMAND_LIMIT`], ends the group.
/// Its status (killed by SIGTERM or SIGKILL when it was ended).
pub(super) fn run_command(cmd: &str) -> CommandStatus {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let not_started = CommandStatus {
        code: None,
        signal: None,
    };
    let Ok(mut child) = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .process_group(0)
        .spawn()
    else {
        return not_started;
    };
    let mut registered = crate::children::register(child.id());
    let until = std::time::Instant::now() + COMMAND_LIMIT;
    while !crate::children::has_ended(child.id())
        && !crate::children::stop_requested()
        && std::time::Instant::now() < until
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    match crate::children::end_group(&mut child, &mut registered, std::time::Duration::ZERO) {
        Ok(s) => CommandStatus {
            code: s.code(),
            signal: s.signal(),
        },
        Err(_) => not_started,
    }
}

pub(super) fn succeeded(s: &CommandStatus) -> bool {
    s.code == Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_command_says_its_status() {
        let s = run_command("exit 7");
        assert_eq!(s.code, Some(7));
        assert_eq!(s.to_string(), "exited with status 7");
        assert!(succeeded(&run_command("true")));
    }
}
