//! Sessions written by the real binary: the round trip of a headless run, the default
//! sessions folder, `kill -9` mid-run then `report` on what was left, `kill -9` inside the
//! final atomic rewrite (SIGTERM's final save is in signals.rs), an unwritable path refused before the run, truncated and newer-schema files, and
//! the SVG, CSV and HTML outputs of `report` and `compare` parsed and counted.

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{json_lines, of_type, run, summary};
use drivescope::session::{self, SessionState};

fn spawn(home: &Path, args: &[&str]) -> Child {
    Command::new(common::bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn drivescope")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A short real run with its session at `session`; returns the JSON lines.
fn short_run(home: &Path, session: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let target = home.join("scratch.bin");
    let mut args = vec![
        "run",
        "--target",
        s(&target),
        "--size",
        "32MiB",
        "--rw",
        "randrw",
        "--iodepth",
        "8",
        "--duration",
        "2s",
        "--interval",
        "250ms",
        "--autosave",
        "500ms",
        "--json",
        "--session",
        s(session),
    ];
    args.extend_from_slice(extra);
    let out = run(home, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
}

/// Parses XML (the HTML page is XHTML syntax with `<!DOCTYPE html>`).
fn xml(text: &str) -> Result<roxmltree::Document<'_>, roxmltree::Error> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, opts)
}

fn parse_xml(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    if let Err(e) = xml(&text) {
        panic!("{} does not parse: {e}", path.display());
    }
    text
}

/// Vertices of the polyline of `series` in an SVG or HTML document.
fn polyline_points(doc: &roxmltree::Document<'_>, chart_id: &str, series: &str) -> usize {
    let chart = doc
        .descendants()
        .find(|n| n.tag_name().name() == "svg" && n.attribute("id") == Some(chart_id))
        .unwrap_or_else(|| panic!("no chart {chart_id}"));
    let line = chart
        .descendants()
        .find(|n| n.tag_name().name() == "polyline" && n.attribute("data-series") == Some(series))
        .unwrap_or_else(|| panic!("no series {series} in {chart_id}"));
    line.attribute("points").unwrap().split_whitespace().count()
}

fn markers(doc: &roxmltree::Document<'_>, chart_id: &str) -> usize {
    let chart = doc
        .descendants()
        .find(|n| n.tag_name().name() == "svg" && n.attribute("id") == Some(chart_id))
        .unwrap_or_else(|| panic!("no chart {chart_id}"));
    chart
        .descendants()
        .filter(|n| n.tag_name().name() == "circle" && n.attribute("class") == Some("point"))
        .count()
}

#[test]
fn a_headless_run_saves_a_session_that_reports() {
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("runs").join("s.yaml");
    let lines = short_run(home.path(), &sp, &[]);
    let printed = of_type(&lines, "interval");
    let sum = summary(&lines);
    let where_ = of_type(&lines, "session");
    assert_eq!(where_.len(), 1, "{lines:?}");
    assert_eq!(where_[0]["path"], s(&sp));
    assert_eq!(of_type(&lines, "start")[0]["session"], s(&sp));

    let l = session::load(&sp).unwrap();
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.documents, 1, "the final save is one document");
    let ses = &l.session;
    assert_eq!(ses.state, SessionState::Complete);
    assert_eq!(ses.intervals.len(), printed.len());
    for (rec, p) in ses.intervals.iter().zip(&printed) {
        let iops = p["read_iops"].as_f64().unwrap();
        assert!((rec.read_iops - iops).abs() <= 0.01, "{rec:?} vs {p}");
        assert_eq!(rec.lat_us.p99, p["lat_us"]["p99"].as_f64().unwrap());
        assert_eq!(rec.errors, p["errors"].as_u64().unwrap());
    }
    assert!(ses.intervals.windows(2).all(|w| w[1].t > w[0].t));
    assert_eq!(ses.steps.len(), 1);
    assert_eq!(ses.steps[0].summary.ios, sum["ios"].as_u64().unwrap());
    assert!(
        ses.steps[0].label.starts_with("randrw 4KiB QD8"),
        "{}",
        ses.steps[0].label
    );
    let sm = ses.summary.as_ref().unwrap();
    assert_eq!(sm.ended_by.to_string(), "completed");
    assert_eq!(
        sm.read_bytes + sm.write_bytes,
        sum["read_bytes"].as_u64().unwrap() + sum["write_bytes"].as_u64().unwrap()
    );
    assert!(!ses.host.kernel.is_empty());
    assert!(
        ses.started.starts_with("20") && ses.started.contains('T'),
        "{}",
        ses.started
    );
    assert!(
        ses.command
            .as_deref()
            .is_some_and(|c| c.contains("--session")),
        "{:?}",
        ses.command
    );
    assert_eq!(ses.drivescope_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(ses.target.path, s(&home.path().join("scratch.bin")));
    assert!(
        ses.events.iter().any(|e| e.kind.as_str() == "fill"),
        "{:?}",
        ses.events
    );

    // report: charts, CSV and the page, each parsed and counted.
    let out_dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&sp), "--out", s(&out_dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = ses.intervals.len();
    let tput = parse_xml(&out_dir.join("throughput.svg"));
    let doc = xml(&tput).unwrap();
    assert_eq!(polyline_points(&doc, "throughput", "read IOPS"), n);
    assert_eq!(polyline_points(&doc, "throughput", "write IOPS"), n);
    let lat = parse_xml(&out_dir.join("latency.svg"));
    let doc = xml(&lat).unwrap();
    for p in ["p50", "p99", "p99.9", "max"] {
        assert_eq!(polyline_points(&doc, "latency", p), n);
    }
    let curve = parse_xml(&out_dir.join("curve.svg"));
    let doc = xml(&curve).unwrap();
    assert_eq!(
        markers(&doc, "curve"),
        2,
        "one p99 and one p50 point for the one step"
    );
    parse_xml(&out_dir.join("temperature.svg"));
    let csv = std::fs::read_to_string(out_dir.join("intervals.csv")).unwrap();
    assert_eq!(csv.lines().count(), n + 1);
    let html = parse_xml(&out_dir.join("report.html"));
    let doc = xml(&html).unwrap();
    assert_eq!(polyline_points(&doc, "throughput", "read IOPS"), n);
    assert_eq!(markers(&doc, "curve"), 2);
    let svgs = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "svg")
        .count();
    assert_eq!(svgs, 4, "all four charts inline");
    assert!(html.contains(&ses.host.kernel));
    assert!(!html.contains("src=\"http"), "self-contained");
}

#[test]
fn without_session_the_run_goes_to_a_dated_file_in_the_sessions_folder() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("scratch.bin");
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "16MiB",
            "--rw",
            "randwrite",
            "--duration",
            "500ms",
            "--interval",
            "250ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = home.path().join("data/drivescope/sessions");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    // YYYY-MM-DDTHH-MM-SS-randwrite.yaml
    assert_eq!(
        name.len(),
        "2026-01-01T00-00-00-randwrite.yaml".len(),
        "{name}"
    );
    assert!(
        name.ends_with("-randwrite.yaml") && name.as_bytes()[10] == b'T',
        "{name}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("session saved to {}", files[0].display())),
        "{stderr}"
    );
    // 500 ms in 250 ms intervals; on a busy machine the drain's last I/Os may come back as
    // one more.
    let n = session::load(&files[0]).unwrap().session.intervals.len();
    assert!((2..=3).contains(&n), "{n} intervals");
}

