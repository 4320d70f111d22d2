//! fio's cage: every fio drivescope starts runs in a mount namespace of its own in which
//! the kernel, not drivescope's reading of the job, decides what fio can touch. The whole
//! file tree is read-only and without device nodes (`mount_setattr(2)`, recursively);
//! `/dev` is a private one holding only `null`, `zero`, `full`, `random`, `urandom` and the
//! run's device targets (read-only nodes for the targets that are only read); the targets
//! that may be written, a private scratch folder (fio's `TMPDIR`) and the folder
//! drivescope made for the run's fio logs (at [`LOGS_IN_CAGE`], where the job text's log
//! options are made to point) are bound back read-write one by one. fio then runs without the capabilities that would let it undo
//! that (`CAP_DAC_OVERRIDE`, `CAP_SYS_PTRACE`, `CAP_MKNOD`, `CAP_SYS_RAWIO`, …; it keeps
//! `CAP_SYS_ADMIN` only when a target is a block device, for the cache flush it does on
//! one) and under a seccomp filter that refuses every call that changes mounts or
//! namespaces, makes device nodes, reaches into another process or leaves fio's process
//! group (its job processes' `setsid(2)`: signals to the group reach them all). A job option that
//! names any other file or device then fails inside fio with `EROFS`, `EACCES` or
//! `ENOENT`, and fio says which file.
//!
//! fio runs as the first process of a PID namespace of its own ([`super::pidns`]): the
//! job processes it forks end with it, and it ends with drivescope.
//!
//! Run as root, the namespace is a plain mount namespace. Run as another user, it is a
//! user namespace mapping only that user, with a mount namespace inside it; fio then has
//! no capability at all outside it, and device targets are refused (a user namespace
//! cannot make a read-only device node).

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::workload::FioTarget;

mod seccomp;

use seccomp::seccomp_filter;

/// Why fio's cage could not be built; fio is never started without it.
#[derive(Debug, thiserror::Error)]
pub enum CageError {
    #[error("{}: a device target outside /dev cannot be put in fio's private /dev", .0.display())]
    DeviceOutsideDev(PathBuf),
    #[error("{}: fio runs on a device only as root (its cage makes a read-only node of each device a job only reads, which only root can)", .0.display())]
    DeviceNeedsRoot(PathBuf),
    #[error("{}: a target's name holds a NUL byte", .0.display())]
    Nul(PathBuf),
    #[error("fio's scratch folder {}: {err}", .path.display())]
    Scratch { path: PathBuf, err: io::Error },
    #[error("{}: fio's log folder cannot be read: {err}", .path.display())]
    LogDir { path: PathBuf, err: io::Error },
    #[error("{}: a device target where fio's cage puts its log folder", .0.display())]
    LogsOverTarget(PathBuf),
    /// A step whose jobs write logs, given no folder for them (a step run outside a run).
    #[error("the job file's logs have no folder: run it with `drivescope run --fio-job`")]
    NoLogDir,
    /// The log folder is not the one drivescope made (`ESTALE` from the cage's child).
    #[error("fio's log folder was replaced after drivescope made it; fio was not started")]
    LogDirReplaced,
}

/// Where the folder of the run's fio logs is in fio's cage (in its private `/dev`): a
/// job's log options are rewritten to name files there (`super::logs`), whatever folder
/// the job named, so fio writes its logs only in the folder drivescope made for them.
pub const LOGS_IN_CAGE: &str = "/dev/fio-logs";

/// The standard character devices of fio's private `/dev`.
const STANDARD_NODES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

/// The capabilities fio keeps, run as root: reading any file (`DAC_READ_SEARCH`, never
/// writing one: no `DAC_OVERRIDE`), its own priorities, memory locks and limits
/// (`SYS_NICE`, `IPC_LOCK`, `SYS_RESOURCE`), `uid=`/`gid=` (`SETUID`, `SETGID`), and
/// `SYS_ADMIN` where a target is a block device (fio flushes its cache, `BLKFLSBUF`).
const KEPT_CAPS: [u32; 8] = [
    2,  // CAP_DAC_READ_SEARCH
    3,  // CAP_FOWNER
    6,  // CAP_SETGID
    7,  // CAP_SETUID
    14, // CAP_IPC_LOCK
    15, // CAP_IPC_OWNER
    23, // CAP_SYS_NICE
    24, // CAP_SYS_RESOURCE
];
const CAP_SYS_ADMIN: u32 = 21;

