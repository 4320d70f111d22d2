//! One answer to "is this device in use?", read through a [`SysRoot`] (the running system,
//! or a fake tree in tests): mounted (in any mount namespace this process can see), active
//! swap (devices and swap files), held by device-mapper, md or LVM, the backing device or
//! file of a loop device (at any offset), open by another process, and, for a write, a
//! read-only device or a zoned one written at random. Each answer is an [`InUse`] with the
//! data it names; its text is made only by `Display`.

use std::fmt;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::SysRoot;

mod locks;
mod probe;
mod scene;

pub use locks::{flock_holders, LockHolder};
pub use probe::{block_device_in_use, exclusive_busy, write_blockers};
pub use scene::Scene;

/// A device number, as sysfs writes it (`major:minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DevNum {
    pub major: u32,
    pub minor: u32,
}

impl DevNum {
    /// Of a `dev_t` (`st_rdev`, `st_dev`).
    pub fn of(dev: u64) -> Self {
        DevNum {
            major: libc::major(dev),
            minor: libc::minor(dev),
        }
    }

    fn parse(s: &str) -> Option<Self> {
        let (a, b) = s.trim().split_once(':')?;
        Some(DevNum {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

impl fmt::Display for DevNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// One block device node in sysfs: the device asked about or one of its partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Kernel name (`sda`, `loop0p1`).
    pub name: String,
    pub num: DevNum,
    dir: PathBuf,
}

impl Node {
    /// `/dev/NAME`, as the user knows it.
    pub fn dev_path(&self) -> PathBuf {
        Path::new("/dev").join(&self.name)
    }
}

/// A block device and its partitions, from sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// The device itself first, then its partitions in name order.
    pub nodes: Vec<Node>,
    /// For a partition, the whole disk it is on: what uses the disk uses the partition too
    /// (a loop device over the disk, a holder of it, a filesystem or swap on all of it).
    pub whole: Option<Node>,
    /// The whole disk's sysfs directory (the parent's for a partition): where `queue/` is.
    disk_dir: PathBuf,
}

impl BlockDevice {
    /// The device numbered `num` (`/sys/dev/block/MAJ:MIN`); None when sysfs has no such
    /// device.
    pub fn by_num(root: &SysRoot, num: DevNum) -> Option<Self> {
        Self::at(&root.sys.join("dev/block").join(num.to_string()))
    }

    /// The device called `name` (`/sys/block/NAME`, or a partition's `/sys/class/block/NAME`).
    pub fn by_name(root: &SysRoot, name: &str) -> Option<Self> {
        let b = root.block(name);
        if b.exists() {
            return Self::at(&b);
        }
        Self::at(&root.sys.join("class/block").join(name))
    }

    fn at(link: &Path) -> Option<Self> {
        let dir = fs::canonicalize(link).ok()?;
        let name = dir.file_name()?.to_string_lossy().into_owned();
        let num = DevNum::parse(&SysRoot::attr(&dir.join("dev"))?)?;
        let is_partition = dir.join("partition").exists();
        let disk_dir = match dir.parent() {
            Some(p) if is_partition => p.to_path_buf(),
            _ => dir.clone(),
        };
        let mut parts = Vec::new();
        if !is_partition {
            for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
                let p = e.path();
                if !p.join("partition").exists() {
                    continue;
                }
                if let Some(num) = SysRoot::attr(&p.join("dev")).and_then(|d| DevNum::parse(&d)) {
                    parts.push(Node {
                        name: e.file_name().to_string_lossy().into_owned(),
                        num,
                        dir: p,
                    });
                }
            }
        }
        parts.sort_by(|a, b| a.name.cmp(&b.name));
        let whole = match is_partition {
            true => SysRoot::attr(&disk_dir.join("dev"))
                .and_then(|d| DevNum::parse(&d))
                .zip(disk_dir.file_name())
                .map(|(num, name)| Node {
                    name: name.to_string_lossy().into_owned(),
                    num,
                    dir: disk_dir.clone(),
                }),
            false => None,
        };
        let mut nodes = vec![Node { name, num, dir }];
        nodes.extend(parts);
        Some(BlockDevice {
            nodes,
            whole,
            disk_dir,
        })
    }

    /// The device itself.
    pub fn node(&self) -> &Node {
        &self.nodes[0]
    }

    /// Its partitions.
    pub fn partitions(&self) -> &[Node] {
        &self.nodes[1..]
    }

    /// Every node whose use is this device's: itself, its partitions, the disk it is on.
    fn checked(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().chain(self.whole.iter())
    }

    fn node_of(&self, num: DevNum) -> Option<&Node> {
        self.checked().find(|n| n.num == num)
    }

    /// The node a path in /proc or sysfs names: by its device number where it can be
    /// stat'ed, else by its text (`/dev/NAME`, as in a fake tree).
    fn node_named(&self, path: &Path, stat: Option<&Stat>) -> Option<&Node> {
        if let Some(rdev) = stat.and_then(|s| s.rdev) {
            return self.node_of(rdev);
        }
        if stat.is_some() || path.parent() != Some(Path::new("/dev")) {
            return None;
        }
        let name = path.file_name()?.to_str()?;
        self.checked().find(|n| n.name == name)
    }
}

/// What an md array, LVM logical volume or other device-mapper device holding a device is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HolderKind {
    /// An md RAID array, with its level (`raid1`).
    Md { level: String },
    /// An LVM logical volume (a device-mapper device whose uuid starts `LVM-`).
    Lvm { volume: String },
    /// Another device-mapper device, by its name.
    Dm { name: String },
    /// sysfs says neither.
    Unknown,
}

