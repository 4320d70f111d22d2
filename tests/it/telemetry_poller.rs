//! The poller: samples on time on the caller's clock even when the SMART source hangs
//! (a FIFO standing in for a controller that never answers open), block-stat deltas
//! between polls, the 1 s floor, and each note reported once.

use crate::fake_sysfs;

use std::collections::HashSet;
use std::ffi::CString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use drivescope::drive::{self, DriveInfo, SysRoot};
use drivescope::telemetry::{Poller, TelemetrySample};
use fake_sysfs::Tree;

fn next(rx: &std::sync::mpsc::Receiver<TelemetrySample>) -> TelemetrySample {
    rx.recv_timeout(Duration::from_millis(2500))
        .expect("a sample within 2.5 s of the last")
}

#[test]
fn a_hung_smart_source_never_delays_the_samples() {
    let t = Tree::new();
    t.file("sys/block/nvme0n1/stat", "0 0 0 0 0 0 0 0 0 0 0\n");
    t.mkdir("dev");
    let fifo = CString::new(t.path("dev/nvme0").to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");

    let origin = Instant::now();
    let (poller, rx) = Poller::spawn_in(
        SysRoot::under(t.root()),
        &crate::fake_sysfs::nvme_drive(),
        Duration::from_millis(10),
        origin,
    );
    assert_eq!(poller.period(), Duration::from_secs(1), "never under 1 s");

    let first = next(&rx);
    assert!(first.smart.is_none(), "open() of the controller hangs");
    assert_eq!(first.block.map(|b| b.read_ios), Some(0));
    // 200 reads of 8 sectors, 500 ms busy, before the next poll.
    t.file("sys/block/nvme0n1/stat", "200 0 1600 90 0 0 0 0 2 500 90\n");
    let second = next(&rx);
    let b = second.block.expect("block stats");
    assert_eq!(b.read_ios, 200);
    assert_eq!(b.read_bytes, 1600 * 512);
    assert!(
        (b.read_iops - 200.0).abs() < 40.0,
        "{} IOPS over ~1 s",
        b.read_iops
    );
    assert!((b.util_percent - 50.0).abs() < 10.0, "{} %", b.util_percent);
    assert_eq!(b.in_flight, 2);

    let mut samples = vec![first, second];
    for _ in 0..3 {
        samples.push(next(&rx));
    }
    let t_ns: Vec<u64> = samples.iter().map(|s| s.t_ns).collect();
    for w in t_ns.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            (700_000_000..1_500_000_000).contains(&gap),
            "gaps ~1 s: {t_ns:?}"
        );
    }
    assert!(t_ns[0] >= 900_000_000, "on the caller's clock: {t_ns:?}");
    let slow: Vec<usize> = samples
        .iter()
        .enumerate()
        .filter(|(_, s)| s.notes.iter().any(|n| n.contains("SMART source slow")))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(slow.len(), 1, "the slow source is reported once: {slow:?}");
    assert!(samples.iter().all(|s| s.smart.is_none()));
    let stopped = Instant::now();
    poller.stop();
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "stop does not wait for the hung source"
    );
}

#[test]
fn a_real_drive_is_polled_and_notes_are_not_repeated() {
    let dir = crate::common::disk_tempdir();
    let Ok(info) = drive::resolve(dir.path()) else {
        skip!(NoBlockDevice, "the temp dir is on no block device");
    };
    let (poller, rx) = Poller::spawn(&info, Duration::from_secs(1), Instant::now());
    let samples: Vec<TelemetrySample> = (0..3).map(|_| next(&rx)).collect();
    poller.stop();
    let mut seen = HashSet::new();
    for s in &samples {
        let host = s.host.expect("host figures");
        assert!(host.cpus > 0 && host.mem_total_bytes > 0);
        assert!(host.mem_used_bytes <= host.mem_total_bytes);
        assert!(host.self_rss_bytes.unwrap_or(0) > 0, "own RSS is measured");
        let b = s
            .block
            .unwrap_or_else(|| panic!("stat of {} unreadable: {:?}", info.stat_name, s.notes));
        assert!((0.7..1.5).contains(&b.interval_s), "{b:?}");
        assert!(b.util_percent <= 100.0, "{b:?}");
        for n in &s.notes {
            assert!(seen.insert(n.clone()), "note repeated: {n}");
        }
    }
    // By the second poll the SMART thread has answered once (however little it knows),
    // about the target's disk.
    let smart = samples[1]
        .smart
        .as_ref()
        .expect("a SMART reading by the second poll");
    let disk = info.primary().expect("a disk");
    // An NVMe namespace is read through its controller.
    let expected = match &disk.nvme_controller {
        Some(c) => format!("/dev/{c}"),
        None => disk.dev_path().display().to_string(),
    };
    assert_eq!(
        smart.device.as_deref(),
        Some(expected.as_str()),
        "{smart:?}"
    );
    if smart.source.is_none() {
        assert!(!smart.notes.is_empty(), "says why nothing answered");
    }
}

