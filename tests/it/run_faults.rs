//! Faults the machine can make without device-mapper: a test file that shrinks under a
//! running workload turns reads past its new end into short reads (0 bytes), which the
//! engine must count as errors with their offsets, keep running through, and stop on when
//! every I/O fails. (EIO and stalls from dm-error / dm-delay run in the QEMU guest.)

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{json_lines, of_type, summary};

fn spawn_read(home: &std::path::Path, target: &std::path::Path, secs: &str) -> std::process::Child {
    Command::new(common::bin())
        .args([
            "run",
            "--target",
            target.to_str().unwrap(),
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "8",
            "--rate-iops",
            "4000",
            "--duration",
            secs,
            "--interval",
            "250ms",
            "--json",
        ])
        .env("HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn short_reads_are_counted_logged_and_survived() {
    let home = tempfile::tempdir().unwrap();
    let t = home.path().join("shrinking.bin");
    std::fs::write(&t, vec![9u8; 32 << 20]).unwrap();
    let child = spawn_read(home.path(), &t, "3s");
    std::thread::sleep(Duration::from_millis(1200));
    // Half the region is gone: reads there return 0 bytes.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&t)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let s = summary(&lines);
    let errors = s["errors"].as_u64().unwrap();
    let ios = s["ios"].as_u64().unwrap();
    assert!(
        errors > 500,
        "about half of ~7000 reads after the shrink fail: {errors}"
    );
    assert!(ios > errors, "the run went on: {ios} good, {errors} failed");
    assert_eq!(s["ended_by"], "duration");
    let logged = of_type(&lines, "io_error");
    assert!(!logged.is_empty());
    for e in &logged {
        let off = e["offset"].as_u64().unwrap();
        assert!(off >= 16 << 20, "only reads past the new end fail: {e}");
        assert!(e["message"].as_str().unwrap().contains("short read"), "{e}");
    }
    // Errors are counted in the intervals where they happened.
    let per_interval: Vec<u64> = of_type(&lines, "interval")
        .iter()
        .map(|i| i["errors"].as_u64().unwrap())
        .collect();
    assert_eq!(per_interval[0], 0, "{per_interval:?}");
    assert_eq!(per_interval.iter().sum::<u64>(), errors);
}

#[test]
fn a_run_where_every_io_fails_stops_with_the_reason() {
    let home = tempfile::tempdir().unwrap();
    let t = home.path().join("vanishing.bin");
    std::fs::write(&t, vec![9u8; 8 << 20]).unwrap();
    let child = spawn_read(home.path(), &t, "30s");
    std::thread::sleep(Duration::from_millis(800));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&t)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    let s = summary(&lines);
    let ended = s["ended_by"].as_str().unwrap();
    assert!(ended.starts_with("every I/O failed"), "{ended}");
    assert!(s["runtime_s"].as_f64().unwrap() < 5.0, "stopped early");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("every I/O failed"), "{err}");
}
