//! Where sessions go by default: `$XDG_DATA_HOME/drivescope/sessions/` (or
//! `~/.local/share/drivescope/sessions/`), one file per run named
//! `YYYY-MM-DDTHH-MM-SS-<preset or rw>.yaml` in local time.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-').to_string();
    if s.is_empty() {
        "run".into()
    } else {
        s
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

/// A new dated session path in `dir` that no file holds yet (`-2`, `-3`… when two runs
/// start in the same second).
pub fn new_session_path(dir: &Path, at: SystemTime, label: &str) -> PathBuf {
    let name = dated_file_name(at, label);
    let first = dir.join(&name);
    if !first.exists() {
        return first;
    }
    let stem = name.trim_end_matches(".yaml");
    (2..)
        .map(|n| dir.join(format!("{stem}-{n}.yaml")))
        .find(|p| !p.exists())
        .unwrap_or(first)
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
        let a = new_session_path(dir.path(), at, "randread");
        std::fs::write(&a, "x").unwrap();
        let b = new_session_path(dir.path(), at, "randread");
        assert_ne!(a, b);
        assert!(b.to_string_lossy().ends_with("-randread-2.yaml"), "{b:?}");
        assert_eq!(
            sibling(Path::new("/x/run.yaml"), ".hlog"),
            PathBuf::from("/x/run.hlog")
        );
    }
}
