//! A target's verify state on disk: a folder holding `meta.yaml` (the random id, the
//! block size, the target's size, the format), `map` (the generation map, one byte per
//! block, see [`super::map`]), `sums` (a CRC32C per map page, written ahead of the
//! pages), `journal` (one line per flush epoch) and, once something wrote the target
//! behind its back,
//! `retired.yaml` (see [`retire`]). One process at a time opens it: a lock beside the folder
//! (`crate::owned::lock`) is held while it is open. The flusher saves in batches,
//! never once per I/O: every [`FLUSH_EVERY`] it takes the map's dirty pages, fdatasyncs the
//! target (the flush epoch: every write acknowledged before it is durable), writes those
//! pages and syncs the map, then appends `flushed E` to the journal and syncs it. The map
//! is kept in memory, not memory-mapped: a shared mapping's pages reach the disk whenever
//! the kernel writes them back, ahead of the target's flush, and would claim after a power
//! cut generations whose data were never made durable. A run that ends cleanly appends
//! `closed`; a journal that ends otherwise marks an unclean end (a crash, a kill, a power
//! cut), which `drivescope verify` checks by the looser rule and then settles.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::classify::{Finding, FindingKind};
use super::map::{GenMap, PAGE};
use crate::owned::lock::{LockFile, TakeError};

mod files;
mod flusher;

use files::*;
pub use files::{dir_for, last_flushed, now_ns, retire};
pub use flusher::Flusher;

/// How often the flusher makes an epoch.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// Findings kept (in memory and in the session); the rest are only counted.
pub const MAX_KEPT: usize = 100;

/// Why a verify state cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("verify state {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file of the state's not made, replaced or removed (one that is not ours left as
    /// it is).
    #[error("verify state: {0}")]
    Owned(#[from] crate::owned::OwnedError),
    #[error("verify state {}: {what}", .path.display())]
    Bad { path: PathBuf, what: String },
    #[error("the verify state in {} is of a target of {state} bytes, this one has {target} (start a new one with --verify-reset)", .path.display())]
    OtherTarget {
        path: PathBuf,
        state: u64,
        target: u64,
    },
    #[error("the verify state in {} uses {state}-byte blocks: block sizes and offsets must be multiples of it (or start a new one with --verify-reset)", .path.display())]
    BlockSize { path: PathBuf, state: u64 },
    #[error("{}: no verify state there (a `run --verify` on this target makes one)", .path.display())]
    NoState { path: PathBuf },
    #[error("the verify state in {} is of {state}, not {target} (start a new one with --verify-reset, or name another with --verify-state)", .path.display())]
    OtherPath {
        path: PathBuf,
        state: String,
        target: String,
    },
    #[error("{}: {what}; drivescope makes a verify state only in a new or empty folder, and replaces only a state of its own", .path.display())]
    NotOurs { path: PathBuf, what: String },
    #[error("the last verified run on this target did not end cleanly (a crash, kill or power cut): check it first with `drivescope verify --target {target}`, or start a new state with --verify-reset")]
    Unclean { target: String },
    /// Another process uses the state now (a verified run or a check).
    #[error("the verify state in {} is in use by another drivescope{} (a verified run or a check): two never use one state at once", .path.display(), .holder.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    InUse { path: PathBuf, holder: Option<u32> },
    /// Map pages that fail their checksum: the record of what was written is lost.
    #[error("the verify state in {} is damaged: {pages} page(s) of its map fail their checksum (the first at byte {first} of the map), so it cannot tell what the drive should hold; nothing is said about the drive: start a new state with --verify-reset", .path.display())]
    Damaged {
        path: PathBuf,
        pages: u64,
        first: u64,
    },
    /// Retired: something wrote the target behind the state's back.
    #[error("the verify state in {} was retired at {at}: {why}; its map no longer says what the target holds, so nothing is checked against it: start a new state with `run --verify --verify-reset`", .path.display())]
    Retired {
        path: PathBuf,
        at: String,
        why: Retirement,
    },
    /// Written by a newer drivescope.
    #[error("the verify state in {} is of format {found}, newer than this drivescope reads (up to {FORMAT}): upgrade to use it", .path.display())]
    NewerFormat { path: PathBuf, found: u32 },
}

/// Why a verify state was retired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum Retirement {
    /// A run without `--verify` wrote the target.
    #[error("a run without --verify wrote the target")]
    UnverifiedWrite,
    /// drivescope made the test file anew (the old one was gone).
    #[error("drivescope re-created the test file")]
    Recreated,
}

