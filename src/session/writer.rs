//! Durable file writes of ours: the atomic whole-file save through [`crate::owned`] (a temp
//! file synced, then made or exchanged with the file of ours, never over a file that is not
//! ours) and the [`Appender`], a thread that appends autosave documents and syncs each, so
//! the run loop never waits on the disk.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use std::ffi::OsStr;
use std::io::Read;

use super::error::{Refusal, SessionError};
use crate::owned::{Folder, Mine, OwnedError};

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A kind of file drivescope writes: its name in messages, and how it is known as ours
/// from its first bytes.
#[derive(Clone, Copy)]
pub struct Output {
    pub what: &'static str,
    pub ours: fn(&[u8]) -> bool,
}

/// A file of ours that is written again and again (a session, a snapshot's files): its
/// folder held open and the file we made there, replaced only while the name still holds
/// it ([`crate::owned`]).
#[derive(Debug)]
pub struct Written {
    folder: Folder,
    mine: Mine,
}

impl Written {
    /// Its path: as named, or where its folder is now when that was moved meanwhile.
    pub fn path(&self) -> PathBuf {
        let named = self.folder.join(self.mine.name());
        let now = self.folder.now_at();
        let same = std::fs::canonicalize(self.folder.path()).is_ok_and(|p| p == now);
        if same {
            named
        } else {
            now.join(self.mine.name())
        }
    }

    /// Writes it again, whole or not at all, only while its name still holds the file we
    /// made (else [`SessionError::Owned`], the file there left as it is).
    pub fn rewrite(
        &mut self,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), SessionError> {
        Ok(self.folder.replace(&mut self.mine, fill)?)
    }

