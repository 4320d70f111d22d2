//! The dashboard's stop reaches a run on a remote host in every phase, in a real terminal
//! (tmux): in the ssh handshake (held open by an ssh command that waits for a file that
//! never comes) the stop key, Ctrl-C and q each end the wait at once and leave no ssh; in
//! the agent's fill of a new test file (on a real sshd, its writes throttled by a blkio
//! cgroup so that the fill is still going when the keys come) each ends the fill, saves
//! the session as stopped, and leaves neither ssh nor the remote drivescope.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{self, sshd::Lab, LoopDev};
use crate::dashboard_tmux::{assert_cooked, the_saved_session, wait_until, Tmux};

/// How long a stop may take to end the run: "about a second" (the app's poll, the link's
/// 100 ms stop check, ssh's SIGTERM), with room for a busy machine.
const STOP_BOUND: Duration = Duration::from_millis(2500);

/// The dashboard on the targets file `rack` in `dir`, reaching hosts with `ssh`.
fn dashboard(dir: &Path, ssh: &str) -> String {
    format!(
        "sh -c 'cd {} && exec {} --targets rack.yaml --ssh-command \"{ssh}\" --remote-drivescope {} --preset quick-look --time-scale 0.2'",
        dir.display(),
        common::bin().display(),
        common::bin().display(),
    )
}

/// Sends `keys` to the dashboard, one `send-keys` each (a confirmation after its key).
fn press(t: &Tmux, keys: &[&str]) {
    for k in keys {
        t.tmux(&["send-keys", k]);
    }
}

/// Whether a session was saved under `home`.
fn any_session(home: &Path) -> bool {
    std::fs::read_dir(home.join("data/drivescope/sessions"))
        .map(|d| d.count() > 0)
        .unwrap_or(false)
}

#[test]
fn the_stop_key_ctrl_c_and_q_end_a_hosts_handshake_at_once() {
    for (name, keys, quits) in [
        ("hs-stop", &["x", "y"][..], false),
        ("hs-ctrlc", &["C-c", "C-c"][..], false),
        ("hs-quit", &["q", "y"][..], true),
    ] {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        // ssh as a wrapper that holds the handshake: it waits for a file never made.
        let hold = dir.path().join("hold-ssh");
        let pidfile = dir.path().join("ssh.pid");
        let go = dir.path().join("go");
        common::script(
            &hold,
            &format!(
                "echo $$ > '{}'\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nexec ssh \"$@\"",
                pidfile.display(),
                go.display()
            ),
        );
        std::fs::write(
            dir.path().join("rack.yaml"),
            format!(
                "- {{path: {}, host: far, size: 16MiB}}\n",
                dir.path().join("t.bin").display()
            ),
        )
        .unwrap();
        let cmd = dashboard(dir.path(), &hold.display().to_string());
        let Some(t) = Tmux::start_with(name, &cmd, home.path(), 120, 40) else {
            return;
        };
        wait_until(&t, "the picker", |s| s.contains(" Presets "));
        t.tmux(&["send-keys", "Enter"]);
        // The handshake has begun: ssh (the wrapper, its group's leader) is running.
        let pgid = common::pid_written(&pidfile);
        let t0 = Instant::now();
        press(&t, keys);
        if quits {
            t.wait_for("EXIT=0");
        } else {
            wait_until(&t, "the run not started", |s| {
                s.contains("stopped before the host was ready")
            });
        }
        let took = t0.elapsed();
        common::group_gone(pgid);
        assert!(took < STOP_BOUND, "{name}: stopped in {took:?}");
        eprintln!("{name}: the handshake's wait ended {took:?} after the keys");
        if !quits {
            press(&t, &["q"]);
            t.wait_for("EXIT=0");
        }
        assert_cooked(&t.stty());
        assert!(
            !any_session(home.path()),
            "{name}: nothing ran, nothing saved"
        );
        assert!(
            !dir.path().join("t.bin").exists(),
            "{name}: no file was made"
        );
    }
}

