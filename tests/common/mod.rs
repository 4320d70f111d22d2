//! Helpers shared by the integration tests: run the real binary, parse its JSON lines, make
//! loop devices (as root) and read the kernel's block statistics.
#![allow(dead_code)]

#[macro_use]
pub mod skip;
pub mod chromium;
pub mod qemu;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use skip::Skip;

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_drivescope"))
}

/// Runs drivescope with `args`, isolated from the user's home (XDG dirs in `home`).
/// drivescope with `home` as its HOME and XDG folders (the environment [`run`] gives it).
pub fn command(home: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"));
    cmd
}

/// drivescope started with `args` in `home` ([`command`]'s environment), its stdout and
/// stderr piped, not waited for.
pub fn spawn(home: &Path, args: &[&str]) -> std::process::Child {
    command(home)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn drivescope")
}

/// A child's stdout lines as they come, on a channel; it ends when stdout closes.
pub fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits for a JSON line of type `t` on `rx` (failing the test after `limit`, or when
/// stdout closes first): the state a test needs, not a time.
pub fn wait_for_line(
    rx: &std::sync::mpsc::Receiver<String>,
    t: &str,
    limit: std::time::Duration,
) -> Value {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no {t:?} line: {e}"));
        if let Ok(v) = serde_json::from_str::<Value>(&line) {
            if v["type"] == t {
                return v;
            }
        }
    }
}

/// The arguments of a short real run (reads, 1 MiB target, JSON lines) with `extra`.
pub fn short_run_args<'a>(target: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--target",
        target.to_str().expect("utf-8"),
        "--size",
        "1M",
        "--duration",
        "200ms",
        "--interval",
        "100ms",
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit code 2 and an error that holds each of `words`.
pub fn refused(o: &Output, words: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for w in words {
        assert!(err.contains(w), "no {w:?} in: {err}");
    }
}

pub fn run(home: &Path, args: &[&str]) -> Output {
    command(home).args(args).output().expect("run drivescope")
}

pub fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect()
}

/// The JSON lines of a run that must have succeeded (its stderr shown if not).
pub fn succeeded(out: &Output) -> Vec<Value> {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    json_lines(out)
}

pub fn of_type<'a>(lines: &'a [Value], t: &str) -> Vec<&'a Value> {
    lines.iter().filter(|v| v["type"] == t).collect()
}

pub fn summary(lines: &[Value]) -> &Value {
    of_type(lines, "summary")
        .pop()
        .unwrap_or_else(|| panic!("no summary in {lines:?}"))
}

/// A temp dir on a real file system: under cargo's target dir (`CARGO_TARGET_TMPDIR`), not
/// the system's temp dir, which may be a tmpfs (Debian's default since 13) on no block device.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = env!("CARGO_TARGET_TMPDIR");
    std::fs::create_dir_all(base).expect("CARGO_TARGET_TMPDIR");
    tempfile::tempdir_in(base).expect("a temp dir under CARGO_TARGET_TMPDIR")
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A loop device over a sparse backing file; detached on drop.
pub struct LoopDev {
    pub dev: PathBuf,
    pub name: String,
    _dir: tempfile::TempDir,
}

/// Held around every `losetup` the tests run (attach and detach), across every test binary
/// (a flock on one file): `losetup -f` asks the kernel for a free device and then opens it,
/// so two at once may both open the same one (the loser retries on another), and for that
/// moment a test already using the device sees another process holding it open, which the
/// write guard rightly refuses.
pub struct LoopSetupLock(std::fs::File);

pub fn loop_setup_lock() -> LoopSetupLock {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(std::env::temp_dir().join(".drivescope-tests-losetup.lock"))
        .expect("the losetup lock file");
    // SAFETY: flock on a file descriptor this function owns; it is released when the file
    // (held by the returned guard) closes.
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock: {}", std::io::Error::last_os_error());
    LoopSetupLock(f)
}

