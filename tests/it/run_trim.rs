//! Trim workloads (`--rw trim|randtrim|trimwrite`): on a loop device each trim is a discard
//! the kernel counts, on a file a punched hole; the guard asks --destroy-data as for a
//! write.

use std::os::unix::fs::MetadataExt;

use crate::common::{self, LoopDev};

/// The step summary of a headless JSON run that must have succeeded.
fn trim_run(home: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["run", "--json", "--duration", "1s", "--interval", "250ms"];
    all.extend_from_slice(args);
    let out = common::run(home, &all);
    let lines = common::succeeded(&out);
    common::summary(&lines).clone()
}

/// Whether the running kernel's release is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    have >= (major, minor)
}

fn ios(s: &serde_json::Value, field: &str) -> u64 {
    s[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field} in {s}"))
}

#[test]
fn a_randtrim_runs_trims_count_the_kernels_discards() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    for engine in ["io_uring", "sync"] {
        let before = dev.discards();
        let s = trim_run(
            home.path(),
            &[
                "-t",
                d,
                "--rw",
                "randtrim",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--engine",
                engine,
                "--destroy-data",
                d,
            ],
        );
        let kernel = dev.discards() - before;
        let trims = ios(&s, "trim_ios");
        assert!(trims > 100, "{engine}: {s}");
        assert_eq!(ios(&s, "errors"), 0, "{engine}: {s}");
        // io_uring's block discard command is Linux 6.12's; before it the step runs sync.
        if engine == "sync" || kernel_at_least(6, 12) {
            assert_eq!(s["engine"], engine, "{s}");
        }
        assert_eq!((ios(&s, "read_ios"), ios(&s, "write_ios")), (0, 0), "{s}");
        assert_eq!(ios(&s, "trim_bytes"), trims * 4096, "{s}");
        assert_eq!(ios(&s, "ios"), trims, "{s}");
        assert_eq!(s["trim_lat_us"]["samples"].as_u64(), Some(trims), "{s}");
        assert!(
            kernel.abs_diff(trims) as f64 <= trims as f64 * 0.01,
            "{engine}: trims {trims} vs the kernel's discards {kernel}"
        );
    }
}

#[test]
fn a_trimwrite_runs_trims_and_writes_count_the_kernels() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    for engine in ["io_uring", "sync"] {
        // Asked, not completed: two adjacent 64k writes in flight at once may merge into
        // one request the kernel completes.
        let (discards, writes) = (dev.discards_asked().0, dev.writes_asked());
        let s = trim_run(
            home.path(),
            &[
                "-t",
                d,
                "--rw",
                "trimwrite",
                "--bs",
                "64k",
                "--iodepth",
                "4",
                "--engine",
                engine,
                "--destroy-data",
                d,
            ],
        );
        let kernel = (
            dev.discards_asked().0 - discards,
            dev.writes_asked() - writes,
        );
        let (trims, written) = (ios(&s, "trim_ios"), ios(&s, "write_ios"));
        assert!(written > 50, "{engine}: {s}");
        // A trim, then the write of its block: the last trim's write may be cut by the end.
        assert!(trims.abs_diff(written) <= 1, "{engine}: {s}");
        assert_eq!(ios(&s, "read_ios"), 0, "{s}");
        assert_eq!(ios(&s, "errors"), 0, "{engine}: {s}");
        assert_eq!(ios(&s, "ios"), trims + written, "{s}");
        assert_eq!(ios(&s, "write_bytes"), written * (64 << 10), "{s}");
        assert_eq!(ios(&s, "trim_bytes"), trims * (64 << 10), "{s}");
        assert_eq!(s["trim_lat_us"]["samples"].as_u64(), Some(trims), "{s}");
        assert_eq!(s["write_lat_us"]["samples"].as_u64(), Some(written), "{s}");
        for (what, ours, theirs) in [("trims", trims, kernel.0), ("writes", written, kernel.1)] {
            assert!(
                ours.abs_diff(theirs) as f64 <= ours as f64 * 0.01,
                "{engine}: {what} {ours} vs the kernel's {theirs}"
            );
        }
    }
}