/// A device in `holders/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its kernel name (`dm-0`, `md127`).
    pub name: String,
    pub kind: HolderKind,
}

impl Holder {
    /// What `/sys/block/NAME` says holder `name` is.
    pub fn read(root: &SysRoot, name: &str) -> Holder {
        let dir = root.block(name);
        let kind = match (
            SysRoot::attr(&dir.join("md/level")),
            SysRoot::attr(&dir.join("dm/name")),
            SysRoot::attr(&dir.join("dm/uuid")),
        ) {
            (Some(level), _, _) => HolderKind::Md { level },
            (None, Some(volume), Some(uuid)) if uuid.starts_with("LVM-") => {
                HolderKind::Lvm { volume }
            }
            (None, Some(name), _) => HolderKind::Dm { name },
            (None, None, _) => HolderKind::Unknown,
        };
        Holder {
            name: name.to_string(),
            kind,
        }
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.name;
        match &self.kind {
            HolderKind::Md { level } => write!(f, "md RAID array /dev/{h} ({level})"),
            HolderKind::Lvm { volume } => {
                write!(f, "LVM logical volume {volume} (device-mapper /dev/{h})")
            }
            HolderKind::Dm { name } => write!(f, "device-mapper device {name} (/dev/{h})"),
            HolderKind::Unknown => write!(f, "/dev/{h} (device-mapper, md or LVM)"),
        }
    }
}

/// How a device was found read-only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadOnlyBy {
    /// The `BLKROGET` ioctl on the device.
    Ioctl,
    /// Its sysfs `ro` attribute.
    Sysfs,
}

/// Why a device or file is in use, or cannot be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InUse {
    /// `device` (the target or a partition) is mounted; `namespace` names a process whose
    /// mount namespace (not this one) has the mount.
    Mounted {
        device: PathBuf,
        mount_point: PathBuf,
        namespace: Option<u32>,
    },
    /// An active swap device (its path as /proc/swaps shows it).
    Swap { device: PathBuf },
    /// An active swap file on a filesystem of `device`.
    SwapFileOn { device: PathBuf, swap_file: PathBuf },
    /// The target is itself an active swap file.
    SwapFile { swap_file: PathBuf },
    /// Held by device-mapper, md or LVM.
    Held { device: PathBuf, holder: Holder },
    /// `device` is the backing device of loop device `loop_device`, from `offset` bytes.
    BacksLoop {
        device: PathBuf,
        loop_device: PathBuf,
        offset: u64,
    },
    /// The backing file of loop device `loop_device` is on a filesystem of `device`.
    LoopFileOn {
        device: PathBuf,
        loop_device: PathBuf,
        backing_file: PathBuf,
    },
    /// The target file is the backing file of loop device `loop_device`.
    LoopFile {
        file: PathBuf,
        loop_device: PathBuf,
        offset: u64,
    },
    /// Process `pid` has `device` open.
    OpenBy {
        device: PathBuf,
        pid: u32,
        command: String,
    },
    /// The kernel refuses an exclusive open (EBUSY) with no other reason seen here.
    Exclusive { device: PathBuf },
    /// The device is read-only.
    ReadOnly { device: PathBuf, by: ReadOnlyBy },
    /// A zoned device (`model` as sysfs says: `host-managed`, `host-aware`) and a workload
    /// that writes at random.
    Zoned { device: PathBuf, model: String },
}