/// A node of the private `/dev`: where, its type and mode, and its device number.
struct Node {
    path: CString,
    mode: libc::mode_t,
    rdev: libc::dev_t,
}

/// A mount cloned from the host's tree before it turns read-only, and put back on top of
/// the read-only tree (or in the private `/dev`) once that is laid out: the writable
/// targets, the scratch folder, the log folder, and (as another user) the standard nodes.
struct Clone {
    path: CString,
    /// Where it is put back: its own path, or (the log folder) [`LOGS_IN_CAGE`].
    to: CString,
    /// The device and inode the clone must have (the log folder as drivescope made it):
    /// a folder put in its place since is refused, fio never started.
    expect: Option<(libc::dev_t, libc::ino_t)>,
    /// It lies in the private `/dev`: an empty file is made there to mount it on.
    in_dev: bool,
    /// Read-only again once in place (a file target under `/dev` that is only read).
    read_only: bool,
}

/// Everything the child does between fork and exec, worked out before the fork (the child
/// of a threaded process may only make system calls: no allocation, no locks).
struct Plan {
    /// As another user: its uid and gid maps, written from inside the new user namespace.
    userns: Option<(CString, CString)>,
    /// Directories to make in the private `/dev` (parents first).
    dirs: Vec<CString>,
    nodes: Vec<Node>,
    clones: Vec<Clone>,
    /// The clones' descriptors, one per clone (sized before the fork).
    fds: Vec<libc::c_int>,
    /// fio's working folder, entered again once the mounts are made: a relative name (a
    /// log's `write_lat_log=prefix`, a job's `filename=`) then resolves through them, where
    /// the folder entered before them is the read-only one beneath.
    cwd: Option<CString>,
    /// Capabilities dropped from the bounding set (root only).
    drop_caps: Vec<u32>,
    filter: Vec<libc::sock_filter>,
}

/// fio's private scratch folder, removed with what fio left in it when the run is over:
/// `tmp/` (fio's `TMPDIR`).
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn tmp(&self) -> PathBuf {
        self.path.join("tmp")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn cstr(p: &Path) -> Result<CString, CageError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| CageError::Nul(p.to_path_buf()))
}

