//! Target path → block device → whole disk(s), through partitions (`partition`
//! attribute), device-mapper and md (`slaves/`). A path that does not exist yet resolves
//! through its nearest existing ancestor, so a scratch file can be placed before creation.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::identity::{disk_identity, list_disks};
use super::mounts::{mount_of, mounts};
use super::{DriveError, DriveInfo, SysRoot};

/// drivescope's default target: `$XDG_DATA_HOME/drivescope/scratch.bin`, else
/// `~/.local/share/drivescope/scratch.bin`, else `./drivescope-scratch.bin`.
pub fn default_target() -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join("drivescope").join("scratch.bin")
}

/// `ngXnY` of `/dev/ngXnY` (`X`, `Y` digits), else None.
fn generic_name(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix("ng")?;
    let (ctrl, ns) = rest.split_once('n')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(ctrl) && digits(ns)).then_some(name)
}

/// The block namespace behind an NVMe generic character device: `/dev/ng0n1` is
/// `/dev/nvme0n1`. None when `path` is not named as one.
pub fn block_namespace(path: &Path) -> Option<PathBuf> {
    let name = generic_name(path)?;
    let parent = path.parent().unwrap_or(Path::new("/dev"));
    Some(parent.join(format!("nvme{}", &name[2..])))
}

fn nearest_existing(path: &Path) -> Option<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    abs.ancestors()
        .find(|p| p.symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// Linux `dev_t` → (major, minor), as glibc's `gnu_dev_major/minor`.
fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    (major as u32, minor as u32)
}

fn class_block_name(
    root: &SysRoot,
    path: &Path,
    major: u32,
    minor: u32,
) -> Result<String, DriveError> {
    let link = root.sys.join(format!("dev/block/{major}:{minor}"));
    std::fs::canonicalize(&link)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .ok_or_else(|| DriveError::UnknownDevice {
            path: path.to_path_buf(),
            major,
            minor,
            sys: root.sys.clone(),
        })
}

/// Whole disks beneath block device `name` (a disk, partition, dm or md device), sorted
/// and without duplicates. A device with neither `partition` nor slaves is a whole disk.
pub fn disks_under(root: &SysRoot, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(root, name, &mut out, 0);
    out.sort();
    out.dedup();
    out
}

fn walk(root: &SysRoot, name: &str, out: &mut Vec<String>, depth: u32) {
    if depth > 16 {
        return; // a cycle in a broken tree; sysfs has none
    }
    let class = root.sys.join("class/block").join(name);
    if class.join("partition").exists() {
        if let Some(parent) = std::fs::canonicalize(&class).ok().and_then(|p| {
            p.parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        }) {
            walk(root, &parent, out, depth + 1);
            return;
        }
    }
    let slaves = SysRoot::names_in(&class.join("slaves"));
    if slaves.is_empty() {
        out.push(name.to_string());
    } else {
        for s in slaves {
            walk(root, &s, out, depth + 1);
        }
    }
}

/// The stat path of block device `name` relative to `/sys/block`.
fn stat_name(root: &SysRoot, name: &str) -> String {
    if root.block(name).exists() {
        return name.to_string();
    }
    std::fs::canonicalize(root.sys.join("class/block").join(name))
        .ok()
        .and_then(|p| {
            let parent = p.parent()?.file_name()?.to_string_lossy().into_owned();
            Some(format!("{parent}/{name}"))
        })
        .unwrap_or_else(|| name.to_string())
}

/// Resolves `path` on this machine. See [`resolve_in`].
pub fn resolve(path: &Path) -> Result<DriveInfo, DriveError> {
    #[cfg(test)]
    RESOLVED.with(|n| n.set(n.get() + 1));
    resolve_in(&SysRoot::real(), path)
}

