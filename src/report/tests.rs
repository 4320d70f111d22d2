//! The report of a session with telemetry: the temperature chart has one vertex per
//! sample, the curve one point per step, and the SMART section its before/after figures.

use serde_yaml::Value;

use crate::session::{IntervalRecord, Sample, Session, StepRecord};
use crate::stats::{LatSummary, StepSummary};
use crate::workload::{Arrivals, BlockSizes, Region, RwMode, Workload};

/// A 4 KiB random workload with `rw` at queue depth `qd`.
fn workload(rw: RwMode, bs: u64, qd: u32) -> Workload {
    Workload {
        rw,
        rwmixread: rw.read_percent(50),
        bs: BlockSizes::single(bs),
        iodepth: qd,
        jobs: 1,
        region: Region {
            offset: 0,
            len: 1 << 30,
        },
        rate_iops: None,
        arrivals: Arrivals::Uniform,
        seed: 1,
        direct: true,
        job_region: Default::default(),
    }
}

fn step(index: u32, iops: f64, p99: f64) -> StepRecord {
    StepRecord {
        index,
        label: format!("{}% of max", (index + 1) * 50),
        point: Value::Null,
        workload: Some(workload(RwMode::RandRead, 4096, 32)),
        start_s: 0.0,
        end_s: 0.0,
        drive: None,
        summary: StepSummary {
            engine: crate::workload::EngineKind::IoUring,
            engine_note: None,
            engine_options: Default::default(),
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
            trim_ios: 0,
            trim_bytes: 0,
            trim_iops: 0.0,
            trim_bw_bytes: 0.0,
            trim_lat_us: Default::default(),
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
            fio_series: Vec::new(),
            verify_unsaved: None,
            pacing: None,
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
        .find(|n| {
            n.tag_name().name() == "polyline"
                && n.attribute("data-series") == Some("randread 4KiB QD32×1 p99")
        })
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
    // 2100 - 1000 = 1100 NVMe units of 512,000 bytes: 563,200,000 bytes, which is
    // 550,000 KiB (not a whole number of MiB) = 537.109375 MiB, shown to two places.
    assert_eq!(cell("data written"), "537.11MiB (1100 NVMe data units)");
    // From the first sample's 40 °C to the peak of 52 °C.
    assert_eq!(
        cell("temperature rise"),
        "+12.0 °C (from 40.0 to a peak of 52.0)"
    );
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

#[test]
fn the_curve_joins_the_points_of_one_workload_only() {
    // quick-look's shape: four workloads of one step each, then a sweep of three points.
    let mut s = session();
    s.steps.clear();
    let shapes = [
        (RwMode::RandRead, 4096),
        (RwMode::RandWrite, 4096),
        (RwMode::Read, 131_072),
        (RwMode::Write, 131_072),
    ];
    for (i, (rw, bs)) in shapes.into_iter().enumerate() {
        let mut st = step(i as u32, 10_000.0 * (i + 1) as f64, 100.0);
        st.workload = Some(workload(rw, bs, 32));
        s.steps.push(st);
    }
    for (k, iops) in [30_000.0, 10_000.0, 20_000.0].into_iter().enumerate() {
        let mut st = step(4 + k as u32, iops, 50.0 + iops / 1000.0);
        st.workload = Some(workload(RwMode::RandRead, 4096, 8));
        st.workload.as_mut().unwrap().rate_iops = Some(iops);
        s.steps.push(st);
    }
    let series = super::charts::curve_series(&s, "", None);
    let p99: Vec<_> = series.iter().filter(|x| x.name.ends_with(" p99")).collect();
    let names: Vec<&str> = p99.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "randread 4KiB QD32×1 p99",
            "randwrite 4KiB QD32×1 p99",
            "read 128KiB QD32×1 p99",
            "write 128KiB QD32×1 p99",
            "randread 4KiB QD8×1 p99",
        ]
    );
    for x in &p99[..4] {
        assert_eq!(x.points.len(), 1, "{}: one step, nothing to join", x.name);
    }
    // The sweep's points are one line, in IOPS order; each workload has its own colour.
    let xs: Vec<f64> = p99[4].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, vec![10_000.0, 20_000.0, 30_000.0]);
    let mut colours: Vec<&str> = p99.iter().map(|x| x.color).collect();
    colours.dedup();
    assert_eq!(colours.len(), 5);
    // The page's chart names each series in its legend.
    let dir = tempfile::tempdir().unwrap();
    super::write_report(&s, dir.path(), &[]).unwrap();
    let svg = std::fs::read_to_string(dir.path().join("curve.svg")).unwrap();
    for n in names {
        assert!(svg.contains(n), "legend lacks {n}");
    }
}

#[test]
fn the_curve_plots_latency_from_submission_and_the_table_keeps_the_response() {
    // A paced point whose drive fell behind: 300 µs from submission, 20 ms from schedule.
    let mut s = session();
    let mut st = step(0, 10_000.0, 20_000.0);
    st.summary.service_lat_us = Some(LatSummary {
        samples: 10,
        mean: 250.0,
        p50: 200.0,
        p99: 300.0,
        ..LatSummary::default()
    });
    st.summary.lat_us.mean = 15_000.0;
    s.steps = vec![st];
    let series = super::charts::curve_series(&s, "", None);
    let ys: Vec<f64> = series.iter().map(|x| x.points[0].1).collect();
    assert_eq!(ys, vec![300.0, 200.0], "p99 and p50 from submission");
    let view = crate::app::CurvePoint::new(s.steps[0].series(), &s.steps[0].summary);
    assert_eq!(view.mean_us, 250.0);
    assert_eq!(view.response_mean_us, Some(15_000.0));
    let dir = tempfile::tempdir().unwrap();
    super::write_report(&s, dir.path(), &[]).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("response from schedule, mean µs"), "labelled");
    assert!(html.contains(">15000.0</td>"), "kept in the table");
}

