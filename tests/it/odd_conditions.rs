//! Odd conditions that are not the drive's fault (issue "hostile input", false blame): a
//! process suspended with SIGSTOP, before or across a step's end, and a queue deeper than
//! the machine can get going within a short step. None of them may end a run as "device
//! stalled" or pull a suspended span into the step's figures. Each drives the real binary.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Runs drivescope with `args` (which must ask for `--json`), stops it with SIGSTOP
/// `stop_after` after its first interval line, for `stopped_for`, continues it, and waits
/// for it; returns its stdout lines and stderr.
fn run_with_a_stop(
    home: &Path,
    args: &[&str],
    stop_after: Duration,
    stopped_for: Duration,
) -> (Option<i32>, Vec<Value>, String) {
    let mut first = true;
    run_with_stops(home, args, |l| {
        let now = first && l["type"] == "interval";
        first &= !now;
        now.then_some((stop_after, stopped_for))
    })
}

/// Runs drivescope with `args` (which must ask for `--json`); on each stdout line for
/// which `plan` says (after, for), waits `after`, stops it with SIGSTOP for `for` and
/// continues it. Waits for it; returns its exit code, stdout lines and stderr.
fn run_with_stops(
    home: &Path,
    args: &[&str],
    mut plan: impl FnMut(&Value) -> Option<(Duration, Duration)>,
) -> (Option<i32>, Vec<Value>, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(common::bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn drivescope");
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str::<Value>(&l).unwrap_or(Value::Null));
        }
    });
    let mut err = String::new();
    let mut stderr = child.stderr.take().expect("piped stderr");
    let errs = std::thread::spawn(move || {
        let _ = stderr.read_to_string(&mut err);
        err
    });
    let mut lines = Vec::new();
    let started = Instant::now();
    loop {
        let l = match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(l) => l,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                assert!(
                    started.elapsed() < Duration::from_secs(300),
                    "still running after 5 minutes: {lines:?}"
                );
                continue;
            }
        };
        if let Some((after, stopped_for)) = plan(&l) {
            std::thread::sleep(after);
            // SAFETY: plain kill(2) on our own child's pid, which stays reserved until we
            // wait.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
            std::thread::sleep(stopped_for);
            // SAFETY: as above.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        }
        lines.push(l);
    }
    let status = child.wait().expect("wait for drivescope");
    (status.code(), lines, errs.join().expect("stderr reader"))
}

fn intervals(lines: &[Value]) -> Vec<&Value> {
    common::of_type(lines, "interval")
}

