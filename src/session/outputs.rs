//! Which files drivescope may write. A path is written only when nothing is there yet, or
//! when it holds a regular file that drivescope wrote, known by its content (a session by
//! its header, the histogram log by its first line, a report file by how it starts), or an
//! empty one (nothing to lose); an earlier session or histogram log only when asked
//! (`--force`). A symbolic link to one of drivescope's files is followed
//! and the file it names is written. Anything else (a device node, a FIFO, a socket, a
//! directory, a link to any of those or to someone else's file) is refused, naming what it
//! is, before anything is created. No output may be another output of the same command or
//! one of its inputs.

use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

pub use super::error::Refusal;
use super::error::SessionError;
use super::options::RecorderOptions;
use crate::user_file::{self, FileKind};

/// How much of a file is read to know it as drivescope's (a session's header is small, but
/// holds the preset and plan).
const RECOGNISE_BYTES: usize = 1 << 20;

pub use super::writer::Output;

/// The session itself.
pub const SESSION: Output = Output {
    what: "session",
    ours: super::reader::is_session_header,
};

/// The latency histogram log beside a session.
pub const HISTOGRAMS: Output = Output {
    what: "histogram log",
    ours: super::histlog::is_histlog,
};

fn refused(path: &Path, what: &'static str, why: Refusal) -> SessionError {
    SessionError::Refused {
        path: path.to_path_buf(),
        what,
        why,
    }
}

/// Whether the regular file at `path` (not followed if a link) is empty or drivescope's.
fn is_ours(path: &Path, out: Output) -> Result<bool, SessionError> {
    let head = user_file::head(path, RECOGNISE_BYTES)
        .map_err(|e| SessionError::io(path, "cannot read what is there", e))?;
    Ok(head.is_empty() || (out.ours)(&head))
}

/// `path` (nothing, or a file [`writable`] let through) when it holds nothing to lose, or
/// `replace` says it may go: a file of ours that is not empty is an earlier run's.
fn not_earlier(path: &Path, out: Output, replace: bool) -> Result<PathBuf, SessionError> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 && !replace => {
            Err(refused(path, out.what, Refusal::EarlierRun(out.what)))
        }
        _ => Ok(path.to_path_buf()),
    }
}

/// Where `out` is to be written for `path`: the path itself (nothing there yet, or a file
/// of ours), the file a link there names (one of ours), or why not.
pub fn writable(path: &Path, out: Output) -> Result<PathBuf, SessionError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(SessionError::io(path, "cannot look at what is there", e)),
    };
    match FileKind::of(meta.file_type()) {
        FileKind::Regular if is_ours(path, out)? => Ok(path.to_path_buf()),
        FileKind::Regular => Err(refused(path, out.what, Refusal::Foreign)),
        FileKind::Symlink => {
            // What the link names, as `stat` sees it (a magic link such as
            // /proc/self/fd/1 names a pipe or a terminal that has no path).
            let kind = match std::fs::metadata(path) {
                Ok(m) => FileKind::of(m.file_type()),
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(refused(path, out.what, Refusal::Dangling))
                }
                Err(e) => return Err(SessionError::io(path, "cannot follow the link", e)),
            };
            let target = std::fs::canonicalize(path)
                .or_else(|_| std::fs::read_link(path))
                .map_err(|e| SessionError::io(path, "cannot follow the link", e))?;
            match kind {
                FileKind::Regular if is_ours(&target, out)? => Ok(target),
                FileKind::Regular => Err(refused(path, out.what, Refusal::LinkToForeign(target))),
                kind => Err(refused(path, out.what, Refusal::LinkTo { target, kind })),
            }
        }
        kind => Err(refused(path, out.what, Refusal::Kind(kind))),
    }
}

/// `path` made absolute and cleaned of `.` (and of `..` after a normal part), without
/// touching the file system: how two paths of files not yet there are compared.
fn lexical(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `a` and `b` are one file: the same inode where both exist, else the same path.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => lexical(a) == lexical(b),
    }
}

/// The files a session writes, each checked by [`check_session_paths`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    /// The session (where `--session` named a link to a session, the file it names).
    pub session: PathBuf,
    /// The histogram log, when histograms are kept.
    pub histograms: Option<PathBuf>,
    /// The snapshot folder, when snapshots are taken.
    pub snapshots: Option<PathBuf>,
}