#[test]
fn a_device_trim_without_destroy_data_is_refused() {
    let Some(dev) = LoopDev::new(16 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    let before = dev.discards();
    let out = common::run(
        home.path(),
        &["run", "-t", d, "--rw", "randtrim", "--duration", "1s"],
    );
    common::refused(&out, &["--destroy-data"]);
    assert_eq!(dev.discards(), before, "a refused trim discarded");
}

#[test]
fn a_trim_run_on_a_file_punches_holes_and_counts_them() {
    let dir = common::disk_tempdir();
    let home = tempfile::tempdir().unwrap();
    for (rw, engine) in [("trim", "io_uring"), ("randtrim", "sync")] {
        // `trimwrite` writes each block it trims: it is below, with its own checks.
        let f = dir.path().join(format!("{rw}-{engine}.img"));
        std::fs::write(&f, vec![0x5au8; 16 << 20]).unwrap();
        let p = f.to_str().unwrap();
        let blocks = std::fs::metadata(&f).unwrap().blocks();
        assert!(
            blocks >= (16 << 20) / 512,
            "the file is not allocated: {blocks}"
        );
        let s = trim_run(
            home.path(),
            &[
                "-t",
                p,
                "--rw",
                rw,
                "--bs",
                "64k",
                "--engine",
                engine,
                "--destroy-data",
                p,
            ],
        );
        let trims = ios(&s, "trim_ios");
        assert!(trims > 0, "{rw} {engine}: {s}");
        assert_eq!(ios(&s, "trim_bytes"), trims * (64 << 10), "{s}");
        assert_eq!(ios(&s, "write_ios"), 0, "{s}");
        assert_eq!(ios(&s, "errors"), 0, "{s}");
        assert_eq!(s["engine"], engine, "{s}");
        let meta = std::fs::metadata(&f).unwrap();
        assert_eq!(meta.len(), 16 << 20, "a punched hole keeps the size");
        assert!(
            meta.blocks() < blocks / 2,
            "{rw} {engine}: {trims} trims left {} of {blocks} blocks",
            meta.blocks()
        );
    }
}

/// The column `name` of the steps CSV row `row` under `header`.
fn column<'a>(header: &str, row: &'a str, name: &str) -> &'a str {
    let i = header
        .split(',')
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("no {name} in {header}"));
    row.split(',')
        .nth(i)
        .unwrap_or_else(|| panic!("no column {i} in {row}"))
}

#[test]
fn a_trimwrite_on_a_file_writes_back_every_block_it_punched() {
    let dir = common::disk_tempdir();
    let home = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "sync"] {
        let f = dir.path().join(format!("trimwrite-{engine}.img"));
        std::fs::write(&f, vec![0x5au8; 4 << 20]).unwrap();
        let p = f.to_str().unwrap();
        let s = trim_run(
            home.path(),
            &[
                "-t",
                p,
                "--rw",
                "trimwrite",
                "--bs",
                "64k",
                "--iodepth",
                "1",
                "--engine",
                engine,
                "--destroy-data",
                p,
            ],
        );
        let (trims, written) = (ios(&s, "trim_ios"), ios(&s, "write_ios"));
        assert!(
            written >= 64,
            "{engine}: the 4 MiB file once over at least: {s}"
        );
        // Every trim's write went out, the last one's too: a step ending by time does not
        // stop between a trim and its write (as fio issue #2122 reports of fio).
        assert_eq!(trims, written, "{engine}: {s}");
        assert_eq!(ios(&s, "errors"), 0, "{engine}: {s}");
        let meta = std::fs::metadata(&f).unwrap();
        assert_eq!(meta.len(), 4 << 20);
        // Each hole is written again (at QD1 a block's write follows its trim's completion):
        // the file is whole.
        assert!(
            meta.blocks() >= (4 << 20) / 512,
            "{engine}: {} blocks of {}",
            meta.blocks(),
            (4 << 20) / 512
        );
    }
}

