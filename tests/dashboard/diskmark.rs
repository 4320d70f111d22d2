//! The diskmark grid in the curve panel's place as a run fills it: each cell's runs so far
//! and its best run's MB/s, IOPS, mean and p99, the test running named above.

use drivescope::app::{App, Msg, Panel, StepInfo};
use drivescope::session::{GridCell, GridDir};
use drivescope::workload::RunPick;

use super::fixtures::*;

fn cell(test: &str, dir: GridDir, runs: u32, mbps: f64, iops: f64, p99: f64) -> GridCell {
    GridCell {
        drive: None,
        test: test.into(),
        dir,
        pick: RunPick::Best,
        runs,
        of: 5,
        best_run: Some(1),
        mbps,
        iops,
        mean_us: Some(p99 / 3.0),
        p99_us: Some(p99),
    }
}

fn filling(size: (u16, u16)) -> App {
    let mut app = running(size);
    app.tab = Panel::Curve;
    send(
        &mut app,
        [
            Msg::StepStarted(StepInfo {
                index: 8,
                count: 47,
                name: "seq1m-q1t1-read run2".into(),
                phase_name: "seq1m-q1t1-read".into(),
                started_s: 600.0,
                expected_s: Some(5.0),
                plan_expected_s: Some(1260.0),
                rate_limited: false,
                target_iops: None,
                engine: Default::default(),
                engine_options: Default::default(),
            }),
            Msg::Grid(vec![
                cell("SEQ1M Q8T1", GridDir::Read, 5, 7012.34, 6687.0, 1650.0),
                cell("SEQ1M Q8T1", GridDir::Write, 5, 5120.5, 4883.0, 2100.0),
                cell("SEQ1M Q1T1", GridDir::Read, 1, 2890.12, 2756.0, 480.0),
            ]),
        ],
    );
    app
}

#[test]
fn the_grid_takes_the_curve_s_place_as_it_fills() {
    let app = filling((80, 24));
    let s = screen(&app);
    assert!(s.contains("╭ Diskmark grid"), "{s}");
    assert!(!s.contains("Curve: latency vs IOPS"), "{s}");
    assert!(s.contains("running seq1m-q1t1-read run2"), "{s}");
    let row = s
        .lines()
        .find(|l| l.contains("SEQ1M Q1T1"))
        .expect("the cell done so far");
    for part in ["read", "1/5", "2890.12", "2756", "160 µs", "480 µs"] {
        assert!(row.contains(part), "{part} in {row}");
    }
    assert_eq!(s.matches("SEQ1M Q8T1").count(), 2, "read and write: {s}");
    insta::assert_snapshot!("diskmark_grid_80x24", s);
}

#[test]
fn a_run_without_a_grid_keeps_its_curve() {
    let mut app = running((80, 24));
    app.tab = Panel::Curve;
    let s = screen(&app);
    assert!(s.contains("Curve: latency vs IOPS"), "{s}");
    assert!(!s.contains("Diskmark grid"), "{s}");
}