/// Lines of a child's stdout as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn kill_9_mid_run_loses_at_most_one_autosave_period_and_reports() {
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("k.yaml");
    let target = home.path().join("scratch.bin");
    let mut child = spawn(
        home.path(),
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "32MiB",
            "--rw",
            "randread",
            "--iodepth",
            "4",
            "--duration",
            "60s",
            "--interval",
            "200ms",
            "--autosave",
            "1s",
            "--histograms",
            "--json",
            "--session",
            s(&sp),
        ],
    );
    let rx = lines_of(&mut child);
    let start = Instant::now();
    let mut printed = 0usize;
    // Let it run about 3.5 s of intervals, then kill it without warning.
    while printed < 17 && start.elapsed() < Duration::from_secs(30) {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            if l.contains("\"type\":\"interval\"") {
                printed += 1;
            }
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "killed by a signal");
    while let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
        if l.contains("\"type\":\"interval\"") {
            printed += 1;
        }
    }
    assert!(printed >= 17, "only {printed} intervals before the kill");

    let l = session::load(&sp).unwrap();
    let ses = &l.session;
    assert_eq!(ses.state, SessionState::Running);
    assert!(ses.summary.is_none());
    let saved = ses.intervals.len();
    // One autosave period is 5 intervals of 200 ms; allow one more for the one in flight.
    assert!(
        saved + 6 >= printed && saved <= printed,
        "saved {saved} of {printed}"
    );
    assert!(saved >= 10, "saved {saved}");

    // The latency log beside it loads too, and it too loses at most one autosave period
    // (it is appended on its own, so it may be a period ahead of the session or behind):
    // one histogram per interval (reads only), each holding that interval's I/Os.
    assert_eq!(ses.histograms.as_deref(), Some("k.hlog"));
    let hlog = home.path().join("k.hlog");
    let all = session::histlog::read_span(&hlog, 0.0, 1e9, None).unwrap();
    eprintln!(
        "{saved} intervals saved, {} histograms in the log ({:?})",
        all.histograms, all.stopped
    );
    assert!(
        all.histograms + 6 >= printed && all.histograms <= printed,
        "{} histograms for {printed} intervals printed ({saved} in the session, {:?})",
        all.histograms,
        all.stopped
    );
    let first = session::histlog::read_span(&hlog, 0.0, ses.intervals[4].t, None).unwrap();
    // An interval with no read (a process starved for 200 ms on a loaded machine) has no
    // histogram: the log leaves empty ones out.
    let with_reads = ses.intervals[..5]
        .iter()
        .filter(|iv| (iv.read_iops * iv.dt).round() >= 1.0)
        .count();
    assert_eq!(first.histograms, with_reads, "the first five intervals");
    let ios: f64 = ses.intervals[..5]
        .iter()
        .map(|iv| iv.read_iops * iv.dt)
        .sum();
    assert!(
        (first.hist.len() as f64 - ios).abs() <= 5.0,
        "{} latencies in the log for {ios} I/Os in the session",
        first.hist.len()
    );
    // And `report --span` recomputes from it.
    let out = run(home.path(), &["report", s(&sp), "--span", "0s..1h"]);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && line.contains(&format!("({} interval histograms", all.histograms)),
        "{line}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out_dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&sp), "--out", s(&out_dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no final summary"), "{stderr}");
    let html = parse_xml(&out_dir.join("report.html"));
    let doc = xml(&html).unwrap();
    assert_eq!(polyline_points(&doc, "throughput", "read IOPS"), saved);
    assert!(html.contains("had not reached its final save"));
}

