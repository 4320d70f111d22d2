//! A `smartctl` that never answers, through the real binary: a fake one first on PATH
//! that records its PID and sleeps, and a SATA disk in a fake sysfs bound over `/sys` in a
//! private mount namespace (`unshare --mount`), so that `drivescope smart` on a device node
//! runs smartctl as it would on a real SATA drive. The one-shot reading comes back after
//! `SMARTCTL_TIMEOUT` with the reason in a note, the fake smartctl killed; under `--watch`
//! the first one is gone from /proc (killed and reaped) while drivescope still runs.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use drivescope::telemetry::smartctl::SMARTCTL_TIMEOUT;
use serde_json::Value;

use crate::common::{self, skip::Skip};

/// The SCSI device of the fake disk `sdz`, under an ATA host (so its transport is SATA).
const SCSI_DEV: &str = "devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0";

/// A fake sysfs at `sys` with one SATA disk, `sdz` (8:0), and a block device node for it
/// at `node`.
fn fake_sata_disk(sys: &Path, node: &Path) -> Result<(), String> {
    let disk = sys.join(SCSI_DEV).join("block/sdz");
    let w = |rel: &Path, text: &str| -> Result<(), String> {
        std::fs::create_dir_all(rel.parent().expect("parent")).map_err(|e| e.to_string())?;
        std::fs::write(rel, text).map_err(|e| e.to_string())
    };
    w(&sys.join(SCSI_DEV).join("model"), "FAKE SATA DISK\n")?;
    w(&sys.join(SCSI_DEV).join("vendor"), "ATA\n")?;
    w(&disk.join("size"), "32768\n")?;
    w(&disk.join("stat"), "0 0 0 0 0 0 0 0 0 0 0\n")?;
    w(&disk.join("queue/logical_block_size"), "512\n")?;
    let ln = |target: &str, at: PathBuf| -> Result<(), String> {
        std::fs::create_dir_all(at.parent().expect("parent")).map_err(|e| e.to_string())?;
        symlink(target, &at).map_err(|e| e.to_string())
    };
    ln("../..", disk.join("device"))?;
    ln(&format!("../{SCSI_DEV}/block/sdz"), sys.join("block/sdz"))?;
    ln(
        &format!("../../{SCSI_DEV}/block/sdz"),
        sys.join("class/block/sdz"),
    )?;
    ln(
        &format!("../../{SCSI_DEV}/block/sdz"),
        sys.join("dev/block/8:0"),
    )?;
    let out = Command::new("mknod")
        .arg(node)
        .args(["b", "8", "0"])
        .output()
        .map_err(|e| format!("cannot run mknod: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "mknod failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// A `smartctl` in `bin` that appends its PID to `pids` and sleeps for ever (as itself:
/// `exec`, so the PID is the process drivescope started).
fn hung_smartctl(bin: &Path, pids: &Path) {
    std::fs::create_dir_all(bin).expect("mkdir");
    let script = bin.join("smartctl");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ >> '{}'\nexec sleep 1000\n",
            pids.display()
        ),
    )
    .expect("write the fake smartctl");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn read_pids(pids: &Path) -> Vec<i32> {
    std::fs::read_to_string(pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Whether `pid` is still in /proc (running, or a zombie nobody reaped).
fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Kills what is left of the fake smartctls this test started.
struct Reap(PathBuf);

impl Drop for Reap {
    fn drop(&mut self) {
        for pid in read_pids(&self.0) {
            // SAFETY: kill has no memory effects; these PIDs are the fake smartctls.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// `drivescope ARGS` with `/sys` replaced by `sys` in a mount namespace of its own and
/// `bin` first on PATH.
fn spawn_with_fake_sys(sys: &Path, bin: &Path, args: &[&str]) -> Child {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
        .arg(r#"mount --bind "$1" /sys && shift && exec "$@""#)
        .arg("sh")
        .arg(sys)
        .arg(common::bin())
        .args(args)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run unshare")
}

#[test]
fn a_smartctl_that_never_answers_is_killed_after_the_timeout() {
    if !common::is_root() {
        skip!(NotRoot, "a mount namespace over /sys and mknod need root");
    }
    let dir = common::disk_tempdir();
    let sys = dir.path().join("sys");
    let node = dir.path().join("sdz");
    if let Err(why) = fake_sata_disk(&sys, &node) {
        skip!(Tool, "no fake SATA disk: {why}");
    }
    let node_s = node.to_str().expect("utf-8");
    let (bin_once, pids_once) = (dir.path().join("bin1"), dir.path().join("pids1"));
    let (bin_watch, pids_watch) = (dir.path().join("bin2"), dir.path().join("pids2"));
    hung_smartctl(&bin_once, &pids_once);
    hung_smartctl(&bin_watch, &pids_watch);
    let _reap = (Reap(pids_once.clone()), Reap(pids_watch.clone()));

    let start = Instant::now();
    let mut once = spawn_with_fake_sys(&sys, &bin_once, &["smart", node_s, "--json"]);
    // Beside it, the poller's SMART thread reads again a period after each answer.
    let mut watch = spawn_with_fake_sys(
        &sys,
        &bin_watch,
        &["smart", node_s, "--watch", "30", "--period", "1s", "--json"],
    );

    // The one-shot reading: back after the timeout, not before, not much after.
    let limit = SMARTCTL_TIMEOUT + Duration::from_secs(5);
    while once.try_wait().expect("try_wait").is_none() {
        if start.elapsed() > limit {
            let _ = once.kill();
            let _ = watch.kill();
            let _ = (once.wait(), watch.wait());
            panic!("drivescope smart did not come back within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = start.elapsed();
    let out = once.wait_with_output().expect("drivescope smart");
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("mount:") || err.contains("unshare:") {
        let _ = watch.kill();
        let _ = watch.wait();
        common::skip::note(Skip::Tool, format!("no mount namespace: {err}"));
        return;
    }
    // The only source there hung and was killed: no source could read the drive, which
    // `smart` says with exit 2 (as smartctl does for a device it cannot open).
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        took >= SMARTCTL_TIMEOUT && took < limit,
        "smart took {took:?} with a timeout of {SMARTCTL_TIMEOUT:?}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["device"], "/dev/sdz", "{v}");
    assert_eq!(v["model"], "FAKE SATA DISK", "the fake sysfs was read: {v}");
    assert!(v["source"].is_null() && v["temperature_c"].is_null(), "{v}");
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let said = format!("no SMART: smartctl did not answer within {SMARTCTL_TIMEOUT:?}");
    assert!(notes.contains(&said.as_str()), "{notes:?}");
    let pids = read_pids(&pids_once);
    assert_eq!(pids.len(), 1, "smartctl ran once: {pids:?}");
    let gone = Instant::now();
    while exists(pids[0]) && gone.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !exists(pids[0]),
        "the fake smartctl {} outlived drivescope smart",
        pids[0]
    );

    // --watch: once the second smartctl has started (the first timed out), the first is
    // not in /proc while drivescope is alive: killed, and reaped by drivescope itself (a
    // zombie would stay there until its parent waited for it or ended).
    let second = Instant::now();
    while read_pids(&pids_watch).len() < 2 {
        assert!(
            second.elapsed() < Duration::from_secs(5),
            "no second smartctl: {:?}",
            read_pids(&pids_watch)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let first = read_pids(&pids_watch)[0];
    assert!(
        watch.try_wait().expect("try_wait").is_none(),
        "drivescope smart --watch still runs"
    );
    assert!(
        !exists(first),
        "the timed-out smartctl {first} is still in /proc: not killed, or not reaped"
    );
    let _ = watch.kill();
    let _ = watch.wait();
}
