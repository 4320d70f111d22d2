//! The folder a job file run's fio logs go to, drivescope's own, never one the job file
//! names: made when the run starts (its session exists), `<session>-fio-logs/` beside the
//! session (`-2`, `-3`… when that name is taken: an existing folder is never used), or the
//! folder `--fio-logs` names: made when missing, else used only when it is an empty folder
//! of this user's (not a link to one). Each fio step is given it; fio's cage mounts it
//! where the job's log options are made to point (`fio::logs`).

use std::borrow::Cow;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::error::RunError;
use crate::plan::Plan;

fn refused(path: &Path, why: impl Into<String>) -> RunError {
    RunError::FioLogs {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

/// Whether `path`, which is there, may take the run's logs: an empty folder (not a link)
/// owned by this user.
fn usable(path: &Path) -> Result<(), RunError> {
    let m = std::fs::symlink_metadata(path).map_err(|e| refused(path, e.to_string()))?;
    if !m.is_dir() {
        return Err(refused(path, "it is there and is not a folder"));
    }
    // SAFETY: geteuid has no preconditions and touches no memory.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        return Err(refused(
            path,
            format!("it is a folder of user {}, not this user's", m.uid()),
        ));
    }
    let mut entries = std::fs::read_dir(path).map_err(|e| refused(path, e.to_string()))?;
    if entries.next().is_some() {
        return Err(refused(
            path,
            "it is not empty (fio's logs go only to an empty folder, or one drivescope makes)",
        ));
    }
    Ok(())
}

/// Checks the folder `--fio-logs` names before the run is prepared: an empty folder of
/// this user's, or nothing yet in a folder that is there.
pub(super) fn check_asked(path: &Path) -> Result<(), RunError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return usable(path);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(refused(path, "the folder it would be made in is not there"));
    }
    Ok(())
}

/// The run's log folder: `asked` (made when missing, else checked again), or a new one
/// beside `session`.
fn make(asked: Option<&Path>, session: &Path) -> Result<PathBuf, RunError> {
    if let Some(p) = asked {
        return match std::fs::create_dir(p) {
            Ok(()) => Ok(p.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                usable(p).map(|()| p.to_path_buf())
            }
            Err(e) => Err(refused(p, e.to_string())),
        };
    }
    let first = crate::session::paths::sibling(session, "-fio-logs");
    crate::session::paths::claim_numbered_dir(&first)
        .map(|(made, _)| made)
        .map_err(|e| refused(&first, e.to_string()))
}

/// `plan` with its fio steps given the run's log folder (made now) when any writes logs;
/// the plan as it is otherwise. The folder made, to be said.
pub(super) fn ready<'p>(
    plan: &'p Plan,
    asked: Option<&Path>,
    session: &Path,
) -> Result<(Cow<'p, Plan>, Option<PathBuf>), RunError> {
    let logs = plan
        .steps
        .iter()
        .filter_map(|s| s.fio_file.as_ref())
        .any(|f| !f.logs.is_empty());
    if !logs {
        return Ok((Cow::Borrowed(plan), None));
    }
    let dir = make(asked, session)?;
    let mut plan = plan.clone();
    for f in plan.steps.iter_mut().filter_map(|s| s.fio_file.as_mut()) {
        f.log_dir = Some(dir.clone());
    }
    Ok((Cow::Owned(plan), Some(dir)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_beside_the_session_is_always_new_and_an_asked_one_empty() {
        let d = tempfile::tempdir().unwrap();
        let session = d.path().join("s.yaml");
        let first = make(None, &session).unwrap();
        assert_eq!(first, d.path().join("s-fio-logs"));
        std::fs::write(first.join("keep"), "x").unwrap();
        let second = make(None, &session).unwrap();
        assert_eq!(second, d.path().join("s-fio-logs-2"));
        assert_eq!(std::fs::read(first.join("keep")).unwrap(), b"x");
        // Asked: made when missing, taken when empty, refused otherwise.
        let asked = d.path().join("mine");
        assert!(check_asked(&asked).is_ok());
        assert_eq!(make(Some(&asked), &session).unwrap(), asked);
        assert_eq!(make(Some(&asked), &session).unwrap(), asked);
        std::fs::write(asked.join("f"), "x").unwrap();
        assert!(make(Some(&asked), &session).is_err());
        assert!(check_asked(&asked).is_err());
        let link = d.path().join("link");
        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        assert!(check_asked(&link).is_err(), "a link to a folder is not one");
        assert!(check_asked(&d.path().join("no/such")).is_err());
    }
}
