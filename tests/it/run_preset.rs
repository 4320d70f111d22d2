//! Presets run for real, scaled down in time, on temp files: the sweep's curve, steady
//! state events, and bad presets refused before any I/O.

use crate::common;

use common::{json_lines, of_type, run};
use serde_json::Value;

/// Runs the preset `yaml` headless on a fresh test file of `size` (250 ms intervals) and
/// returns its JSON lines; the run must succeed.
fn run_preset_file(yaml: &str, size: &str) -> Vec<Value> {
    let home = tempfile::tempdir().unwrap();
    let preset = home.path().join("preset.yaml");
    std::fs::write(&preset, yaml).unwrap();
    let t = home.path().join("scratch.bin");
    let out = run(
        home.path(),
        &[
            "run",
            "--preset-file",
            preset.to_str().unwrap(),
            "--target",
            t.to_str().unwrap(),
            "--size",
            size,
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
    json_lines(&out)
}

#[test]
fn sweep_preset_yields_increasing_targets_and_one_curve_point_per_step() {
    let _timing = crate::common::timing_lock();
    let home = tempfile::tempdir().unwrap();
    let t = home.path().join("scratch.bin");
    let out = run(
        home.path(),
        &[
            "run",
            "--preset",
            "storagereview-4k-randread",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "128MiB",
            "--time-scale",
            "0.03",
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
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 13, "a probe and 12 sweep points");
    assert!(steps[0]["target_iops"].is_null(), "the probe runs at max");
    let max = steps[0]["summary"]["iops"].as_f64().unwrap();
    assert!(max > 100.0, "probe measured {max}");
    let mut last = 0.0;
    for (i, s) in steps[1..].iter().enumerate() {
        let pct = 10.0 * (i + 1) as f64;
        assert_eq!(s["sweep_point"].as_f64().unwrap(), pct);
        let target = s["target_iops"].as_f64().unwrap();
        assert!(
            target > last,
            "targets must increase: {target} after {last}"
        );
        last = target;
        // vdbench's integer rule, applied to the probe's figure as printed.
        let want = drivescope::plan::vdbench_round(max, pct).expect("a rate");
        assert_eq!(target, want as f64, "{pct}% of {max}");
        let achieved = s["summary"]["iops"].as_f64().unwrap();
        if pct <= 50.0 {
            assert!(
                (achieved - target).abs() / target < 0.05,
                "{pct}%: achieved {achieved} for target {target}"
            );
        }
        // Every point carries the curve's latency (service); paced points also their
        // response from the schedule, labelled. From 100% on they run closed-loop.
        assert!(s["service_lat_us"]["mean"].as_f64().unwrap() > 0.0);
        assert_eq!(s["closed_loop"], pct >= 100.0, "{s}");
        if pct < 100.0 {
            assert!(s["response_from_schedule_lat_us"]["mean"].as_f64().unwrap() > 0.0);
            assert_eq!(s["summary"]["target_iops"], target);
        } else {
            assert!(s["response_from_schedule_lat_us"].is_null(), "{s}");
            assert!(s["summary"]["target_iops"].is_null(), "unpaced: {s}");
        }
    }
    let summary = of_type(&lines, "plan_summary");
    assert_eq!(summary[0]["outcome"], "completed");
    let events = of_type(&lines, "event");
    assert!(events.iter().any(|e| e["kind"] == "phase"), "{events:?}");
}

#[test]
fn steady_state_is_reported_as_an_event() {
    let _timing = crate::common::timing_lock();
    // A flat closed-loop workload reaches fio-style steady state quickly.
    let lines = run_preset_file(
        "id: steady-test\nname: Steady test\ndescription: fio-style steady state on random writes\n\
         phases:\n  - name: settle\n    workload: {rw: randwrite, bs: 4k, iodepth: 8, jobs: 1, region: 100%}\n\
         \x20   rate: 2000\n    end:\n      duration: 20s\n      steady: {criterion: \"iops:5%\", window: 2s}\n",
        "32MiB",
    );
    let events = of_type(&lines, "event");
    let steady: Vec<_> = events
        .iter()
        .filter(|e| e["kind"] == "steady_state")
        .collect();
    assert_eq!(steady.len(), 1, "{events:?}");
    assert!(
        steady[0]["text"].as_str().unwrap().contains("reached"),
        "{steady:?}"
    );
    let step = &of_type(&lines, "step")[0];
    assert!(
        step["summary"]["runtime_s"].as_f64().unwrap() < 10.0,
        "ended early: {step}"
    );
}

#[test]
fn bad_preset_is_refused_before_any_io_with_its_location() {
    let home = tempfile::tempdir().unwrap();
    let preset = home.path().join("bad.yaml");
    std::fs::write(
        &preset,
        "id: bad\nname: Bad\ndescription: a misspelt key\nphases:\n  - name: p\n    workload: {rw: randread, bss: 4k, iodepth: 8, jobs: 1}\n    end: {duration: 1s}\n",
    )
    .unwrap();
    let t = home.path().join("never.bin");
    let out = run(
        home.path(),
        &[
            "run",
            "--preset-file",
            preset.to_str().unwrap(),
            "--target",
            t.to_str().unwrap(),
            "--size",
            "16MiB",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yaml:6:"), "{err}");
    assert!(err.contains("bs"), "nearest key: {err}");
    assert!(
        !t.exists(),
        "no I/O (not even creating the target) before the preset is valid"
    );
}

#[test]
fn a_point_whose_rate_is_zero_ends_the_curve_as_in_vdbench() {
    // 0.5% is 0% in vdbench's whole-number arithmetic: the rate is 0 and the curve stops
    // there, so the 50% after it is not run either.
    let lines = run_preset_file(
        "id: curve-end\nname: Curve end\ndescription: a curve that stops\n\
         phases:\n  - name: s\n    workload: {rw: randread, bs: 4k, iodepth: 4, jobs: 1}\n\
         \x20   end: {duration: 500ms}\n    sweep: {points: [20%, 0.5%, 50%]}\n",
        "16MiB",
    );
    let points: Vec<f64> = of_type(&lines, "step")
        .iter()
        .filter_map(|s| s["sweep_point"].as_f64())
        .collect();
    assert_eq!(points, vec![20.0], "the curve ends at 0.5%");
    let skips: Vec<&str> = of_type(&lines, "event")
        .into_iter()
        .filter(|e| e["kind"] == "skip")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(skips.len(), 2, "{skips:?}");
    assert!(skips[0].contains("curve stops"), "{skips:?}");
    assert!(
        skips[1].contains("s 50%: skipped: an earlier point"),
        "{skips:?}"
    );
}

/// A probe, then one point at 50% of it for `secs`, arriving as `arrivals`; returns the
/// 50% step's object.
fn half_point(arrivals: &str, secs: u32) -> Value {
    let lines = run_preset_file(
        &format!(
            "id: half\nname: Half\ndescription: a point at 50% of the probe\n\
             phases:\n  - name: s\n    workload: {{rw: randread, bs: 4k, iodepth: 16, jobs: 2, arrivals: {arrivals}}}\n\
             \x20   end: {{duration: {secs}s}}\n    sweep: {{points: [50%]}}\n"
        ),
        "64MiB",
    );
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(
        steps[0]["summary"]["arrival_cv"].is_null(),
        "the probe is closed-loop"
    );
    steps[1].clone()
}

#[test]
fn poisson_arrivals_have_exponential_gaps_and_keep_the_rate() {
    let step = half_point("poisson", 5);
    let target = step["target_iops"].as_f64().unwrap();
    let s = &step["summary"];
    let achieved = s["iops"].as_f64().unwrap();
    assert!(
        (achieved - target).abs() / target < 0.005,
        "achieved {achieved} IOPS for {target}"
    );
    let cv = s["arrival_cv"].as_f64().unwrap();
    assert!((0.95..1.05).contains(&cv), "poisson gaps' CV {cv}");

    let step = half_point("uniform", 2);
    let cv = step["summary"]["arrival_cv"].as_f64().unwrap();
    assert!(cv < 0.05, "uniform gaps' CV {cv}");
}
