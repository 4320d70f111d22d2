//! Snapshots of a running session: the session so far exported (YAML, charts, CSV,
//! HTML) on a background thread, one at a time.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_yaml::Value;

use super::SessionRecorder;
use crate::session::kind::EventKind;
use crate::session::model::{round, Event};

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
        let dir = crate::session::paths::claim_dated_dir(
            &self.snapshot_dir(),
            std::time::SystemTime::now(),
        )?;
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
        self.session.events.push(Event {
            t: round(self.elapsed_s(), 3),
            kind: EventKind::Snapshot,
            message: format!("snapshot to {}", dir.display()),
            data: Value::Null,
            drive: None,
        });
        let dir = dir.to_path_buf();
        let exporter = self.opts.exporter;
        let job = std::thread::Builder::new()
            .name("ds-snapshot".into())
            .spawn(move || {
                match exporter {
                    Some(export) => export(&copy, &dir),
                    None => write_yaml_only(&copy, &dir),
                }
                .map(|_| dir.clone())
            });
        self.snapshot_job = job.ok();
    }

    /// `Some(message)` once the running snapshot finished.
    pub(super) fn poll_snapshot(&mut self) -> Option<Option<String>> {
        let done = self.snapshot_job.as_ref()?.is_finished();
        if !done {
            return None;
        }
        let job = self.snapshot_job.take()?;
        Some(match job.join() {
            Ok(Ok(dir)) => Some(format!("snapshot written to {}", dir.display())),
            Ok(Err(e)) => Some(format!("snapshot failed: {e}")),
            Err(_) => Some("snapshot failed (its thread panicked)".into()),
        })
    }
}

/// A snapshot without an exporter: the session so far as one YAML document.
fn write_yaml_only(s: &crate::session::Session, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let p = dir.join("session.yaml");
    crate::session::write_atomic_with(&p, |w| crate::session::write_yaml(w, s))
        .map_err(|e| e.to_string())
}