/// A blkio (cgroup v1) group whose writes to one device are held to `iops` a second:
/// removed on drop (once its processes have ended).
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn new(dev: &Path, iops: u32) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.write_iops_device").exists() {
            common::skip::note(
                common::skip::Skip::Tool,
                "no blkio cgroup (v1) with write throttling to slow a host's fill",
            );
            return None;
        }
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(dev).ok()?.rdev();
        let dir = root.join(format!("drivescope-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let t = Throttle { dir };
        let (maj, min) = (libc::major(rdev), libc::minor(rdev));
        std::fs::write(
            t.dir.join("blkio.throttle.write_iops_device"),
            format!("{maj}:{min} {iops}\n"),
        )
        .ok()?;
        Some(t)
    }

    /// Moves process `pid` (and what it forks from now on) into the group.
    fn admit(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for Throttle {
    /// Its processes (the sshd, still listening) go back to the root group, then it goes.
    fn drop(&mut self) {
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(Path::new("/sys/fs/cgroup/blkio/cgroup.procs"), pid);
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// An ext4 file system on `dev`, mounted on a temp dir; unmounted on drop.
struct Ext4 {
    dir: tempfile::TempDir,
}

impl Ext4 {
    fn on(dev: &Path) -> Option<Ext4> {
        let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
        if !ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(dev)) {
            common::skip::note(common::skip::Skip::Tool, "mkfs.ext4 failed");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        if !ok(Command::new("mount").arg(dev).arg(dir.path())) {
            common::skip::note(common::skip::Skip::Tool, "mount failed");
            return None;
        }
        Some(Ext4 { dir })
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The live ssh processes whose arguments name `config` (the lab's client config).
fn sshs_with(config: &str) -> Vec<u32> {
    common::processes()
        .into_iter()
        .filter(|p| p.state != "Z")
        .filter(|p| {
            let argv = std::fs::read(format!("/proc/{}/cmdline", p.pid)).unwrap_or_default();
            let mut words = argv.split(|b| *b == 0).map(String::from_utf8_lossy);
            let ssh = words
                .next()
                .is_some_and(|w| w == "ssh" || w.ends_with("/ssh"));
            ssh && words.any(|w| w == config)
        })
        .map(|p| p.pid)
        .collect()
}

#[test]
fn the_stop_key_ctrl_c_and_q_end_a_hosts_fill_of_a_new_file_and_save_the_session_stopped() {
    let Some(lab) = Lab::start(1) else { return };
    let Some(dev) = LoopDev::new(512 << 20) else {
        return;
    };
    let Some(fs) = Ext4::on(&dev.dev) else { return };
    // 40 writes a second of at most 1 MiB: a fill of 256 MiB takes six seconds or more, and
    // the 8 writes in flight when it is stopped drain in a fifth of one.
    let Some(throttle) = Throttle::new(&dev.dev, 40) else {
        return;
    };
    throttle.admit(lab.pid(0));
    let config = lab.config().display().to_string();
    for (name, keys, quits) in [
        ("fill-stop", &["x", "y"][..], false),
        ("fill-ctrlc", &["C-c", "C-c"][..], false),
        ("fill-quit", &["q", "y"][..], true),
    ] {
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let target = fs.dir.path().join(format!("{name}.bin"));
        std::fs::write(
            dir.path().join("rack.yaml"),
            format!(
                "- {{path: {}, host: host0, size: 256MiB}}\n",
                target.display()
            ),
        )
        .unwrap();
        let cmd = dashboard(dir.path(), &lab.ssh_command());
        let Some(t) = Tmux::start_with(name, &cmd, home.path(), 140, 40) else {
            return;
        };
        wait_until(&t, "the picker", |s| s.contains(" Presets "));
        t.tmux(&["send-keys", "Enter"]);
        wait_until(&t, "the host's fill under way", |s| s.contains("filling"));
        assert!(lab.connected(0), "{name}: the agent is there");
        let t0 = Instant::now();
        press(&t, keys);
        if quits {
            t.wait_for("EXIT=0");
        } else {
            wait_until(&t, "the run's end", |s| s.contains("session saved to"));
        }
        let took = t0.elapsed();
        lab.wait_disconnected(0);
        assert!(took < STOP_BOUND, "{name}: stopped in {took:?}");
        eprintln!("{name}: the host's fill stopped {took:?} after the keys");
        if !quits {
            press(&t, &["q"]);
            t.wait_for("EXIT=0");
        }
        assert_cooked(&t.stty());
        assert_eq!(
            sshs_with(&config),
            Vec::<u32>::new(),
            "{name}: an ssh is left"
        );
        let (_, loaded) = the_saved_session(home.path());
        let sess = &loaded.session;
        assert_eq!(
            sess.state,
            drivescope::session::SessionState::Stopped,
            "{name}"
        );
        assert!(
            sess.steps.is_empty(),
            "{name}: stopped in the fill, before any step"
        );
        assert!(
            sess.events
                .iter()
                .any(|e| e.kind == drivescope::session::EventKind::Stopped
                    && e.message.contains("stopped by the user")),
            "{name}: {:?}",
            sess.events
        );
        // The run had started: the file it made stays (removed here to make room).
        std::fs::remove_file(&target).expect("the started run's test file stays");
    }
}
