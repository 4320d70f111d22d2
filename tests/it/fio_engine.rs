//! `--engine fio`: the installed fio runs the step and its status dumps become the
//! intervals. On a real loop device the intervals add up to fio's own totals exactly, and
//! those to the kernel's block stat delta; the session says fio ran and which job; no fio on
//! PATH is refused before anything is written.

use crate::common;
use common::{json_lines, of_type, run, summary, LoopDev};

#[test]
fn fio_runs_the_step_and_its_intervals_add_up_to_the_kernels_count() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    let session = home.path().join("fio.yaml");
    let s = session.to_str().unwrap();
    let before = dev.stat();
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            d,
            "--destroy-data",
            d,
            "--engine",
            "fio",
            "--rw",
            "randrw",
            "--rwmixread",
            "70",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--duration",
            "3s",
            "--interval",
            "500ms",
            "--json",
            "--session",
            s,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = dev.stat();
    let lines = json_lines(&out);
    let sum = summary(&lines);
    assert_eq!(sum["engine"], "fio");
    let note = sum["engine_note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("fio-3") && note.contains("rw=randrw"),
        "{note}"
    );
    let intervals = of_type(&lines, "interval");
    assert!(
        intervals.len() >= 5,
        "half-second intervals: {}",
        intervals.len()
    );
    let add = |k: &str| -> u64 {
        intervals
            .iter()
            .map(|i| i[k]["ios"].as_u64().unwrap())
            .sum()
    };
    let (r, w) = (
        sum["read_ios"].as_u64().unwrap(),
        sum["write_ios"].as_u64().unwrap(),
    );
    assert!(r > 1000 && w > 300, "{r} {w}");
    assert_eq!(
        (add("read"), add("write")),
        (r, w),
        "the intervals add up to fio's totals"
    );
    common::assert_kernel_counts(before, after, r, w);
    // The intervals' latency comes from the differenced bins, which count completions.
    // fio reads its counters and its bins at different moments of a dump while the job
    // runs on (a dump taken while the machine is busy saw 40 more completions in the bins
    // than I/Os in the counts), so one interval's two may differ by any amount; what fio
    // guarantees is its last dump, taken after the job ended: over the step, every I/O is
    // timed once.
    let timed: u64 = intervals
        .iter()
        .map(|i| i["lat_us"]["samples"].as_u64().unwrap())
        .sum();
    assert_eq!(
        timed,
        r + w,
        "the intervals' timed completions against fio's I/Os"
    );
    assert_eq!(sum["lat_us"]["samples"].as_u64(), Some(r + w), "{sum}");
    for i in &intervals {
        let n = i["read"]["ios"].as_u64().unwrap() + i["write"]["ios"].as_u64().unwrap();
        let c = i["lat_us"]["samples"].as_u64().unwrap();
        assert!(n == 0 || c > 0, "an interval of {n} I/Os timed none: {i}");
    }
    let loaded = drivescope::session::load(&session).expect("the session loads");
    assert_eq!(loaded.session.steps[0].summary.engine.as_str(), "fio");
}

