//! Where sessions go by default: `$XDG_DATA_HOME/drivescope/sessions/` (or
//! `~/.local/share/drivescope/sessions/`), one file per run named
//! `YYYY-MM-DDTHH-MM-SS-<preset or rw>.yaml` in local time, claimed by an exclusive create
//! ([`claim_session_file`]).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::error::SessionError;
use super::time::LocalTime;

/// The sessions folder.
pub fn sessions_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join("drivescope")
        .join("sessions")
}

/// Keeps letters, digits, `.`, `_` and `-` of a label; anything else becomes `-`.
fn file_safe(label: &str) -> String {
    let keep = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let s: String = label
        .chars()
        .map(|c| if keep(c) { c } else { '-' })
        .collect();
    match s.trim_matches('-') {
        "" => "run".into(),
        s => s.to_string(),
    }
}

/// `YYYY-MM-DDTHH-MM-SS-<label>.yaml` for `at`.
pub fn dated_file_name(at: SystemTime, label: &str) -> String {
    format!(
        "{}-{}.yaml",
        LocalTime::of(at).file_stamp(),
        file_safe(label)
    )
}

/// How many numbered names [`claim_session_file`] tries.
const MAX_CLAIMS: u32 = 10_000;

/// Claims a new dated session file in `dir` (created with the folder if needed): the file
/// is created empty with an exclusive create (`O_EXCL`), the next number (`-2`, `-3`…)
/// taken when the name is held, so two runs started in the same second always get files
/// of their own. Returns its path, for [`SessionRecorder::create`](super::SessionRecorder::create)
/// to write into (an empty file is one it may replace).
pub fn claim_session_file(
    dir: &Path,
    at: SystemTime,
    label: &str,
) -> Result<PathBuf, SessionError> {
    let folder = crate::owned::Folder::open_or_make(dir)?;
    let name = dated_file_name(at, label);
    let stem = name.trim_end_matches(".yaml");
    let mut last = dir.join(&name);
    for n in 1..=MAX_CLAIMS {
        let file = match n {
            1 => name.clone(),
            n => format!("{stem}-{n}.yaml"),
        };
        match folder.create_open(file.as_ref(), 0o644) {
            Ok(_) => return Ok(folder.join(file.as_ref())),
            Err(crate::owned::OwnedError::Exists { path }) => last = path,
            Err(e) => return Err(e.into()),
        }
    }
    Err(SessionError::io(
        &last,
        "cannot create (every numbered name is taken)",
        std::io::Error::from(ErrorKind::AlreadyExists),
    ))
}

/// A session path's lock, held for its run: see [`lock_session`].
pub type SessionLock = crate::owned::lock::LockFile;

/// Locks the session at `path` for this process's run (`.NAME.lock` beside the file it
/// names, flock'd: the kernel lets it go when the process ends, however it ends), the
/// folder made if needed. Another process holding it is [`SessionError::InUse`].
pub fn lock_session(path: &Path) -> Result<SessionLock, SessionError> {
    use crate::owned::lock::{beside, LockFile, TakeError};
    LockFile::take(&beside(path)).map_err(|e| match e {
        TakeError::Held { holder } => SessionError::InUse {
            path: path.to_path_buf(),
            holder,
        },
        TakeError::Owned(e) => SessionError::Owned(e),
    })
}

/// Claims a new folder `<base>-<YYYY-MM-DDTHH-MM-SS>` (then `-2`, `-3`… when the name is
/// held) with an exclusive `mkdir`: a snapshot taken by hand never lands in one taken
/// before it, nor in anything else that is there.
pub fn claim_dated_dir(
    base: &Path,
    at: SystemTime,
) -> std::io::Result<(PathBuf, crate::owned::Folder)> {
    let stamp = LocalTime::of(at).file_stamp();
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "snapshot".into());
    claim_numbered_dir(&base.with_file_name(format!("{name}-{stamp}")))
}

/// Claims a new folder `first` (then `first-2`, `first-3`… when the name is held) with an
/// exclusive `mkdir` in its parent, held open ([`crate::owned::Folder::make_new`]): never
/// a folder that is there. Returns its path and the folder.
pub fn claim_numbered_dir(first: &Path) -> std::io::Result<(PathBuf, crate::owned::Folder)> {
    let name = first
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = first.parent().unwrap_or(Path::new(""));
    let folder = crate::owned::Folder::open(parent).map_err(std::io::Error::other)?;
    for n in 1..=MAX_CLAIMS {
        let dir = match n {
            1 => name.clone(),
            n => format!("{name}-{n}"),
        };
        match folder.make_new(dir.as_ref()) {
            Ok(made) => return Ok((first.with_file_name(&dir), made)),
            Err(crate::owned::OwnedError::Exists { .. }) => continue,
            Err(e) => return Err(std::io::Error::other(e)),
        }
    }
    Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists))
}

/// The sidecar path next to a session: `run.yaml` + `.hlog` → `run.hlog`.
pub fn sibling(session: &Path, suffix: &str) -> PathBuf {
    let stem = session
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    session.with_file_name(format!("{stem}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dated_and_safe() {
        let n = dated_file_name(SystemTime::UNIX_EPOCH, "vendor sweep/4k");
        assert!(n.ends_with("-vendor-sweep-4k.yaml"), "{n}");
        assert_eq!(n.len(), "1970-01-01T00-00-00-vendor-sweep-4k.yaml".len());
        assert!(dated_file_name(SystemTime::UNIX_EPOCH, "///").ends_with("-run.yaml"));
    }

    #[test]
    fn a_taken_name_gets_a_number() {
        let dir = tempfile::tempdir().unwrap();
        let at = SystemTime::now();
        let a = claim_session_file(dir.path(), at, "randread").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"");
        let b = claim_session_file(dir.path(), at, "randread").unwrap();
        assert_ne!(a, b);
        assert!(b.to_string_lossy().ends_with("-randread-2.yaml"), "{b:?}");
        let c = claim_session_file(dir.path(), at, "randread").unwrap();
        assert!(c.to_string_lossy().ends_with("-randread-3.yaml"), "{c:?}");
        assert_eq!(
            sibling(Path::new("/x/run.yaml"), ".hlog"),
            PathBuf::from("/x/run.hlog")
        );
    }
}