#[cfg(test)]
thread_local! {
    /// How many times [`resolve`] ran on this thread (a run's tests count its resolutions).
    pub static RESOLVED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Resolves `path` (file, directory, block device, NVMe controller or generic character
/// device, or a path not created yet) to its drive(s), reading sysfs and procfs under `root`.
pub fn resolve_in(root: &SysRoot, path: &Path) -> Result<DriveInfo, DriveError> {
    let existing = nearest_existing(path).ok_or_else(|| DriveError::NothingExists {
        path: path.to_path_buf(),
    })?;
    let meta = std::fs::metadata(&existing).map_err(|source| DriveError::Io {
        path: existing.clone(),
        source,
    })?;
    let ft = meta.file_type();
    let block_device = if ft.is_block_device() {
        let (ma, mi) = split_dev(meta.rdev());
        class_block_name(root, path, ma, mi)?
    } else if ft.is_char_device() {
        // An NVMe generic device (`/dev/ngXnY`, for passthrough) is its namespace's drive.
        if let Some(ns) = block_namespace(path).filter(|ns| ns.exists()) {
            return resolve_in(root, &ns);
        }
        return resolve_nvme_char(root, path, meta.rdev());
    } else {
        let (ma, mi) = split_dev(meta.dev());
        match class_block_name(root, path, ma, mi) {
            Ok(n) => n,
            Err(e) => via_mount_source(root, path, &existing).ok_or(e)??,
        }
    };
    let disks: Vec<_> = disks_under(root, &block_device)
        .iter()
        .map(|n| disk_identity(root, n))
        .collect();
    if disks.is_empty() {
        return Err(DriveError::NoDisk {
            path: path.to_path_buf(),
            block_device,
        });
    }
    Ok(DriveInfo {
        target: path.to_path_buf(),
        stat_name: stat_name(root, &block_device),
        block_device,
        disks,
    })
}

/// File systems whose `st_dev` is anonymous (btrfs, overlay, tmpfs): use the mount's
/// source if it is a block device, else say which file system it is.
fn via_mount_source(
    root: &SysRoot,
    path: &Path,
    existing: &Path,
) -> Option<Result<String, DriveError>> {
    let canon = std::fs::canonicalize(existing).ok()?;
    let all = mounts(root);
    let m = mount_of(&all, &canon)?;
    let src = Path::new(&m.source);
    let meta = std::fs::metadata(src).ok();
    match meta {
        Some(md) if md.file_type().is_block_device() => {
            let (ma, mi) = split_dev(md.rdev());
            Some(class_block_name(root, path, ma, mi))
        }
        _ => Some(Err(DriveError::NotOnBlockDevice {
            path: path.to_path_buf(),
            fstype: m.fstype.clone(),
            source_name: m.source.clone(),
        })),
    }
}

/// `/dev/nvmeX`: the controller's namespaces are its disks.
fn resolve_nvme_char(root: &SysRoot, path: &Path, rdev: u64) -> Result<DriveInfo, DriveError> {
    let (ma, mi) = split_dev(rdev);
    let ctrl = std::fs::canonicalize(root.sys.join(format!("dev/char/{ma}:{mi}")))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|n| {
            n.strip_prefix("nvme")
                .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        })
        .ok_or_else(|| DriveError::NotADrive {
            path: path.to_path_buf(),
        })?;
    let disks: Vec<_> = list_disks(root)
        .into_iter()
        .filter(|d| d.nvme_controller.as_deref() == Some(ctrl.as_str()))
        .collect();
    let first = disks
        .first()
        .map(|d| d.name.clone())
        .ok_or_else(|| DriveError::NoDisk {
            path: path.to_path_buf(),
            block_device: ctrl.clone(),
        })?;
    Ok(DriveInfo {
        target: path.to_path_buf(),
        stat_name: first.clone(),
        block_device: first,
        disks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_devices_name_their_namespace() {
        assert_eq!(
            block_namespace(Path::new("/dev/ng0n1")),
            Some(PathBuf::from("/dev/nvme0n1"))
        );
        assert_eq!(
            block_namespace(Path::new("/dev/ng12n3")),
            Some(PathBuf::from("/dev/nvme12n3"))
        );
        assert_eq!(block_namespace(Path::new("/dev/nvme0n1")), None);
        assert_eq!(block_namespace(Path::new("/dev/ng0")), None);
        assert_eq!(block_namespace(Path::new("/dev/ngxn1")), None);
    }
}