fn is_root() -> bool {
    // SAFETY: geteuid takes nothing, touches no memory and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Makes a fresh, private scratch folder (mode 0700) in the first of the temporary
/// directory, /var/tmp and /tmp outside `/dev`.
fn make_scratch() -> Result<Scratch, CageError> {
    use std::os::unix::fs::DirBuilderExt;
    let canon = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    let bases = [
        canon(std::env::temp_dir()),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/tmp"),
    ];
    let base = bases
        .into_iter()
        .find(|b| !b.starts_with("/dev"))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    let pid = std::process::id();
    let mut n = 0u32;
    loop {
        let path = base.join(format!("drivescope-fio-{pid}-{n}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => break Ok(Scratch { path }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(err) => break Err(CageError::Scratch { path, err }),
        }
    }
}

/// The directories between `/dev` and `path` (exclusive), parents first.
fn dev_parents(rel: &Path, into: &mut Vec<PathBuf>) {
    let mut at = PathBuf::from("/dev");
    let comps: Vec<_> = rel.components().collect();
    for c in comps.iter().take(comps.len().saturating_sub(1)) {
        at.push(c);
        if !into.contains(&at) {
            into.push(at.clone());
        }
    }
}

/// What the cage puts in its private `/dev` and clones from the host: the directories to
/// make, the device nodes, the files bound in; whether a block device is among the nodes.
struct DevTree {
    root: bool,
    dirs: Vec<PathBuf>,
    nodes: Vec<Node>,
    clones: Vec<Clone>,
    block: bool,
}

impl DevTree {
    /// A clone of `path` (its parents in `/dev` made first, when it is there).
    fn clone_of(&mut self, path: &Path, read_only: bool) -> Result<(), CageError> {
        let in_dev = match path.strip_prefix("/dev") {
            Ok(rel) => {
                dev_parents(rel, &mut self.dirs);
                true
            }
            Err(_) => false,
        };
        let path = cstr(path)?;
        self.clones.push(Clone {
            to: path.clone(),
            path,
            expect: None,
            in_dev,
            read_only,
        });
        Ok(())
    }

    /// The log folder `dir`, as it is now (its device and inode): put back at
    /// [`LOGS_IN_CAGE`], writable.
    fn add_logs(&mut self, dir: &Path) -> Result<(), CageError> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(dir).map_err(|err| CageError::LogDir {
            path: dir.to_path_buf(),
            err,
        })?;
        if !m.is_dir() {
            return Err(CageError::LogDir {
                path: dir.to_path_buf(),
                err: io::Error::from_raw_os_error(libc::ENOTDIR),
            });
        }
        let at = PathBuf::from(LOGS_IN_CAGE);
        if self
            .nodes
            .iter()
            .any(|n| n.path.as_bytes().starts_with(LOGS_IN_CAGE.as_bytes()))
            || self.dirs.iter().any(|d| d.starts_with(&at))
        {
            return Err(CageError::LogsOverTarget(at));
        }
        self.dirs.push(at.clone());
        self.clones.push(Clone {
            path: cstr(dir)?,
            to: cstr(&at)?,
            expect: Some((m.dev() as libc::dev_t, m.ino() as libc::ino_t)),
            in_dev: false,
            read_only: false,
        });
        Ok(())
    }

    /// A target: a file cloned in (writable when it writes), a device a node of its own
    /// (read-only when it only reads) under each name the job may use.
    fn add_target(&mut self, t: &FioTarget) -> Result<(), CageError> {
        // A target that does not exist yet stays so: fio cannot make it (the tree is
        // read-only), and says so.
        let Ok(m) = std::fs::metadata(&t.path) else {
            return Ok(());
        };
        let ft = m.file_type();
        if !(ft.is_block_device() || ft.is_char_device()) {
            // The host's /dev is hidden: a file there is put back in the private one.
            if m.is_file() && (t.writes || t.path.starts_with("/dev")) {
                self.clone_of(&t.path, !t.writes)?;
            }
            return Ok(());
        }
        if !self.root {
            return Err(CageError::DeviceNeedsRoot(t.path.clone()));
        }
        self.block |= ft.is_block_device();
        let kind = if ft.is_block_device() {
            libc::S_IFBLK
        } else {
            libc::S_IFCHR
        };
        let perm = if t.writes { 0o600 } else { 0o400 };
        // The name the job uses and the node it leads to (a /dev/disk/by-id link), both.
        let mut names = vec![t.path.clone()];
        if let Ok(real) = std::fs::canonicalize(&t.path) {
            if real != t.path {
                names.push(real);
            }
        }
        for name in names {
            let rel = name
                .strip_prefix("/dev")
                .map_err(|_| CageError::DeviceOutsideDev(name.clone()))?
                .to_path_buf();
            if rel.as_os_str().is_empty() {
                return Err(CageError::DeviceOutsideDev(name));
            }
            dev_parents(&rel, &mut self.dirs);
            // Two targets naming one node: the writable one wins.
            let path = cstr(&name)?;
            match self.nodes.iter_mut().find(|n: &&mut Node| n.path == path) {
                Some(n) => n.mode |= kind | perm,
                None => self.nodes.push(Node {
                    path,
                    mode: kind | perm,
                    rdev: m.rdev() as libc::dev_t,
                }),
            }
        }
        Ok(())
    }

    /// `/dev/null`, `/dev/zero` and the other standard nodes: made anew as root, else
    /// cloned from the host.
    fn add_standard_nodes(&mut self) -> Result<(), CageError> {
        for n in STANDARD_NODES {
            let host = Path::new("/dev").join(n);
            let Ok(m) = std::fs::metadata(&host) else {
                continue;
            };
            if self.root {
                self.nodes.push(Node {
                    path: cstr(&host)?,
                    mode: libc::S_IFCHR | 0o666,
                    rdev: m.rdev() as libc::dev_t,
                });
            } else {
                self.clone_of(&host, false)?;
            }
        }
        Ok(())
    }
}

/// Puts `cmd` (an fio command line) in a cage that lets it write `targets` that write and
/// read those that do not, and make its logs in `logs` (seen at [`LOGS_IN_CAGE`]), and
/// nothing else; the scratch folder must live until fio ends.
pub fn cage(
    cmd: &mut Command,
    targets: &[FioTarget],
    logs: Option<&Path>,
) -> Result<Scratch, CageError> {
    let root = is_root();
    let scratch = make_scratch()?;
    let tmp = scratch.tmp();
    std::fs::create_dir(&tmp).map_err(|err| CageError::Scratch { path: tmp, err })?;
    let scratch_path = cstr(scratch.path())?;
    let mut dev = DevTree {
        root,
        dirs: Vec::new(),
        nodes: Vec::new(),
        clones: vec![Clone {
            to: scratch_path.clone(),
            path: scratch_path,
            expect: None,
            in_dev: false,
            read_only: false,
        }],
        block: false,
    };
    for t in targets {
        dev.add_target(t)?;
    }
    dev.add_standard_nodes()?;
    if let Some(dir) = logs {
        dev.add_logs(dir)?;
    }
    let mut keep: Vec<u32> = KEPT_CAPS.to_vec();
    if dev.block {
        keep.push(CAP_SYS_ADMIN);
    }
    let mut plan = Plan {
        userns: (!root).then(|| {
            // SAFETY: getuid and getgid take nothing, touch no memory and cannot fail.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            (
                CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
                CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
            )
        }),
        dirs: dev.dirs.iter().map(|d| cstr(d)).collect::<Result<_, _>>()?,
        nodes: dev.nodes,
        fds: vec![-1; dev.clones.len()],
        clones: dev.clones,
        cwd: working_dir(cmd).map(|d| cstr(&d)).transpose()?,
        drop_caps: (0..64).filter(|c| !keep.contains(c)).collect(),
        filter: seccomp_filter(),
    };
    cmd.env("TMPDIR", scratch.tmp());
    // SAFETY: the closure runs in the child between fork and exec. It only makes system
    // calls on data prepared above (owned by the closure, so alive for its run, the
    // descriptors' slots sized already): no allocation, no lock, nothing shared with the
    // parent's other threads.
    unsafe {
        cmd.pre_exec(move || enter(&mut plan));
    }
    Ok(scratch)
}