/// What `retired.yaml` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Retired {
    why: Retirement,
    /// When, RFC 3339.
    at: String,
}

/// The state format this drivescope writes: 2, with `sums` (a checksum per map page).
/// Format 1 (no `format:` in meta.yaml, no sums) is read as it was and given sums.
pub const FORMAT: u32 = 2;

fn format_one() -> u32 {
    1
}

/// What `meta.yaml` holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Meta {
    /// The random id written in every header.
    pub id: u64,
    /// Bytes per block of the map.
    pub block: u64,
    /// The target's size when the state was made.
    pub target_size: u64,
    /// The target, as named when the state was made.
    pub target: String,
    /// The target's logical block size: its atomic write unit (within it, sectors never
    /// come from two writes, even across a power cut).
    #[serde(default = "default_atomic")]
    pub atomic_unit: u64,
    /// The state's format ([`FORMAT`]); 1 when missing (a state made before sums).
    #[serde(default = "format_one")]
    pub format: u32,
}

fn default_atomic() -> u64 {
    512
}

impl Meta {
    /// The atomic write unit, bytes.
    pub fn atomic(&self) -> usize {
        self.atomic_unit.max(512) as usize
    }
}

/// Blocks checked and findings, shared by the workers (added in batches).
#[derive(Debug, Default)]
pub struct Counts {
    pub written: AtomicU64,
    pub checked: AtomicU64,
    pub kinds: [AtomicU64; 5],
}

/// Totals of a verification.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyTotals {
    pub blocks_written: u64,
    pub blocks_checked: u64,
    pub corrupt: u64,
    pub misdirected: u64,
    pub lost: u64,
    pub torn: u64,
    pub unexpected: u64,
}

impl VerifyTotals {
    /// Adds another drive's totals.
    pub fn add(&mut self, o: &VerifyTotals) {
        self.blocks_written += o.blocks_written;
        self.blocks_checked += o.blocks_checked;
        self.corrupt += o.corrupt;
        self.misdirected += o.misdirected;
        self.lost += o.lost;
        self.torn += o.torn;
        self.unexpected += o.unexpected;
    }

    pub fn findings(&self) -> u64 {
        self.corrupt + self.misdirected + self.lost + self.torn + self.unexpected
    }

    /// The count of one kind.
    pub fn of(&self, k: FindingKind) -> u64 {
        match k {
            FindingKind::Corrupt => self.corrupt,
            FindingKind::Misdirected => self.misdirected,
            FindingKind::Lost => self.lost,
            FindingKind::Torn => self.torn,
            FindingKind::Unexpected => self.unexpected,
        }
    }
}

fn kind_index(k: FindingKind) -> usize {
    FindingKind::ALL.iter().position(|x| *x == k).unwrap_or(0)
}

/// A target's verify state, open.
pub struct VerifyState {
    pub meta: Meta,
    pub map: GenMap,
    dir: PathBuf,
    /// The last run on it ended cleanly (as found when opened).
    clean: bool,
    /// Made by this open (none was there, or a reset): nothing written under it yet.
    made: bool,
    map_file: File,
    /// `sums`: per map page its CRC32C as saved and the one before (see [`Sums`]).
    sums: Mutex<Sums>,
    journal: Mutex<File>,
    /// Held while the state is open: no other process uses it meanwhile.
    _lock: LockFile,
    epoch: AtomicU64,
    /// The power was cut ([`cut`](Self::cut)): no flush epoch and no clean end after it.
    frozen: AtomicBool,
    pub counts: Counts,
    /// Findings not yet handed out, at most [`MAX_KEPT`] in all.
    found: Mutex<Vec<Finding>>,
    kept: AtomicU64,
}

impl std::fmt::Debug for VerifyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyState")
            .field("dir", &self.dir)
            .field("meta", &self.meta)
            .field("clean", &self.clean)
            .finish_non_exhaustive()
    }
}

/// `io::Error` at `path` as the state's error.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> VerifyError {
    let path = path.to_path_buf();
    move |source| VerifyError::Io { path, source }
}

/// The files of a state's folder.
struct StateFiles {
    meta: PathBuf,
    map: PathBuf,
    journal: PathBuf,
    sums: PathBuf,
}

impl StateFiles {
    fn in_dir(dir: &Path) -> Self {
        StateFiles {
            meta: dir.join("meta.yaml"),
            map: dir.join("map"),
            journal: dir.join("journal"),
            sums: dir.join("sums"),
        }
    }