#[test]
fn kill_9_in_a_preset_run_leaves_its_finished_steps_and_the_one_under_way() {
    // quick-look at 0.2: steps of 0.4 s ramp + 1.6 s; killed in its second step (random
    // writes), after an autosave there.
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("p.yaml");
    let target = home.path().join("scratch.bin");
    let mut child = spawn(
        home.path(),
        &[
            "run",
            "--preset",
            "quick-look",
            "--time-scale",
            "0.2",
            "--target",
            s(&target),
            "--size",
            "32MiB",
            "--interval",
            "200ms",
            "--autosave",
            "500ms",
            "--histograms",
            "--json",
            "--session",
            s(&sp),
        ],
    );
    let rx = lines_of(&mut child);
    let start = Instant::now();
    let mut step2 = 0usize;
    let mut steps_done = 0usize;
    while step2 < 6 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run never reached step 2"
        );
        let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        if l.contains("\"type\":\"step\"") {
            steps_done += 1;
        } else if l.contains("\"type\":\"interval\"") && steps_done == 1 {
            step2 += 1;
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    assert_eq!(child.wait().unwrap().code(), None, "killed by a signal");

    let l = session::load(&sp).unwrap();
    let ses = &l.session;
    assert_eq!(ses.state, SessionState::Running);
    assert!(ses.summary.is_none());
    // Step 1 finished and saved; step 2's intervals are there without its record.
    assert_eq!(ses.steps.len(), 1, "{:?}", ses.steps);
    assert_eq!(ses.steps[0].label, "randread-4k");
    let in_step2 = ses.intervals.iter().filter(|iv| iv.step == 1).count();
    assert!(in_step2 >= 2, "{in_step2} intervals of step 2 saved");
    assert!(ses
        .intervals
        .iter()
        .filter(|iv| iv.step == 1)
        .all(|iv| iv.read_iops == 0.0));
    // Its latency log holds reads for step 1 and writes for step 2.
    let hlog = home.path().join("p.hlog");
    let reads = session::histlog::read_span(&hlog, 0.0, 1e9, Some("read")).unwrap();
    let writes = session::histlog::read_span(&hlog, 0.0, 1e9, Some("write")).unwrap();
    let in_step1 = ses.intervals.iter().filter(|iv| iv.step == 0).count();
    assert_eq!(reads.histograms, in_step1, "{:?}", reads.stopped);
    // Each file loses at most one autosave period (2.5 intervals), the log apart from the
    // session.
    assert!(
        writes.histograms + 4 >= in_step2 && writes.histograms <= in_step2 + 4,
        "{} write histograms for {in_step2} intervals",
        writes.histograms
    );
    // Both report: the page and the span.
    let out_dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&sp), "--out", s(&out_dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc_text = parse_xml(&out_dir.join("report.html"));
    let doc = xml(&doc_text).unwrap();
    assert_eq!(
        polyline_points(&doc, "throughput", "write IOPS"),
        ses.intervals.len()
    );
    let out = run(home.path(), &["report", s(&sp), "--span", "0s..1h"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unwritable_session_path_is_refused_before_the_run() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("scratch.bin");
    let blocker = home.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let bad = blocker.join("s.yaml");
    let started = Instant::now();
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            s(&target),
            "--size",
            "16MiB",
            "--rw",
            "randwrite",
            "--duration",
            "30s",
            "--json",
            "--session",
            s(&bad),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "failed only after the run"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(s(&blocker)), "{stderr}");
    assert!(of_type(&json_lines(&out), "interval").is_empty());
}

#[test]
fn truncated_corrupted_and_newer_files() {
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("s.yaml");
    short_run(home.path(), &sp, &[]);
    let text = std::fs::read_to_string(&sp).unwrap();
    let n = session::load(&sp).unwrap().session.intervals.len();

    // Cut in the middle of the fourth interval line.
    let fourth = text.match_indices("\n- {\"t\":").nth(3).unwrap().0;
    let cut = home.path().join("cut.yaml");
    std::fs::write(&cut, &text[..fourth + 20]).unwrap();
    let out_dir = home.path().join("rep-cut");
    let out = run(home.path(), &["report", s(&cut), "--out", s(&out_dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = text[..fourth].matches('\n').count() + 2;
    assert!(
        stderr.contains(&format!("warning: {}:{line}:20:", cut.display())),
        "{stderr}"
    );
    let html = parse_xml(&out_dir.join("report.html"));
    let doc = xml(&html).unwrap();
    assert_eq!(polyline_points(&doc, "throughput", "read IOPS"), 3);
    assert!(html.contains("Loaded with losses"));

    // A hand edit that breaks one interval's number costs that interval only.
    let bad = home.path().join("bad.yaml");
    std::fs::write(
        &bad,
        text.replacen("\"read_iops\": ", "\"read_iops\": -x", 2),
    )
    .unwrap();
    let l = session::load(&bad).unwrap();
    assert_eq!(l.session.intervals.len(), n - 2);
    assert_eq!(l.warnings.len(), 2, "{:?}", l.warnings);
    assert!(l.session.summary.is_some());

    // A newer schema says so and loads nothing.
    let newer = home.path().join("newer.yaml");
    std::fs::write(
        &newer,
        text.replacen("schema_version: 1", "schema_version: 7", 1),
    )
    .unwrap();
    let out = run(home.path(), &["report", s(&newer)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("schema version 7 is newer"), "{stderr}");

    // Not a session at all.
    let junk = home.path().join("junk.yaml");
    std::fs::write(&junk, "\u{0}\u{1}binary").unwrap();
    let out = run(home.path(), &["report", s(&junk)]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn compare_overlays_sessions_and_snapshots_export() {
    let home = tempfile::tempdir().unwrap();
    let a = home.path().join("a.yaml");
    let b = home.path().join("b.yaml");
    short_run(home.path(), &a, &["--snapshot-every", "1s"]);
    short_run(home.path(), &b, &["--rate-iops", "2000"]);

    // The snapshot of a: the session so far and its report files.
    let snap = home.path().join("a-snapshot");
    for f in [
        "session.yaml",
        "throughput.svg",
        "latency.svg",
        "curve.svg",
        "intervals.csv",
        "report.html",
    ] {
        assert!(snap.join(f).exists(), "{f} missing from the snapshot");
    }
    let snap_session = session::load(&snap.join("session.yaml")).unwrap().session;
    assert!(!snap_session.intervals.is_empty());
    parse_xml(&snap.join("report.html"));

    let out_dir = home.path().join("cmp");
    let out = run(
        home.path(),
        &["compare", s(&a), s(&b), "--out", s(&out_dir)],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Both ran on the same target, so they go by their file names.
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("session "), "{stdout}");
    assert!(
        lines[1].starts_with("a ") && lines[2].starts_with("b "),
        "{stdout}"
    );
    let curve = parse_xml(&out_dir.join("compare-curve.svg"));
    let doc = xml(&curve).unwrap();
    assert_eq!(
        markers(&doc, "compare-curve"),
        4,
        "two sessions × one step × p99 and p50"
    );
    let html = parse_xml(&out_dir.join("compare.html"));
    let doc = xml(&html).unwrap();
    let na = session::load(&a).unwrap().session.intervals.len();
    let series = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "polyline" && n.attribute("data-series") == Some("a"))
        .find(|n| {
            n.ancestors()
                .any(|p| p.attribute("id") == Some("compare-throughput"))
        })
        .unwrap();
    assert_eq!(
        series
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .count(),
        na
    );
}

#[test]
fn histograms_recompute_the_percentiles_of_any_span() {
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("h.yaml");
    short_run(home.path(), &sp, &["--histograms"]);
    let ses = session::load(&sp).unwrap().session;
    assert_eq!(ses.histograms.as_deref(), Some("h.hlog"));
    let hlog = std::fs::read_to_string(home.path().join("h.hlog")).unwrap();
    let tagged = |t: &str| {
        hlog.lines()
            .filter(|l| l.starts_with(&format!("Tag={t},")))
            .count()
    };
    // One histogram per direction and interval that did I/O that way (an empty one is left
    // out: on a busy machine the drain's last interval may hold no reads or no writes).
    let did = |f: fn(&session::IntervalRecord) -> f64| {
        ses.intervals.iter().filter(|i| f(i) > 0.0).count()
    };
    assert_eq!(tagged("read"), did(|i| i.read_iops));
    assert_eq!(tagged("write"), did(|i| i.write_iops));

    // The whole run, recomputed from the log, is the session's own summary.
    let out = run(home.path(), &["report", s(&sp), "--span", "0s..1h"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    let sm = ses.summary.unwrap();
    let n = tagged("read") + tagged("write");
    assert!(
        line.contains(&format!(
            "({n} interval histograms, {} I/Os)",
            sm.lat_us.samples
        )),
        "{line}"
    );
    for (k, v) in [
        ("p50", sm.lat_us.p50),
        ("p99", sm.lat_us.p99),
        ("max", sm.lat_us.max),
    ] {
        assert!(
            line.contains(&format!("{k} {v:.1}")),
            "{k} {v:.1} not in {line}"
        );
    }
    // A span holding only the first two intervals.
    let second = ses.intervals[1].t;
    let out = run(
        home.path(),
        &["report", s(&sp), "--span", &format!("0s..{second}s")],
    );
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    // Their histograms: one per direction each did I/O in (a busy machine may give a
    // first interval with reads only).
    let first_two = ses.intervals[..2]
        .iter()
        .map(|i| usize::from(i.read_iops > 0.0) + usize::from(i.write_iops > 0.0))
        .sum::<usize>();
    assert!(
        line.contains(&format!("({first_two} interval histograms")),
        "{line}"
    );
    // Without histograms, the span is refused with the reason.
    let plain = home.path().join("p.yaml");
    short_run(home.path(), &plain, &[]);
    let out = run(home.path(), &["report", s(&plain), "--span", "0s..1m"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--histograms"));
}

/// The temp files of an atomic rewrite of `name` in `dir` (`.NAME.tmp-PID…`).
fn rewrite_temps(dir: &Path, name: &str) -> Vec<PathBuf> {
    let prefix = format!(".{name}.tmp-");
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn kill_9_during_the_final_rewrite_leaves_the_autosaved_stream_whole() {
    // The final save appends the last records and the summary to the autosaved stream,
    // then writes the whole session to a temp file beside it and renames it over the
    // stream. Killed once that temp file exists and before the rename (the temp file is
    // still there afterwards), the session must be the whole stream, never a part of the
    // temp file. No test hook: the test watches the folder and kills the moment the temp
    // file appears, and tries again if the rename won the race.
    let home = common::disk_tempdir();
    let dir = home.path().join("ses");
    std::fs::create_dir(&dir).unwrap();
    let sp = dir.join("r.yaml");
    let target = home.path().join("scratch.bin");
    for attempt in 1..=10 {
        let _ = std::fs::remove_file(&sp);
        for t in rewrite_temps(&dir, "r.yaml") {
            let _ = std::fs::remove_file(t);
        }
        let mut child = spawn(
            home.path(),
            &[
                "run",
                "--target",
                s(&target),
                "--size",
                "16MiB",
                "--rw",
                "randrw",
                "--duration",
                "1500ms",
                "--interval",
                "100ms",
                "--json",
                "--session",
                s(&sp),
            ],
        );
        let rx = lines_of(&mut child);
        // After the first interval the session exists; a temp file from now on is the
        // final rewrite's.
        let t0 = Instant::now();
        let mut printed = Vec::new();
        while !printed
            .iter()
            .any(|l: &String| l.contains(r#""type":"interval""#))
        {
            // A failure's timeout (a loaded machine may take long), never a time asserted.
            let l = rx
                .recv_timeout(Duration::from_secs(300))
                .expect("an interval within 300 s");
            printed.push(l);
        }
        let mut killed = false;
        while child.try_wait().unwrap().is_none() {
            if !rewrite_temps(&dir, "r.yaml").is_empty() {
                child.kill().unwrap();
                killed = true;
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(600),
                "the run never ended"
            );
        }
        let status = child.wait().unwrap();
        printed.extend(rx.iter());
        let temps = rewrite_temps(&dir, "r.yaml");
        if !killed || temps.is_empty() {
            eprintln!("attempt {attempt}: the rename came first ({status}); again");
            continue;
        }
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
        let lines: Vec<serde_json::Value> = printed
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        assert!(
            of_type(&lines, "session").is_empty(),
            "killed before the save was reported"
        );
        let intervals = of_type(&lines, "interval").len();
        let loaded = session::load(&sp)
            .unwrap_or_else(|e| panic!("the session after a kill in its rewrite: {e}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert!(
            loaded.documents > 1,
            "the autosaved stream, not the rewrite"
        );
        let ses = loaded.session;
        // Its last document is the final append: everything, with the summary.
        assert_eq!(ses.state, SessionState::Complete);
        assert_eq!(ses.intervals.len(), intervals, "every interval printed");
        let sm = ses.summary.as_ref().expect("the summary was appended");
        assert_eq!(sm.intervals as usize, intervals);
        // And it reports as a finished session.
        let out_dir = home.path().join("rep");
        let out = run(home.path(), &["report", s(&sp), "--out", s(&out_dir)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert!(!err.contains("no final summary"), "{err}");
        assert!(out_dir.join("report.html").exists());
        return;
    }
    panic!("in 10 runs the kill never landed between the temp file and the rename");
}

#[test]
fn a_note_says_what_was_tested_in_the_session_its_report_and_compare() {
    let home = tempfile::tempdir().unwrap();
    let (a, b) = (home.path().join("a.yaml"), home.path().join("b.yaml"));
    short_run(home.path(), &a, &["--note", "FW 2.1, fresh out of box"]);
    short_run(home.path(), &b, &["--note", "FW 2.2 <after secure erase>"]);
    let sa = session::load(&a).unwrap().session;
    assert_eq!(sa.note.as_deref(), Some("FW 2.1, fresh out of box"));
    let out_dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&b), "--out", s(&out_dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("FW 2.2 &lt;after secure erase&gt;"),
        "the note, escaped, in the report"
    );
    let out = run(
        home.path(),
        &[
            "compare",
            s(&a),
            s(&b),
            "--out",
            s(&home.path().join("cmp")),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\na: FW 2.1, fresh out of box\nb: FW 2.2 <after secure erase>\n"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(home.path().join("cmp").join("compare.html")).unwrap();
    assert!(page.contains("What was tested") && page.contains("FW 2.1, fresh out of box"));
    // A session without a note has none in its file.
    let c = home.path().join("c.yaml");
    short_run(home.path(), &c, &[]);
    let text = std::fs::read_to_string(&c).unwrap();
    assert!(!text.contains("\nnote:"), "{text}");
}
