//! A report of several drives from a real run: three temp files from a targets file run a
//! time-scaled StorageReview sweep with `--histograms`; its `steps.csv` has one row per step
//! and drive, counted per drive; the report has a section a drive, each with its own
//! latency distributions; with a pause put in the session (a headless run cannot pause),
//! each drive's lines over time break at the paused span and every chart over time marks
//! it.

use crate::common;

use std::path::Path;

use drivescope::session::{self, Event, EventKind};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

const DRIVES: [&str; 3] = ["bay-1", "bay-2", "bay-3"];

/// The text of the page's section from `<h2 class="drive">Drive {label}` to the next h2.
fn drive_section<'a>(html: &'a str, label: &str) -> &'a str {
    let head = format!("<h2 class=\"drive\">Drive {label}</h2>");
    let at = html
        .find(&head)
        .unwrap_or_else(|| panic!("no section {label}"));
    let rest = &html[at + head.len()..];
    &rest[..rest.find("<h2").unwrap_or(rest.len())]
}

#[test]
fn three_drives_give_steps_per_drive_a_distribution_section_each_and_paused_gaps() {
    let home = common::disk_tempdir();
    let dir = home.path();
    // Reads only: several targets on one drive may be read together, not written.
    let mut shelf = String::new();
    for (i, label) in DRIVES.iter().enumerate() {
        let f = dir.join(format!("{i}.bin"));
        std::fs::File::create(&f)
            .and_then(|h| h.set_len(64 << 20))
            .unwrap();
        shelf.push_str(&format!("- path: {}\n  label: {label}\n", f.display()));
    }
    let targets = dir.join("shelf.yaml");
    std::fs::write(&targets, shelf).unwrap();
    let path = dir.join("s.yaml");
    let out = common::run(
        dir,
        &[
            "run",
            "--targets",
            s(&targets),
            "--preset",
            "storagereview-4k-randread",
            "--time-scale",
            "0.02",
            "--histograms",
            "--session",
            s(&path),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let loaded = session::load(&path).expect("session").session;
    let per_drive = loaded.steps.len() / 3;
    assert_eq!(per_drive, 13, "13 sweep points a drive");

    // A pause put in the session, from after the second interval to past the fifth.
    let mut paused = loaded.clone();
    let ts: Vec<f64> = paused.intervals.iter().map(|r| r.t).collect();
    let (from, to) = (ts[ts.len() / 4], ts[ts.len() / 2]);
    for (t, kind) in [(from, EventKind::Paused), (to, EventKind::Resumed)] {
        paused.events.push(Event {
            t,
            kind,
            message: String::new(),
            data: None,
            drive: None,
        });
    }
    paused.events.sort_by(|a, b| a.t.total_cmp(&b.t));
    let edited = dir.join("paused.yaml");
    std::fs::write(&edited, session::to_yaml(&paused).expect("yaml")).unwrap();

    let rep = dir.join("report");
    let out = common::run(dir, &["report", s(&edited), "-o", s(&rep)]);
    assert!(out.status.success(), "{}", common::stderr(&out));

    // steps.csv: a row per step and drive, each drive's steps counted 1 to 13.
    let csv = std::fs::read_to_string(rep.join("steps.csv")).unwrap();
    let rows: Vec<(String, u32)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (
                c[0].trim_matches('"').to_string(),
                c[1].parse().expect("step"),
            )
        })
        .collect();
    assert_eq!(rows.len(), 39, "{csv}");
    for d in DRIVES {
        let steps: Vec<u32> = rows.iter().filter(|r| r.0 == d).map(|r| r.1).collect();
        assert_eq!(steps, (1..=13).collect::<Vec<_>>(), "{d}: {csv}");
    }

    // A section a drive, each with its own distribution: a line a step, its own figures.
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    let mut lines_of = Vec::new();
    for d in DRIVES {
        let sec = drive_section(&html, d);
        assert!(
            sec.contains("<h3>Latency distribution per step</h3>"),
            "{d}"
        );
        let chart = &sec[sec.find("id=\"drive-").expect("a distribution chart")..];
        let chart = &chart[..chart.find("</svg>").unwrap_or(chart.len())];
        let steps = (1..=13)
            .filter(|n| chart.contains(&format!("data-series=\"{n} sweep ")))
            .count();
        assert_eq!(steps, 13, "{d}: a line a step");
        lines_of.push(chart.to_string());
    }
    assert!(
        lines_of[0] != lines_of[1] && lines_of[1] != lines_of[2],
        "each drive's distribution is its own"
    );

    // The charts over time: each drive's line broken at the pause, the span marked (the
    // run's own report, without the pause: whole lines, no band).
    let whole = dir.join("report-whole");
    let out = common::run(dir, &["report", s(&path), "-o", s(&whole)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let svg = std::fs::read_to_string(whole.join("throughput.svg")).unwrap();
    assert!(!svg.contains("class=\"paused\""));
    for d in DRIVES {
        let n = svg
            .matches(&format!("class=\"series\" data-series=\"{d} "))
            .count();
        assert_eq!(n, 1, "{d}'s line whole without a pause");
    }
    for chart in ["throughput", "latency"] {
        let svg = std::fs::read_to_string(rep.join(format!("{chart}.svg"))).unwrap();
        assert_eq!(svg.matches("<rect class=\"paused\"").count(), 1, "{chart}");
        for d in DRIVES {
            let series = svg
                .matches(&format!("class=\"series\" data-series=\"{d} "))
                .count();
            assert!(
                series >= 2,
                "{chart}: {d}'s line broken at the pause ({series})"
            );
        }
    }
}
