//! One answer to "is this device in use?", read through a [`SysRoot`] (the running system,
//! or a fake tree in tests): mounted (in any mount namespace this process can see), active
//! swap (devices and swap files), held by device-mapper, md or LVM, the backing device or
//! file of a loop device (at any offset), open by another process, and, for a write, a
//! read-only device or a zoned one written at random. Each answer is an [`InUse`] with the
//! data it names; its text is made only by `Display`.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::mounts::{parse_mountinfo, unescape, Mount};
use super::SysRoot;

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

#[derive(Debug, Clone)]
struct SeenMount {
    mount: Mount,
    namespace: Option<u32>,
}

#[derive(Debug, Clone)]
struct SwapArea {
    path: PathBuf,
    stat: Option<Stat>,
}

#[derive(Debug, Clone)]
struct LoopDevice {
    name: String,
    backing: PathBuf,
    offset: u64,
    stat: Option<Stat>,
}

#[derive(Debug, Clone)]
struct OpenFd {
    pid: u32,
    link: PathBuf,
    stat: Option<Stat>,
}

/// What the system uses, read once: every mount this process can see, the active swap
/// areas, the loop devices' backing files and the files other processes have open.
#[derive(Debug, Clone)]
pub struct Scene {
    proc: PathBuf,
    mounts: Vec<SeenMount>,
    swaps: Vec<SwapArea>,
    loops: Vec<LoopDevice>,
    opens: Vec<OpenFd>,
}

/// The processes in `/proc` but this one.
fn other_pids(proc: &Path) -> Vec<u32> {
    let me = std::process::id();
    let mut pids: Vec<u32> = fs::read_dir(proc)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .filter(|p| *p != me)
        .collect();
    pids.sort_unstable();
    pids
}