impl InUse {
    /// A property of the device that no unmounting or clearing changes (read-only, zoned),
    /// rather than data in use.
    pub fn is_property(&self) -> bool {
        matches!(self, InUse::ReadOnly { .. } | InUse::Zoned { .. })
    }
}

impl fmt::Display for InUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InUse::Mounted {
                device,
                mount_point,
                namespace,
            } => {
                write!(
                    f,
                    "{} is mounted on {}",
                    device.display(),
                    mount_point.display()
                )?;
                match namespace {
                    Some(pid) => write!(f, " (in the mount namespace of PID {pid})"),
                    None => Ok(()),
                }
            }
            InUse::Swap { device } => write!(f, "{} is in use as swap", device.display()),
            InUse::SwapFileOn { device, swap_file } => write!(
                f,
                "{} holds {}, a swap file in use",
                device.display(),
                swap_file.display()
            ),
            InUse::SwapFile { swap_file } => {
                write!(f, "{} is a swap file in use", swap_file.display())
            }
            InUse::Held { device, holder } => {
                write!(f, "{} is held by {holder}", device.display())
            }
            InUse::BacksLoop {
                device,
                loop_device,
                offset,
            } => write!(
                f,
                "{} is the backing device of {} (from offset {offset})",
                device.display(),
                loop_device.display()
            ),
            InUse::LoopFileOn {
                device,
                loop_device,
                backing_file,
            } => write!(
                f,
                "{} holds {}, the backing file of {}",
                device.display(),
                backing_file.display(),
                loop_device.display()
            ),
            InUse::LoopFile {
                file,
                loop_device,
                offset,
            } => write!(
                f,
                "{} is the backing file of {} (from offset {offset})",
                file.display(),
                loop_device.display()
            ),
            InUse::OpenBy {
                device,
                pid,
                command,
            } => write!(f, "{} is open in PID {pid} ({command})", device.display()),
            InUse::Exclusive { device } => write!(
                f,
                "{} is claimed by another user (the kernel refuses an exclusive open: busy)",
                device.display()
            ),
            InUse::ReadOnly { device, by } => write!(
                f,
                "{} is read-only ({})",
                device.display(),
                match by {
                    ReadOnlyBy::Ioctl => "BLKROGET",
                    ReadOnlyBy::Sysfs => "sysfs ro",
                }
            ),
            InUse::Zoned { device, model } => write!(
                f,
                "{} is a zoned device ({model}), written only sequentially, and this \
                 workload writes at random",
                device.display()
            ),
        }
    }
}

impl serde::Serialize for InUse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A file's identity and, for a device node, the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    dev: DevNum,
    ino: u64,
    rdev: Option<DevNum>,
}

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        let m = fs::metadata(path).ok()?;
        Some(Stat::from_meta(&m))
    }

    fn from_meta(m: &fs::Metadata) -> Stat {
        Stat {
            dev: DevNum::of(m.dev()),
            ino: m.ino(),
            rdev: m
                .file_type()
                .is_block_device()
                .then(|| DevNum::of(m.rdev())),
        }
    }

    fn same_file(&self, other: &Stat) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

#[cfg(test)]
mod tests {
    use super::scene::undeleted;
    use super::*;

    #[test]
    fn holders_are_named_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let put = |rel: &str, text: &str| {
            let p = dir.path().join("sys/block").join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        put("md127/md/level", "raid1\n");
        put("dm-0/dm/name", "vg0-lv0\n");
        put("dm-0/dm/uuid", "LVM-abc\n");
        put("dm-1/dm/name", "dstest\n");
        put("dm-1/dm/uuid", "\n");
        let root = SysRoot::under(dir.path());
        let d = |h: &str| Holder::read(&root, h).to_string();
        assert_eq!(d("md127"), "md RAID array /dev/md127 (raid1)");
        assert_eq!(
            d("dm-0"),
            "LVM logical volume vg0-lv0 (device-mapper /dev/dm-0)"
        );
        assert_eq!(d("dm-1"), "device-mapper device dstest (/dev/dm-1)");
        assert_eq!(d("dm-9"), "/dev/dm-9 (device-mapper, md or LVM)");
    }

    #[test]
    fn deleted_paths_and_device_numbers_read_as_the_kernel_writes_them() {
        assert_eq!(undeleted("/x/swap (deleted)"), PathBuf::from("/x/swap"));
        assert_eq!(undeleted("/x/swap"), PathBuf::from("/x/swap"));
        assert_eq!(
            DevNum::parse("259:3\n"),
            Some(DevNum {
                major: 259,
                minor: 3
            })
        );
        assert_eq!(DevNum::parse("x"), None);
    }
}