    /// Writes it whole as [`Written::rewrite`]; where its name now holds a file that is not
    /// ours, into a new file beside it (`NAME-2.EXT`, `-3`…, made exclusively) instead, so
    /// what was to be saved is never lost. Returns where it is.
    pub fn rewrite_or_beside(
        &mut self,
        mut fill: impl FnMut(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<PathBuf, SessionError> {
        match self.folder.replace(&mut self.mine, &mut fill) {
            Ok(()) => return Ok(self.path()),
            Err(OwnedError::NotOurs { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let name = Path::new(self.mine.name());
        let stem = name
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ext = name
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        let mut last = None;
        for n in 2..1000u32 {
            let other = std::ffi::OsString::from(format!("{stem}-{n}{ext}"));
            match self.folder.create(&other, &mut fill) {
                Ok(mine) => {
                    self.mine = mine;
                    return Ok(self.path());
                }
                Err(e @ OwnedError::Exists { .. }) => last = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(last.map(SessionError::from).unwrap_or_else(|| {
            SessionError::io(
                &self.path(),
                "cannot save",
                std::io::ErrorKind::AlreadyExists.into(),
            )
        }))
    }

    /// Opens it for appending, only while its name still holds it.
    pub fn append_file(&self) -> Result<File, SessionError> {
        Ok(self.folder.open_append(&self.mine)?)
    }

    /// Removes it, only while its name still holds it; whether it did.
    pub fn remove(self) -> Result<bool, SessionError> {
        Ok(self.folder.remove(&self.mine)?)
    }

    /// The file of ours at `path` (a regular file `out` knows as drivescope's), taken as
    /// ours, and its first `cap` bytes; nothing there is `None`; anything else is refused.
    pub fn adopt(
        path: &Path,
        out: Output,
        cap: u64,
    ) -> Result<Option<(Written, Vec<u8>)>, SessionError> {
        let (folder, name) = Folder::of_file(path)?;
        let mut bytes = Vec::new();
        let adopted = folder.adopt(&name, |f| {
            let ok = f.take(cap).read_to_end(&mut bytes).is_ok();
            ok && (out.ours)(&bytes)
        });
        match adopted {
            Ok(Some((_, mine))) => Ok(Some((Written { folder, mine }, bytes))),
            Ok(None) => Ok(None),
            Err(e) => Err(refused(out, e)),
        }
    }
}

/// `e`, where a name holds a file that is not ours: the `out` drivescope does not write
/// there.
fn refused(out: Output, e: OwnedError) -> SessionError {
    match e {
        OwnedError::NotOurs { path } => SessionError::Refused {
            path,
            what: out.what,
            why: Refusal::Foreign,
        },
        e => e.into(),
    }
}

/// Writes `name` in `folder` whole or not at all: a new file when nothing is there, else
/// the file there only when it is a regular file that is empty or that `out` knows as
/// drivescope's (the name still holding it when it is replaced); anything else is
/// [`SessionError::Refused`] and left as it is.
pub fn write_in(
    folder: &Folder,
    name: &OsStr,
    out: Output,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Mine, SessionError> {
    let adopted = folder.adopt(name, |f| {
        let mut head = Vec::new();
        let _ = f.take(RECOGNISE_BYTES).read_to_end(&mut head);
        head.is_empty() || (out.ours)(&head)
    });
    let refused = |e| refused(out, e);
    match adopted.map_err(refused)? {
        Some((_, mut mine)) => {
            folder.replace(&mut mine, fill).map_err(refused)?;
            Ok(mine)
        }
        None => match folder.create(name, fill) {
            Err(OwnedError::Exists { path }) => Err(refused(OwnedError::NotOurs { path })),
            other => other.map_err(refused),
        },
    }
}

/// [`write_in`] for `path`: its folder opened (and held while it is written).
pub fn write_atomic_with(
    path: &Path,
    out: Output,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<Written, SessionError> {
    let (folder, name) = Folder::of_file(path)?;
    let mine = write_in(&folder, &name, out, fill)?;
    Ok(Written { folder, mine })
}

/// [`write_atomic_with`] of `text`.
pub fn write_atomic(path: &Path, out: Output, text: &[u8]) -> Result<Written, SessionError> {
    write_atomic_with(path, out, |w| w.write_all(text))
}

/// A folder of outputs (a report, a snapshot, a comparison), held open while it is
/// written, and the files written into it so far: a name written once is written again
/// only while it still holds the file we made.
#[derive(Debug)]
pub struct OutFolder {
    folder: Folder,
    written: BTreeMap<std::ffi::OsString, Mine>,
}

impl OutFolder {
    /// The folder at `path`, made if missing, held open from now on.
    pub fn open_or_make(path: &Path) -> Result<OutFolder, SessionError> {
        Ok(OutFolder::from_folder(Folder::open_or_make(path)?))
    }

    /// A folder already held open (one just made).
    pub fn from_folder(folder: Folder) -> OutFolder {
        OutFolder {
            folder,
            written: BTreeMap::new(),
        }
    }

    /// The folder's path, as named.
    pub fn path(&self) -> &Path {
        self.folder.path()
    }

    /// Writes `name` whole: a file this value wrote before only while the name still holds
    /// it; otherwise as [`write_in`] (new, or a file there that `out` knows as ours).
    /// Returns its path.
    pub fn write(
        &mut self,
        name: &str,
        out: Output,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<PathBuf, SessionError> {
        let key = std::ffi::OsString::from(name);
        match self.written.get_mut(&key) {
            Some(mine) => self
                .folder
                .replace(mine, fill)
                .map_err(|e| refused(out, e))?,
            None => {
                let mine = write_in(&self.folder, &key, out, fill)?;
                self.written.insert(key.clone(), mine);
            }
        }
        Ok(self.folder.join(&key))
    }
}

/// How much of a file is read to know it as drivescope's (a session's header is small, but
/// holds the preset and plan).
pub const RECOGNISE_BYTES: u64 = 1 << 20;

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
    /// Appends to `written` (opened again for appending, while its name holds it) from a
    /// thread of its own.
    pub fn open(written: &Written) -> Result<Appender, SessionError> {
        let file = written.append_file()?;
        let path = written.path();
        let (tx, rx) = mpsc::channel();
        let error = Arc::new(Mutex::new(None));
        let (err2, p2) = (error.clone(), path.clone());
        let handle = std::thread::Builder::new()
            .name("ds-session".into())
            .spawn(move || append_loop(file, p2, rx, err2))
            .map_err(|e| SessionError::io(&path, "cannot start the autosave thread", e))?;
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

    const ANY: Output = Output {
        what: "test file",
        ours: |head| head.starts_with(b"ours"),
    };

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        write_atomic(&p, ANY, b"ours one").unwrap();
        let mut w = write_atomic(&p, ANY, b"ours two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"ours two");
        w.rewrite(|o| o.write_all(b"ours three")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"ours three");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        let bad = dir.path().join("missing").join("s.yaml");
        assert!(write_atomic(&bad, ANY, b"x").is_err());
    }

    #[test]
    fn a_file_not_ours_is_refused_and_a_final_save_goes_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        fs::write(&p, "the user's").unwrap();
        assert!(matches!(
            write_atomic(&p, ANY, b"ours"),
            Err(SessionError::Refused { .. })
        ));
        assert_eq!(fs::read(&p).unwrap(), b"the user's");
        fs::remove_file(&p).unwrap();
        let mut w = write_atomic(&p, ANY, b"ours").unwrap();
        // The user moves the session away and puts a file of theirs at its name.
        fs::rename(&p, dir.path().join("moved.yaml")).unwrap();
        fs::write(&p, "the user's").unwrap();
        assert!(w.rewrite(|o| o.write_all(b"ours again")).is_err());
        let saved = w.rewrite_or_beside(|o| o.write_all(b"ours again")).unwrap();
        assert_eq!(saved, dir.path().join("s-2.yaml"));
        assert_eq!(fs::read(&p).unwrap(), b"the user's");
        assert_eq!(fs::read(&saved).unwrap(), b"ours again");
    }
}
