//! Durable file writes: the atomic whole-file save (temp file, fsync, rename, fsync of the
//! folder) and the [`Appender`], a thread that appends autosave documents and syncs each,
//! so the run loop never waits on the disk.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::error::SessionError;

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Replaces `path` with `text` so that a crash leaves either the old file or the new one:
/// write a temp file beside it, fsync it, rename it over `path`, fsync the folder.
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
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let f = File::create(&tmp).map_err(|e| SessionError::io(&tmp, "cannot create", e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        fill(&mut w).map_err(|e| SessionError::io(&tmp, "cannot write", e))?;
        let f = w
            .into_inner()
            .map_err(|e| SessionError::io(&tmp, "cannot write", e.into_error()))?;
        f.sync_all()
            .map_err(|e| SessionError::io(&tmp, "cannot sync", e))?;
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
    /// Opens `path` (which must exist) for appending and starts the thread.
    pub fn open(path: &Path) -> Result<Appender, SessionError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| SessionError::io(path, "cannot open for appending", e))?;
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