/// The folder `cmd` runs in, absolute: its own (`current_dir`), else this process's.
fn working_dir(cmd: &Command) -> Option<PathBuf> {
    let here = std::env::current_dir().ok();
    match cmd.get_current_dir() {
        Some(d) => here
            .map(|h| h.join(d))
            .or_else(|| d.is_absolute().then(|| d.into())),
        None => here,
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn check_long(r: libc::c_long) -> io::Result<libc::c_long> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

const DEV: &CStr = c"/dev";
const DEV_SHM: &CStr = c"/dev/shm";
const ROOT: &CStr = c"/";
const TMPFS: &CStr = c"tmpfs";
const EMPTY: &CStr = c"";

// The system calls the child makes, each over NUL-terminated strings and plain values
// that the caller owns for the length of the call; none keeps a pointer past its return.

fn sys_unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare(2) takes flags only.
    check(unsafe { libc::unshare(flags) })
}

/// mount(2) of `source` (a file system type's name or a path) on `target`.
fn sys_mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let ptr = |c: Option<&CStr>| c.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: every pointer is null or a NUL-terminated string alive for the call.
    check(unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    })
}

/// Sets (and clears) mount attributes of the mount at `path`, and of those below it
/// when `recursive`.
fn set_attr(path: &CStr, recursive: bool, set: u64, clear: u64) -> io::Result<()> {
    let attr = libc::mount_attr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr(2) reads the NUL-terminated path and `attr` (its size given)
    // for the length of the call only.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    })
    .map(drop)
}

