//! Steps as the unit of results, through the real binary: the steps table and `steps` JSON
//! line at the end of a headless run (agreeing with the session's summary), `steps.csv` in
//! a report, `export` equal to it (a new file only), and `compare --baseline`'s gate:
//! exit 0 against itself, 1 naming the step that lost IOPS, 2 for bad input.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{json_lines, of_type, run, short_run_args, summary};
use drivescope::session;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// drivescope run in `home` as its working folder too (where a comparison would write).
fn run_in(home: &Path, args: &[&str]) -> Output {
    common::command(home)
        .current_dir(home)
        .args(args)
        .output()
        .expect("run drivescope")
}

#[test]
fn a_run_ends_with_the_steps_table_and_line_agreeing_with_its_summary() {
    let home = common::disk_tempdir();
    let target = home.path().join("t.bin");
    let path = home.path().join("s.yaml");
    let out = run(
        home.path(),
        &short_run_args(&target, &["--session", s(&path)]),
    );
    let lines = common::succeeded(&out);
    let steps = of_type(&lines, "steps");
    assert_eq!(steps.len(), 1, "one steps line: {lines:?}");
    let sm = summary(&lines);
    let saved = session::load(&path).expect("session").session;
    let ss = saved.summary.as_ref().expect("final summary");
    let rows = steps[0]["steps"].as_array().expect("steps");
    assert_eq!(rows.len() as u64, ss.steps, "one record per step");
    assert_eq!(rows[0]["step"], 1, "numbered from 1");
    let iops = rows[0]["read"]["iops"].as_f64().expect("read IOPS");
    assert!(iops > 0.0);
    let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * b.max(1.0);
    assert!(
        close(iops, sm["read_iops"].as_f64().unwrap_or(0.0)),
        "{iops} vs {sm}"
    );
    assert!(
        close(iops, ss.read_iops),
        "{iops} vs the session's {}",
        ss.read_iops
    );
    assert!(rows[0]["read"]["response_lat_us"]["p99.999"]
        .as_f64()
        .is_some());
    assert_eq!(
        rows[0]["write"]["response_lat_us"],
        serde_json::Value::Null,
        "reads only"
    );
    // The steps line comes before the session's.
    let types: Vec<_> = lines.iter().map(|l| l["type"].clone()).collect();
    assert_eq!(types[types.len() - 2..], ["steps", "session"]);

    // Text: an aligned table with units, one row per direction of I/O.
    let text_args: Vec<&str> = short_run_args(&target, &["--session", s(&path)])
        .into_iter()
        .filter(|a| *a != "--json")
        .collect();
    let _ = std::fs::remove_file(&path);
    let out = run(home.path(), &text_args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("step "))
        .collect();
    assert_eq!(table.len(), 2, "header and one row of reads: {stdout}");
    for word in ["IOPS", "MB/s", "p99", "p99.999", "max", "ended"] {
        assert!(
            table[0].split_whitespace().any(|w| w == word),
            "{word}: {}",
            table[0]
        );
    }
    assert!(table[1].trim_start().starts_with("1 "), "{}", table[1]);
    assert!(
        table[1].contains(" read ") && table[1].contains("MB/s"),
        "{}",
        table[1]
    );
    assert!(
        table[1].contains("µs") || table[1].contains("ms"),
        "{}",
        table[1]
    );
}