#[test]
fn ata_attributes_are_one_row_each_by_id_and_name_with_their_raw_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session();
    s.telemetry.clear();
    // The last sample holds no table (it had not changed, or not for a minute): the after
    // side is the last sample that holds one.
    for (t, raw) in [(0, 10), (5, 14), (6, 0)] {
        let line = format!(
            r#"{{"t": {t}, "smart": {{"temperature_c": 40, "ata_attributes": [{{"id": 5, "name": "Reallocated_Sector_Ct", "flags": 51, "value": 100, "worst": 100, "threshold": 10, "raw": {raw}}}]}}}}"#
        );
        let line = if raw == 0 {
            format!(r#"{{"t": {t}, "smart": {{"temperature_c": 41}}}}"#)
        } else {
            line
        };
        s.telemetry.push(Sample::from_json_line(&line).unwrap());
    }
    super::write_report(&s, dir.path(), &[]).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let row = html
        .lines()
        .find(|l| l.contains("ATA 5 Reallocated_Sector_Ct (raw)"))
        .unwrap_or_else(|| panic!("no attribute row:\n{html}"));
    assert!(row.contains("10") && row.contains("14"), "{row}");
    assert!(!html.contains("ata_attributes"), "fields listed one by one");
}

#[test]
fn a_serial_of_digits_is_text_shown_exactly_and_never_a_smart_figure() {
    let serial = "19666372154600481";
    let text = format!(
        "schema_version: 1\ndrive:\n  model: Fast SSD\n  serial: '{serial}'\ntelemetry:\n- {{t: 0, smart: {{serial_number: '{serial}', temperature_c: 40}}}}\n- {{t: 1, smart: {{serial_number: '{serial}', temperature_c: 41}}}}\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    let loaded = crate::session::parse(&path, &text).unwrap();
    let s = loaded.session;
    assert_eq!(s.drive["serial"].as_str(), Some(serial));
    // Written and read back: still the same text.
    let again = crate::session::to_yaml(&s).unwrap();
    let back = crate::session::parse(&path, &again).unwrap().session;
    assert_eq!(back.drive["serial"].as_str(), Some(serial), "{again}");
    super::write_report(&back, dir.path(), &[]).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains(serial), "the serial as the drive gave it");
    assert!(!html.contains("19666372154600480"), "not read as a float");
    assert!(
        !html.contains("serial_number"),
        "not a SMART figure: {html}"
    );
}

#[test]
fn the_drive_wear_table_has_the_run_and_each_step_with_the_columns_the_drive_reports() {
    use crate::session::{Event, EventKind};
    use crate::telemetry::{DriveWear, WearSpan};
    let dir = tempfile::tempdir().unwrap();
    let mut s = session();
    s.steps[0].end_s = 0.8;
    s.steps[1].end_s = 5.0;
    let span = |step: Option<usize>, units: u64| WearSpan {
        step,
        drivescope_written_bytes: units * 512_000,
        drivescope_read_bytes: 0,
        drive: DriveWear {
            host_written_bytes: Some(units * 512_000),
            host_unit_bytes: Some(512_000),
            media_errors: Some(0),
            ..DriveWear::default()
        },
    };
    for (t, w) in [(1.0, span(Some(0), 2)), (9.0, span(None, 3))] {
        s.events.push(Event {
            t,
            kind: EventKind::DriveWear,
            message: String::new(),
            data: serde_yaml::to_value(w).unwrap(),
            drive: None,
        });
    }
    super::write_report(&s, dir.path(), &[]).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let d = doc(&html);
    let table = d
        .descendants()
        .find(|n| n.attribute("class") == Some("drive-wear"))
        .expect("the drive wear table");
    let rows: Vec<Vec<String>> = table
        .children()
        .filter(|n| n.tag_name().name() == "tr")
        .map(|tr| {
            tr.children()
                .map(|c| c.text().unwrap_or_default().to_string())
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        ["span", "host wrote", "drivescope wrote", "media errors"]
    );
    assert_eq!(rows[1], ["run", "1.46MiB", "1.46MiB", "+0"]);
    assert_eq!(
        rows[2][0], s.steps[0].label,
        "the step that ended before it"
    );
    assert_eq!(rows.len(), 3);
}

#[test]
fn a_paused_span_is_a_gap_in_the_lines_over_time() {
    use crate::session::{Event, EventKind};
    let mut s = session();
    let ts: Vec<f64> = s.intervals.iter().map(|r| r.t).collect();
    assert!(ts.len() >= 4, "{ts:?}");
    // Paused from just after the first interval to the third's end.
    for (t, kind) in [
        (ts[0] + 0.01, EventKind::Paused),
        (ts[2], EventKind::Resumed),
    ] {
        s.events.push(Event {
            t,
            kind,
            message: String::new(),
            data: serde_yaml::Value::Null,
            drive: None,
        });
    }
    assert_eq!(s.paused_spans(), vec![(ts[0] + 0.01, ts[2])]);
    let svg = super::charts::throughput(&s).render();
    let read_lines = svg.matches("data-series=\"read IOPS\"").count();
    assert_eq!(read_lines, 2, "the read line broken once: {svg}");
    for r in &mut s.intervals {
        r.lat_us.p50 = 80.0;
        r.lat_us.p99 = 100.0;
        r.lat_us.p99_9 = 120.0;
        r.lat_us.max = 150.0;
    }
    let lat = super::charts::latency(&s).render();
    assert_eq!(lat.matches("data-series=\"p99\"").count(), 2, "{lat}");
}
