//! The report of a session with telemetry: the temperature chart has one vertex per
//! sample, the curve one point per step, and the SMART section its before/after figures.

use crate::session::{DriveIdentity, IntervalRecord, Sample, Session, StepRecord};
use crate::stats::{LatSummary, StepSummary};
use crate::workload::{BlockSizes, Region, RwMode, Workload};

/// A 4 KiB random workload with `rw` at queue depth `qd`.
fn workload(rw: RwMode, bs: u64, qd: u32) -> Workload {
    Workload {
        rwmixread: rw.read_percent(50),
        ..Workload::new(
            rw,
            BlockSizes::single(bs),
            qd,
            Region {
                offset: 0,
                len: 1 << 30,
            },
            1,
        )
    }
}

fn step(index: u32, iops: f64, p99: f64) -> StepRecord {
    StepRecord {
        index,
        label: format!("{}% of max", (index + 1) * 50),
        point: None,
        workload: Some(workload(RwMode::RandRead, 4096, 32)),
        start_s: 0.0,
        end_s: 0.0,
        drive: None,
        summary: StepSummary {
            runtime_s: 10.0,
            ios: (iops * 10.0) as u64,
            read_ios: (iops * 10.0) as u64,
            iops,
            read_iops: iops,
            read_bw_bytes: iops * 4096.0,
            target_iops: Some(iops),
            lat_us: LatSummary {
                samples: 10,
                p50: p99 / 2.0,
                p99,
                ..LatSummary::default()
            },
            ended_by: crate::outcome::EndedBy::Duration,
            ..Default::default()
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

/// The file `name` of the report [`super::write_report`] writes of `s`.
fn written(s: &Session, name: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    super::write_report(s, dir.path(), &[]).unwrap();
    std::fs::read_to_string(dir.path().join(name)).unwrap()
}

/// `s` made a run of the drives `labels`.
fn with_drives(s: &mut Session, labels: &[&str]) {
    s.drives = labels
        .iter()
        .map(|l| crate::session::DriveEntry {
            label: l.to_string(),
            ..Default::default()
        })
        .collect();
}

/// An event of `kind` at `t`, with no message nor data.
fn event(t: f64, kind: crate::session::EventKind) -> crate::session::Event {
    crate::session::Event {
        t,
        kind,
        message: String::new(),
        data: None,
        drive: None,
    }
}

#[test]
fn telemetry_and_smart_reach_the_page() {
    let s = session();
    let html = written(&s, "report.html");
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
    assert_eq!(points, 4, "two steps × average and p99");
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
    let smart = table_rows(&d, "smart");
    let row = |name: &str| -> Vec<String> {
        let found = smart.iter().find(|r| r[0] == name);
        found.cloned().unwrap_or_else(|| panic!("no row {name}"))
    };
    // NVMe units of 512,000 bytes, decimal as drives count: 1000 units before, 2100 after,
    // 1100 (563,200,000 bytes) written in the run.
    assert_eq!(
        row("data written"),
        [
            "data written",
            "512.0 MB (512,000,000 bytes)",
            "1.08 GB (1,075,200,000 bytes)",
            "+563.2 MB (563,200,000 bytes)"
        ]
    );
    // The first and last samples, and the run's coolest and hottest.
    assert_eq!(
        row("temperature (min / max in the run)")[1..],
        ["40 °C", "52 °C", "40 °C / 52 °C"]
    );
    assert_eq!(
        row("time throttled (light, TMT1)")[1..],
        ["0s", "9s", "+9s"]
    );
    // Identity is not a SMART figure, nor are the fields listed one by one.
    assert!(!html.contains("thermal_throttle"), "{html}");
    doc(&written(&s, "temperature.svg"));
}

#[test]
fn drive_identity_rows_name_nested_fields() {
    let drive: DriveIdentity = serde_yaml::from_str(
        "{target: /x, disks: [{name: nvme0n1, model: Fast SSD, capacity_bytes: 1000}]}",
    )
    .unwrap();
    assert_eq!(
        super::drive::model(Some(&drive)).as_deref(),
        Some("Fast SSD")
    );
    let s = Session {
        drive: Some(drive),
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
    let svg = written(&s, "curve.svg");
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
    assert_eq!(ys, vec![250.0, 300.0], "average and p99 from submission");
    let view = crate::app::CurvePoint::new(s.steps[0].series(), &s.steps[0].summary);
    assert_eq!(view.mean_us, 250.0);
    assert_eq!(view.response_mean_us, Some(15_000.0));
    let html = written(&s, "report.html");
    assert!(html.contains("<th>service mean</th>"), "labelled");
    assert!(html.contains("<th>response mean</th>"), "labelled");
    assert!(html.contains(">250 µs</td>"), "beside the response: {html}");
}

#[test]
fn a_sweep_point_under_its_target_is_marked_in_the_table_and_the_curve() {
    let mut s = session();
    let mut missed = step(0, 10_000.0, 300.0);
    missed.summary.target_iops = Some(20_000.0);
    let mut reached = step(1, 19_500.0, 400.0);
    reached.summary.target_iops = Some(20_000.0);
    s.steps = vec![missed, reached];
    let table = page_table(&s, "results");
    let col = table[0]
        .iter()
        .position(|h| h == "reached")
        .expect("a reached column");
    assert_eq!(table[1][col], "50% MISSED", "{table:?}");
    assert_eq!(table[2][col], "98%", "{table:?}");
    let curve = super::charts::curve(&s);
    let rings: Vec<_> = curve
        .series
        .iter()
        .filter(|x| x.style == super::svg::Style::Rings)
        .collect();
    assert_eq!(rings.len(), 1, "one ring series for the workload");
    assert_eq!(
        rings[0].points.iter().map(|p| p.0).collect::<Vec<_>>(),
        [10_000.0, 10_000.0],
        "the missed point's average and p99, not the one that reached its target"
    );
    assert!(
        rings[0].name.contains("missed its target (under 97%)"),
        "{}",
        rings[0].name
    );
    let svg = curve.render();
    assert_eq!(svg.matches("class=\"ring\"").count(), 2, "{svg}");
    // Reached: no ring, no legend entry.
    s.steps.remove(0);
    let curve = super::charts::curve(&s);
    assert!(curve
        .series
        .iter()
        .all(|x| x.style != super::svg::Style::Rings));
    assert!(!curve.render().contains("missed its target"));
    // No target at all: no reached column.
    s.steps[0].summary.target_iops = None;
    let table = page_table(&s, "results");
    assert!(!table[0].iter().any(|h| h == "reached"), "{table:?}");
    assert_eq!(table[0].len(), table[1].len(), "{table:?}");
}

#[test]
fn ata_attributes_are_one_row_each_by_id_and_name_with_their_raw_change() {
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
    let html = written(&s, "report.html");
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
    let serial_of = |s: &Session| s.drive.as_ref().and_then(|d| d.primary()?.serial.clone());
    assert_eq!(serial_of(&s).as_deref(), Some(serial));
    // Written and read back: still the same text.
    let again = crate::session::to_yaml(&s).unwrap();
    let back = crate::session::parse(&path, &again).unwrap().session;
    assert_eq!(serial_of(&back).as_deref(), Some(serial), "{again}");
    let html = written(&back, "report.html");
    assert!(html.contains(serial), "the serial as the drive gave it");
    assert!(!html.contains("19666372154600480"), "not read as a float");
    assert!(
        !html.contains("serial_number"),
        "not a SMART figure: {html}"
    );
}

#[test]
fn the_drive_wear_table_has_the_run_and_each_step_with_the_columns_the_drive_reports() {
    use crate::telemetry::{DriveWear, WearSpan};
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
        s.events.push(crate::session::Event {
            data: crate::session::Document::of(w),
            ..event(t, crate::session::EventKind::DriveWear)
        });
    }
    let rows = table_rows(&doc(&written(&s, "report.html")), "drive-wear");
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
    use crate::session::EventKind;
    let mut s = session();
    let ts: Vec<f64> = s.intervals.iter().map(|r| r.t).collect();
    assert!(ts.len() >= 4, "{ts:?}");
    // Paused from just after the first interval to the third's end.
    s.events.push(event(ts[0] + 0.01, EventKind::Paused));
    s.events.push(event(ts[2], EventKind::Resumed));
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
    // Each chart over time marks the span: a shaded band labelled paused.
    for svg in [&svg, &lat] {
        assert_eq!(svg.matches("<rect class=\"paused\"").count(), 1, "{svg}");
        assert!(svg.contains(">paused</text>"), "{svg}");
    }
}

#[test]
fn a_paused_span_is_a_gap_and_a_band_in_each_drives_lines_of_a_run_of_several() {
    use crate::session::EventKind;
    let mut s = session();
    with_drives(&mut s, &["a", "b"]);
    s.steps = (0..2)
        .map(|i| StepRecord {
            drive: Some(i),
            ..step(i, 1000.0, 100.0)
        })
        .collect();
    s.intervals = (0..12)
        .map(|k| {
            let mut r = IntervalRecord {
                t: f64::from(k / 2 + 1),
                dt: 1.0,
                step: k % 2,
                drive: Some(k % 2),
                read_iops: 1000.0,
                ..IntervalRecord::default()
            };
            r.lat_us.p99 = 100.0;
            r
        })
        .collect();
    s.events.push(event(2.5, EventKind::Paused));
    s.events.push(event(4.0, EventKind::Resumed));
    let charts = super::charts::all(&s);
    let (tp, lat) = (charts[0].render(), charts[1].render());
    for d in ["a", "b"] {
        let name = format!("data-series=\"{d} IOPS\"");
        assert_eq!(tp.matches(&name).count(), 2, "{d}'s line broken once: {tp}");
        let name = format!("data-series=\"{d} p99\"");
        assert_eq!(
            lat.matches(&name).count(),
            2,
            "{d}'s p99 broken once: {lat}"
        );
    }
    for svg in [&tp, &lat] {
        assert_eq!(svg.matches("<rect class=\"paused\"").count(), 1, "{svg}");
    }
}

/// The rows of the table of class `class` on the page of `s`.
fn page_table(s: &Session, class: &str) -> Vec<Vec<String>> {
    table_rows(&doc(&super::html::session_page(s, &[], &[])), class)
}

/// The rows of the table of class `class`: each row's cells' text.
fn table_rows(d: &roxmltree::Document<'_>, class: &str) -> Vec<Vec<String>> {
    let table = d
        .descendants()
        .find(|n| n.tag_name().name() == "table" && n.attribute("class") == Some(class))
        .unwrap_or_else(|| panic!("no table {class}"));
    table
        .children()
        .filter(|n| n.tag_name().name() == "tr")
        .map(|tr| {
            tr.children()
                .map(|c| c.text().unwrap_or_default().to_string())
                .collect()
        })
        .collect()
}

fn lat(p99: f64) -> LatSummary {
    LatSummary {
        samples: 1000,
        mean: p99 / 4.0,
        p50: p99 / 3.0,
        p99,
        p99_9: p99 * 2.0,
        p99_99: p99 * 3.0,
        p99_999: Some(p99 * 4.0),
        max: p99 * 5.0,
        ..LatSummary::default()
    }
}

/// A session of the four corners, each one step with its latency per direction.
fn corners_session() -> Session {
    let mut s = session();
    s.steps.clear();
    let shapes = [
        (RwMode::RandRead, 4096, 250_000.0, 180.0),
        (RwMode::RandWrite, 4096, 90_000.0, 2_500.0),
        (RwMode::Read, 131_072, 24_000.0, 1_200_000.0),
        (RwMode::Write, 131_072, 16_000.0, 4_000.0),
    ];
    for (i, (rw, bs, iops, p99)) in shapes.into_iter().enumerate() {
        let mut st = step(i as u32, iops, p99);
        st.label = format!("{rw} corner");
        st.workload = Some(workload(rw, bs, 32));
        let sm = &mut st.summary;
        if matches!(rw, RwMode::RandRead | RwMode::Read) {
            sm.read_lat_us = lat(p99);
            sm.read_bw_bytes = iops * bs as f64;
        } else {
            sm.read_ios = 0;
            sm.read_iops = 0.0;
            sm.read_bw_bytes = 0.0;
            sm.write_ios = (iops * 10.0) as u64;
            sm.write_iops = iops;
            sm.write_bw_bytes = iops * bs as f64;
            sm.write_lat_us = lat(p99);
        }
        s.steps.push(st);
    }
    s
}

#[test]
fn the_qos_table_has_each_steps_nines_as_its_step_result_holds_them() {
    let s = corners_session();
    let results = crate::session::step_results(&s);
    let rows = page_table(&s, "qos");
    assert_eq!(
        rows[0],
        [
            "#",
            "step",
            "I/O",
            "IOPS",
            "response p99",
            "response p99.9",
            "response p99.99",
            "response p99.999",
            "response max"
        ]
    );
    assert_eq!(rows.len(), 1 + results.len(), "one row a step: {rows:?}");
    for (row, r) in rows[1..].iter().zip(&results) {
        let d = if r.read.ios > 0 { &r.read } else { &r.write };
        let l = d.lat_us.unwrap();
        let us = crate::ui::format::us;
        assert_eq!(row[0], r.step.to_string(), "numbered from 1");
        assert_eq!(
            row[4..],
            [
                us(l.p99),
                us(l.p99_9),
                us(l.p99_99),
                us(l.p99_999.unwrap()),
                us(l.max)
            ]
        );
    }
    // Scaled as people read them: 180 µs, 2.50 ms, 1.20 s.
    assert_eq!(rows[1][4], "180 µs");
    assert_eq!(rows[2][4], "2.50 ms");
    assert_eq!(rows[3][4], "1.20 s");
    assert_eq!(rows[1][0], "1");
}

#[test]
fn the_four_corners_name_each_corners_peak_with_its_latency() {
    let s = corners_session();
    let html = super::html::session_page(&s, &[], &[]);
    let d = doc(&html);
    let rows = table_rows(&d, "corners");
    let firsts: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    assert_eq!(
        firsts,
        [
            ("4K random read", "250.0k"),
            ("4K random write", "90.0k"),
            // 24,000 × 128 KiB = 3.15 GB/s; 16,000 × 128 KiB = 2.10 GB/s.
            ("sequential read", "3.15 GB/s"),
            ("sequential write", "2.10 GB/s")
        ]
    );
    // Its mean latency (a quarter of the p99 here) and its p99.
    assert_eq!(rows[1][3..5], ["45 µs", "180 µs"]);
    // One results table per workload, one summary row per workload.
    assert_eq!(table_rows(&d, "workloads").len(), 1 + 4);
    assert_eq!(html.matches("class=\"results\"").count(), 4);
    // A session of one corner has no four-corners table.
    let mut one = s.clone();
    one.steps.truncate(1);
    assert!(!super::html::session_page(&one, &[], &[]).contains("class=\"corners\""));
}

#[test]
fn a_step_that_prepares_the_drive_is_never_a_corner_nor_a_workloads_peak() {
    // SNIA's WIPC: 128 KiB sequential writes faster than the test's own, saved with
    // `preparation: true` in its point.
    let mut s = corners_session();
    let mut wipc = s.steps[3].clone();
    wipc.index = 4;
    wipc.label = "wipc".into();
    wipc.point = Some(crate::session::StepPoint {
        phase: Some(0),
        preparation: true,
        ..crate::session::StepPoint::default()
    });
    wipc.summary.write_iops = 40_000.0;
    wipc.summary.iops = 40_000.0;
    wipc.summary.write_bw_bytes = 40_000.0 * 131_072.0;
    s.steps.push(wipc);
    let rows = page_table(&s, "corners");
    assert_eq!(
        rows[4][..2],
        ["sequential write", "2.10 GB/s"],
        "not the WIPC's 5.24 GB/s"
    );
    let peaks = page_table(&s, "workloads");
    assert!(
        peaks.iter().all(|r| !r.iter().any(|c| c.contains("wipc"))),
        "{peaks:?}"
    );
    // Without the mark it would be both.
    s.steps[4].point = None;
    assert_eq!(page_table(&s, "corners")[4][1], "5.24 GB/s");
}

#[test]
fn the_plan_is_a_table_of_its_steps_in_words_numbered_from_one() {
    let text = "id: t\nname: T\ndescription: d\nphases:\n  - name: sweep\n    workload: {rw: randread, bs: 4k, iodepth: 4, arrivals: poisson}\n    ramp: 250ms\n    end: {duration: 30s}\n    sweep: {points: [50%, 100%]}\n";
    let preset = crate::preset::parse_str(text, "inline").unwrap();
    let facts = crate::plan::TargetFacts {
        capacity_bytes: 1 << 30,
        logical_block_size: 512,
    };
    let plan = crate::plan::expand(&preset, &facts, &crate::plan::PlanOptions::default()).unwrap();
    let mut s = session();
    s.plan = crate::session::Document::of(&plan);
    s.steps[0].label = plan.steps[0].name.clone();
    let html = super::html::session_page(&s, &[], &[]);
    let d = doc(&html);
    let rows = table_rows(&d, "plan");
    assert_eq!(rows.len(), 1 + plan.steps.len(), "{rows:?}");
    let numbers: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    assert_eq!(rows[1][1], "sweep");
    assert_eq!(rows[2][5], "50% of the probe");
    assert_eq!(rows[1][6], "20.0k IOPS", "the probe's step as it ran");
    assert!(rows[1][7].contains("after a 250ms ramp"), "{:?}", rows[1]);
    // No serialization of the plan's fields.
    for raw in ["nanos", "percent_of_phase", "secs:"] {
        assert!(!html.contains(raw), "{raw} in the page");
    }
}

/// The page of a session whose drive is `drive`, and the rows of its Drive table.
fn drive_table(drive: DriveIdentity) -> (String, Vec<Vec<String>>) {
    let mut s = session();
    s.drive = Some(drive);
    let html = super::html::session_page(&s, &[], &[]);
    let rows = table_rows(&doc(&html), "drive");
    (html, rows)
}

#[test]
fn the_drive_reads_as_fields_with_the_serial_exact_and_the_capacity_decimal_and_binary() {
    let serial = "19666372154600481";
    let drive: DriveIdentity = serde_yaml::from_str(&format!(
        "{{target: /x, block_device: nvme0n1, disks: [{{name: nvme0n1, model: Fast SSD, serial: '{serial}', firmware: 1.2.3, capacity_bytes: 274877906944, logical_block_size: 512, physical_block_size: 4096, rotational: false, transport: nvme}}]}}"
    ))
    .unwrap();
    let (html, rows) = drive_table(drive);
    let get = |k: &str| {
        rows.iter()
            .find(|r| r[0] == k)
            .map(|r| r[1].clone())
            .unwrap_or_else(|| panic!("no {k}: {rows:?}"))
    };
    assert_eq!(get("model"), "Fast SSD");
    assert_eq!(get("serial"), serial);
    assert_eq!(get("firmware"), "1.2.3");
    assert_eq!(get("capacity"), "274.9 GB (256 GiB)");
    assert_eq!(get("interface"), "NVMe");
    assert_eq!(get("block size"), "512B logical, 4KiB physical");
    assert!(!html.contains("disks.0."), "no dumped keys");
}

#[test]
fn a_virtio_disk_is_not_called_an_hdd_for_its_rotational_flag() {
    let media_of = |transport: &str, rotational: bool| {
        let drive: DriveIdentity = serde_yaml::from_str(&format!(
            "{{target: /x, block_device: vda, disks: [{{name: vda, capacity_bytes: 1073741824, rotational: {rotational}, transport: {transport}}}]}}"
        ))
        .unwrap();
        let (html, rows) = drive_table(drive);
        rows.into_iter()
            .find(|r| r[0] == "media")
            .map(|r| r[1].clone())
            .unwrap_or_else(|| panic!("no media row: {html}"))
    };
    // virtio-blk sets queue/rotational to 1 whatever the host's storage is.
    assert_eq!(media_of("virtio", true), "virtual disk (virtio)");
    assert_eq!(media_of("virtio", false), "virtual disk (virtio)");
    assert_eq!(media_of("sata", true), "rotational (HDD)");
    assert_eq!(
        media_of("scsi", true),
        "rotational (as the kernel reports it)"
    );
    assert_eq!(media_of("nvme", false), "solid state");
}

#[test]
fn a_run_of_several_drives_is_titled_by_its_drives() {
    let mut s = session();
    with_drives(&mut s, &["a", "b", "c"]);
    for (i, st) in s.steps.iter_mut().enumerate() {
        st.drive = Some(i as u32 % 3);
    }
    let html = super::html::session_page(&s, &[], &[]);
    assert!(
        html.contains("<h1>drivescope report: run on 3 drives (a, b, c)</h1>"),
        "{html}"
    );
    assert_eq!(html.matches("<h2 class=\"drive\">").count(), 3);
}

#[test]
fn the_intervals_csv_of_several_drives_counts_each_drives_steps_on_their_own() {
    let mut s = session();
    with_drives(&mut s, &["a", "b"]);
    // The session numbers the steps of both drives together: a0, b1, a2, b3.
    s.steps = (0..4)
        .map(|i| StepRecord {
            drive: Some(i % 2),
            ..step(i, 1000.0, 100.0)
        })
        .collect();
    s.intervals = (0..4)
        .map(|i| IntervalRecord {
            t: f64::from(i + 1),
            dt: 1.0,
            step: i,
            drive: Some(i % 2),
            ..IntervalRecord::default()
        })
        .collect();
    let csv = super::csv::session_intervals(&s);
    let cells: Vec<(&str, &str)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (c[0], c[3])
        })
        .collect();
    let want = [
        ("\"a\"", "1"),
        ("\"b\"", "1"),
        ("\"a\"", "2"),
        ("\"b\"", "2"),
    ];
    assert_eq!(cells, want, "{csv}");
}

#[test]
fn the_intervals_csv_numbers_steps_from_one_as_the_steps_csv_does() {
    let mut s = session();
    // Intervals of steps 0 and 1 (finished) and of step 2, still running in a snapshot.
    for (r, step) in s.intervals.iter_mut().zip([0, 0, 0, 1, 1, 2, 2]) {
        r.step = step;
    }
    let csv = super::csv::session_intervals(&s);
    let steps: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap_or(""))
        .collect();
    assert_eq!(steps, ["1", "1", "1", "2", "2", "3", "3"], "{csv}");
    let results = crate::session::step_results(&s);
    assert_eq!(
        results.iter().map(|r| r.step).collect::<Vec<_>>(),
        [1, 2],
        "the steps CSV's numbers"
    );
}