    /// The state that is there, checked against the target (its path, size and, for a
    /// run that writes (`create`), its block size), its map against its sums: its meta,
    /// its map's bytes, and whether the last run on it ended cleanly.
    fn read(
        &self,
        dir: &Path,
        target: &str,
        target_size: u64,
        block: u64,
        create: bool,
    ) -> Result<(Meta, Vec<u8>, bool), VerifyError> {
        let text = std::fs::read_to_string(&self.meta).map_err(io(&self.meta))?;
        let meta: Meta = serde_yaml::from_str(&text).map_err(|e| VerifyError::Bad {
            path: self.meta.clone(),
            what: e.to_string(),
        })?;
        if !same_target(&meta.target, target) {
            return Err(VerifyError::OtherPath {
                path: dir.to_path_buf(),
                state: meta.target,
                target: target.to_string(),
            });
        }
        if meta.target_size != target_size {
            return Err(VerifyError::OtherTarget {
                path: dir.to_path_buf(),
                state: meta.target_size,
                target: target_size,
            });
        }
        // A run that writes must keep to the state's blocks; a check reads them as they are.
        if meta.block == 0 || (create && !block.is_multiple_of(meta.block)) {
            return Err(VerifyError::BlockSize {
                path: dir.to_path_buf(),
                state: meta.block,
            });
        }
        if meta.format > FORMAT {
            return Err(VerifyError::NewerFormat {
                path: dir.to_path_buf(),
                found: meta.format,
            });
        }
        let bytes = std::fs::read(&self.map).map_err(io(&self.map))?;
        if meta.format >= 2 {
            let sums = std::fs::read(&self.sums).map_err(io(&self.sums))?;
            check_sums(dir, &bytes, &sums)?;
        }
        if bytes.len() as u64 != target_size / meta.block {
            return Err(VerifyError::Bad {
                path: self.map.clone(),
                what: format!(
                    "the map has {} bytes, not one per block ({})",
                    bytes.len(),
                    target_size / meta.block
                ),
            });
        }
        // No journal is a state never run; one that cannot be read is not clean.
        let journal = match std::fs::read_to_string(&self.journal) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(VerifyError::Io {
                    path: self.journal.clone(),
                    source,
                })
            }
        };
        Ok((meta, bytes, journal_clean(&journal)))
    }

    /// Makes a new state of `meta` in `dir` (an earlier one's retirement gone): a map of
    /// zeros (no block written yet), its sums, an empty journal, the meta last; the map's
    /// bytes.
    fn make(&self, dir: &Path, meta: &Meta) -> Result<Vec<u8>, VerifyError> {
        let retired = dir.join("retired.yaml");
        remove_state_file(&retired).map_err(io(&retired))?;
        let bytes = vec![0u8; (meta.target_size / meta.block) as usize];
        let write_new = replace_file;
        write_new(&self.map, &bytes).map_err(io(&self.map))?;
        write_new(&self.sums, &sums_bytes(&page_sums(&bytes))).map_err(io(&self.sums))?;
        write_new(&self.journal, b"").map_err(io(&self.journal))?;
        let text = serde_yaml::to_string(meta).map_err(|e| VerifyError::Bad {
            path: self.meta.clone(),
            what: e.to_string(),
        })?;
        write_new(&self.meta, text.as_bytes()).map_err(io(&self.meta))?;
        Ok(bytes)
    }
}

