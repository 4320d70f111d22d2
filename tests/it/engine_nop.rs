//! The nop engine (`--engine nop`): every I/O an io_uring NOP through the same rings,
//! tallies, pacing and collector as real I/O. It counts exactly what it submits, paces at
//! 10/50/90% of its own maximum, and runs from the command line with no target.

use crate::common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use common::{json_lines, of_type, run, summary};
use drivescope::engine::{Control, StepControl, StepTarget};
use drivescope::engine_list::run_step;
use drivescope::outcome::Pacing;
use drivescope::stats::StepSummary;
use drivescope::workload::{BlockSizes, EngineKind, Region, RwMode, StepEnd, StepSpec, Workload};

const SPACE: u64 = 1 << 40;

fn nop_spec(rw: RwMode, iodepth: u32, jobs: u32, end: StepEnd, rate: Option<f64>) -> StepSpec {
    StepSpec {
        engine: EngineKind::Nop,
        options: Default::default(),
        workload: Workload {
            rwmixread: 50,
            jobs,
            rate_iops: rate,
            ..Workload::new(
                rw,
                BlockSizes::single(4096),
                iodepth,
                Region {
                    offset: 0,
                    len: SPACE,
                },
                7,
            )
        },
        ramp: Duration::ZERO,
        end,
        interval: Duration::from_millis(200),
        fio_file: None,
        fio_version: None,
    }
}

fn no_target() -> StepTarget {
    StepTarget {
        path: PathBuf::new(),
        size: SPACE,
        align: 512,
        verify: None,
    }
}

/// Runs a step; the summary and every interval's (reads, writes, errors).
fn run_nop(spec: &StepSpec) -> (StepSummary, Vec<(u64, u64, u64)>) {
    let ctl = StepControl {
        stop: Arc::new(AtomicBool::new(false)),
        pause: Arc::new(AtomicBool::new(false)),
    };
    let mut intervals = Vec::new();
    let s = run_step(
        &no_target(),
        spec,
        &ctl,
        |r| {
            assert!(!r.ramp);
            intervals.push((r.read.ios, r.write.ios, r.errors));
            Control::Continue
        },
        |n| panic!("the nop engine worked around something: {n}"),
    )
    .unwrap_or_else(|e| panic!("nop step: {e}"));
    (s, intervals)
}

#[test]
fn nop_counts_exactly_what_it_submits() {
    // An amount of data: each job submits exactly its share of I/Os, then drains.
    for (rw, jobs) in [
        (RwMode::RandRead, 1),
        (RwMode::RandRw, 2),
        (RwMode::Write, 1),
    ] {
        let n: u64 = 300_000;
        let end = StepEnd {
            duration: None,
            bytes: Some(n * 4096),
        };
        let (s, iv) = run_nop(&nop_spec(rw, 128, jobs, end, None));
        assert_eq!(s.engine, EngineKind::Nop);
        assert_eq!(s.errors, 0, "{rw}: {s:?}");
        assert_eq!(s.ios, n, "{rw} × {jobs}: completions == submissions");
        assert_eq!(s.read_ios + s.write_ios, n);
        assert_eq!(s.read_bytes + s.write_bytes, n * 4096);
        match rw {
            RwMode::RandRead => assert_eq!(s.write_ios, 0),
            RwMode::Write => assert_eq!(s.read_ios, 0),
            _ => assert!(s.read_ios > n / 3 && s.write_ios > n / 3, "{s:?}"),
        }
        let reads: u64 = iv.iter().map(|i| i.0).sum();
        let writes: u64 = iv.iter().map(|i| i.1).sum();
        assert_eq!((reads, writes), (s.read_ios, s.write_ios), "{iv:?}");
    }
    // A duration: whatever it got to, the intervals add up to the summary and no I/O
    // failed. (That every submission completes is the data case's check above: N I/Os of
    // data end with exactly N completed.)
    let end = StepEnd {
        duration: Some(Duration::from_secs(1)),
        bytes: None,
    };
    let (s, iv) = run_nop(&nop_spec(RwMode::RandRead, 128, 1, end, None));
    assert_eq!(s.pacing, None, "a step with no rate is not paced");
    // Five 200 ms intervals on a quiet machine; fewer when the process was starved long
    // enough for intervals to be cut late or left out as suspended (a loaded machine).
    assert!((1..=5).contains(&iv.len()), "1 s at 200 ms: {iv:?}");
    assert_eq!(iv.iter().map(|i| i.0).sum::<u64>(), s.ios, "{iv:?}");
    assert!(iv.iter().all(|i| i.2 == 0), "{iv:?}");
    assert!(s.ios > 1_000, "{s:?}");
}