/// A detached clone of the mount at `path` (`open_tree(2)`), as a descriptor closed by
/// exec.
fn sys_open_tree(path: &CStr) -> io::Result<libc::c_int> {
    // SAFETY: open_tree(2) reads the NUL-terminated path for the call only.
    let r = check_long(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC,
        )
    })?;
    libc::c_int::try_from(r).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

/// Mounts the detached tree `fd` on `path` (`move_mount(2)`).
fn sys_move_mount(fd: libc::c_int, path: &CStr) -> io::Result<()> {
    // SAFETY: move_mount(2) reads the two NUL-terminated paths for the call only; `fd` is
    // a descriptor open_tree gave (a bad one is EBADF, not undefined behaviour).
    check_long(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            EMPTY.as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    })
    .map(drop)
}

/// chdir(2).
fn sys_chdir(path: &CStr) -> io::Result<()> {
    // SAFETY: chdir(2) reads the NUL-terminated path for the call only.
    check(unsafe { libc::chdir(path.as_ptr()) })
}

/// The mount `fd` (a clone of a folder) is the folder of device and inode `id`; else
/// `ESTALE`: the folder drivescope made was replaced since.
fn same_folder(fd: libc::c_int, id: (libc::dev_t, libc::ino_t)) -> io::Result<()> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat(2) writes a whole `struct stat` to the pointer, which points to one
    // on this stack frame; `fd` is a descriptor open_tree gave (a bad one is EBADF).
    check(unsafe { libc::fstat(fd, st.as_mut_ptr()) })?;
    // SAFETY: fstat returned 0, so it filled the struct.
    let st = unsafe { st.assume_init() };
    if (st.st_dev, st.st_ino) != id {
        return Err(io::Error::from_raw_os_error(libc::ESTALE));
    }
    Ok(())
}

/// mkdir(2); an existing directory is fine when `exists_ok`.
fn sys_mkdir(path: &CStr, mode: libc::mode_t, exists_ok: bool) -> io::Result<()> {
    // SAFETY: mkdir(2) reads the NUL-terminated path for the call only.
    let r = check(unsafe { libc::mkdir(path.as_ptr(), mode) });
    match r {
        Err(e) if exists_ok && e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        r => r,
    }
}

/// A device node of exactly `mode` (the umask undone).
fn sys_mknod(path: &CStr, mode: libc::mode_t, rdev: libc::dev_t) -> io::Result<()> {
    // SAFETY: mknod(2) and chmod(2) read the NUL-terminated path for the call only.
    check(unsafe { libc::mknod(path.as_ptr(), mode, rdev) })?;
    // SAFETY: as above.
    check(unsafe { libc::chmod(path.as_ptr(), mode & 0o7777) })
}

fn sys_symlink(to: &CStr, name: &CStr) -> io::Result<()> {
    // SAFETY: symlink(2) reads the two NUL-terminated paths for the call only.
    check(unsafe { libc::symlink(to.as_ptr(), name.as_ptr()) })
}

/// An empty file, new (a place to mount a file on).
fn sys_create(path: &CStr) -> io::Result<()> {
    // SAFETY: open(2) reads the NUL-terminated path for the call only; the descriptor it
    // gives is closed here, once.
    unsafe {
        let f = libc::open(
            path.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o600,
        );
        check(f)?;
        libc::close(f);
    }
    Ok(())
}