#[test]
fn a_sigstop_across_the_steps_end_is_not_a_stalled_device() {
    let _timing = crate::common::timing_lock();
    let dir = common::disk_tempdir();
    let t = dir.path().join("t.bin");
    let args = [
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64MiB",
        "--duration",
        "1s",
        "--interval",
        "250ms",
        "--json",
    ];
    // Make the file (and fill it) first, so the stop lands in the step.
    let first = common::run(dir.path(), &args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // Stopped after its first interval (0.25 s) for 3 s: the 1 s step's end falls in it.
    let (code, lines, err) = run_with_a_stop(
        dir.path(),
        &args,
        Duration::from_millis(100),
        Duration::from_secs(3),
    );
    assert_eq!(code, Some(0), "{err}");
    let s = common::summary(&lines);
    assert_eq!(s["ended_by"], "duration", "{s}");
    let marked: Vec<_> = intervals(&lines)
        .into_iter()
        .filter(|i| i["suspended_s"].as_f64().unwrap_or(0.0) > 0.0)
        .collect();
    let suspended: f64 = marked
        .iter()
        .filter_map(|i| i["suspended_s"].as_f64())
        .sum();
    assert!(
        (2.5..4.0).contains(&suspended),
        "the 3 s stop is marked: {suspended} s in {marked:?}"
    );
    // The stop's seconds are not the drive's latency, nor part of the measured time.
    let max_ms = s["lat_us"]["max"].as_f64().unwrap() / 1000.0;
    assert!(
        max_ms < 1000.0,
        "a 3 s stop counted as latency: max {max_ms} ms"
    );
    let runtime = s["runtime_s"].as_f64().unwrap();
    assert!(
        runtime < 1.05,
        "the suspended span counted as measured time: {runtime} s"
    );
    let said = common::of_type(&lines, "note").iter().any(|n| {
        n["message"]
            .as_str()
            .is_some_and(|m| m.contains("the process was suspended for"))
    });
    assert!(said, "no note of the suspension");
}

#[test]
fn ten_stops_across_step_ends_under_cpu_load_are_never_a_stalled_device() {
    // A sweep of 13 short steps (0.1 s ramp, 0.6 s measured, 100 ms intervals) on a file
    // of a real file system, the machine loaded with twice its CPUs of spinning threads.
    // In each of the first ten steps the process is stopped from about 0.5 s in for 0.4 to
    // 1.6 s, so that the step's end comes while it is stopped, and then it has to wait for
    // a CPU to finish the step. It was not running, so it saw no completion; the device
    // (whose counters the kernel keeps) held nothing of it. No step may end as a stall.
    let _timing = crate::common::timing_lock();
    let dir = common::disk_tempdir();
    let t = dir.path().join("t.bin");
    let args = [
        "run",
        "--preset",
        "storagereview-4k-randread",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64MiB",
        "--time-scale",
        "0.02",
        "--interval",
        "100ms",
        "--json",
    ];
    let _load = common::CpuBurners::start();
    let mut stops = 0u64;
    let (code, lines, err) = run_with_stops(dir.path(), &args, |l| {
        // Interval 4 of a step ends 0.5 s in; its end is due at 0.7 s.
        let now = stops < 10 && l["type"] == "interval" && l["index"] == 4;
        stops += u64::from(now);
        now.then(|| (Duration::ZERO, Duration::from_millis(270 + 130 * stops)))
    });
    assert_eq!(stops, 10, "stopped ten times: {lines:?}");
    let steps = common::of_type(&lines, "step");
    let ends: Vec<&str> = steps
        .iter()
        .map(|s| s["summary"]["ended_by"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(code, Some(0), "{ends:?}\n{err}");
    assert_eq!(ends, ["duration"; 13], "{err}");
    assert!(!err.contains("stalled"), "{err}");
    let plan = common::of_type(&lines, "plan_summary");
    assert_eq!(plan[0]["outcome"], "completed", "{plan:?}");
}

#[test]
fn a_sigstop_mid_run_is_left_out_and_the_rate_resumes_without_a_burst() {
    let _timing = crate::common::timing_lock();
    let dir = tempfile::tempdir().unwrap();
    // The schedule is what is measured, not the disk: a file in memory (tmpfs, through the
    // page cache), so a disk busy with another build's writes cannot hold the queue full.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = shm.path().join("t.bin");
    let args = [
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "64MiB",
        "--direct",
        "0",
        "--duration",
        "2s",
        "--interval",
        "250ms",
        "--rate-iops",
        "2000",
        "--json",
    ];
    let first = common::run(dir.path(), &args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let started = Instant::now();
    let (code, lines, err) = run_with_a_stop(
        dir.path(),
        &args,
        Duration::from_millis(500),
        Duration::from_millis(2500),
    );
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(code, Some(0), "{err}");
    let s = common::summary(&lines);
    assert_eq!(s["ended_by"], "duration", "{s}");
    // The step still measures its time after the stop (the schedule moved by the stop),
    // and what it measured ran at the asked rate: no catch-up burst, no zero seconds.
    assert!(
        wall > 4.0,
        "the step did not resume after the stop: {wall} s"
    );
    let iops = s["iops"].as_f64().unwrap();
    assert!(
        (iops / 2000.0 - 1.0).abs() < 0.02,
        "rate {iops} IOPS against 2000: {s}\n{:?}",
        intervals(&lines)
            .iter()
            .map(|i| (
                &i["start_s"],
                &i["end_s"],
                &i["read_iops"],
                &i["suspended_s"]
            ))
            .collect::<Vec<_>>()
    );
    for i in intervals(&lines) {
        let marked = i["suspended_s"].as_f64().unwrap_or(0.0) > 0.0;
        let rate = i["read_iops"].as_f64().unwrap();
        if !marked
            && !i["ramp"].as_bool().unwrap_or(false)
            && i["end_s"].as_f64().unwrap() - i["start_s"].as_f64().unwrap() > 0.2
        {
            assert!(
                rate > 1000.0 && rate < 3000.0,
                "an unmarked interval at {rate} IOPS: {i}"
            );
        }
    }
}

#[test]
fn a_queue_too_deep_for_a_short_step_is_not_a_stalled_device() {
    // 262,144 I/Os queued at once: the last of them come back well after the step's end,
    // from a healthy device (a loop device over /dev/shm, so the machine's disk is left to
    // the other tests). Before, this ended as "device stalled", exit 1, nothing measured.
    let _timing = crate::common::timing_lock();
    let Some(dev) = common::LoopDev::new(256 << 20) else {
        return;
    };
    let home = common::disk_tempdir();
    let out = common::run(
        home.path(),
        &[
            "run",
            "--target",
            dev.dev.to_str().unwrap(),
            "--iodepth",
            "4096",
            "--jobs",
            "64",
            "--duration",
            "1s",
            "--json",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = common::json_lines(&out);
    let s = common::summary(&lines);
    let ended = s["ended_by"].as_str().unwrap_or("");
    assert!(
        !ended.starts_with("device stalled"),
        "a healthy device blamed: {ended}"
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// Starts a writer of `target` for `secs` and waits for its first interval; the child and
/// its stdout reader.
fn start_writer(home: &Path, target: &str, extra: &[&str], secs: &str) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let mut args = vec![
        "run",
        "--target",
        target,
        "--rw",
        "randwrite",
        "--duration",
        secs,
        "--interval",
        "250ms",
        "--json",
    ];
    args.extend_from_slice(extra);
    let mut child = Command::new(common::bin())
        .args(&args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn drivescope");
    let out = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(out).lines();
    let started = Instant::now();
    loop {
        let l = lines
            .next()
            .and_then(Result::ok)
            .expect("the writer ended early");
        if l.contains("\"type\":\"interval\"") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no interval");
    }
    // Keep reading so the writer never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    child
}

#[test]
fn a_second_writer_on_one_file_is_refused_and_told_who_writes_it() {
    let dir = common::disk_tempdir();
    let t = dir.path().join("t.bin");
    let ts = t.to_str().unwrap();
    let made = common::run(
        dir.path(),
        &[
            "run",
            "--target",
            ts,
            "--size",
            "64MiB",
            "--duration",
            "200ms",
        ],
    );
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mut first = start_writer(dir.path(), ts, &[], "4s");
    let second = common::run(
        dir.path(),
        &[
            "run",
            "--target",
            ts,
            "--rw",
            "randwrite",
            "--duration",
            "1s",
        ],
    );
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("PID {}", first.id())),
        "the first writer is named: {err}"
    );
    assert!(err.contains("drivescope"), "{err}");
    assert!(
        first.wait().unwrap().success(),
        "the first writer was disturbed"
    );
}

#[test]
fn a_second_writer_on_a_loop_device_is_told_which_process_holds_it() {
    let Some(dev) = common::LoopDev::new(64 << 20) else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let home = common::disk_tempdir();
    let mut first = start_writer(home.path(), d, &["--destroy-data", d], "4s");
    let second = common::run(
        home.path(),
        &[
            "run",
            "--target",
            d,
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--destroy-data",
            d,
        ],
    );
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("PID {}", first.id())),
        "the holder is named: {err}"
    );
    assert!(
        !err.contains("mounted, active swap"),
        "a drivescope holder blamed on mounts: {err}"
    );
    assert!(
        first.wait().unwrap().success(),
        "the first writer was disturbed"
    );
}

#[test]
fn paths_that_are_not_utf8_run_and_are_recorded_byte_for_byte() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = common::disk_tempdir();
    let t = dir.path().join(OsStr::from_bytes(b"t\xff.bin"));
    let s = dir.path().join(OsStr::from_bytes(b"s\xfe.yaml"));
    let out = Command::new(common::bin())
        .arg("run")
        .arg("--target")
        .arg(&t)
        .args(["--size", "8MiB", "--duration", "200ms", "--session"])
        .arg(&s)
        .env("HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .output()
        .expect("run drivescope");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(t.exists() && s.exists(), "the odd names were used as given");
    let saved = drivescope::session::load(&s)
        .expect("the session loads")
        .session;
    assert!(
        saved.target.path.ends_with("t\\xFF.bin"),
        "recorded as {}",
        saved.target.path
    );
    let command = saved.command.unwrap_or_default();
    assert!(command.contains("s\\xFE.yaml"), "{command}");
}
