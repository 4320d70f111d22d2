//! The files of a verify state's folder: where it lives, the map pages' checksums, the
//! lock beside it, retirement, and the checks before a new state is made.

use super::*;

/// The folder of `target`'s verify state under `root` (the data directory's `verify/`):
/// named for the target's canonical path, readable, with a hash of the whole path so two
/// paths that read alike (`/x/a-b`, `/x/a/b`) never share a state.
pub fn dir_for(root: &Path, target: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let canon = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    // FNV-1a, 64 bits: stable across releases, unlike std's hasher.
    let hash = canon
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    let name: String = canon
        .display()
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    root.join(format!("{}-{hash:016x}", name.trim_matches('-')))
}

/// The same target: equal names, or names that resolve to the same file.
pub(super) fn same_target(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The files of a state.
pub(super) const STATE_FILES: [&str; 5] = ["meta.yaml", "map", "journal", "sums", "retired.yaml"];

/// The checksums of the map's pages, in `sums`: 8 bytes a page, the CRC32C of the page as
/// last saved and of the one before. A flush writes (and syncs) the new sums before the
/// pages, so a crash between the two leaves each page matching one of its two sums; a
/// page that matches neither is damage.
pub(super) struct Sums {
    pub(super) file: File,
    /// Each page's CRC32C as on disk now.
    pub(super) saved: Vec<u32>,
}

impl Sums {
    /// The new sums of `pages` (index, bytes), written and synced before the pages are.
    pub(super) fn write_ahead(&self, pages: &[(usize, Vec<u8>)]) -> std::io::Result<Vec<u32>> {
        let mut new = Vec::with_capacity(pages.len());
        for (page, bytes) in pages {
            let c = crc32c::crc32c(bytes);
            let old = self.saved.get(*page).copied().unwrap_or(c);
            let mut e = [0u8; 8];
            e[..4].copy_from_slice(&c.to_le_bytes());
            e[4..].copy_from_slice(&old.to_le_bytes());
            self.file.write_all_at(&e, (*page * 8) as u64)?;
            new.push(c);
        }
        self.file.sync_data()?;
        Ok(new)
    }
}

/// Each page's CRC32C (pages of [`PAGE`] bytes, the last one short).
pub(super) fn page_sums(map: &[u8]) -> Vec<u32> {
    map.chunks(PAGE).map(crc32c::crc32c).collect()
}

/// `sums` as a file holds them for `crcs`: both fields the page's own.
pub(super) fn sums_bytes(crcs: &[u32]) -> Vec<u8> {
    crcs.iter()
        .flat_map(|c| {
            let mut e = [0u8; 8];
            e[..4].copy_from_slice(&c.to_le_bytes());
            e[4..].copy_from_slice(&c.to_le_bytes());
            e
        })
        .collect()
}

/// Checks the map against `sums` (format 2): the pages that match neither of their sums.
pub(super) fn check_sums(path: &Path, map: &[u8], sums: &[u8]) -> Result<(), VerifyError> {
    let crcs = page_sums(map);
    let damaged = |pages: u64, first: u64| VerifyError::Damaged {
        path: path.to_path_buf(),
        pages,
        first,
    };
    if sums.len() != crcs.len() * 8 {
        return Err(damaged(crcs.len() as u64, 0));
    }
    let bad: Vec<usize> = crcs
        .iter()
        .zip(sums.chunks_exact(8))
        .enumerate()
        .filter(|(_, (c, e))| {
            let cur = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let prev = u32::from_le_bytes([e[4], e[5], e[6], e[7]]);
            **c != cur && **c != prev
        })
        .map(|(i, _)| i)
        .collect();
    match bad.first() {
        Some(first) => Err(damaged(bad.len() as u64, (*first * PAGE) as u64)),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` whole or not at all (a temp file synced, exchanged with the
/// file there, the folder synced): a new file, or in place of a regular file of one name
/// (the state's folder was checked to be drivescope's), only while the name still holds
/// it ([`crate::owned`]).
pub(super) fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use crate::owned::Folder;
    use std::os::unix::fs::MetadataExt;
    let (folder, name) = Folder::of_file(path).map_err(std::io::Error::other)?;
    let fill = |w: &mut dyn Write| w.write_all(bytes);
    let one_name = |f: &mut File| f.metadata().is_ok_and(|m| m.nlink() == 1);
    match folder
        .adopt(&name, one_name)
        .map_err(std::io::Error::other)?
    {
        Some((_, mut mine)) => folder.replace(&mut mine, fill),
        None => folder.create(&name, fill).map(drop),
    }
    .map_err(std::io::Error::other)
}

/// Removes the state file `path` when it is a regular file of one name (nothing there is
/// fine).
pub(super) fn remove_state_file(path: &Path) -> std::io::Result<()> {
    use crate::owned::Folder;
    use std::os::unix::fs::MetadataExt;
    let (folder, name) = Folder::of_file(path).map_err(std::io::Error::other)?;
    let one_name = |f: &mut File| f.metadata().is_ok_and(|m| m.nlink() == 1);
    if let Some((_, mine)) = folder
        .adopt(&name, one_name)
        .map_err(std::io::Error::other)?
    {
        folder.remove(&mine).map_err(std::io::Error::other)?;
    }
    Ok(())
}

/// Locks the state in `dir` for this process (`.NAME.lock` beside the folder, flock'd: let
/// go by the kernel when the process ends). Held by another process: [`VerifyError::InUse`].
pub(super) fn lock_state(dir: &Path) -> Result<LockFile, VerifyError> {
    let path = crate::owned::lock::beside(dir);
    LockFile::take(&path).map_err(|e| match e {
        TakeError::Held { holder } => VerifyError::InUse {
            path: dir.to_path_buf(),
            holder,
        },
        TakeError::Owned(e) => VerifyError::Owned(e),
    })
}

/// The retirement recorded in `dir`, if any.
pub(super) fn retired(dir: &Path) -> Result<Option<Retired>, VerifyError> {
    let path = dir.join("retired.yaml");
    match std::fs::read_to_string(&path) {
        Ok(t) => serde_yaml::from_str(&t)
            .map(Some)
            .map_err(|e| VerifyError::Bad {
                path,
                what: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(VerifyError::Io { path, source }),
    }
}

/// Retires the state in `dir`, if one of `target` is there (returns whether one was): from now on it is
/// refused, naming `why` and when, until `--verify-reset` starts a new one. Taken under the
/// state's lock: a state in use by another process is [`VerifyError::InUse`]. A state
/// retired already keeps its first retirement.
pub fn retire(dir: &Path, target: &str, why: Retirement) -> Result<bool, VerifyError> {
    let meta_path = dir.join("meta.yaml");
    if !meta_path.exists() {
        return Ok(false);
    }
    let _lock = lock_state(dir)?;
    // Only a state of this target: another's (named by mistake) is not touched.
    let of_target = std::fs::read_to_string(&meta_path)
        .ok()
        .and_then(|t| serde_yaml::from_str::<Meta>(&t).ok())
        .is_some_and(|m| same_target(&m.target, target));
    if !of_target {
        return Ok(false);
    }
    if retired(dir)?.is_some() {
        return Ok(true);
    }
    let r = Retired {
        why,
        at: crate::session::time::now_rfc3339(),
    };
    let path = dir.join("retired.yaml");
    let text = serde_yaml::to_string(&r).map_err(|e| VerifyError::Bad {
        path: path.clone(),
        what: e.to_string(),
    })?;
    replace_file(&path, text.as_bytes()).map_err(|source| VerifyError::Io { path, source })?;
    Ok(true)
}

/// Whether a new state may be made in `dir`: a folder that does not exist, is empty, or
/// (to replace a state, `--verify-reset`) holds nothing but a state of drivescope's.
pub(super) fn may_make_state(dir: &Path, replacing: bool) -> Result<(), VerifyError> {
    let not_ours = |what: String| VerifyError::NotOurs {
        path: dir.to_path_buf(),
        what,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(VerifyError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let known = STATE_FILES.iter().any(|f| name == *f);
        if !known || !replacing {
            return Err(not_ours(format!(
                "it holds {}",
                crate::ostext::escaped(&name)
            )));
        }
        if e.file_type().is_ok_and(|t| !t.is_file()) {
            return Err(not_ours(format!(
                "{} is not a regular file",
                crate::ostext::escaped(&name)
            )));
        }
    }
    // Files there: only a state of ours (its meta.yaml reads as one) is replaced.
    if std::fs::read_dir(dir).is_ok_and(|mut e| e.next().is_some()) {
        let meta = dir.join("meta.yaml");
        let ours = std::fs::read_to_string(&meta)
            .ok()
            .is_some_and(|t| serde_yaml::from_str::<Meta>(&t).is_ok());
        if !ours {
            return Err(not_ours("it holds no verify state of drivescope's".into()));
        }
    }
    Ok(())
}

/// Opens a state file for writing in place, never through a symbolic link, and only a
/// regular file of one name (a second name would see the state's writes).
pub(super) fn open_state_file(path: &Path, create: bool, append: bool) -> std::io::Result<File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = OpenOptions::new()
        .write(true)
        .create(create)
        .append(append)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || m.nlink() != 1 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a file of the verify state's own (another kind of file, or a file with \
             another name)",
        ));
    }
    Ok(f)
}

pub(super) fn random_id() -> u64 {
    let mut b = [0u8; 8];
    if File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        b = (t ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
    }
    u64::from_le_bytes(b) | 1
}

/// Now, ns since the Unix epoch.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The last flush epoch the journal in `dir` says completed (counted from the open it
/// was written under), if any: what a crashed run's drive had promised to keep.
pub fn last_flushed(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join(STATE_FILES[2])).ok()?;
    text.lines().rev().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next() == Some("flushed"))
            .then(|| w.next()?.parse().ok())
            .flatten()
    })
}

/// How the journal ended.
pub(super) fn journal_clean(text: &str) -> bool {
    text.lines().last().is_none_or(|l| l.starts_with("closed"))
}