/// Attaches a loop device over `backing` (`losetup -f --show EXTRA… BACKING`); its path, or
/// why not. The caller detaches it ([`losetup_detach`]).
pub fn losetup(extra: &[&str], backing: &Path) -> Result<PathBuf, String> {
    let _lock = loop_setup_lock();
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .args(extra)
        .arg(backing)
        .output()
        .map_err(|e| format!("cannot run losetup: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "losetup {} {} failed: {}",
            extra.join(" "),
            backing.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Detaches a loop device (`losetup -d`), under [`loop_setup_lock`].
pub fn losetup_detach(dev: &Path) {
    let _lock = loop_setup_lock();
    let _ = Command::new("losetup").arg("-d").arg(dev).status();
}

impl LoopDev {
    /// None (with the reason reported as a skip) where a loop device cannot be made.
    pub fn new(size: u64) -> Option<LoopDev> {
        Self::with_args(size, &[])
    }

    /// A loop device of 4096-byte logical sectors (`losetup --sector-size 4096`).
    pub fn sectors_4k(size: u64) -> Option<LoopDev> {
        Self::with_args(size, &["--sector-size", "4096"])
    }

    /// A read-only loop device (`losetup -r`).
    pub fn read_only(size: u64) -> Option<LoopDev> {
        Self::with_args(size, &["-r"])
    }

    /// The file behind it.
    pub fn backing_file(&self) -> PathBuf {
        self._dir.path().join("backing.img")
    }

    /// A loop device whose partitions the kernel may list (`losetup -P`).
    pub fn partitioned(size: u64) -> Option<LoopDev> {
        Self::with_args(size, &["-P"])
    }

    fn with_args(size: u64, extra: &[&str]) -> Option<LoopDev> {
        if !is_root() {
            skip::note(Skip::NotRoot, "loop devices need root");
            return None;
        }
        match Self::attach(size, extra) {
            Ok(dev) => Some(dev),
            Err(why) => {
                skip::note(Skip::NoLoopDevice, why);
                None
            }
        }
    }

    fn attach(size: u64, extra: &[&str]) -> Result<LoopDev, String> {
        let dir = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .map_err(|e| format!("no temp dir for a loop device's backing file: {e}"))?;
        let img = dir.path().join("backing.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(size))
            .map_err(|e| format!("cannot make {}: {e}", img.display()))?;
        let dev = losetup(extra, &img)?;
        let name = dev
            .file_name()
            .ok_or_else(|| format!("losetup printed no device: {}", dev.display()))?
            .to_string_lossy()
            .into_owned();
        Ok(LoopDev {
            dev,
            name,
            _dir: dir,
        })
    }

    /// (reads completed, writes completed) from /sys/block/NAME/stat.
    pub fn stat(&self) -> (u64, u64) {
        let f = self.stat_fields();
        (f[0], f[4])
    }

    /// (sectors read, sectors written) from /sys/block/NAME/stat, in 512-byte units
    /// whatever the device's sector size.
    pub fn sectors(&self) -> (u64, u64) {
        let f = self.stat_fields();
        (f[2], f[6])
    }

    /// Discard I/Os completed, from /sys/block/NAME/stat (field 12, 1-based, of
    /// Documentation/block/stat.rst).
    pub fn discards(&self) -> u64 {
        self.stat_fields().get(11).copied().unwrap_or(0)
    }

    /// Discards the kernel was asked for (completed and merged into another: one per
    /// discard submitted, split by none below 4GiB on a loop device) and the 512-byte
    /// sectors discarded, from /sys/block/NAME/stat (fields 12 to 14).
    pub fn discards_asked(&self) -> (u64, u64) {
        let f = self.stat_fields();
        (f[11] + f[12], f[13])
    }

    /// Writes the kernel was asked for: completed, and merged into another (fields 5 and 6).
    pub fn writes_asked(&self) -> u64 {
        let f = self.stat_fields();
        f[4] + f[5]
    }

    fn stat_fields(&self) -> Vec<u64> {
        let s = std::fs::read_to_string(format!("/sys/block/{}/stat", self.name)).unwrap();
        s.split_whitespace().map(|x| x.parse().unwrap()).collect()
    }

    pub fn sha256(&self) -> String {
        let out = Command::new("sha256sum").arg(&self.dev).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

/// Reads drivescope makes itself before the step: libblkid's signature probe of the
/// target (about 1 MiB in 48 reads of a 64 MiB loop device, through the page cache).
pub const PROBE_READS: u64 = 64;

/// The bytes of that probe: 1,069,056 measured on a 128 MiB loop device with 4 KiB sectors.
pub const PROBE_BYTES: u64 = 2 << 20;

/// The reads and writes an engine counted agree within 1% with the kernel's completed
/// requests between two [`LoopDev::stat`] readings; the kernel's reads may also hold the
/// guard's own probe ([`PROBE_READS`]), a fixed count that is more than 1% of a slow run's.
pub fn assert_kernel_counts(before: (u64, u64), after: (u64, u64), reads: u64, writes: u64) {
    let (kr, kw) = (after.0 - before.0, after.1 - before.1);
    let slack = |n: u64| (n as f64 * 0.01) as u64;
    assert!(
        kr + slack(reads) >= reads && kr <= reads + slack(reads) + PROBE_READS,
        "reads {reads} vs kernel {kr}"
    );
    assert!(
        kw.abs_diff(writes) <= slack(writes),
        "writes {writes} vs kernel {kw}"
    );
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        losetup_detach(&self.dev);
    }
}

/// A session from a real short randrw run on a new test file in `home`; returns its path.
pub fn recorded_session(home: &Path, secs: u32, interval: &str) -> PathBuf {
    let target = home.join("recorded.bin");
    let session = home.join("recorded.yaml");
    let duration = format!("{secs}s");
    let out = run(
        home,
        &[
            "run",
            "--target",
            target.to_str().expect("utf-8"),
            "--size",
            "32MiB",
            "--rw",
            "randrw",
            "--duration",
            &duration,
            "--interval",
            interval,
            "--session",
            session.to_str().expect("utf-8"),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    session
}

/// Held by the tests whose assertions depend on the machine keeping time (a paced rate
/// within a few percent, a step resuming after a stop): they run one at a time, so two of
/// them never starve each other of the machine's two CPUs. A panicking holder poisons
/// nothing: the lock is taken back.
pub fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A process as /proc/PID/stat shows it.
pub struct Proc {
    pub pid: u32,
    /// R, S, D, Z, …
    pub state: String,
    pub ppid: u32,
    pub pgrp: u32,
    /// Its session.
    pub sid: u32,
}

/// Every process, from /proc.
pub fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp session …: the fields after the command's closing
        // parenthesis.
        let f: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().take(4).collect())
            .unwrap_or_default();
        if let [state, ppid, pgrp, sid] = f[..] {
            if let (Ok(ppid), Ok(pgrp), Ok(sid)) = (ppid.parse(), pgrp.parse(), sid.parse()) {
                out.push(Proc {
                    pid,
                    state: state.to_string(),
                    ppid,
                    pgrp,
                    sid,
                });
            }
        }
    }
    out
}

/// The fio main processes drivescope `parent` started: each the child of a keeper that
/// `parent` forked (fio's PID namespace, src/fio/pidns.rs), or of `parent` itself.
pub fn fios_of(parent: u32) -> Vec<u32> {
    let all = processes();
    let comm = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|c| c.trim().to_string())
    };
    let keepers: Vec<u32> = all
        .iter()
        .filter(|p| p.ppid == parent)
        .map(|p| p.pid)
        .collect();
    all.iter()
        .filter(|p| p.ppid == parent || keepers.contains(&p.ppid))
        .filter(|p| p.state != "Z" && comm(p.pid).is_ok_and(|c| c == "fio"))
        .map(|p| p.pid)
        .collect()
}

/// The pids of the live processes (zombies left out: they have ended) in process group
/// `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|p| p.pgrp == pgid && p.state != "Z")
        .map(|p| p.pid)
        .collect()
}

/// A shell script at `path` (its folder made) running `body`, executable.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The pid a child wrote to `pidfile`, once it has (a minute at most).
pub fn pid_written(pidfile: &Path) -> u32 {
    let t0 = std::time::Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return p;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "no pid in {}",
            pidfile.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits until process group `pgid` has no live process (a minute at most: a process
/// SIGKILLed ends a moment later, so this waits, not times).
pub fn group_gone(pgid: u32) {
    let t0 = std::time::Instant::now();
    while !group_members(pgid).is_empty() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "process group {pgid} lives on: {:?}",
            group_members(pgid)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The installed fio, for a wrapper that runs it.
pub fn real_fio() -> &'static str {
    ["/usr/bin/fio", "/usr/local/bin/fio"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("fio is installed")
}

/// `cmd` started with no input, its stdout dropped and its stderr kept to read.
pub fn spawn_keeping_stderr(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn drivescope")
}

/// The pids holding a `flock` lock on the file at `path`, as `/proc/locks` lists them
/// (drivescope's target lock is one).
pub fn flock_holders(path: &Path) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    let id = format!(
        "{:02x}:{:02x}:{}",
        libc::major(m.dev()),
        libc::minor(m.dev()),
        m.ino()
    );
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [_, "FLOCK", _, _, pid, at, ..] if *at == id => pid.parse().ok(),
                _ => None,
            }
        })
        .collect()
}

