//! Durable file writes: the atomic whole-file save (temp file, fsync, rename, fsync of the
//! folder; never over anything but a regular file) and the [`Appender`], a thread that appends autosave documents and syncs each,
//! so the run loop never waits on the disk.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::error::{Refusal, SessionError};
use crate::input::FileKind;

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Replaces `path` with `text` so that a crash leaves either the old file or the new one:
/// write a temp file beside it, fsync it, rename it over `path`, fsync the folder. What is
/// at `path` must be nothing or a regular file: a device node, FIFO, socket, directory or
/// symbolic link there is refused, not replaced (which files of its own drivescope may
/// replace is for the callers: see [`outputs`](super::outputs)).
pub fn write_atomic(path: &Path, text: &[u8]) -> Result<(), SessionError> {
    write_atomic_with(path, |w| w.write_all(text))
}

/// Like [`write_atomic`], with the content streamed by `fill` through a buffer (a large
/// session is never held as one string).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), SessionError> {
    let dir = parent_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "session".into());
    refuse_non_file(path)?;
    remove_stale_temps(&dir, &name);
    let (tmp, f) = create_temp(&dir, &name)?;
    let result = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w).map_err(|e| SessionError::io(&tmp, "cannot write", e))?;
        let f = w
            .into_inner()
            .map_err(|e| SessionError::io(&tmp, "cannot write", e.into_error()))?;
        f.sync_all()
            .map_err(|e| SessionError::io(&tmp, "cannot sync", e))?;
        // Looked at again: the writing may have taken long.
        refuse_non_file(path)?;
        fs::rename(&tmp, path).map_err(|e| SessionError::io(path, "cannot replace", e))?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Refuses a `path` that holds anything but a regular file.
fn refuse_non_file(path: &Path) -> Result<(), SessionError> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() => Err(SessionError::Refused {
            path: path.to_path_buf(),
            what: "file",
            why: Refusal::Kind(FileKind::of(m.file_type())),
        }),
        _ => Ok(()),
    }
}

/// Whether process `pid` is alive (kill with signal 0: it exists, or exists and is not ours).
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 delivers nothing; kill(2) only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// How long a temp file must have gone unwritten before it counts as left behind: a
/// writer on another host (a shared folder) has a pid this host cannot see, but it writes.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// Removes the temp files of `name` that a drivescope killed mid-rewrite left behind
/// (`.NAME.tmp-PID[-N]` whose process is gone here and that nobody has written for a
/// minute): a regular file of that exact name only, never followed through a link, and
/// never one of a process still running.
fn remove_stale_temps(dir: &Path, name: &str) {
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest
            .split('-')
            .next()
            .and_then(|p| p.parse::<libc::pid_t>().ok());
        let shaped = rest
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        let idle = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if let (Some(pid), true, true, true) = (pid, shaped, regular, idle) {
            if pid > 0 && !alive(pid) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
}

/// A new temp file beside the target, `.NAME.tmp-PID[-N]`, created exclusively (never
/// through a link or over a file someone left there).
fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, File), SessionError> {
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100u32 {
        let tmp = match n {
            0 => dir.join(format!(".{name}.tmp-{pid}")),
            n => dir.join(format!(".{name}.tmp-{pid}-{n}")),
        };
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some((tmp, e)),
            Err(e) => return Err(SessionError::io(&tmp, "cannot create", e)),
        }
    }
    let (tmp, e) = last.unwrap_or_else(|| {
        (
            dir.join(name),
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        )
    });
    Err(SessionError::io(&tmp, "cannot create", e))
}

/// Creates the folders leading to `path`.
pub fn ensure_parent(path: &Path) -> Result<(), SessionError> {
    let dir = parent_of(path);
    fs::create_dir_all(&dir).map_err(|e| SessionError::io(&dir, "cannot create the folder", e))
}

enum Job {
    Append(Vec<u8>),
    /// Answer once everything before it is on disk.
    Barrier(Sender<()>),
}

/// Appends documents to one file on its own thread, with an fdatasync after each.
pub struct Appender {
    tx: Option<Sender<Job>>,
    handle: Option<JoinHandle<()>>,
    error: Arc<Mutex<Option<String>>>,
}

fn append_loop(
    mut file: File,
    path: PathBuf,
    rx: Receiver<Job>,
    error: Arc<Mutex<Option<String>>>,
) {
    for job in rx {
        match job {
            Job::Append(bytes) => {
                let r = file.write_all(&bytes).and_then(|_| file.sync_data());
                if let Err(e) = r {
                    if let Ok(mut slot) = error.lock() {
                        slot.get_or_insert_with(|| {
                            format!("{}: autosave failed: {e}", path.display())
                        });
                    }
                }
            }
            Job::Barrier(done) => {
                let _ = done.send(());
            }
        }
    }
}

