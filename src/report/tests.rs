//! The report of a session with telemetry: the temperature chart has one vertex per
//! sample, the curve one point per step, and the SMART section its before/after figures.

use serde_yaml::Value;

use crate::session::{IntervalRecord, Sample, Session, StepRecord};
use crate::stats::{LatSummary, StepSummary};

fn step(index: u32, iops: f64, p99: f64) -> StepRecord {
    StepRecord {
        index,
        label: format!("{}% of max", (index + 1) * 50),
        point: Value::Null,
        workload: None,
        start_s: 0.0,
        end_s: 0.0,
        summary: StepSummary {
            engine: crate::workload::EngineKind::IoUring,
            engine_note: None,
            runtime_s: 10.0,
            ios: (iops * 10.0) as u64,
            read_ios: (iops * 10.0) as u64,
            write_ios: 0,
            read_bytes: 0,
            write_bytes: 0,
            iops,
            read_iops: iops,
            write_iops: 0.0,
            read_bw_bytes: iops * 4096.0,
            write_bw_bytes: 0.0,
            errors: 0,
            target_iops: Some(iops),
            lat_us: LatSummary {
                samples: 10,
                p50: p99 / 2.0,
                p99,
                ..LatSummary::default()
            },
            read_lat_us: LatSummary::default(),
            write_lat_us: LatSummary::default(),
            service_lat_us: None,
            arrival_cv: None,
            ended_by: crate::outcome::EndedBy::Duration,
        },
    }
}

fn session() -> Session {
    let mut s = Session {
        schema_version: 1,
        ..Session::default()
    };
    for i in 0..7 {
        s.intervals.push(IntervalRecord {
            t: f64::from(i + 1),
            dt: 1.0,
            read_iops: 1000.0 * f64::from(i + 1),
            ..IntervalRecord::default()
        });
    }
    // A sweep's order: the probe at max first, then the fractions.
    s.steps = vec![step(0, 20_000.0, 300.0), step(1, 10_000.0, 120.0)];
    for (t, temp, written, throttle) in [(0, 40, 1000, 0), (2, 47, 1500, 3), (4, 52, 2100, 9)] {
        let line = format!(
            r#"{{"t": {t}, "smart": {{"temperature_c": {temp}, "data_units_written": {written}, "thermal_throttle": {{"tmt1_seconds": {throttle}}}}}}}"#
        );
        s.telemetry.push(Sample::from_json_line(&line).unwrap());
    }
    s
}

fn doc(text: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(text, opts).unwrap()
}

#[test]
fn telemetry_and_smart_reach_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let s = session();
    super::write_report(&s, dir.path(), &[]).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let d = doc(&html);
    let temp = d
        .descendants()
        .find(|n| n.attribute("id") == Some("temperature"))
        .unwrap();
    let line = temp
        .descendants()
        .find(|n| n.tag_name().name() == "polyline")
        .unwrap();
    assert_eq!(
        line.attribute("points").unwrap().split_whitespace().count(),
        3
    );
    let curve = d
        .descendants()
        .find(|n| n.attribute("id") == Some("curve"))
        .unwrap();
    let points = curve
        .descendants()
        .filter(|n| n.attribute("class") == Some("point"))
        .count();
    assert_eq!(points, 4, "two steps × p99 and p50");
    // The line runs left to right.
    let p99 = curve
        .descendants()
        .find(|n| n.tag_name().name() == "polyline" && n.attribute("data-series") == Some("p99"))
        .unwrap();
    let xs: Vec<f64> = p99
        .attribute("points")
        .unwrap()
        .split_whitespace()
        .map(|p| p.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
    let cell = |name: &str| {
        d.descendants()
            .filter(|n| n.tag_name().name() == "tr")
            .find(|tr| tr.children().any(|c| c.text() == Some(name)))
            .and_then(|tr| tr.children().nth(1))
            .and_then(|td| td.text())
            .map(String::from)
            .unwrap_or_else(|| panic!("no row {name}"))
    };
    // 1100 NVMe units of 512,000 bytes.
    assert!(cell("data written").starts_with(&crate::units::format_size(1100 * 512_000)));
    assert!(cell("temperature rise").starts_with("+12.0 °C"));
    assert_eq!(cell("throttle time (thermal_throttle.tmt1_seconds)"), "9 s");
    let svg = std::fs::read_to_string(dir.path().join("temperature.svg")).unwrap();
    doc(&svg);
}

#[test]
fn drive_identity_rows_name_nested_fields() {
    let drive: Value = serde_yaml::from_str(
        "{target: /x, disks: [{name: nvme0n1, model: Fast SSD, capacity_bytes: 1000}]}",
    )
    .unwrap();
    let mut rows = Vec::new();
    super::html::flatten("", &drive, &mut rows);
    assert!(
        rows.contains(&("disks.0.model".into(), "Fast SSD".into())),
        "{rows:?}"
    );
    let s = Session {
        drive,
        ..Session::default()
    };
    assert_eq!(s.label(), "Fast SSD");
}
