//! Which drive is at the target's path (size, serial, wwid): the same one must come back
//! after a cut; and the drives the verify state and the sessions are on, never the one cut.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::PowerCutError;

/// What makes a drive the same drive after the cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriveIdentity {
    pub size: u64,
    pub serial: Option<String>,
    /// WWN / EUI-64 / NGUID as the kernel gives it (`wwid`).
    pub wwid: Option<String>,
}

impl DriveIdentity {
    /// What differs between `self` (before) and `now`, in words.
    pub(super) fn differs(&self, now: &DriveIdentity) -> Option<String> {
        let mut d = Vec::new();
        if self.size != now.size {
            d.push(format!("size {} bytes, was {}", now.size, self.size));
        }
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".into());
        if self.serial != now.serial {
            d.push(format!(
                "serial {}, was {}",
                opt(&now.serial),
                opt(&self.serial)
            ));
        }
        if self.wwid != now.wwid {
            d.push(format!("wwid {}, was {}", opt(&now.wwid), opt(&self.wwid)));
        }
        (!d.is_empty()).then(|| d.join("; "))
    }
}

/// The identity of the drive at `path`: its size, and for a block device its disk's
/// serial and wwid.
pub fn identity(path: &Path) -> std::io::Result<DriveIdentity> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_block_device() {
        return Ok(DriveIdentity {
            size: meta.len(),
            serial: None,
            wwid: None,
        });
    }
    let (size, _) = crate::test_target::block_device_geometry(&file)?;
    let disk = crate::drive::resolve(path)
        .ok()
        .and_then(|i| i.primary().cloned());
    let wwid = disk.as_ref().and_then(|d| {
        let base = Path::new("/sys/block").join(&d.name);
        ["wwid", "device/wwid"]
            .iter()
            .find_map(|f| std::fs::read_to_string(base.join(f)).ok())
            .map(|s| s.trim().to_string())
    });
    Ok(DriveIdentity {
        size,
        serial: disk.and_then(|d| d.serial),
        wwid,
    })
}

/// The whole disks under `path` (none known: an empty list, e.g. tmpfs).
fn disks_of(path: &Path) -> Vec<String> {
    crate::drive::resolve(path)
        .map(|i| i.disks.into_iter().map(|d| d.name).collect())
        .unwrap_or_default()
}

/// Refuses a verify state or session on the drive whose power is cut.
pub(super) fn check_elsewhere(
    target: &Path,
    state: &Path,
    sessions: &Path,
) -> Result<(), PowerCutError> {
    let cut = disks_of(target);
    for (what, path, hint) in [
        (
            "the verify state",
            state,
            " (--verify-state PATH on another drive)",
        ),
        (
            "the sessions folder",
            sessions,
            " (--session PATH, or XDG_DATA_HOME, on another drive)",
        ),
    ] {
        if let Some(disk) = disks_of(path).into_iter().find(|d| cut.contains(d)) {
            return Err(PowerCutError::SameDrive {
                what,
                path: path.to_path_buf(),
                disk,
                hint,
            });
        }
    }
    Ok(())
}

/// The first existing folder at or above `p`.
pub(super) fn existing(p: &Path) -> PathBuf {
    p.ancestors()
        .find(|a| a.exists())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

/// Waits until `path` opens again as the drive it was.
pub(super) fn wait_ready(
    path: &Path,
    before: &DriveIdentity,
    cycle: u32,
    within: Duration,
    stop: &AtomicBool,
) -> Result<(), PowerCutError> {
    let deadline = Instant::now() + within;
    loop {
        let last = match identity(path) {
            Ok(now) => {
                return match before.differs(&now) {
                    None => Ok(()),
                    Some(what) => Err(PowerCutError::OtherDrive {
                        cycle,
                        path: path.to_path_buf(),
                        what,
                    }),
                }
            }
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return Err(PowerCutError::NotBack {
                cycle,
                path: path.to_path_buf(),
                within,
                last,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_drive_is_named_by_what_differs() {
        let a = DriveIdentity {
            size: 100,
            serial: Some("S1".into()),
            wwid: None,
        };
        assert_eq!(a.differs(&a.clone()), None);
        let b = DriveIdentity {
            size: 200,
            serial: Some("S2".into()),
            wwid: None,
        };
        let d = a.differs(&b).unwrap();
        assert!(d.contains("size 200 bytes, was 100") && d.contains("serial S2, was S1"));
    }
}
