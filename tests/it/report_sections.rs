//! The report a review prints, from a real run of the real binary (quick-look, time-scaled,
//! with its histograms): the plan as a table of its steps numbered from 1, the QoS table's
//! nines equal to `steps.json`'s, the four corners, the drive's serial as the session holds
//! it, and a latency distribution per step drawn from the histogram log.

use crate::common;

use std::path::Path;

use common::run;
use drivescope::session;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// The rows (cells' text) of the page's table of class `class`.
fn table(d: &roxmltree::Document<'_>, class: &str) -> Vec<Vec<String>> {
    let t = d
        .descendants()
        .find(|n| n.tag_name().name() == "table" && n.attribute("class") == Some(class))
        .unwrap_or_else(|| panic!("no table {class}"));
    t.children()
        .filter(|n| n.tag_name().name() == "tr")
        .map(|tr| {
            tr.children()
                .map(|c| c.text().unwrap_or_default().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn a_quick_look_reports_its_plan_qos_corners_drive_and_distributions() {
    let home = common::disk_tempdir();
    let target = home.path().join("t.bin");
    let path = home.path().join("ql.yaml");
    let out = run(
        home.path(),
        &[
            "run",
            "--preset",
            "quick-look",
            "--target",
            s(&target),
            "--size",
            "64MiB",
            "--time-scale",
            "0.05",
            "--interval",
            "250ms",
            "--histograms",
            "--session",
            s(&path),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let dir = home.path().join("rep");
    let out = run(home.path(), &["report", s(&path), "-o", s(&dir)]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let saved = session::load(&path).expect("session").session;
    let html = std::fs::read_to_string(dir.join("report.html")).expect("page");
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    let d = roxmltree::Document::parse_with_options(&html, opts).expect("well-formed");

    // The plan: one row a step, numbered from 1, each at its rate in words.
    let plan = table(&d, "plan");
    let planned = saved.plan_info().steps.expect("plan steps").len();
    assert_eq!(plan.len(), 1 + planned, "{plan:?}");
    let numbers: Vec<String> = plan[1..].iter().map(|r| r[0].clone()).collect();
    let want: Vec<String> = (1..=planned).map(|n| n.to_string()).collect();
    assert_eq!(numbers, want);
    assert!(plan[1..].iter().all(|r| r[5] == "max"), "{plan:?}");
    assert!(!html.contains("nanos"), "no serialized durations");

    // The QoS table: each step's nines as steps.json holds them, scaled as people read.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("steps.json")).expect("json"))
            .expect("steps.json");
    let steps = json["steps"].as_array().expect("steps");
    let qos = table(&d, "qos");
    assert_eq!(
        qos.len(),
        1 + steps.len(),
        "quick-look: one direction a step"
    );
    let us = drivescope::ui::format::us;
    for (row, st) in qos[1..].iter().zip(steps) {
        let dir = if st["read"]["ios"].as_u64() > Some(0) {
            "read"
        } else {
            "write"
        };
        let l = &st[dir]["response_lat_us"];
        let f = |k: &str| us(l[k].as_f64().expect("a figure"));
        assert_eq!(row[0], st["step"].to_string());
        assert_eq!(row[2], dir);
        assert_eq!(
            row[4..],
            [f("p99"), f("p99.9"), f("p99.99"), f("p99.999"), f("max")],
            "{row:?} against {st}"
        );
    }

    // quick-look's four workloads are the four corners.
    let corners = table(&d, "corners");
    let names: Vec<&str> = corners[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "4K random read",
            "4K random write",
            "sequential read",
            "sequential write"
        ]
    );
    assert!(
        corners[1..].iter().all(|r| r[1] != "not in this session"),
        "{corners:?}"
    );

    // The drive's serial exactly as the session holds it, under its own name.
    let drive = table(&d, "drive");
    let serial = saved
        .drive
        .as_ref()
        .and_then(|d| d.primary()?.serial.as_deref());
    let shown = drive
        .iter()
        .find(|r| r[0] == "serial")
        .map(|r| r[1].as_str());
    assert_eq!(shown, Some(serial.unwrap_or("-")), "{drive:?}");

    // One distribution chart (four steps, one line each) from the histogram log.
    let lines = d
        .descendants()
        .filter(|n| {
            n.tag_name().name() == "polyline"
                && n.ancestors()
                    .any(|a| a.attribute("id") == Some("distribution-1"))
        })
        .count();
    assert_eq!(lines, saved.steps.len(), "a line a step");
}