/// At a deep queue too, a run ended by time issues the write of every block it trimmed:
/// five runs, each with as many writes as trims (one in four runs ended a trim short
/// before the end waited for it).
#[test]
fn a_deep_trimwrite_ended_by_time_writes_every_block_it_trimmed() {
    let dir = common::disk_tempdir();
    let home = tempfile::tempdir().unwrap();
    let f = dir.path().join("trimwrite-deep.img");
    std::fs::write(&f, vec![0x5au8; 16 << 20]).unwrap();
    let p = f.to_str().unwrap();
    for engine in ["io_uring", "sync"] {
        for _ in 0..5 {
            let s = trim_run(
                home.path(),
                &[
                    "-t",
                    p,
                    "--rw",
                    "trimwrite",
                    "--bs",
                    "4k",
                    "--iodepth",
                    if engine == "sync" { "1" } else { "7" },
                    "--engine",
                    engine,
                    "--destroy-data",
                    p,
                ],
            );
            let (trims, written) = (ios(&s, "trim_ios"), ios(&s, "write_ios"));
            assert!(trims > 0, "{engine}: {s}");
            assert_eq!(trims, written, "{engine}: {s}");
        }
    }
}

#[test]
fn a_native_trim_steps_csv_has_its_trims_and_compare_its_mean_latency() {
    let dir = common::disk_tempdir();
    let f = dir.path().join("t.img");
    std::fs::write(&f, vec![0x5au8; 16 << 20]).unwrap();
    let p = f.to_str().unwrap();
    let session = dir.path().join("s.yaml");
    let out = common::run(
        dir.path(),
        &[
            "run",
            "-t",
            p,
            "--rw",
            "randtrim",
            "--bs",
            "64k",
            "--duration",
            "1s",
            "--interval",
            "250ms",
            "--destroy-data",
            p,
            "--session",
            session.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let saved: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap();
    let trims = saved["steps"][0]["summary"]["trim_ios"]
        .as_u64()
        .unwrap_or_else(|| panic!("no trim_ios in {:?}", saved["steps"][0]));
    assert!(trims > 0);

    let rep = dir.path().join("rep");
    let out = common::run(
        dir.path(),
        &[
            "report",
            session.to_str().unwrap(),
            "-o",
            rep.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let csv = std::fs::read_to_string(rep.join("steps.csv")).unwrap();
    let mut lines = csv.lines();
    let (header, row) = (lines.next().unwrap(), lines.next().unwrap());
    assert!(
        header.contains(",measured_s,trim_ios,trim_iops,trim_mbps,trim_response_lat_mean_us,"),
        "the trims' columns come after the old ones: {header}"
    );
    assert_eq!(column(header, row, "trim_ios"), trims.to_string(), "{csv}");
    assert_eq!(column(header, row, "write_ios"), "0", "{csv}");
    let mean: f64 = column(header, row, "trim_response_lat_mean_us")
        .parse()
        .unwrap();
    let p99: f64 = column(header, row, "trim_response_lat_p99_us")
        .parse()
        .unwrap();
    assert!(
        mean > 0.0
            && p99
                >= column(header, row, "trim_response_lat_p50_us")
                    .parse()
                    .unwrap()
    );
    let iops: f64 = column(header, row, "trim_iops").parse().unwrap();
    let mbps: f64 = column(header, row, "trim_mbps").parse().unwrap();
    assert!(
        (mbps - iops * 65536.0 / 1e6).abs() <= mbps * 0.001 + 0.01,
        "{iops} IOPS of 64 KiB, {mbps} MB/s"
    );

    // compare's step table: a trim step has a mean latency, the trims' own.
    let out = common::command(dir.path())
        .current_dir(dir.path())
        .args([
            "compare",
            session.to_str().unwrap(),
            session.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let step_row = text
        .lines()
        .skip_while(|l| !l.starts_with("steps of "))
        .nth(2)
        .unwrap_or_else(|| panic!("no step row: {text}"));
    // Its mean and its p99 against themselves; a mean of reads and writes only was "-".
    assert_eq!(step_row.matches("(+0.0%)").count(), 2, "{step_row}");
}

#[test]
fn a_trimwrite_preset_plans_and_exports_fios_trimwrite() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("tw.yaml");
    std::fs::write(
        &preset,
        "id: tw\nname: TW\ndescription: d\nphases:\n  - name: tw\n    workload: {rw: trimwrite, bs: 64k, iodepth: 1}\n    end: {duration: 5s}\n",
    )
    .unwrap();
    let p = preset.to_str().unwrap();
    let out = common::run(dir.path(), &["presets", "fio", p]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let job = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(job.contains("\nrw=trimwrite\n"), "{job}");
    assert!(!job.contains("rwmixread"), "{job}");
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        skip!(Tool, "fio is not installed");
    }
    let file = dir.path().join("tw.fio");
    std::fs::write(&file, &job).unwrap();
    let fio = std::process::Command::new("fio")
        .arg("--parse-only")
        .arg(&file)
        .env("TARGET", dir.path().join("target.bin"))
        .output()
        .expect("run fio");
    assert!(
        fio.status.success(),
        "fio refuses the export: {}{}",
        String::from_utf8_lossy(&fio.stderr),
        job
    );
}

#[test]
fn a_randrw_with_a_trim_share_trims_its_share_and_counts_the_kernels() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    // What a run reads besides its workload (the write guard's signature probe: 48 reads
    // here), counted by the kernel for a run that reads nothing: taken off the kernel's
    // reads below. Under load a slow sync run's 3.7k reads made it 1.3%.
    let before = dev.stat().0;
    trim_run(
        home.path(),
        &[
            "-t",
            d,
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--destroy-data",
            d,
        ],
    );
    let probe_reads = dev.stat().0 - before;
    for engine in ["io_uring", "sync"] {
        let (discards, (reads, writes)) = (dev.discards(), dev.stat());
        let s = trim_run(
            home.path(),
            &[
                "-t",
                d,
                "--rw",
                "randrw",
                "--rwmixread",
                "50",
                "--rwmixtrim",
                "20",
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--engine",
                engine,
                "--destroy-data",
                d,
            ],
        );
        let stat = dev.stat();
        let kernel = (
            dev.discards() - discards,
            (stat.0 - reads).saturating_sub(probe_reads),
            stat.1 - writes,
        );
        let (trims, read, written) = (
            ios(&s, "trim_ios"),
            ios(&s, "read_ios"),
            ios(&s, "write_ios"),
        );
        let all = ios(&s, "ios");
        assert_eq!(all, trims + read + written, "{s}");
        // However few I/Os a loaded machine let a second hold: enough to see the shares.
        assert!(all > 200, "{engine}: {s}");
        assert_eq!(ios(&s, "errors"), 0, "{engine}: {s}");
        let pct = |n: u64| n as f64 * 100.0 / all as f64;
        // Each I/O draws its kind: a share of p is binomial, within 4 standard deviations
        // (and at least the 2 points it always was within).
        let within = |p: f64| (400.0 * (p * (1.0 - p) / all as f64).sqrt()).max(2.0);
        assert!(
            (pct(trims) - 20.0).abs() <= within(0.2),
            "{engine}: trims {trims} of {all}"
        );
        assert!(
            (pct(read) - 40.0).abs() <= within(0.4),
            "{engine}: reads {read} of {all}"
        );
        for (what, ours, theirs) in [
            ("trims", trims, kernel.0),
            ("reads", read, kernel.1),
            ("writes", written, kernel.2),
        ] {
            assert!(
                ours.abs_diff(theirs) as f64 <= ours as f64 * 0.01,
                "{engine}: {what} {ours} vs the kernel's {theirs}"
            );
        }
    }
}

#[test]
fn a_trim_share_is_refused_where_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    // On a pattern that is not a mix: the flag is named.
    let out = common::run(
        dir.path(),
        &[
            "run",
            "--rw",
            "randread",
            "--rwmixtrim",
            "20",
            "--duration",
            "1s",
        ],
    );
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("--rwmixtrim") && err.contains("randread"),
        "{err}"
    );
    // In a preset: the field and its line.
    let preset = dir.path().join("mt.yaml");
    let body = |rw: &str| {
        format!(
            "id: mt\nname: MT\ndescription: d\nphases:\n  - name: mt\n    workload:\n      rw: {rw}\n      rwmixtrim: 20%\n      bs: 4k\n      iodepth: 1\n    end: {{duration: 5s}}\n"
        )
    };
    std::fs::write(&preset, body("randread")).unwrap();
    let p = preset.to_str().unwrap();
    let out = common::run(dir.path(), &["presets", "validate", p]);
    assert!(!out.status.success());
    let err = format!(
        "{}{}",
        common::stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("rwmixtrim") && err.contains(":8:"), "{err}");
    // A matrix read share of 100% leaves the mix no writes: that cell is named.
    let matrix = body("randrw").replace(
        "    end:",
        "    matrix:\n      rwmixread: [70%, 100%]\n    end:",
    );
    std::fs::write(&preset, matrix).unwrap();
    let out = common::run(dir.path(), &["presets", "validate", p]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("matrix.rwmixread[1]") && err.contains(":12:"),
        "{err}"
    );
    // A mix with a trim share plans, but fio cannot say it: the export is refused, why said.
    std::fs::write(&preset, body("randrw")).unwrap();
    let out = common::run(dir.path(), &["presets", "validate", p]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = common::run(dir.path(), &["presets", "fio", p]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("no trim share"), "{err}");
}

/// On a queue as shallow as a SATA or USB drive's (the loop device's `nr_requests` set to
/// 4), the block layer pushes discards back and the kernel issues them again from its
/// io-wq, reading their SQE from the submission ring (Linux 6.12+), where a later SQE may
/// sit by then: issued inline, a randtrim's discards then covered other trims' ranges and
/// a write and trim mix saw trims refused with EINVAL (exit 1, as the drive's I/O errors).
/// Issued as `IOSQE_ASYNC` (the SQE copied at submission) none is refused, and the
/// kernel's discards are the run's own to the byte (besides the two one-block trims that
/// probe the target before the step).
#[test]
fn trims_on_a_shallow_queue_are_the_ones_issued_and_none_is_refused() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let depth = format!("/sys/block/{}/queue/nr_requests", dev.name);
    std::fs::write(&depth, "4").unwrap();
    assert_eq!(std::fs::read_to_string(&depth).unwrap().trim(), "4");
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    for (workload, smallest) in [
        (
            &["--rw", "randtrim", "--bssplit", "1m/50:4m/50"][..],
            1u64 << 20,
        ),
        (
            &[
                "--rw",
                "randrw",
                "--rwmixread",
                "0",
                "--rwmixtrim",
                "50",
                "--bssplit",
                "64k/50:1m/50",
            ][..],
            64 << 10,
        ),
    ] {
        let before = dev.discards_asked();
        let mut args = vec![
            "run",
            "--json",
            "--duration",
            "3s",
            "-t",
            d,
            "--jobs",
            "4",
            "--iodepth",
            "16",
            "--destroy-data",
            d,
        ];
        args.extend_from_slice(workload);
        let out = common::run(home.path(), &args);
        let lines = common::succeeded(&out);
        let s = common::summary(&lines);
        let after = dev.discards_asked();
        let (asked, sectors) = (after.0 - before.0, after.1 - before.1);
        let (trims, bytes) = (ios(s, "trim_ios"), ios(s, "trim_bytes"));
        assert!(trims > 100, "{workload:?}: {s}");
        assert_eq!(ios(s, "errors"), 0, "{workload:?}: {s}");
        // The probes: one trim of the smallest block, and on io_uring one more, of its
        // discard command.
        let probes = if s["engine"] == "io_uring" { 2 } else { 1 };
        if kernel_at_least(6, 12) {
            assert_eq!(s["engine"], "io_uring", "{s}");
        }
        assert_eq!(
            asked,
            trims + probes,
            "{workload:?}: trims {trims} vs the kernel's discards {asked}"
        );
        assert_eq!(
            sectors * 512,
            bytes + probes * smallest,
            "{workload:?}: bytes trimmed {bytes} vs the kernel's {}",
            sectors * 512
        );
    }
}
