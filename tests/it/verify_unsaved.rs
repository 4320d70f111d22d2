//! As root: a verified run whose verify state cannot be saved says so, as a value (a
//! `verify_unsaved` event with the state's folder, in the JSON lines, the session and the
//! dashboard's replay of it), and exits 1. The state lives on an ext4 file system on a loop
//! device that is shut down (`EXT4_IOC_SHUTDOWN`, as a dying disk would) while the run
//! writes: every later write and sync there fails with EIO. (root ignores permissions, and
//! files the state holds open for writing keep a file system from being remounted
//! read-only: a shutdown is what fails them.)

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};
use common::{json_lines, summary, LoopDev};

/// `_IOR('X', 125, __u32)`: ext4's (and xfs's) "going down" ioctl.
const EXT4_IOC_SHUTDOWN: libc::c_ulong = 0x8004_587d;
/// Shut down without flushing the log: as if the disk went away.
const EXT4_GOING_FLAGS_NOLOGFLUSH: u32 = 2;

/// An ext4 file system mounted on a temporary directory; unmounted on drop.
struct Ext4 {
    dir: tempfile::TempDir,
}

impl Ext4 {
    fn new(dev: &Path) -> Result<Ext4, String> {
        let run = |cmd: &mut Command| -> Result<(), String> {
            let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            match out.status.success() {
                true => Ok(()),
                false => Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr))),
            }
        };
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(dev))?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        run(Command::new("mount").arg(dev).arg(dir.path()))?;
        Ok(Ext4 { dir })
    }

    /// Shuts the file system down: from now on its writes and syncs fail (EIO).
    fn shut_down(&self) {
        let d = std::fs::File::open(self.dir.path()).expect("open the mount point");
        let flags = EXT4_GOING_FLAGS_NOLOGFLUSH;
        // SAFETY: a valid descriptor, and a pointer to a u32 that outlives the call, as
        // EXT4_IOC_SHUTDOWN reads.
        let r = unsafe { libc::ioctl(d.as_raw_fd(), EXT4_IOC_SHUTDOWN, &flags) };
        assert_eq!(r, 0, "shutdown: {}", std::io::Error::last_os_error());
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let umount = |lazy: bool| {
            let mut c = Command::new("umount");
            if lazy {
                c.arg("-l");
            }
            c.arg(self.dir.path()).status().is_ok_and(|s| s.success())
        };
        if !umount(false) {
            umount(true);
        }
    }
}

#[test]
fn a_verify_state_that_cannot_be_saved_is_an_event_and_exit_1() {
    let Some(fs_dev) = LoopDev::new(32 << 20) else {
        return;
    };
    let fs = match Ext4::new(&fs_dev.dev) {
        Ok(fs) => fs,
        Err(why) => skip!(Tool, "no ext4 file system for the verify state: {why}"),
    };
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("t.bin");
    let state = fs.dir.path().join("state");
    let session = home.path().join("s.yaml");
    let child = common::command(home.path())
        .args(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "8MiB",
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--duration",
            "3s",
            "--verify",
            "--verify-state",
        ])
        .arg(&state)
        .arg("--session")
        .arg(&session)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start drivescope");
    // The state is saving (a flush epoch journalled): then the disk under it goes.
    let journal = state.join("journal");
    let t0 = Instant::now();
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("flushed")) {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "no flush epoch journalled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    fs.shut_down();
    let out = child.wait_with_output().expect("drivescope ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let said = format!("the verify state in {} was not saved", state.display());
    assert!(err.contains(&said), "the last words say it: {err}");

    let lines = json_lines(&out);
    let unsaved: Vec<_> = lines
        .iter()
        .filter(|v| v["type"] == "event" && v["kind"] == "verify_unsaved")
        .collect();
    assert_eq!(unsaved.len(), 1, "{lines:?}");
    let u = &unsaved[0]["verify_unsaved"];
    assert_eq!(u["dir"], state.to_str().unwrap(), "{u}");
    assert!(
        u["error"]
            .as_str()
            .is_some_and(|e| e.contains("os error 5")),
        "EIO from the shut-down file system: {u}"
    );
    // The writes themselves went on: the step's figures are there.
    let sum = summary(&lines);
    assert!(sum["write_ios"].as_u64().unwrap() > 0, "{sum}");
    assert_eq!(sum["verify_unsaved"]["dir"], state.to_str().unwrap());

    // The session keeps it as data, under its own kind.
    let text = std::fs::read_to_string(&session).unwrap();
    let s: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let events = s["events"].as_sequence().expect("events");
    let e = events
        .iter()
        .find(|e| e["kind"].as_str() == Some("verify_unsaved"))
        .unwrap_or_else(|| panic!("no verify_unsaved event in {text}"));
    assert_eq!(e["data"]["dir"].as_str(), state.to_str());

    // The dashboard's replay of the session shows it among the events, as an error.
    let cmd = format!("{} open {}", common::bin().display(), session.display());
    let Some(t) = Tmux::start_with("verifyunsaved", &cmd, home.path(), 200, 50) else {
        return;
    };
    let s = wait_until(&t, "the event", |s| s.contains("verify state in"));
    let line = s
        .lines()
        .find(|l| l.contains("verify state in"))
        .unwrap_or_default();
    assert!(line.contains("error"), "shown as an error:\n{s}");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}