impl VerifyState {
    /// Opens the state in `dir`, or makes a new one (none there, or `reset`) for a target
    /// of `target_size` bytes with `block`-byte blocks. `target` names it in messages.
    pub fn open(
        dir: &Path,
        target: &str,
        target_size: u64,
        block: u64,
        atomic_unit: u64,
        reset: bool,
        create: bool,
    ) -> Result<VerifyState, VerifyError> {
        let files = StateFiles::in_dir(dir);
        if !create && (reset || !files.meta.exists()) {
            return Err(VerifyError::NoState {
                path: dir.to_path_buf(),
            });
        }
        // Before anything of the state is read: one process at a time.
        let lock = lock_state(dir)?;
        let existing = !reset && files.meta.exists();
        if !existing {
            may_make_state(dir, reset)?;
        }
        if existing {
            if let Some(r) = retired(dir)? {
                return Err(VerifyError::Retired {
                    path: dir.to_path_buf(),
                    at: r.at,
                    why: r.why,
                });
            }
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let (meta, bytes, clean) = if existing {
            files.read(dir, target, target_size, block, create)?
        } else {
            let meta = Meta {
                id: random_id(),
                block,
                target_size,
                target: target.to_string(),
                atomic_unit,
                format: FORMAT,
            };
            let bytes = files.make(dir, &meta)?;
            (meta, bytes, true)
        };
        let StateFiles {
            meta: meta_path,
            map: map_path,
            journal: journal_path,
            sums: sums_path,
        } = files;
        let mut meta = meta;
        let crcs = page_sums(&bytes);
        if meta.format < 2 {
            // A state made before sums: its map taken as it is, given sums from now on
            // (the sums first, then the format that says they are there).
            replace_file(&sums_path, &sums_bytes(&crcs)).map_err(io(&sums_path))?;
            meta.format = FORMAT;
            let text = serde_yaml::to_string(&meta).map_err(|e| VerifyError::Bad {
                path: meta_path.clone(),
                what: e.to_string(),
            })?;
            replace_file(&meta_path, text.as_bytes()).map_err(io(&meta_path))?;
        }
        let sums_file = open_state_file(&sums_path, false, false).map_err(io(&sums_path))?;
        let map_file = open_state_file(&map_path, false, false).map_err(io(&map_path))?;
        let journal = open_state_file(&journal_path, true, true).map_err(io(&journal_path))?;
        if clean {
            // A clean end is all the journal needs to say: start it again.
            journal.set_len(0).map_err(io(&journal_path))?;
        }
        Ok(VerifyState {
            meta,
            map: GenMap::from_bytes(bytes),
            dir: dir.to_path_buf(),
            clean,
            made: !existing,
            map_file,
            sums: Mutex::new(Sums {
                file: sums_file,
                saved: crcs,
            }),
            journal: Mutex::new(journal),
            _lock: lock,
            epoch: AtomicU64::new(0),
            frozen: AtomicBool::new(false),
            counts: Counts::default(),
            found: Mutex::new(Vec::new()),
            kept: AtomicU64::new(0),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The flush epochs completed since it was opened.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The last run on this state ended cleanly.
    pub fn clean(&self) -> bool {
        self.clean
    }

    /// Made by this open: nothing was written under it before.
    pub fn made(&self) -> bool {
        self.made
    }

    fn journal_line(&self, line: &str) -> std::io::Result<()> {
        let mut j = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(j, "{line}")?;
        j.sync_data()
    }

    /// One flush epoch: the dirty map pages as they are now, the target synced, the pages
    /// written and synced, the epoch journalled. Returns the epoch.
    /// Pages whose save failed stay dirty, for the next flush (a later step's).
    /// After a [`cut`](Self::cut) nothing is saved: the last completed epoch is returned.
    pub fn flush(&self, target: &File) -> std::io::Result<u64> {
        let mut sums = self.sums.lock().unwrap_or_else(|p| p.into_inner());
        if self.frozen.load(Ordering::Acquire) {
            return Ok(self.epoch.load(Ordering::Acquire));
        }
        let pages = self.map.take_dirty();
        let saved = target.sync_data().and_then(|()| {
            let new = sums.write_ahead(&pages)?;
            for (page, bytes) in &pages {
                self.map_file.write_all_at(bytes, (*page * PAGE) as u64)?;
            }
            self.map_file.sync_data()?;
            Ok(new)
        });
        match saved {
            Ok(new) => {
                for ((page, _), c) in pages.iter().zip(new) {
                    if let Some(s) = sums.saved.get_mut(*page) {
                        *s = c;
                    }
                }
            }
            Err(e) => {
                self.map.redirty(pages.iter().map(|(p, _)| *p));
                return Err(e);
            }
        }
        let e = self.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        drop(sums);
        self.journal_line(&format!("flushed {e} {}", now_ns()))?;
        Ok(e)
    }

    /// The power was cut: waits for a flush being saved now, then stops saving (no epoch
    /// and no clean end from now on, as after a real loss of power), and returns the last
    /// completed epoch and the map in memory as it is now (busy: a write in flight).
    pub fn cut(&self) -> (u64, Vec<u8>) {
        let sums = self.sums.lock().unwrap_or_else(|p| p.into_inner());
        self.frozen.store(true, Ordering::Release);
        let epoch = self.epoch.load(Ordering::Acquire);
        drop(sums);
        (epoch, self.map.raw())
    }

    /// The last flush and the clean end (neither after a [`cut`](Self::cut)).
    pub fn close(&self, target: &File) -> std::io::Result<()> {
        self.flush(target)?;
        if self.frozen.load(Ordering::Acquire) {
            return Ok(());
        }
        self.journal_line(&format!("closed {}", now_ns()))
    }

    /// Marks the state in use (an unclean end until [`close`](Self::close)).
    pub fn opened(&self) -> std::io::Result<()> {
        self.journal_line(&format!("opened {}", now_ns()))
    }

    /// Records a finding: counted always, kept while fewer than [`MAX_KEPT`] were.
    pub fn record(&self, f: Finding) {
        self.counts.kinds[kind_index(f.kind)].fetch_add(1, Ordering::Relaxed);
        if self.kept.fetch_add(1, Ordering::Relaxed) < MAX_KEPT as u64 {
            self.found.lock().unwrap_or_else(|p| p.into_inner()).push(f);
        }
    }

    /// The findings kept since the last call.
    pub fn take_findings(&self) -> Vec<Finding> {
        std::mem::take(&mut *self.found.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The totals so far.
    pub fn totals(&self) -> VerifyTotals {
        let k = |kind| self.counts.kinds[kind_index(kind)].load(Ordering::Relaxed);
        VerifyTotals {
            blocks_written: self.counts.written.load(Ordering::Relaxed),
            blocks_checked: self.counts.checked.load(Ordering::Relaxed),
            corrupt: k(FindingKind::Corrupt),
            misdirected: k(FindingKind::Misdirected),
            lost: k(FindingKind::Lost),
            torn: k(FindingKind::Torn),
            unexpected: k(FindingKind::Unexpected),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_persists_and_an_unclean_end_shows() {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempfile().unwrap();
        let d = dir.path().join("t");
        let s = VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, true).unwrap();
        assert!(s.clean());
        let id = s.meta.id;
        let mut saved = [0u8; 1];
        assert!(s.map.begin_write(7, 1, &mut saved));
        s.map.end_write(7, 1, true);
        s.opened().unwrap();
        s.flush(&target).unwrap();
        drop(s);
        // No `closed`: an unclean end, the map as flushed.
        let s = VerifyState::open(&d, "t", 1 << 20, 8192, 512, false, true).unwrap();
        assert!(!s.clean());
        assert_eq!((s.meta.id, s.map.load(7)), (id, 1));
        s.close(&target).unwrap();
        drop(s);
        let s = VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, true).unwrap();
        assert!(s.clean());
        drop(s);
        assert!(matches!(
            VerifyState::open(&d, "t", 2 << 20, 4096, 512, false, true),
            Err(VerifyError::OtherTarget { .. })
        ));
        assert!(matches!(
            VerifyState::open(&d, "t", 1 << 20, 512, 512, false, true),
            Err(VerifyError::BlockSize { .. })
        ));
        assert!(
            VerifyState::open(&d, "t", 1 << 20, 512, 512, false, false).is_ok(),
            "a check takes the state's blocks as they are"
        );
        let r = VerifyState::open(&d, "t", 1 << 20, 512, 512, true, true).unwrap();
        assert_ne!(r.meta.id, id, "a reset is a new state");
        assert_eq!(r.map.blocks(), 2048);
    }

    #[test]
    fn a_check_needs_a_state_and_a_run_makes_one() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("none");
        assert!(matches!(
            VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, false),
            Err(VerifyError::NoState { .. })
        ));
        assert!(!d.exists(), "a check makes nothing");
        assert!(VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, true).is_ok());
    }

    #[test]
    fn the_flusher_saves_in_epochs_and_closes() {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempfile().unwrap();
        let d = dir.path().join("t");
        let s = Arc::new(VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, true).unwrap());
        let f = Flusher::start(s.clone(), target).unwrap();
        let mut saved = [0u8; 2];
        assert!(s.map.begin_write(100, 2, &mut saved));
        std::thread::sleep(FLUSH_EVERY * 2);
        let on_disk = std::fs::read(d.join("map")).unwrap();
        assert_eq!(on_disk[100] & 0x80, 0x80, "saved as in flight");
        s.map.end_write(100, 2, true);
        f.finish().unwrap();
        let on_disk = std::fs::read(d.join("map")).unwrap();
        assert_eq!(on_disk[100..102], [1, 1]);
        let journal = std::fs::read_to_string(d.join("journal")).unwrap();
        assert!(journal.starts_with("opened"));
        assert!(journal.contains("flushed 1 "));
        assert!(journal_clean(&journal));
    }

    #[test]
    fn one_process_at_a_time_damage_is_damage_and_a_retired_state_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempfile().unwrap();
        let d = dir.path().join("t");
        let s = VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, true).unwrap();
        // A second open (another process's would be refused alike) while it is open.
        assert!(matches!(
            VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false),
            Err(VerifyError::InUse { .. })
        ));
        assert!(matches!(
            retire(&d, "t", Retirement::UnverifiedWrite),
            Err(VerifyError::InUse { .. })
        ));
        let mut saved = [0u8; 1];
        assert!(s.map.begin_write(3000, 1, &mut saved));
        s.map.end_write(3000, 1, true);
        s.close(&target).unwrap();
        drop(s);
        let sums = std::fs::read(d.join("sums")).unwrap();
        assert_eq!(sums.len(), 8, "one page of map: 4096 blocks");
        assert!(VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false).is_ok());
        // One byte of the map changed behind its back: damaged, never findings.
        let mut map = std::fs::read(d.join("map")).unwrap();
        map[3000] ^= 0x10;
        std::fs::write(d.join("map"), &map).unwrap();
        match VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false) {
            Err(VerifyError::Damaged { pages, first, .. }) => assert_eq!((pages, first), (1, 0)),
            other => panic!("not damaged: {other:?}"),
        }
        map[3000] ^= 0x10;
        std::fs::write(d.join("map"), &map).unwrap();
        // A format 1 state (no sums): read as before, and given sums.
        std::fs::remove_file(d.join("sums")).unwrap();
        let meta = std::fs::read_to_string(d.join("meta.yaml")).unwrap();
        let old: String = meta
            .lines()
            .filter(|l| !l.starts_with("format:"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(d.join("meta.yaml"), old).unwrap();
        let s = VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false).unwrap();
        assert_eq!((s.meta.format, s.map.load(3000)), (FORMAT, 1));
        drop(s);
        assert_eq!(std::fs::read(d.join("sums")).unwrap().len(), 8);
        // Retired: refused with its reason, for a check and a run alike, until a reset.
        assert!(retire(&d, "t", Retirement::Recreated).unwrap());
        assert!(retire(&d, "t", Retirement::UnverifiedWrite).unwrap());
        for create in [false, true] {
            match VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, create) {
                Err(VerifyError::Retired { why, .. }) => assert_eq!(why, Retirement::Recreated),
                other => panic!("not retired: {other:?}"),
            }
        }
        let r = VerifyState::open(&d, "t", 1 << 24, 4096, 512, true, true).unwrap();
        assert_eq!(r.map.load(3000), 0);
        drop(r);
        assert!(VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false).is_ok());
        assert!(!retire(&dir.path().join("none"), "t", Retirement::Recreated).unwrap());
    }

    #[test]
    fn after_a_cut_nothing_is_saved_and_the_end_is_unclean() {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempfile().unwrap();
        let d = dir.path().join("t");
        let s = VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, true).unwrap();
        s.opened().unwrap();
        let mut saved = [0u8; 2];
        assert!(s.map.begin_write(3, 1, &mut saved));
        s.map.end_write(3, 1, true);
        assert_eq!(s.flush(&target).unwrap(), 1);
        assert!(s.map.begin_write(3, 2, &mut saved));
        let (epoch, at_cut) = s.cut();
        assert_eq!(
            (epoch, at_cut[3], at_cut[4]),
            (1, 0xC2, 0xC1),
            "busy, pending"
        );
        s.map.end_write(3, 2, true);
        assert_eq!(s.flush(&target).unwrap(), 1, "no epoch after the cut");
        s.close(&target).unwrap();
        drop(s);
        let s = VerifyState::open(&d, "t", 1 << 20, 4096, 512, false, false).unwrap();
        assert!(!s.clean(), "no clean end after a cut");
        assert_eq!((s.map.load(3), s.map.load(4)), (1, 0), "the map as flushed");
    }

    #[test]
    fn a_crash_between_the_sums_and_the_pages_is_no_damage() {
        let dir = tempfile::tempdir().unwrap();
        let target = tempfile::tempfile().unwrap();
        let d = dir.path().join("t");
        let s = VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, true).unwrap();
        let before = std::fs::read(d.join("map")).unwrap();
        let mut saved = [0u8; 1];
        assert!(s.map.begin_write(7, 1, &mut saved));
        s.map.end_write(7, 1, true);
        s.flush(&target).unwrap();
        drop(s);
        // The sums of the new page were saved, the page itself was not.
        std::fs::write(d.join("map"), &before).unwrap();
        let s = VerifyState::open(&d, "t", 1 << 24, 4096, 512, false, false).unwrap();
        assert_eq!(s.map.load(7), 0);
    }
}