/// Checks, before anything is created, every file a session at `path` with `opts` will
/// write: the session, its histogram log, its snapshot folder's files. Each is nothing
/// yet or drivescope's own (see the module documentation), and no two are the same file;
/// one that holds an earlier run's (not empty) is refused unless `opts.replace`.
/// [`SessionRecorder::create`](super::SessionRecorder::create) calls it too; a run calls it
/// before it touches its target, so that a refused path costs nothing.
pub fn check_session_paths(
    path: &Path,
    opts: &RecorderOptions,
) -> Result<SessionPaths, SessionError> {
    let collides = |session: &Path| {
        let p = super::paths::sibling(session, ".hlog");
        if same_file(&p, session) {
            Err(refused(
                &p,
                HISTOGRAMS.what,
                Refusal::Collides(SESSION.what),
            ))
        } else {
            Ok(p)
        }
    };
    if opts.histograms {
        collides(path)?;
    }
    let session = not_earlier(&writable(path, SESSION)?, SESSION, opts.replace)?;
    let histograms = if opts.histograms {
        let h = writable(&collides(&session)?, HISTOGRAMS)?;
        Some(not_earlier(&h, HISTOGRAMS, opts.replace)?)
    } else {
        None
    };
    // The snapshot folder's files are the report layer's: it checks them
    // (`report::check_snapshot_dir`), given by the command as `opts.snapshot_check`, which
    // the run layer calls.
    let snapshots = opts.snapshot_every.map(|_| {
        opts.snapshot_dir
            .clone()
            .unwrap_or_else(|| super::paths::sibling(&session, "-snapshot"))
    });
    Ok(SessionPaths {
        session,
        histograms,
        snapshots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    fn why(r: Result<PathBuf, SessionError>) -> Refusal {
        match r {
            Err(SessionError::Refused { why, .. }) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn only_nothing_or_our_own_regular_files_are_writable() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let refused = |p: &Path| why(writable(p, SESSION));
        let new = d.join("new.yaml");
        assert_eq!(writable(&new, SESSION).unwrap(), new);
        let empty = d.join("empty.yaml");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(writable(&empty, SESSION).unwrap(), empty);
        let ours = d.join("ours.yaml");
        std::fs::write(
            &ours,
            "schema_version: 1\ndrivescope_version: 0.1.0\nstarted: x\nintervals: []\n",
        )
        .unwrap();
        assert_eq!(writable(&ours, SESSION).unwrap(), ours);
        let foreign = d.join("notes.txt");
        std::fs::write(&foreign, "schema_version: 1 in my notes\n").unwrap();
        assert!(matches!(refused(&foreign), Refusal::Foreign));
        let sock = d.join("sock");
        let _l = UnixListener::bind(&sock).unwrap();
        assert!(matches!(refused(&sock), Refusal::Kind(FileKind::Socket)));
        assert!(matches!(refused(d), Refusal::Kind(FileKind::Directory)));
        let link = d.join("link.yaml");
        std::os::unix::fs::symlink(&ours, &link).unwrap();
        assert_eq!(
            writable(&link, SESSION).unwrap(),
            ours.canonicalize().unwrap()
        );
        let to_dev = d.join("dev.yaml");
        std::os::unix::fs::symlink("/dev/null", &to_dev).unwrap();
        assert!(matches!(
            refused(&to_dev),
            Refusal::LinkTo {
                kind: FileKind::CharDevice,
                ..
            }
        ));
        let to_notes = d.join("notes.yaml");
        std::os::unix::fs::symlink(&foreign, &to_notes).unwrap();
        assert!(matches!(refused(&to_notes), Refusal::LinkToForeign(_)));
        let dangling = d.join("gone.yaml");
        std::os::unix::fs::symlink(d.join("nothing"), &dangling).unwrap();
        assert!(matches!(refused(&dangling), Refusal::Dangling));
    }

    #[test]
    fn the_histogram_log_may_not_be_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let opts = RecorderOptions {
            histograms: true,
            ..RecorderOptions::default()
        };
        let e = check_session_paths(&dir.path().join("x.hlog"), &opts).unwrap_err();
        assert!(
            matches!(
                e,
                SessionError::Refused {
                    why: Refusal::Collides("session"),
                    ..
                }
            ),
            "{e}"
        );
        let ok = check_session_paths(&dir.path().join("x.yaml"), &opts).unwrap();
        assert_eq!(ok.histograms, Some(dir.path().join("x.hlog")));
        assert!(same_file(Path::new("a/./b"), Path::new("a/c/../b")));
    }
}