/// A process's command line (arguments joined by spaces), else its `comm`.
fn command_of(proc: &Path, pid: u32) -> String {
    let dir = proc.join(pid.to_string());
    let args = fs::read(dir.join("cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .split('\0')
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    if args.is_empty() {
        SysRoot::attr(&dir.join("comm")).unwrap_or_default()
    } else {
        args
    }
}

/// Strips the ` (deleted)` the kernel adds to the path of a file that was unlinked.
fn undeleted(p: &str) -> PathBuf {
    PathBuf::from(p.strip_suffix(" (deleted)").unwrap_or(p))
}

fn read_mounts(proc: &Path, pids: &[u32]) -> Vec<SeenMount> {
    let mut out: Vec<SeenMount> = Vec::new();
    let mut namespaces = BTreeSet::new();
    let add = |text: &str, namespace: Option<u32>, out: &mut Vec<SeenMount>| {
        for m in parse_mountinfo(text) {
            let dup = out.iter().any(|s| {
                (s.mount.major, s.mount.minor) == (m.major, m.minor)
                    && s.mount.mount_point == m.mount_point
            });
            if !dup {
                out.push(SeenMount {
                    mount: m,
                    namespace,
                });
            }
        }
    };
    if let Ok(t) = fs::read_to_string(proc.join("self/mountinfo")) {
        add(&t, None, &mut out);
    }
    if let Ok(ns) = fs::read_link(proc.join("self/ns/mnt")) {
        namespaces.insert(ns);
    }
    for pid in pids {
        let dir = proc.join(pid.to_string());
        if let Ok(ns) = fs::read_link(dir.join("ns/mnt")) {
            if !namespaces.insert(ns) {
                continue;
            }
        }
        if let Ok(t) = fs::read_to_string(dir.join("mountinfo")) {
            add(&t, Some(*pid), &mut out);
        }
    }
    out
}

/// Paths in `/proc/swaps`.
fn swap_paths(root: &SysRoot) -> Vec<PathBuf> {
    fs::read_to_string(root.proc.join("swaps"))
        .map(|t| {
            t.lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next())
                .map(|p| undeleted(&unescape(p)))
                .collect()
        })
        .unwrap_or_default()
}

fn read_loops(root: &SysRoot) -> Vec<LoopDevice> {
    let mut out = Vec::new();
    for e in fs::read_dir(root.sys.join("block"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let dir = e.path().join("loop");
        let Some(backing) = SysRoot::attr(&dir.join("backing_file")) else {
            continue;
        };
        let backing = undeleted(&backing);
        // The kernel's own word on which file backs it, where the node answers: the path
        // in sysfs is the one its creator saw, perhaps in another mount namespace or on a
        // filesystem since detached.
        let status = loop_status(&root.dev.join(&name));
        out.push(LoopDevice {
            offset: status
                .map(|(_, offset)| offset)
                .or_else(|| SysRoot::attr_u64(&dir.join("offset")))
                .unwrap_or(0),
            stat: status.map(|(st, _)| st).or_else(|| Stat::of(&backing)),
            backing,
            name,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `struct loop_info64` (linux/loop.h), as `LOOP_GET_STATUS64` fills it.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `LOOP_GET_STATUS64`.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The backing file's identity (its `st_dev`, `st_ino` and, for a device, `st_rdev`) and
/// the offset of loop device node `node`, by `LOOP_GET_STATUS64`; None when the node does
/// not open or is not an attached loop device.
fn loop_status(node: &Path) -> Option<(Stat, u64)> {
    let f = fs::File::open(node).ok()?;
    if !f.metadata().ok()?.file_type().is_block_device() {
        return None;
    }
    // SAFETY: LoopInfo64 is plain integers and byte arrays, for which all zeroes is a value.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64` through the pointer, which
    // points at `info`, laid out as that struct and alive for the call; the fd is `f`'s.
    let rc = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            LOOP_GET_STATUS64,
            &mut info as *mut LoopInfo64,
        )
    };
    if rc != 0 {
        return None;
    }
    let stat = Stat {
        dev: DevNum::of(info.lo_device),
        ino: info.lo_inode,
        // A regular file's st_rdev is 0; a device's never is.
        rdev: (info.lo_rdevice != 0).then(|| DevNum::of(info.lo_rdevice)),
    };
    Some((stat, info.lo_offset))
}

fn read_opens(proc: &Path, pids: &[u32]) -> Vec<OpenFd> {
    let mut out = Vec::new();
    for pid in pids {
        let fds = proc.join(pid.to_string()).join("fd");
        for e in fs::read_dir(&fds).into_iter().flatten().flatten() {
            let Ok(link) = fs::read_link(e.path()) else {
                continue;
            };
            // Sockets, pipes and anonymous inodes are not files.
            if !link.is_absolute() {
                continue;
            }
            let stat = fs::metadata(e.path()).ok().map(|m| Stat::from_meta(&m));
            out.push(OpenFd {
                pid: *pid,
                link,
                stat,
            });
        }
    }
    out
}

impl Scene {
    /// Reads what `root` shows now.
    pub fn read(root: &SysRoot) -> Scene {
        let pids = other_pids(&root.proc);
        Scene {
            proc: root.proc.clone(),
            mounts: read_mounts(&root.proc, &pids),
            swaps: swap_paths(root)
                .into_iter()
                .map(|path| SwapArea {
                    stat: Stat::of(&path),
                    path,
                })
                .collect(),
            loops: read_loops(root),
            opens: read_opens(&root.proc, &pids),
        }
    }

    /// What uses `dev` or one of its partitions (not the exclusive-open probe: see
    /// [`block_device_in_use`]).
    pub fn block_device(&self, root: &SysRoot, dev: &BlockDevice) -> Vec<InUse> {
        let mut out = Vec::new();
        for n in dev.checked() {
            for m in self
                .mounts
                .iter()
                .filter(|m| (m.mount.major, m.mount.minor) == (n.num.major, n.num.minor))
            {
                out.push(InUse::Mounted {
                    device: n.dev_path(),
                    mount_point: m.mount.mount_point.clone(),
                    namespace: m.namespace,
                });
            }
        }
        for s in &self.swaps {
            if dev.node_named(&s.path, s.stat.as_ref()).is_some() {
                out.push(InUse::Swap {
                    device: s.path.clone(),
                });
            } else if let Some(n) = s.stat.and_then(|st| dev.node_of(st.dev)) {
                out.push(InUse::SwapFileOn {
                    device: n.dev_path(),
                    swap_file: s.path.clone(),
                });
            }
        }
        for n in dev.checked() {
            let mut holders: Vec<String> = fs::read_dir(n.dir.join("holders"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            holders.sort();
            for h in holders {
                out.push(InUse::Held {
                    device: n.dev_path(),
                    holder: Holder::read(root, &h),
                });
            }
        }
        for l in &self.loops {
            let loop_device = Path::new("/dev").join(&l.name);
            if let Some(n) = dev.node_named(&l.backing, l.stat.as_ref()) {
                out.push(InUse::BacksLoop {
                    device: n.dev_path(),
                    loop_device,
                    offset: l.offset,
                });
            } else if let Some(n) = l.stat.and_then(|st| dev.node_of(st.dev)) {
                out.push(InUse::LoopFileOn {
                    device: n.dev_path(),
                    loop_device,
                    backing_file: l.backing.clone(),
                });
            }
        }
        let mut seen = BTreeSet::new();
        for o in &self.opens {
            if let Some(n) = dev.node_named(&o.link, o.stat.as_ref()) {
                if seen.insert((o.pid, n.name.clone())) {
                    out.push(InUse::OpenBy {
                        device: n.dev_path(),
                        pid: o.pid,
                        command: command_of(&self.proc, o.pid),
                    });
                }
            }
        }
        out
    }

    /// What uses the regular file `path`: an active swap file, a loop device's backing file.
    pub fn file(&self, path: &Path) -> Vec<InUse> {
        let Some(me) = Stat::of(path) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for s in &self.swaps {
            if s.stat.is_some_and(|st| st.same_file(&me)) {
                out.push(InUse::SwapFile {
                    swap_file: path.to_path_buf(),
                });
            }
        }
        for l in &self.loops {
            if l.stat.is_some_and(|st| st.same_file(&me)) {
                out.push(InUse::LoopFile {
                    file: path.to_path_buf(),
                    loop_device: Path::new("/dev").join(&l.name),
                    offset: l.offset,
                });
            }
        }
        out
    }

    /// The processes but this one that have open the file `path` (the same inode) or, for
    /// a device node, the same device, as (pid, command).
    pub fn openers(&self, path: &Path) -> Vec<(u32, String)> {
        let Some(me) = Stat::of(path) else {
            return Vec::new();
        };
        let mut pids: Vec<u32> = self
            .opens
            .iter()
            .filter(|o| {
                o.stat.is_some_and(|st| match me.rdev {
                    Some(r) => st.rdev == Some(r),
                    None => st.same_file(&me),
                })
            })
            .map(|o| o.pid)
            .collect();
        pids.dedup();
        pids.into_iter()
            .map(|p| (p, command_of(&self.proc, p)))
            .collect()
    }
}

/// Whether the kernel refuses `path` (a block device) an exclusive open: someone has it
/// claimed (mounted, swap, a holder, another O_EXCL opener).
pub fn exclusive_busy(path: &Path) -> bool {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
}

/// Everything that uses block device `dev` (named `path` in /dev): [`Scene::block_device`],
/// and when that finds nothing, the kernel's own word through an exclusive open.
pub fn block_device_in_use(
    root: &SysRoot,
    scene: &Scene,
    dev: &BlockDevice,
    path: &Path,
) -> Vec<InUse> {
    let mut found = scene.block_device(root, dev);
    if found.is_empty() && exclusive_busy(path) {
        found.push(InUse::Exclusive {
            device: dev.node().dev_path(),
        });
    }
    found
}

/// `BLKROGET`: `_IO(0x12, 94)`.
const BLKROGET: libc::c_ulong = 0x125e;

/// Whether the open device `path` is read-only by `BLKROGET`; None when it cannot be asked.
fn ioctl_read_only(path: &Path) -> Option<bool> {
    let f = fs::File::open(path).ok()?;
    let mut ro: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int through the pointer, which points at `ro`, alive for
    // the call; the fd is `f`'s, open for the call.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKROGET, &mut ro as *mut libc::c_int) };
    (rc == 0).then_some(ro != 0)
}

/// What makes a write to `dev` (its node at `path`) impossible: read-only (`BLKROGET`, or
/// sysfs `ro` where the ioctl cannot be asked), or zoned when `random_writes`.
pub fn write_blockers(dev: &BlockDevice, path: &Path, random_writes: bool) -> Vec<InUse> {
    let n = dev.node();
    let mut out = Vec::new();
    let read_only = match ioctl_read_only(path) {
        Some(ro) => ro.then_some(ReadOnlyBy::Ioctl),
        None => {
            (SysRoot::attr(&n.dir.join("ro")).as_deref() == Some("1")).then_some(ReadOnlyBy::Sysfs)
        }
    };
    if let Some(by) = read_only {
        out.push(InUse::ReadOnly {
            device: n.dev_path(),
            by,
        });
    }
    if random_writes {
        if let Some(model) = SysRoot::attr(&dev.disk_dir.join("queue/zoned")) {
            if model != "none" {
                out.push(InUse::Zoned {
                    device: n.dev_path(),
                    model,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
