//! Presets run for real, scaled down in time, on temp files: the sweep's curve, steady
//! state events, and bad presets refused before any I/O.

use crate::common;

use common::{json_lines, of_type, run};

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
        // vdbench rounding: up to the next 100 above 1000 IOPS, else the next 10.
        let exact = max * pct / 100.0;
        let grain = if exact > 1000.0 { 100.0 } else { 10.0 };
        assert!(
            target >= exact && target - exact < grain + 1e-6,
            "{target} for {exact}"
        );
        assert_eq!(target % grain, 0.0);
        let achieved = s["summary"]["iops"].as_f64().unwrap();
        if pct <= 50.0 {
            assert!(
                (achieved - target).abs() / target < 0.05,
                "{pct}%: achieved {achieved} for target {target}"
            );
        }
        // Rate-limited points carry response and service latency.
        assert!(s["summary"]["service_lat_us"]["mean"].as_f64().unwrap() > 0.0);
        assert!(s["summary"]["lat_us"]["mean"].as_f64().unwrap() > 0.0);
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
    let home = tempfile::tempdir().unwrap();
    let preset = home.path().join("steady.yaml");
    std::fs::write(
        &preset,
        "id: steady-test\nname: Steady test\ndescription: fio-style steady state on random writes\n\
         phases:\n  - name: settle\n    workload: {rw: randwrite, bs: 4k, iodepth: 8, jobs: 1, region: 100%}\n\
         \x20   rate: 2000\n    end:\n      duration: 20s\n      steady: {criterion: \"iops:5%\", window: 2s}\n",
    )
    .unwrap();
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
            "32MiB",
            "--interval",
            "250ms",
            "--json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines = json_lines(&out);
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
    // The error quotes `bss` and lists every valid key, `bs` among them: only the
    // suggestion itself says which one was meant.
    assert!(
        err.contains("unknown key `bss`") && err.contains("(did you mean `bs`?)"),
        "the misspelt key and the nearest valid one: {err}"
    );
    assert!(
        !t.exists(),
        "no I/O (not even creating the target) before the preset is valid"
    );
}