#[test]
fn report_writes_steps_csv_and_export_gives_the_same() {
    let home = common::disk_tempdir();
    let path = common::recorded_session(home.path(), 1, "250ms");
    let dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&path), "-o", s(&dir)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let csv = std::fs::read_to_string(dir.join("steps.csv")).expect("steps.csv");
    let saved = session::load(&path).expect("session").session;
    assert_eq!(csv.lines().count(), 1 + saved.steps.len(), "{csv}");
    assert!(
        csv.starts_with("step,label,workload,target_iops,read_ios,"),
        "{csv}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("steps.json")).expect("json"))
            .expect("steps.json parses");
    assert_eq!(
        json["steps"].as_array().map(Vec::len),
        Some(saved.steps.len())
    );

    let out = run(home.path(), &["export", s(&path), "--format", "csv"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), csv);

    let file = home.path().join("steps-out.json");
    let out = run(
        home.path(),
        &["export", s(&path), "--format", "json", "-o", s(&file)],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let first = std::fs::read(&file).expect("exported");
    assert_eq!(
        json,
        serde_json::from_slice::<serde_json::Value>(&first).expect("parses")
    );
    // An existing file is never replaced.
    std::fs::write(&file, b"mine").expect("write");
    let out = run(
        home.path(),
        &["export", s(&path), "--format", "csv", "-o", s(&file)],
    );
    common::refused(&out, &["already there"]);
    assert_eq!(std::fs::read(&file).expect("read"), b"mine");
}

#[test]
fn the_baseline_gate_passes_itself_and_names_the_step_that_lost_iops() {
    let home = common::disk_tempdir();
    let base = common::recorded_session(home.path(), 1, "250ms");
    let out = run_in(home.path(), &["compare", "--baseline", s(&base), s(&base)]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("+0.0%"), "deltas in percent: {stdout}");
    assert!(
        !home.path().join("drivescope-compare").exists(),
        "a gate writes no charts unless --out says where"
    );

    // The same session with its IOPS edited down by a fifth.
    let mut slower = session::load(&base).expect("session").session;
    let label = slower.steps[0].label.clone();
    for st in &mut slower.steps {
        st.summary.read_iops *= 0.8;
        st.summary.write_iops *= 0.8;
    }
    let edited = home.path().join("slower.yaml");
    std::fs::write(&edited, session::to_yaml(&slower).expect("yaml")).expect("write");
    let out = run_in(
        home.path(),
        &["compare", "--baseline", s(&base), s(&edited)],
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("step 1") && err.contains(&label), "{err}");
    assert!(err.contains("IOPS fell"), "{err}");
    // Within a looser bound it passes.
    let out = run_in(
        home.path(),
        &[
            "compare",
            "--baseline",
            s(&base),
            s(&edited),
            "--max-regression",
            "25%",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));

    // Bad input: a percentage that is none, a session that is not there.
    let out = run_in(
        home.path(),
        &[
            "compare",
            "--baseline",
            s(&base),
            s(&edited),
            "--max-regression",
            "lots",
        ],
    );
    common::refused(&out, &["not a percentage"]);
    let missing = home.path().join("missing.yaml");
    let out = run_in(
        home.path(),
        &["compare", "--baseline", s(&missing), s(&base)],
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
}

#[test]
fn a_run_at_a_far_lower_rate_fails_the_gate() {
    let home = common::disk_tempdir();
    let base = common::recorded_session(home.path(), 1, "250ms");
    let target = home.path().join("recorded.bin");
    let slow = home.path().join("slow.yaml");
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "32MiB",
            "--rw",
            "randrw",
            "--duration",
            "1s",
            "--interval",
            "250ms",
            "--rate-iops",
            "200",
            "--session",
            s(&slow),
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(of_type(&json_lines(&out), "steps").len(), 1);
    let out = run_in(home.path(), &["compare", "--baseline", s(&base), s(&slow)]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("step 1") && err.contains("IOPS fell"), "{err}");
}

/// A time-scaled StorageReview 4K random read sweep (13 steps: the probe at max, then 10%
/// to 120% of it) on a new 64 MiB test file, its session at `session`; `preset` is the
/// preset's id or a YAML file of one.
fn sweep(home: &Path, preset: &str, session: &Path) {
    let target = home.join(format!(
        "{}.bin",
        session.file_stem().and_then(|s| s.to_str()).unwrap_or("t")
    ));
    let out = run(
        home,
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "64MiB",
            "--preset",
            preset,
            "--time-scale",
            "0.02",
            "--session",
            s(session),
        ],
    );
    assert!(
        out.status.success(),
        "{:?}\n{}\n{}",
        out.status.code(),
        common::stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn two_storagereview_sweeps_compare_step_by_step_and_the_slower_one_fails_the_gate() {
    let home = common::disk_tempdir();
    let dir = home.path();
    let base = dir.join("base.yaml");
    sweep(dir, "storagereview-4k-randread", &base);
    // The same sweep at a tenth of the rate: each point paced at 1% to 12% of the probe
    // instead of 10% to 120% (a preset cannot take --rate-iops: its points are its rates).
    let preset = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/storagereview-4k-randread.yaml"),
    )
    .expect("preset");
    assert!(preset.contains("points: storagereview"), "{preset}");
    let slow_preset = dir.join("storagereview-4k-randread-tenth.yaml");
    std::fs::write(
        &slow_preset,
        preset.replace(
            "points: storagereview",
            "points: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]",
        ),
    )
    .expect("write");
    let slow = dir.join("slow.yaml");
    sweep(dir, s(&slow_preset), &slow);
    let base_steps = session::step_results(&session::load(&base).expect("base").session);
    assert_eq!(base_steps.len(), 13, "the probe and twelve points");

    // Every step of the second with its delta beside the first's.
    let out = run_in(dir, &["compare", s(&base), s(&slow)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let table = &text[text.find("steps of ").expect("a steps table")..];
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 13, "a row a step:\n{text}");
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[0], (n + 1).to_string(), "{row}");
        let deltas: Vec<f64> = cells
            .iter()
            .map(|c| c.trim_matches(['(', ')']))
            .filter(|c| c.starts_with(['+', '-']))
            .filter_map(|c| c.strip_suffix('%')?.parse().ok())
            .collect();
        // IOPS, MB/s, mean and p99, each with its change.
        assert_eq!(deltas.len(), 4, "{row:?}\n{text}");
        // The points paced at a tenth of the rate fell by far more than the runs' noise:
        // each is matched with a point of the first at ten times its rate, but for the
        // probe (at max in both) and the 10% point (matched by its label with the first's
        // own 10% point: steps match by label first, then by workload in order).
        if n > 0 && !row.contains("sweep 10%") {
            assert!(deltas[0] < -40.0, "IOPS of {row:?}\n{text}");
        }
    }

    // The gate: the first against itself passes; the slower run fails, naming steps.
    let out = run_in(dir, &["compare", "--baseline", s(&base), s(&base)]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let out = run_in(dir, &["compare", "--baseline", s(&base), s(&slow)]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        // Named by the new run's labels: its 1% point, matched with the base's second step.
        err.contains("IOPS fell") && err.contains("(sweep 1%)"),
        "{err}"
    );
}

/// A preset of two paced phases of 4K random reads on a small file: one at a rate no file
/// here reaches (5M IOPS, one I/O at a time: the least load on the tests beside it), one at
/// a rate any reaches (200 IOPS, uniform arrivals).
const MISS_PRESET: &str = "id: miss-test
name: Missed target
description: >
  Two paced phases; each point runs 1 s at an unreachable rate, then 4 s at a reachable one.
phases:
  - name: unreachable
    workload: {rw: randread, bs: 4k, iodepth: 1, arrivals: uniform}
    end: {duration: 1s}
    rate: 5000000
  - name: reachable
    workload: {rw: randread, bs: 4k, iodepth: 4, arrivals: uniform}
    end: {duration: 4s}
    rate: 200
";

/// A real run of two paced steps, time-scaled ×0.5: the one far under its target is
/// marked (its step line, the steps table, export's CSV and JSON, the report's table and
/// curve), the one that reached it is not; every latency says which (its response from
/// the schedule at or above its service from submission, a backlog far above); and the
/// run says it is off its method's durations (its first line, the report, compare).
#[test]
fn a_step_under_its_target_is_marked_everywhere_and_one_that_reached_it_is_not() {
    let home = common::disk_tempdir();
    let dir = home.path();
    let preset = dir.join("miss.yaml");
    std::fs::write(&preset, MISS_PRESET).expect("preset");
    let target = dir.join("t.bin");
    let session = dir.join("s.yaml");
    let out = run(
        dir,
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "16MiB",
            "--preset",
            s(&preset),
            "--time-scale",
            "0.5",
            "--session",
            s(&session),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}\n{text}", common::stderr(&out));
    // Text: the first line, each step's line, the table.
    assert!(
        text.lines().any(|l| l.starts_with("preset miss-test")
            && l.ends_with(", time-scaled ×0.5: not the method's durations")),
        "{text}"
    );
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with("step ") && l.contains(name))
            .unwrap_or_else(|| panic!("no step line of {name}: {text}"))
            .to_string()
    };
    let (missed, reached) = (line("unreachable:"), line(" reachable:"));
    assert!(
        missed.contains("target 5.00M IOPS, achieved ") && missed.contains(" of target: MISSED)"),
        "{missed}"
    );
    // The reachable step reaches its target unless the machine starved the process near
    // its end (its share then under 97%): either way every mark follows its share, which
    // export's JSON checks below.
    assert!(reached.contains(" of target"), "{reached}");
    let reached_missed = reached.contains(" of target: MISSED)");
    assert!(reached.contains(", service mean "), "{reached}");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("step  label"))
        .take(3)
        .collect();
    assert_eq!(table.len(), 3, "{text}");
    assert!(
        table[0].contains("reached") && table[0].contains("svc mean"),
        "{}",
        table[0]
    );
    assert!(table[1].contains(" MISSED "), "{}", table[1]);
    assert_eq!(table[2].contains("MISSED"), reached_missed, "{}", table[2]);

    // Export: the share, the mark and both latencies, as JSON and as CSV.
    let out = run(dir, &["export", s(&session), "--format", "json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "{v}");
    for (st, target, missed) in [(&steps[0], 5e6, true), (&steps[1], 200.0, reached_missed)] {
        let iops = st["read"]["iops"].as_f64().expect("iops");
        let share = st["achieved_share"].as_f64().expect("a share");
        assert!((share - iops / target).abs() < 1e-9, "{st}");
        assert_eq!(st["missed_target"], missed, "{st}");
        assert_eq!(share < 0.97, missed, "{st}");
        let svc = st["service_lat_us"]["mean"].as_f64().expect("service");
        let resp = st["response_lat_us"]["mean"].as_f64().expect("response");
        assert!(
            svc > 0.0 && resp >= svc,
            "from the schedule, never less: {st}"
        );
        assert_eq!(
            st["read"]["response_lat_us"]["mean"].as_f64(),
            Some(resp),
            "reads only: the direction's response is the step's: {st}"
        );
    }
    let backlog = |st: &serde_json::Value| {
        st["response_lat_us"]["mean"].as_f64().unwrap_or(0.0)
            / st["service_lat_us"]["mean"]
                .as_f64()
                .unwrap_or(f64::INFINITY)
    };
    assert!(backlog(&steps[0]) > 2.0, "a backlog: {}", steps[0]);
    let out = run(dir, &["export", s(&session), "--format", "csv"]);
    let csv = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut rows = csv.lines();
    let head: Vec<&str> = rows.next().expect("header").split(',').collect();
    for c in head.iter().filter(|c| c.ends_with("_us")) {
        assert!(
            c.contains("response_lat_") || c.starts_with("service_lat_"),
            "{c}"
        );
    }
    let at = |name: &str| head.iter().position(|c| *c == name).expect(name);
    let cells: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    assert_eq!(cells[0][at("missed_target")], "true", "{csv}");
    assert_eq!(
        cells[1][at("missed_target")],
        reached_missed.to_string(),
        "{csv}"
    );
    assert!(!cells[1][at("service_lat_p99_us")].is_empty(), "{csv}");

    // The report: off-method, and the mark in the table and on the curve.
    let rep = dir.join("rep");
    let out = run(dir, &["report", s(&session), "-o", s(&rep)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let html = std::fs::read_to_string(rep.join("report.html")).expect("report");
    assert!(
        html.contains("Off-method run: time-scaled ×0.5: not the method&#39;s durations."),
        "{html}"
    );
    assert!(
        html.contains("[This run: time-scaled ×0.5"),
        "the description"
    );
    let marked = 1 + usize::from(reached_missed);
    assert_eq!(
        html.matches(" MISSED</td>").count(),
        marked,
        "the steps marked"
    );
    let curve = std::fs::read_to_string(rep.join("curve.svg")).expect("curve");
    assert_eq!(
        curve.matches("class=\"ring\"").count(),
        2 * marked,
        "each marked step's mean and p99"
    );
    assert!(
        curve.contains("missed its target (under 97%)"),
        "the legend"
    );
    // Compare says it too.
    let out = run_in(
        dir,
        &[
            "compare",
            s(&session),
            s(&session),
            "-o",
            s(&dir.join("cmp")),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("complete; time-scaled ×0.5: not the method's durations"),
        "{table}"
    );
}