/// Writes `text` to the file at `path` (a /proc/self map).
fn write_file(path: &CStr, text: &[u8]) -> io::Result<()> {
    // SAFETY: open(2) reads the NUL-terminated path; write(2) reads `text` within its
    // length; the descriptor is closed here, once.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let n = libc::write(fd, text.as_ptr().cast(), text.len());
        libc::close(fd);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// prctl(2) with one argument.
fn sys_prctl(option: libc::c_int, arg: libc::c_ulong) -> io::Result<()> {
    // SAFETY: the options used here take plain values.
    check(unsafe { libc::prctl(option, arg, 0, 0, 0) })
}

/// Installs the seccomp program `filter` (no new privileges first, as seccomp asks).
fn sys_seccomp(filter: &[libc::sock_filter]) -> io::Result<()> {
    sys_prctl(libc::PR_SET_NO_NEW_PRIVS, 1)?;
    let prog = libc::sock_fprog {
        len: libc::c_ushort::try_from(filter.len())
            .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: the kernel copies the program (`prog` and the filter it points to, both
    // alive for the call) and keeps no pointer into it.
    check(unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog,
            0,
            0,
        )
    })
}

/// The child's side: the namespaces, the read-only tree, the private `/dev`, the
/// mounts put back, the capabilities and the seccomp filter, in that order.
fn enter(plan: &mut Plan) -> io::Result<()> {
    match &plan.userns {
        None => sys_unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID)?,
        Some((uid_map, gid_map)) => {
            sys_unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID)?;
            write_file(c"/proc/self/setgroups", b"deny")?;
            write_file(c"/proc/self/uid_map", uid_map.as_bytes())?;
            write_file(c"/proc/self/gid_map", gid_map.as_bytes())?;
        }
    }
    // fio, the first process of its PID namespace, with a keeper between it and
    // drivescope: nothing fio starts outlives it, and fio does not outlive drivescope.
    super::pidns::fork_into()?;
    // Nothing done here reaches the host's namespace.
    sys_mount(None, ROOT, None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    // The mounts put back later, cloned while they are still writable and allow device
    // nodes (their descriptors are closed by exec).
    for (fd, c) in plan.fds.iter_mut().zip(&plan.clones) {
        *fd = sys_open_tree(&c.path)?;
        if let Some(id) = c.expect {
            same_folder(*fd, id)?;
        }
    }
    // The whole tree: read-only, no device nodes.
    set_attr(
        ROOT,
        true,
        libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NODEV,
        0,
    )?;
    // The private /dev.
    sys_mount(
        Some(TMPFS),
        DEV,
        Some(TMPFS),
        libc::MS_NOSUID | libc::MS_NOEXEC,
        Some(c"mode=0755,size=64k"),
    )?;
    for d in &plan.dirs {
        sys_mkdir(d, 0o755, false)?;
    }
    for n in &plan.nodes {
        sys_mknod(&n.path, n.mode, n.rdev)?;
    }
    for c in plan.clones.iter().filter(|c| c.in_dev) {
        sys_create(&c.to)?;
    }
    for (name, to) in [
        (c"/dev/fd", c"/proc/self/fd"),
        (c"/dev/stdin", c"/proc/self/fd/0"),
        (c"/dev/stdout", c"/proc/self/fd/1"),
        (c"/dev/stderr", c"/proc/self/fd/2"),
    ] {
        sys_symlink(to, name)?;
    }
    // An empty /dev/shm, as programs expect one (fio's shared memory is System V's).
    sys_mkdir(DEV_SHM, 0o755, true)?;
    // The private /dev itself, once laid out: read-only (its nodes cannot be changed).
    set_attr(DEV, false, libc::MOUNT_ATTR_RDONLY, 0)?;
    // What may be written (and what lay in the host's /dev), put back one by one: the
    // scratch folder, the targets, the log folder.
    for (fd, c) in plan.fds.iter().zip(&plan.clones) {
        sys_move_mount(*fd, &c.to)?;
        if c.read_only {
            set_attr(&c.to, false, libc::MOUNT_ATTR_RDONLY, 0)?;
        }
    }
    if let Some(cwd) = &plan.cwd {
        sys_chdir(cwd)?;
    }
    if plan.userns.is_none() {
        for &cap in &plan.drop_caps {
            match sys_prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap)) {
                // Capabilities past the kernel's last are not there to drop.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                r => r?,
            }
        }
        sys_prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        )?;
    }
    sys_seccomp(&plan.filter)
}