#[test]
fn a_ramp_is_marked_and_left_out() {
    let Some(dev) = LoopDev::new(32 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            d,
            "--engine",
            "fio",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--ramp",
            "1s",
            "--duration",
            "2s",
            "--interval",
            "250ms",
            "--json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let intervals = of_type(&lines, "interval");
    let ramp: Vec<_> = intervals.iter().filter(|i| i["ramp"] == true).collect();
    let measured: Vec<_> = intervals.iter().filter(|i| i["ramp"] == false).collect();
    assert!(!ramp.is_empty() && measured.len() >= 6, "{intervals:?}");
    // The measured intervals start where the ramp ends and run in order.
    let first = measured[0]["start_s"].as_f64().unwrap();
    assert!((first - 1.0).abs() < 1e-6, "{first}");
    for w in measured.windows(2) {
        let (start, end) = (
            w[1]["start_s"].as_f64().unwrap(),
            w[0]["end_s"].as_f64().unwrap(),
        );
        assert!(start >= end - 1e-6, "{start} after {end}");
    }
    let sum = summary(&lines);
    let added: u64 = measured
        .iter()
        .map(|i| i["read"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(
        sum["read_ios"].as_u64(),
        Some(added),
        "the ramp is left out of the totals"
    );
    // A stop ending fio (and none left behind) is checked where a run is stopped:
    // fio_job_file::ctrl_c_stops_fio_saves_the_session_as_stopped_and_leaves_no_fio.
}

#[test]
fn no_fio_is_refused_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("t.bin");
    let session = home.path().join("s.yaml");
    let out = std::process::Command::new(common::bin())
        .env("HOME", home.path())
        .env("PATH", "/nonexistent")
        .args([
            "run",
            "--engine",
            "fio",
            "--size",
            "8M",
            "--duration",
            "1s",
            "--target",
        ])
        .arg(&target)
        .arg("--session")
        .arg(&session)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fio is not installed"), "{err}");
    assert!(!session.exists(), "no session");
}

/// `--engine fio` on a preset of three steps: fio is asked its version once, by the run's
/// check, and each step's summary says that version; every step still starts fio. A
/// wrapper named `fio`, first on PATH, logs each call's first argument and runs the real fio.
#[test]
fn fios_version_is_asked_once_for_a_preset_of_several_steps() {
    let home = common::disk_tempdir();
    let real = common::real_fio();
    let calls = home.path().join("calls.log");
    let bin = crate::fio_job_file::fio_script(
        home.path(),
        &format!("echo \"$1\" >&3\nexec {real} \"$@\""),
    );
    let preset = home.path().join("three.yaml");
    let phase = |name: &str, rw: &str| {
        format!(
            "  - name: {name}\n    workload: {{rw: {rw}, bs: 64k, iodepth: 4}}\n    end: {{duration: 300ms}}\n"
        )
    };
    std::fs::write(
        &preset,
        format!(
            "id: three\nname: Three\ndescription: three steps on fio\nphases:\n{}{}{}",
            phase("w", "write"),
            phase("r", "read"),
            phase("rr", "randread")
        ),
    )
    .unwrap();
    let target = home.path().join("t.bin");
    let mut cmd = common::command(home.path());
    crate::fio_job_file::log_on_fd_3(&mut cmd, &calls);
    let out = cmd
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(["run", "--target"])
        .arg(&target)
        .args(["--size", "4MiB", "--engine", "fio", "--preset-file"])
        .arg(&preset)
        .arg("--json")
        .output()
        .expect("run drivescope");
    let lines = common::succeeded(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 3, "{lines:?}");
    let log = std::fs::read_to_string(&calls).unwrap();
    let versions = log.lines().filter(|l| *l == "--version").count();
    assert_eq!(versions, 1, "fio was asked its version once: {log}");
    let runs = log.lines().filter(|l| *l == "--ioengine=io_uring").count();
    assert_eq!(runs, 3, "each step started fio: {log}");
    for s in &steps {
        let note = s["summary"]["engine_note"].as_str().unwrap();
        assert!(note.starts_with("fio-3"), "{note}");
    }
}

/// The pid of a process named `fio` whose parent is `parent`, once there is one.
fn fio_child_of(parent: u32) -> Option<u32> {
    common::fios_of(parent).first().copied()
}

/// fio stopped by a signal drivescope did not send is a suspended process, not a slow
/// drive: drivescope says so, and the intervals it spans are marked suspended.
#[test]
fn a_suspended_fio_is_a_suspended_process_not_drive_latency() {
    use std::io::BufRead;
    let home = common::disk_tempdir();
    let target = home.path().join("t.bin");
    let mut child = common::command(home.path())
        .args(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "16MiB",
            "--engine",
            "fio",
            "--rw",
            "randread",
            "--duration",
            "30s",
            "--interval",
            "200ms",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || -> serde_json::Value {
        let l = lines.next().expect("a line").unwrap();
        serde_json::from_str(&l).unwrap()
    };
    // fio runs: its first interval is out.
    while next()["type"] != "interval" {}
    let fio = fio_child_of(child.id()).expect("drivescope's fio");
    // SAFETY: kill(2) with a pid read from /proc just now; the test owns that fio.
    unsafe { libc::kill(fio as i32, libc::SIGSTOP) };
    // drivescope notices, then fio goes on.
    loop {
        let v = next();
        if v["type"] != "interval" && v.to_string().contains("suspended by a signal") {
            break;
        }
    }
    // SAFETY: as above.
    unsafe { libc::kill(fio as i32, libc::SIGCONT) };
    let mut marked = false;
    while !marked {
        let v = next();
        marked = v["type"] == "interval" && v["suspended_s"].as_f64().unwrap_or(0.0) > 0.0;
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(child.wait().is_ok());
}
