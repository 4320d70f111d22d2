//! What the system uses, read once ([`Scene`]): the mounts of every namespace this process
//! can see, active swap, loop devices' backing files and other processes' open files, and
//! which of them touch a device.

use std::collections::BTreeSet;
use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::super::mounts::{parse_mountinfo, unescape, Mount};
use super::super::SysRoot;
use super::*;

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
pub(super) fn command_of(proc: &Path, pid: u32) -> String {
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
pub(super) fn undeleted(p: &str) -> PathBuf {
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
            let mut holders = SysRoot::names_in(&n.dir.join("holders"));
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