impl Appender {
    /// Opens `path` (which must exist, a regular file) for appending and starts the thread.
    pub fn open(path: &Path) -> Result<Appender, SessionError> {
        refuse_non_file(path)?;
        // Not through a link, and without waiting for a reader should a FIFO have taken
        // the file's place since.
        let file = OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| SessionError::io(path, "cannot open for appending", e))?;
        let meta = file
            .metadata()
            .map_err(|e| SessionError::io(path, "cannot open for appending", e))?;
        if !meta.is_file() {
            return Err(SessionError::Refused {
                path: path.to_path_buf(),
                what: "file",
                why: Refusal::Kind(FileKind::of(meta.file_type())),
            });
        }
        let (tx, rx) = mpsc::channel();
        let error = Arc::new(Mutex::new(None));
        let err2 = error.clone();
        let p2 = path.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("ds-session".into())
            .spawn(move || append_loop(file, p2, rx, err2))
            .map_err(|e| SessionError::io(path, "cannot start the autosave thread", e))?;
        Ok(Appender {
            tx: Some(tx),
            handle: Some(handle),
            error,
        })
    }

    /// Queues `bytes`; they reach the disk (and are synced) shortly after.
    pub fn append(&self, bytes: Vec<u8>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(Job::Append(bytes));
        }
    }

    /// Waits until everything queued so far is written and synced.
    pub fn flush(&self) {
        if let Some(tx) = &self.tx {
            let (done_tx, done_rx) = mpsc::channel();
            if tx.send(Job::Barrier(done_tx)).is_ok() {
                let _ = done_rx.recv();
            }
        }
    }

    /// The first write error since the last call, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|mut e| e.take())
    }

    /// Writes what is queued, stops the thread, and returns the last error if any.
    pub fn close(mut self) -> Option<String> {
        self.shutdown();
        self.take_error()
    }

    fn shutdown(&mut self) {
        drop(self.tx.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Appender {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let bad = dir.path().join("missing").join("s.yaml");
        assert!(write_atomic(&bad, b"x").is_err());
    }

    #[test]
    fn a_temp_left_by_a_dead_writer_goes_and_nothing_else_does() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        // A process that has exited (and been reaped): its pid is free.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = dir.path().join(format!(".s.yaml.tmp-{dead}"));
        let stale_n = dir.path().join(format!(".s.yaml.tmp-{dead}-3"));
        let live = dir
            .path()
            .join(format!(".s.yaml.tmp-{}", std::process::id()));
        let other = dir.path().join(format!(".t.yaml.tmp-{dead}"));
        let odd = dir.path().join(format!(".s.yaml.tmp-{dead}x"));
        let link = dir.path().join(format!(".s.yaml.tmp-{dead}-4"));
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
        for f in [&stale, &stale_n, &other, &odd] {
            fs::write(f, b"partial").unwrap();
            fs::File::options()
                .write(true)
                .open(f)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        // Dead, but written a moment ago (a writer on another host): kept.
        let fresh = dir.path().join(format!(".s.yaml.tmp-{dead}-5"));
        fs::write(&fresh, b"being written elsewhere").unwrap();
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let _keep = fs::write(&live, b"being written");
        write_atomic(&p, b"one").unwrap();
        assert!(
            !stale.exists() && !stale_n.exists(),
            "the dead writer's temps are gone"
        );
        for kept in [&other, &odd, &live, &fresh] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
        assert!(
            fs::symlink_metadata(&link).is_ok(),
            "a link is never removed"
        );
    }

    #[test]
    fn atomic_write_never_replaces_what_is_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let sub = dir.path().join("sub");
        fs::create_dir(&sub).unwrap();
        for p in [&link, &sub] {
            let e = write_atomic(p, b"x").unwrap_err();
            assert!(matches!(e, SessionError::Refused { .. }), "{e}");
        }
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        // A temp file left by someone (or a link there) is not written through.
        let p = dir.path().join("s.yaml");
        let squatter = dir
            .path()
            .join(format!(".s.yaml.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink("/dev/null", &squatter).unwrap();
        write_atomic(&p, b"one").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"one");
        assert!(fs::symlink_metadata(&squatter)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn appends_arrive_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        fs::write(&p, "head\n").unwrap();
        let a = Appender::open(&p).unwrap();
        for i in 0..100 {
            a.append(format!("{i}\n").into_bytes());
        }
        a.flush();
        let text = fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 101);
        assert_eq!(text.lines().last(), Some("99"));
        assert!(a.close().is_none());
    }
}
