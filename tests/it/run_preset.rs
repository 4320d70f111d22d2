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

/// fio's slope rule on a window of values `dt` seconds apart: 100·|least-squares slope per
/// second| / mean, the way fio's `iops_slope` judges it.
fn slope_pct_per_s(w: &[f64], dt: f64) -> f64 {
    let n = w.len() as f64;
    let mean = w.iter().sum::<f64>() / n;
    let xm = (n - 1.0) / 2.0;
    let sxy: f64 = w
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 - xm) * (v - mean))
        .sum();
    let sxx: f64 = (0..w.len()).map(|i| (i as f64 - xm).powi(2)).sum();
    100.0 * (sxy / sxx).abs() / mean / dt
}

#[test]
fn steady_state_on_the_slope_rule_ends_an_uncapped_step_at_the_first_flat_window() {
    let _timing = crate::common::timing_lock();
    // Closed loop (no rate cap), so the IOPS wander with the machine; fio's iops_slope rule
    // over 2 s of 250 ms intervals. The test judges the printed intervals by the same rule:
    // the step must end at the first window that passes, and say so.
    const LIMIT: f64 = 10.0;
    const WINDOW: usize = 8;
    const DT: f64 = 0.25;
    let home = tempfile::tempdir().unwrap();
    let preset = home.path().join("steady.yaml");
    std::fs::write(
        &preset,
        format!(
            "id: steady-test\nname: Steady test\ndescription: fio-style slope steady state, uncapped\n\
             phases:\n  - name: settle\n    workload: {{rw: randwrite, bs: 4k, iodepth: 8, jobs: 1, region: 100%}}\n\
             \x20   end:\n      duration: 30s\n      steady: {{criterion: \"iops_slope:{LIMIT}%\", window: 2s}}\n"
        ),
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
    let step = &of_type(&lines, "step")[0];
    assert!(step["target_iops"].is_null(), "uncapped: {step}");
    // The intervals the rule saw: every one but those left out (ramp, a suspended process).
    let values: Vec<f64> = of_type(&lines, "interval")
        .iter()
        .filter(|iv| iv["ramp"] != true && iv["suspended_s"].as_f64().unwrap_or(0.0) == 0.0)
        .map(|iv| iv["read_iops"].as_f64().unwrap() + iv["write_iops"].as_f64().unwrap())
        .collect();
    let slopes: Vec<f64> = (WINDOW..=values.len())
        .map(|k| slope_pct_per_s(&values[k - WINDOW..k], DT))
        .collect();
    let events = of_type(&lines, "event");
    let first = slopes
        .iter()
        .position(|s| *s < LIMIT)
        .map(|i| i + WINDOW)
        .unwrap_or_else(|| {
            panic!(
                "no window of {WINDOW} intervals is under {LIMIT}%/s, yet the step ended: \
                 {slopes:?}\n{events:?}"
            )
        });
    let steady: Vec<_> = events
        .iter()
        .filter(|e| e["kind"] == "steady_state")
        .collect();
    assert_eq!(steady.len(), 1, "{events:?}");
    let text = steady[0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("settle: steady state reached at interval {first}"),
        "slopes (%/s) of each window: {slopes:?}"
    );
    eprintln!("steady at interval {first}; slopes (%/s): {slopes:?}");
    assert_eq!(step["summary"]["ended_by"], "steady state", "{step}");
    // It ended there: at most the stopped interval's remainder came after the window.
    assert!(
        values.len() <= first + 1,
        "{} intervals for a stop after {first}",
        values.len()
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
