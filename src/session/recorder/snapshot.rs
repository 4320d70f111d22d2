//! Snapshots of a running session: the session so far exported (YAML, charts, CSV,
//! HTML) on a background thread, one at a time.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::SessionRecorder;
use crate::session::kind::EventKind;

impl SessionRecorder {
    /// The default snapshot folder: `<session>-snapshot/` beside the session.
    pub fn snapshot_dir(&self) -> PathBuf {
        self.opts
            .snapshot_dir
            .clone()
            .unwrap_or_else(|| crate::session::paths::sibling(&self.path, "-snapshot"))
    }

    /// A snapshot asked for by hand (a key, a signal), into a new folder: the snapshot
    /// folder's name with the time in it, claimed exclusively, so that no snapshot
    /// replaces another ([`crate::session::paths::claim_dated_dir`]). One asked for while
    /// another is being written is taken once that one is done. Periodic snapshots
    /// (`--snapshot-every`) keep refreshing the one folder. Returns the new folder.
    pub fn snapshot_by_hand(&mut self) -> std::io::Result<PathBuf> {
        let (dir, folder) = crate::session::paths::claim_dated_dir(
            &self.snapshot_dir(),
            std::time::SystemTime::now(),
        )?;
        self.snapshot_folders
            .insert(dir.clone(), crate::session::OutFolder::from_folder(folder));
        if let Some(Some(done)) = self.poll_snapshot() {
            self.pending_notes.push(done);
        }
        if self.snapshot_job.is_some() {
            self.queued_snapshots.push_back(dir.clone());
        } else {
            self.snapshot(&dir);
        }
        Ok(dir)
    }

    /// Exports the session so far to `dir` (session.yaml, charts, CSV, HTML) on a
    /// background thread; a snapshot still being written is not started twice.
    pub fn snapshot(&mut self, dir: &Path) {
        self.last_snapshot = Instant::now();
        if let Some(Some(done)) = self.poll_snapshot() {
            self.pending_notes.push(done);
        }
        if self.snapshot_job.is_some() {
            return;
        }
        let mut copy = self.session.clone();
        copy.summary = Some(self.summary_now(&super::RunEnd::parse("snapshot")));
        let what = format!("snapshot to {}", dir.display());
        self.push_event_of(None, EventKind::Snapshot, what, None);
        let dir = dir.to_path_buf();
        let exporter = self.opts.exporter;
        // The folder is held open from its first snapshot on (a folder swapped for a link
        // meanwhile is not followed), and each file in it is replaced only while it is
        // still the one the snapshot before wrote.
        let held = self.snapshot_folders.remove(&dir);
        let job = std::thread::Builder::new()
            .name("ds-snapshot".into())
            .spawn(move || {
                let mut out = match held {
                    Some(out) => out,
                    None => match crate::session::OutFolder::open_or_make(&dir) {
                        Ok(out) => out,
                        Err(e) => return (dir, None, Err(e.to_string())),
                    },
                };
                let written = match exporter {
                    Some(export) => export(&copy, &mut out),
                    None => write_yaml_only(&copy, &mut out),
                };
                (dir, Some(out), written)
            });
        self.snapshot_job = job.ok();
    }

    /// Waits for the running snapshot, keeps its folder, and says how it went.
    pub(super) fn join_snapshot(&mut self) -> Option<String> {
        let job = self.snapshot_job.take()?;
        Some(match job.join() {
            Ok((dir, out, written)) => {
                if let Some(out) = out {
                    self.snapshot_folders.insert(dir.clone(), out);
                }
                match written {
                    Ok(()) => format!("snapshot written to {}", dir.display()),
                    Err(e) => format!("snapshot failed: {e}"),
                }
            }
            Err(_) => "snapshot failed (its thread panicked)".into(),
        })
    }

    /// `Some(message)` once the running snapshot finished.
    pub(super) fn poll_snapshot(&mut self) -> Option<Option<String>> {
        let done = self.snapshot_job.as_ref()?.is_finished();
        if !done {
            return None;
        }
        Some(self.join_snapshot())
    }
}

/// A snapshot without an exporter: the session so far as one YAML document.
fn write_yaml_only(
    s: &crate::session::Session,
    out: &mut crate::session::OutFolder,
) -> Result<(), String> {
    out.write("session.yaml", crate::session::outputs::SESSION, |w| {
        crate::session::write_yaml(w, s)
    })
    .map(drop)
    .map_err(|e| e.to_string())
}