#[test]
fn a_time_scaled_or_stopped_run_is_marked_off_method_and_a_conforming_one_is_not() {
    let mut s = session();
    s.steps = vec![step(0, 10_000.0, 300.0)];
    s.preset = serde_yaml::from_str("id: p\nname: P\ndescription: each point runs 30 s\n")
        .expect("preset");
    let page = |s: &Session| super::html::session_page(s, &[], &[]);
    let plain = page(&s);
    assert!(
        !plain.contains("Off-method run") && !plain.contains("<th>method</th>"),
        "a conforming run"
    );
    assert!(
        plain.contains("<td>each point runs 30 s</td>"),
        "its description as it is"
    );
    s.plan =
        serde_yaml::from_str("preset_id: p\nsteps: []\nphases: []\nnotes: []\ntime_scale: 0.02\n")
            .expect("plan");
    let scaled = page(&s);
    assert!(
        scaled.contains(
            "<p class=\"off-method\">Off-method run: time-scaled ×0.02: not the method&#39;s durations.</p>"
        ),
        "{scaled}"
    );
    assert!(scaled.contains("<th>method</th><td>off-method: time-scaled ×0.02"));
    assert!(
        scaled.contains("[This run: time-scaled ×0.02: not the method&#39;s durations; each duration below was multiplied by 0.02.] each point runs 30 s"),
        "the description says its durations were not the run's"
    );
    let entry = super::compare::Entry {
        name: "a".into(),
        session: &s,
    };
    let rows = super::compare::table_rows(std::slice::from_ref(&entry));
    assert!(
        rows[0][1].ends_with("; time-scaled ×0.02: not the method's durations"),
        "{rows:?}"
    );
    s.state = crate::session::SessionState::Stopped;
    let stopped = page(&s);
    assert!(
        stopped.contains("time-scaled ×0.02: not the method&#39;s durations; stopped before its end: not the method&#39;s whole run."),
        "{stopped}"
    );
}

#[test]
fn smart_before_and_after_reads_the_telemetry_layers_reading_by_field() {
    let mut s = session();
    s.telemetry.clear();
    for (t, writes, passed) in [(0, 10, true), (9, 25, false)] {
        let line = format!(
            r#"{{"t": {t}, "smart": {{"health": {{"passed": {passed}, "reasons": []}}, "media_errors": 2, "host_write_commands": {writes}, "serial": "S1"}}}}"#
        );
        s.telemetry.push(Sample::from_json_line(&line).unwrap());
    }
    let html = written(&s, "report.html");
    let row = |name: &str| {
        html.split("<tr>")
            .find(|r| r.contains(&format!("<td>{name}</td>")))
            .unwrap_or_else(|| panic!("no row {name}:\n{html}"))
            .to_string()
    };
    assert!(row("health").contains("passed") && row("health").contains("FAILED"));
    assert!(
        row("media errors").contains("no change"),
        "{}",
        row("media errors")
    );
    assert!(
        row("host_write_commands").contains("+15"),
        "{}",
        row("host_write_commands")
    );
}
