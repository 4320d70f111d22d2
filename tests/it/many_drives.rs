//! Several drives in one run, as root on real loop devices: each drive's counts equal the
//! kernel's block stat deltas of its own device, the "all" figures add them up, and the
//! session holds each drive's part under it; one guard refusal refuses the whole run before
//! anything is written; one drive whose every write fails (a loop device over a full tmpfs:
//! real EIO) ends alone, named, while the others complete.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::{json_lines, of_type, run, LoopDev};
use serde_json::Value;

/// The `--json` objects of type `t` whose `target` is `label`.
fn of_target<'a>(lines: &'a [Value], t: &str, label: &str) -> Vec<&'a Value> {
    of_type(lines, t)
        .into_iter()
        .filter(|v| v["target"] == label)
        .collect()
}

fn args_for<'a>(devs: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run"];
    for d in devs {
        a.extend(["--target", d.as_str(), "--destroy-data", d.as_str()]);
    }
    a.extend_from_slice(extra);
    a
}

#[test]
fn four_drives_each_counted_as_the_kernel_counts_its_device() {
    let _timing = common::timing_lock();
    let devs: Vec<LoopDev> = (0..4).filter_map(|_| LoopDev::new(64 << 20)).collect();
    if devs.len() < 4 {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let names: Vec<String> = devs.iter().map(|d| d.dev.display().to_string()).collect();
    let session = home.path().join("shelf.yaml");
    let before: Vec<(u64, u64)> = devs.iter().map(LoopDev::stat).collect();
    let s = session.display().to_string();
    let out = run(
        home.path(),
        &args_for(
            &names,
            &[
                "--rw",
                "randrw",
                "--rwmixread",
                "70",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--duration",
                "2s",
                "--json",
                "--session",
                &s,
            ],
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let (mut sum_r, mut sum_w) = (0u64, 0u64);
    for (dev, before) in devs.iter().zip(&before) {
        let label = dev.dev.display().to_string();
        let [summary] = &of_target(&lines, "summary", &label)[..] else {
            panic!("one summary for {label}: {lines:?}");
        };
        let after = dev.stat();
        let (r, w) = (
            summary["read_ios"].as_u64().unwrap(),
            summary["write_ios"].as_u64().unwrap(),
        );
        let (kr, kw) = (after.0 - before.0, after.1 - before.1);
        eprintln!("{label}: drivescope {r} reads {w} writes; kernel {kr} reads {kw} writes");
        assert!(r > 1000 && w > 500, "{label} did I/O");
        // The kernel counts every read of the device: the run's, and besides them the
        // few that look at it before it is written (drivescope's guard reading its
        // signatures, udev's blkid after a writer closes it). Those are a fixed few, lost in
        // 1% of a quiet run's count but not of the few thousand a starved run does: they
        // are allowed on top.
        const NOT_THE_RUNS: f64 = 128.0;
        assert!(
            (kr as f64 - r as f64).abs() <= 0.01 * r as f64 + NOT_THE_RUNS,
            "{label} reads {r} vs {kr}"
        );
        assert!(
            (kw as f64 - w as f64).abs() <= 0.01 * w as f64 + NOT_THE_RUNS,
            "{label} writes {w} vs {kw}"
        );
        assert!(
            of_target(&lines, "interval", &label).len() >= 2,
            "its intervals carry its label"
        );
        sum_r += r;
        sum_w += w;
    }
    let all = of_target(&lines, "summary", "all");
    let [all] = &all[..] else {
        panic!("one \"all\" summary: {lines:?}")
    };
    assert_eq!(
        all["ios"].as_u64(),
        Some(sum_r + sum_w),
        "the all summary adds them up"
    );
    assert_eq!(all["drives"].as_u64(), Some(4));
    assert!(
        !of_target(&lines, "interval", "all").is_empty(),
        "\"all\" lines per interval"
    );

    // The session: one file, each drive's part under it, each summary its own.
    let loaded = drivescope::session::load(&session).expect("the session loads");
    let sess = &loaded.session;
    assert_eq!(sess.schema_version, 2);
    assert_eq!(sess.drive_labels(), names);
    let views = sess.drive_views();
    assert_eq!(views.len(), 4);
    for (view, dev) in views.iter().zip(&devs) {
        assert_eq!(view.target.path, dev.dev.display().to_string());
        assert!(
            view.intervals.len() >= 2 && view.steps.len() == 1,
            "{}",
            view.target.path
        );
        let own = view.summary.as_ref().expect("a summary of its own");
        let step = &view.steps[0].summary;
        assert_eq!(own.read_bytes, step.read_bytes, "{}", view.target.path);
        assert_eq!(own.ended_by.to_string(), "completed");
    }
    let total = sess.summary.as_ref().unwrap();
    let added: f64 = views
        .iter()
        .map(|v| v.summary.as_ref().unwrap().read_iops)
        .sum();
    assert!(
        (total.read_iops - added).abs() < 0.01 * added,
        "{} vs {added}",
        total.read_iops
    );
    // The report reads it.
    let rep = Command::new(common::bin())
        .args(["report", &s, "--out"])
        .arg(home.path().join("rep"))
        .output()
        .unwrap();
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
}

#[test]
fn one_refusal_refuses_the_run_and_nothing_is_written() {
    let devs: Vec<LoopDev> = (0..3).filter_map(|_| LoopDev::new(32 << 20)).collect();
    if devs.len() < 3 {
        return;
    }
    // The second holds a filesystem: the guard refuses to write it.
    let mk = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&devs[1].dev)
        .output();
    match mk {
        Ok(o) if o.status.success() => {}
        other => skip!(Tool, "mkfs.ext4 failed: {other:?}"),
    }
    let sums: Vec<String> = devs.iter().map(LoopDev::sha256).collect();
    let home = tempfile::tempdir().unwrap();
    let names: Vec<String> = devs.iter().map(|d| d.dev.display().to_string()).collect();
    let session = home.path().join("s.yaml");
    let s = session.display().to_string();
    let out = run(
        home.path(),
        &args_for(
            &names,
            &["--rw", "randwrite", "--duration", "1s", "--session", &s],
        ),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&names[1]) && err.contains("ext4"),
        "the refusal names the target and why: {err}"
    );
    let after: Vec<String> = devs.iter().map(LoopDev::sha256).collect();
    assert_eq!(sums, after, "no device was written");
    assert!(!session.exists(), "no session for a run that never started");
}

/// A loop device over a sparse file on a tmpfs of 2 MiB that another file has filled:
/// every write to the device fails (ENOSPC from the tmpfs), as a dying drive's would.
struct FullLoop {
    dev: String,
    mnt: tempfile::TempDir,
}

impl FullLoop {
    fn new() -> Result<FullLoop, String> {
        let mnt = tempfile::tempdir().map_err(|e| e.to_string())?;
        let m = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
            .arg(mnt.path())
            .output()
            .map_err(|e| e.to_string())?;
        if !m.status.success() {
            return Err(format!(
                "mount tmpfs: {}",
                String::from_utf8_lossy(&m.stderr)
            ));
        }
        let img = mnt.path().join("img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .map_err(|e| e.to_string())?;
        // Fill the tmpfs: a write of 4 MiB to a 2 MiB file system stops where it is full.
        let _ = std::fs::write(mnt.path().join("filler"), vec![1u8; 4 << 20]);
        let dev = match common::losetup(&[], &img) {
            Ok(dev) => dev.to_string_lossy().into_owned(),
            Err(why) => {
                let _ = Command::new("umount").arg("-l").arg(mnt.path()).status();
                return Err(why);
            }
        };
        Ok(FullLoop { dev, mnt })
    }
}

impl Drop for FullLoop {
    fn drop(&mut self) {
        common::losetup_detach(Path::new(&self.dev));
        // The loop device lets go of its file a moment after the detach: a lazy unmount.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.mnt.path())
            .status();
    }
}

#[test]
fn a_failing_drive_ends_alone_and_the_others_complete() {
    let _timing = common::timing_lock();
    let good: Vec<LoopDev> = (0..2).filter_map(|_| LoopDev::new(64 << 20)).collect();
    if good.len() < 2 {
        return;
    }
    let bad = match FullLoop::new() {
        Ok(b) => b,
        Err(why) => skip!(Tool, "{why}"),
    };
    let home = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = good.iter().map(|d| d.dev.display().to_string()).collect();
    names.insert(1, bad.dev.clone());
    let session = home.path().join("s.yaml");
    let s = session.display().to_string();
    let out = run(
        home.path(),
        &args_for(
            &names,
            &[
                "--rw",
                "randwrite",
                "--bs",
                "64k",
                "--iodepth",
                "4",
                "--duration",
                "3s",
                "--json",
                "--session",
                &s,
            ],
        ),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a drive failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let [failed] = &of_target(&lines, "summary", &bad.dev)[..] else {
        panic!("the failed drive's summary: {lines:?}");
    };
    let why = failed["ended_by"].as_str().unwrap_or_default();
    assert!(why.starts_with("every I/O failed"), "{why}");
    assert!(
        failed["runtime_s"].as_f64().unwrap() < 2.9,
        "it ended early: {failed}"
    );
    for d in &good {
        let label = d.dev.display().to_string();
        let [s] = &of_target(&lines, "summary", &label)[..] else {
            panic!("{label}'s summary: {lines:?}");
        };
        assert_eq!(s["ended_by"], "duration", "{label} went on: {s}");
        assert_eq!(s["errors"], 0);
    }
    let loaded = drivescope::session::load(&session).expect("the session loads");
    let sess = &loaded.session;
    assert_eq!(sess.state, drivescope::session::SessionState::Failed);
    let views = sess.drive_views();
    let own = views[1].summary.as_ref().unwrap().ended_by.to_string();
    assert!(own.starts_with("every I/O failed"), "its own end: {own}");
    let run_end = sess.summary.as_ref().unwrap().ended_by.to_string();
    assert!(
        run_end.starts_with(&format!("drive {}: every I/O failed", bad.dev)),
        "the run's end names the drive: {run_end}"
    );
    assert!(views[0]
        .summary
        .as_ref()
        .unwrap()
        .ended_by
        .to_string()
        .starts_with("completed"));
    assert!(
        sess.events.iter().any(|e| e.drive == Some(1)
            && e.message
                .starts_with(&format!("drive {} failed: ", bad.dev))),
        "the session says which drive failed: {:?}",
        sess.events
    );
    assert!(Path::new(&s).exists());
}

#[test]
fn two_targets_on_one_drive_are_read_together_but_never_written() {
    let home = common::disk_tempdir();
    let (a, b) = (home.path().join("a.bin"), home.path().join("b.bin"));
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            &a,
            "--target",
            &b,
            "--size",
            "8M",
            "--rw",
            "randwrite",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{a} and {b} are both on drive")) && err.contains("not written"),
        "{err}"
    );
    assert!(
        !Path::new(&a).exists() && !Path::new(&b).exists(),
        "nothing created"
    );
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            &a,
            "--target",
            &b,
            "--size",
            "8M",
            "--rw",
            "randread",
            "--duration",
            "1s",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let notes = of_target(&lines, "note", &b);
    assert!(
        notes.iter().any(|n| n["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("shares drive ") && m.contains(&a))),
        "shown as sharing a drive: {notes:?}"
    );
}