#[test]
fn nop_paces_at_10_50_90_percent_of_its_max_and_never_above() {
    let end = |secs: f64| StepEnd {
        duration: Some(Duration::from_secs_f64(secs)),
        bytes: None,
    };
    // What a paced step does whatever else the machine runs: it keeps its target, its
    // intervals add up to its count, and it never issues ahead of its schedule (the count is
    // at most the target's over the measured time, the schedule's own rounding aside). How
    // close to the target it stays is the machine's: another process taking one of the two
    // CPUs moves it, so that is a benchmark's figure (scripts/bench-nop.py --paced; the
    // release build held 90% of the closed loop's maximum to 0.001% on a quiet machine,
    // docs/PERFORMANCE.md), not this test's.
    let flat_out = Some(drivescope::units::MAX_RATE_IOPS);
    let (flat, _) = run_nop(&nop_spec(RwMode::RandRead, 128, 1, end(1.0), flat_out));
    // Flat out, I/Os a few ns apart: no lead is under half of that.
    assert!(
        !matches!(flat.pacing, None | Some(Pacing::OnTime { .. })),
        "{:?}",
        flat.pacing
    );
    let max = flat.iops;
    assert!(max > 10_000.0, "max {max}");
    for pct in [10.0, 50.0, 90.0] {
        let target = (max * pct / 100.0).round();
        let (s, iv) = run_nop(&nop_spec(RwMode::RandRead, 128, 1, end(1.0), Some(target)));
        eprintln!(
            "nop pacing: max {max:.0} IOPS, {pct}% = {target:.0}: achieved {:.0}",
            s.iops
        );
        assert_eq!(s.target_iops, Some(target));
        assert_eq!(iv.iter().map(|i| i.0).sum::<u64>(), s.ios);
        assert!(s.pacing.is_some(), "a paced step says how it kept time");
        assert!(
            s.iops > 0.0 && s.iops <= target * 1.005 + 1.0 / s.runtime_s,
            "{pct}%: {} IOPS for a target of {target}",
            s.iops
        );
    }
}

/// A paced I/O never goes out before it is due: its response time (from its intended issue
/// time) is never under its service time (from its submission). How late it goes out is
/// the machine's: a NOP completes as it is submitted, so the response time of a paced NOP
/// is all the worker's own lateness, which scripts/bench-nop.py --paced reports (before the
/// wake lead, a sleep's overshoot of 13-27 µs on this VM was the median's; after it, under
/// 8 µs on a quiet machine).
#[test]
fn paced_nops_never_go_out_early() {
    let end = StepEnd {
        duration: Some(Duration::from_secs(1)),
        bytes: None,
    };
    for rate in [5_000.0, 10_000.0] {
        let (s, _) = run_nop(&nop_spec(RwMode::RandRead, 8, 1, end, Some(rate)));
        let service = s.service_lat_us.expect("a paced step's service latency");
        let r = s.lat_us;
        eprintln!(
            "paced nops: {rate} IOPS: response p50 {:.1} µs, service p50 {:.1} µs, {:?}",
            r.p50, service.p50, s.pacing
        );
        // Each I/O's response time is at least its service time, so every order statistic
        // is too (the histograms' 1/1000 precision aside).
        for (resp, serv) in [
            (r.min, service.min),
            (r.p50, service.p50),
            (r.p90, service.p90),
            (r.max, service.max),
        ] {
            assert!(
                resp >= serv * 0.999,
                "{rate}: response {r:?} under service {service:?}"
            );
        }
        assert_eq!(r.samples, service.samples);
    }
}

/// How a paced step kept to its schedule is in its summary (JSON, text) and its session;
/// a step with no rate has none.
#[test]
fn a_paced_steps_pacing_is_recorded_and_shown() {
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("paced.yaml");
    let args = |extra: &[&str]| {
        let mut a = vec!["run", "--engine", "nop", "--duration", "1s"];
        a.extend_from_slice(extra);
        // One session path for the three runs: each replaces the one before.
        a.extend_from_slice(&["--session", session.to_str().unwrap(), "--force"]);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let argv = args(&["--rate-iops", "5000", "--json"]);
    let out = run(
        home.path(),
        &argv.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let lines = common::succeeded(&out);
    let s = summary(&lines);
    let kind = s["pacing"]["kind"].as_str().unwrap_or_default().to_string();
    assert!(
        ["on_time", "no_spare_cpu", "lead_over_half_period"].contains(&kind.as_str()),
        "{s}"
    );
    let yaml = std::fs::read_to_string(&session).unwrap();
    assert!(yaml.contains(&format!("kind: {kind}")), "{yaml}");
    let argv = args(&["--rate-iops", "5000"]);
    let out = run(
        home.path(),
        &argv.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  pacing    "), "{text}");
    let argv = args(&["--json"]);
    let out = run(
        home.path(),
        &argv.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let lines = json_lines(&out);
    assert!(summary(&lines).get("pacing").is_none());
}

#[test]
fn nop_runs_with_no_target_and_makes_none() {
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("nop.yaml");
    let out = run(
        home.path(),
        &[
            "run",
            "--engine",
            "nop",
            "--iodepth",
            "128",
            "--duration",
            "1s",
            "--interval",
            "250ms",
            "--json",
            "--session",
            session.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let start = of_type(&lines, "start");
    assert_eq!(start.len(), 1, "{lines:?}");
    assert_eq!(start[0]["target_kind"], "none", "{}", start[0]);
    assert_eq!(start[0]["engine"], "nop", "{}", start[0]);
    let s = summary(&lines);
    assert_eq!(s["engine"], "nop");
    assert_eq!(s["errors"], 0);
    let sum: u64 = of_type(&lines, "interval")
        .iter()
        .map(|iv| iv["read"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(s["ios"].as_u64().unwrap(), sum);
    // The built-in test file was not made: the nop engine needs no target.
    assert!(!drivescope_scratch(home.path()).exists());
    // The session says which engine ran, and that there was no target.
    let text = std::fs::read_to_string(&session).unwrap();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(doc["target"]["kind"], "none", "{text}");
    assert_eq!(doc["target"]["path"], "", "{text}");
    assert_eq!(doc["steps"][0]["summary"]["engine"], "nop", "{text}");

    // A target is refused: the nop engine does no I/O to one.
    let out = run(
        home.path(),
        &[
            "run",
            "--engine",
            "nop",
            "--target",
            "/dev/null",
            "--duration",
            "1s",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("leave out --target"), "{err}");
}

fn drivescope_scratch(home: &std::path::Path) -> PathBuf {
    home.join("data/drivescope/scratch.bin")
}