/// Waits until `child` (`by_child`), or any process, holds a `flock` lock on `path`: a
/// state, not a time. Fails the test when `child` ends first (with its stderr) or after
/// 60 s.
pub fn wait_for_flock(child: &mut std::process::Child, path: &Path, by_child: bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let held = flock_holders(path);
        if (by_child && held.contains(&child.id())) || (!by_child && !held.is_empty()) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("the run ended ({status}) before it locked its target: {err}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no lock on {}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A preset that holds its target (an idle phase of 10 minutes) before one second of `rw`
/// (4 KiB, QD1), written to `dir`: a run of it locks the target and touches nothing for
/// minutes.
pub fn hold_preset(dir: &Path, rw: &str) -> PathBuf {
    let p = dir.join(format!("hold-{rw}.yaml"));
    std::fs::write(
        &p,
        format!(
            "id: hold\nname: hold\ndescription: an idle phase, then the I/O\nphases:\n  \
             - name: hold\n    workload: idle\n    end:\n      duration: 10m\n  \
             - name: io\n    workload:\n      rw: {rw}\n      bs: 4k\n      iodepth: 1\n      \
             jobs: 1\n    end:\n      duration: 1s\n"
        ),
    )
    .unwrap();
    p
}

/// CPU burners: twice the machine's CPUs of threads that spin until dropped, so that a
/// test sees what a loaded machine does to the process under test (the load
/// `scripts/under-load` puts on a whole run).
pub struct CpuBurners {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CpuBurners {
    pub fn start() -> CpuBurners {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let n = 2 * std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        CpuBurners { stop, threads }
    }
}

impl Drop for CpuBurners {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