#[test]
fn a_target_without_a_disk_gets_block_stats_and_no_false_slow_note() {
    let t = Tree::new();
    t.file("sys/block/zram0/stat", "5 0 40 0 0 0 0 0 0 0 0\n");
    let drive = DriveInfo {
        target: PathBuf::from("/dev/zram0"),
        block_device: "zram0".into(),
        stat_name: "zram0".into(),
        disks: vec![],
    };
    let (poller, rx) = Poller::spawn_in(
        SysRoot::under(t.root()),
        &drive,
        Duration::from_secs(1),
        Instant::now(),
    );
    let mut samples = vec![next(&rx)];
    // Between two polls: 12 reads of 96 sectors, 3 writes of 24, 1 in flight, 250 ms busy
    // (a rename, so that a poll never reads a half-written file).
    let stat = t.path("sys/block/zram0/stat");
    let tmp = t.path("stat.new");
    std::fs::write(&tmp, "17 0 136 0 3 0 24 0 1 250 0\n").expect("write");
    std::fs::rename(&tmp, &stat).expect("rename");
    samples.extend((0..3).map(|_| next(&rx)));
    poller.stop();
    let notes: Vec<&String> = samples.iter().flat_map(|s| &s.notes).collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("no whole disk"), "{notes:?}");
    assert!(samples.iter().all(|s| s.smart.is_none()));
    let blocks: Vec<_> = samples
        .iter()
        .map(|s| s.block.expect("block stats in every sample"))
        .collect();
    // The first poll: nothing moved since the poller's first read.
    let b = blocks[0];
    assert_eq!(
        (b.read_ios, b.write_ios, b.read_bytes, b.write_bytes),
        (0, 0, 0, 0)
    );
    assert_eq!(b.in_flight, 0);
    // The second: what the file gained.
    let b = blocks[1];
    assert_eq!((b.read_ios, b.write_ios), (12, 3));
    assert_eq!((b.read_bytes, b.write_bytes), (96 * 512, 24 * 512));
    assert_eq!(b.in_flight, 1);
    assert!((0.7..1.5).contains(&b.interval_s), "{} s", b.interval_s);
    assert!(
        (b.read_iops - 12.0 / b.interval_s).abs() < 1e-9
            && (b.write_bytes_per_s - 24.0 * 512.0 / b.interval_s).abs() < 1e-6,
        "{b:?}"
    );
    assert!(
        (b.util_percent - 25.0 / b.interval_s).abs() < 1e-9,
        "250 ms busy: {b:?}"
    );
    // Then nothing more moved.
    for b in &blocks[2..] {
        assert_eq!((b.read_ios, b.write_ios, b.in_flight), (0, 0, 1), "{b:?}");
    }
}

#[test]
fn a_block_stat_that_never_answers_leaves_the_samples_on_time() {
    // A FIFO where the stat file should be: open() of it waits for a writer that never
    // comes, as a read of a wedged pseudo-file would.
    let t = Tree::new();
    t.mkdir("sys/block/zram0");
    let fifo =
        CString::new(t.path("sys/block/zram0/stat").to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
    let drive = DriveInfo {
        target: PathBuf::from("/dev/zram0"),
        block_device: "zram0".into(),
        stat_name: "zram0".into(),
        disks: vec![],
    };
    let origin = Instant::now();
    let (poller, rx) = Poller::spawn_in(
        SysRoot::under(t.root()),
        &drive,
        Duration::from_secs(1),
        origin,
    );
    let samples: Vec<TelemetrySample> = (0..2).map(|_| next(&rx)).collect();
    let stopped = Instant::now();
    poller.stop();
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "stop is not held by the stat read"
    );
    assert!(samples.iter().all(|s| s.block.is_none()), "{samples:?}");
    let notes: Vec<&String> = samples.iter().flat_map(|s| &s.notes).collect();
    let stat_notes: Vec<&&String> = notes
        .iter()
        .filter(|n| n.starts_with("no block stats: "))
        .collect();
    assert_eq!(stat_notes.len(), 1, "said once: {notes:?}");
    assert!(
        stat_notes[0].contains("sys/block/zram0/stat") && stat_notes[0].contains("FIFO"),
        "names the file and what it is: {notes:?}"
    );
}
