//! A dashboard on several drives: the drives table (states, a failed drive's reason, paging
//! at 80×24 with 24 drives), picking a drive for the panels, the overlay of every drive on
//! the charts, stopping one drive, typing each device's name one by one; and a dashboard
//! on one drive that does none of it.

use std::path::PathBuf;

use drivescope::app::drives::{DriveSetup, DriveState};
use drivescope::app::{
    App, AppConfig, Confirm, DriveView, Effect, Msg, Overlay, Panel, RunState, StepInfo,
    TargetEntry, TargetKind,
};
use drivescope::outcome::{EndedBy, FaultKind, RunOutcome};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const BIG: (u16, u16) = (120, 40);
const SMALL: (u16, u16) = (80, 24);

fn file(i: usize) -> TargetEntry {
    TargetEntry {
        path: PathBuf::from(format!("/srv/shelf/bay-{}.bin", i + 1)),
        label: "test file".into(),
        kind: TargetKind::File,
        size: Some(1 << 30),
        safety: None,
        creates: false,
    }
}

fn device(name: &str) -> TargetEntry {
    TargetEntry {
        path: PathBuf::from(format!("/dev/{name}")),
        label: "Micron 7400 NVMe".into(),
        kind: TargetKind::BlockDevice,
        size: Some(7_681_501_126_656),
        safety: None,
        creates: false,
    }
}

fn model(i: usize) -> DriveView {
    DriveView {
        model: Some(format!("Model-{}", (b'A' + (i % 26) as u8) as char)),
        serial: Some(format!("SN{i:04}")),
        ..micron()
    }
}

fn config_of(size: (u16, u16), targets: Vec<TargetEntry>) -> AppConfig {
    let drives = targets
        .into_iter()
        .enumerate()
        .map(|(i, target)| DriveSetup {
            label: format!("bay-{}", i + 1),
            target,
            drive: Some(model(i)),
            confirmed: false,
        })
        .collect();
    AppConfig {
        drives,
        ..config(size)
    }
}

/// `n` test files, idle.
fn idle_drives(size: (u16, u16), n: usize) -> App {
    App::new(config_of(size, (0..n).map(file).collect()))
}

fn step() -> StepInfo {
    StepInfo {
        index: 1,
        count: 4,
        name: "4k randread QD32".into(),
        phase_name: "4k randread".into(),
        started_s: 10.0,
        expected_s: Some(60.0),
        plan_expected_s: Some(240.0),
        rate_limited: false,
        target_iops: None,
        engine: Default::default(),
        engine_options: Default::default(),
    }
}

fn on(d: usize, m: Msg) -> Msg {
    Msg::OnDrive(d, Box::new(m))
}

/// `n` drives running quick-look, drive `d` at `(d + 1) × 100k` IOPS and 45 + 3d °C;
/// drive 1 of them failed (every I/O failed) after 12 intervals when `fail` is set.
fn running_drives(size: (u16, u16), n: usize, fail: bool) -> App {
    let mut app = idle_drives(size, n);
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert!(
        matches!(&fx[..], [Effect::StartDrives { destroy_data, .. }] if destroy_data.len() == n),
        "{fx:?}"
    );
    for d in 0..n {
        send(
            &mut app,
            [
                on(
                    d,
                    Msg::RunStarted {
                        preset_id: "quick-look".into(),
                        target: file(d).path,
                    },
                ),
                on(d, Msg::StepStarted(step())),
            ],
        );
    }
    for i in 0..20u64 {
        for d in 0..n {
            if fail && d == 1 && i >= 12 {
                continue;
            }
            let iops = (d + 1) as f64 * 100_000.0 + (i % 3) as f64 * 2_000.0;
            let p50 = 60.0 + d as f64 * 15.0;
            let temp = 45.0 + d as f64 * 3.0 + i as f64 * 0.2;
            send(
                &mut app,
                [
                    on(d, Msg::Interval(Box::new(interval(i, iops, 0.0, p50)))),
                    on(
                        d,
                        Msg::Telemetry(Box::new(telemetry(10.0 + i as f64, temp, 0))),
                    ),
                ],
            );
        }
        if fail && i == 12 {
            send(
                &mut app,
                [Msg::DriveEnded {
                    drive: 1,
                    outcome: RunOutcome::Failed {
                        step: Some("4k randread QD32".into()),
                        ended_by: EndedBy::device(FaultKind::AllFailed, "EIO on every read"),
                    },
                }],
            );
        }
    }
    app
}

#[test]
fn three_drives_one_failed_table() {
    let app = running_drives(BIG, 3, true);
    let s = screen(&app);
    assert!(s.contains("Drives (3)"), "{s}");
    for l in ["bay-1", "bay-2", "bay-3", "Model-A", "Model-C"] {
        assert!(s.contains(l), "{l}\n{s}");
    }
    assert!(s.contains("failed: every I/O failed"), "{s}");
    assert!(s.contains("2/4"), "the step\n{s}");
    assert!(
        s.contains("55/70°C"),
        "temperature against its warning\n{s}"
    );
    let t = app.theme();
    assert_eq!(colours_of(&app, "failed: ")[0], t.critical);
    assert_eq!(colours_of(&app, "running")[0], t.ok);
    assert_eq!(app.drives[1].state.clone(), drives_failed());
    assert!(
        s.contains("drive bay-1 · Model-A"),
        "the header names the picked drive\n{s}"
    );
    // The latency panel is short here: its legend on a row of its own, not in the table,
    // and the max and mean rows kept (p90 and p99.99 dropped first).
    let lat_rows: Vec<&str> = s.lines().filter(|l| l.contains("╭ Latency")).collect();
    assert_eq!(lat_rows.len(), 1, "{s}");
    for row in ["max ", "mean ", "p50  p99  p99.9  "] {
        assert!(s.contains(row), "no {row:?} in the latency panel\n{s}");
    }
    assert!(
        !s.contains("p99.9  p99"),
        "the legend runs into the table\n{s}"
    );
    insta::assert_snapshot!("drives_3_one_failed_120x40", s);
    let small = screen(&running_drives(SMALL, 3, true));
    assert!(small.contains("bay-3"), "{small}");
    insta::assert_snapshot!("drives_3_one_failed_80x24", small);
}

fn drives_failed() -> DriveState {
    DriveState::Ended(RunOutcome::Failed {
        step: Some("4k randread QD32".into()),
        ended_by: EndedBy::device(FaultKind::AllFailed, "EIO on every read"),
    })
}

#[test]
fn twenty_four_drives_page_at_80x24() {
    let mut app = running_drives(SMALL, 24, false);
    let s = screen(&app);
    assert!(s.contains("Drives 1-3 of 24"), "{s}");
    assert!(s.contains("bay-1") && !s.contains("bay-4 "), "{s}");
    insta::assert_snapshot!("drives_24_page_1_80x24", s);
    send(&mut app, (0..4).map(|_| code(KeyCode::Down)));
    assert_eq!(app.picked, 4);
    let s = screen(&app);
    assert!(s.contains("Drives 4-6 of 24"), "{s}");
    assert!(s.contains("bay-5") && !s.contains("bay-1 "), "{s}");
    insta::assert_snapshot!("drives_24_page_2_80x24", s);
    // Up from the first wraps to the last page.
    send(&mut app, (0..5).map(|_| code(KeyCode::Up)));
    assert_eq!(app.picked, 23);
    assert!(screen(&app).contains("Drives 22-24 of 24"));
    // The panel under the table still has room for its chart.
    let boxes = screen(&app).lines().filter(|l| l.starts_with("╭ ")).count();
    assert_eq!(boxes, 3, "header, drives, one panel");
}

#[test]
fn picking_a_drive_shows_its_figures_and_keeps_the_others() {
    let mut app = running_drives(BIG, 3, true);
    let iops = |app: &App| app.picked_slot().run.intervals.last().map(|p| p.read_iops);
    assert_eq!(
        iops(&app),
        Some(100_000.0 + 2_000.0),
        "drive 1 picked first"
    );
    assert_eq!(
        app.picked_slot()
            .drive
            .as_ref()
            .and_then(|d| d.model.clone()),
        Some("Model-A".into())
    );
    send(&mut app, [code(KeyCode::Down), code(KeyCode::Down)]);
    assert_eq!(app.picked, 2);
    assert_eq!(iops(&app), Some(300_000.0 + 2_000.0));
    assert_eq!(
        app.picked_slot()
            .drive
            .as_ref()
            .and_then(|d| d.model.clone()),
        Some("Model-C".into())
    );
    assert_eq!(app.picked_slot().run.intervals.len(), 20);
    assert_eq!(
        app.picked_slot()
            .telemetry
            .last
            .as_ref()
            .and_then(|t| t.temperature_c),
        Some(51.0 + 19.0 * 0.2)
    );
    // A message for a drive not picked changes only that drive.
    send(
        &mut app,
        [on(0, Msg::Interval(Box::new(interval(20, 1.0, 0.0, 50.0))))],
    );
    assert_eq!(iops(&app), Some(302_000.0));
    send(&mut app, [code(KeyCode::Up), code(KeyCode::Up)]);
    assert_eq!(iops(&app), Some(1.0));
    assert_eq!(app.picked_slot().run.intervals.len(), 21);
    // The failed drive kept what it did before failing.
    send(&mut app, [code(KeyCode::Down)]);
    assert_eq!(app.picked_slot().run.intervals.len(), 12);
    // Events of a drive name it; the run stays running while one drive failed.
    assert!(app.events.iter().any(|e| e
        .text
        .starts_with("[bay-2] failed: 4k randread QD32: every I/O")));
    assert_eq!(app.run.state, RunState::Running);
}

#[test]
fn the_overlay_draws_every_drive_with_a_legend() {
    let mut app = running_drives(BIG, 3, true);
    assert!(!app.all_drives);
    send(&mut app, [key('o')]);
    assert!(app.all_drives);
    let s = screen(&app);
    assert!(s.contains("Throughput (IOPS) · every drive"), "{s}");
    assert!(s.contains("Latency p99 · every drive"), "{s}");
    assert!(s.contains("Temperature · every drive"), "{s}");
    let t = app.theme();
    let legend = colours_of(&app, "■ bay-");
    assert!(legend.len() >= 9, "three charts, three drives: {legend:?}");
    assert_ne!(legend[0], legend[1], "one colour a drive");
    assert_ne!(legend[1], legend[2]);
    let _ = t;
    insta::assert_snapshot!("drives_overlay_120x40", s);
    // At 80x24 the overlay is the tab shown: each drive named in its legend too.
    let mut small = running_drives(SMALL, 3, true);
    send(&mut small, [key('o')]);
    let s = screen(&small);
    assert!(s.contains("every drive"), "{s}");
    for d in ["■ bay-1", "■ bay-2", "■ bay-3"] {
        assert!(s.contains(d), "no {d} in the legend\n{s}");
    }
    insta::assert_snapshot!("drives_overlay_80x24", s);
    let mut small = running_drives(SMALL, 3, false);
    small.tab = Panel::Thermal;
    send(&mut small, [key('o')]);
    assert!(screen(&small).contains("Temperature · every drive"));
    send(&mut app, [key('o')]);
    assert!(!app.all_drives, "the key toggles");
    assert!(!screen(&app).contains("every drive"));
}

#[test]
fn pause_stop_and_skip_act_on_the_run_and_one_drive_can_be_stopped() {
    let mut app = running_drives(BIG, 3, false);
    assert_eq!(send(&mut app, [key(' ')]), vec![Effect::Pause]);
    assert_eq!(send(&mut app, [key(' ')]), vec![Effect::Resume]);
    assert_eq!(send(&mut app, [key('n')]), vec![Effect::SkipStep]);
    send(&mut app, [code(KeyCode::Down)]);
    assert!(send(&mut app, [key('X')]).is_empty());
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::StopDrive(1))));
    assert_eq!(send(&mut app, [key('y')]), vec![Effect::StopDrive(1)]);
    assert_eq!(app.drives[1].state, DriveState::Stopping);
    assert_eq!(app.drives[0].state, DriveState::Running);
    assert_eq!(app.run.state, RunState::Running, "the others go on");
    send(
        &mut app,
        [Msg::DriveEnded {
            drive: 1,
            outcome: RunOutcome::Stopped(drivescope::outcome::StopBy::User),
        }],
    );
    assert!(screen(&app).contains("stopped"));
    assert!(send(&mut app, [key('X')]).is_empty(), "nothing to stop");
    assert_eq!(app.overlay, None);
    // The run's stop stops every drive still going.
    send(&mut app, [key('x')]);
    assert_eq!(send(&mut app, [key('y')]), vec![Effect::Stop]);
    assert_eq!(app.drives[0].state, DriveState::Stopping);
    send(
        &mut app,
        [run_ended(drivescope::app::RunEnd::Stopped, None)],
    );
    assert_eq!(
        app.drives[2].state,
        DriveState::EndedWithRun(drivescope::app::RunEnd::Stopped)
    );
    assert!(matches!(app.drives[1].state, DriveState::Ended(_)));
}

#[test]
fn each_device_is_confirmed_by_its_typed_name_one_by_one() {
    let mut app = App::new(config_of(
        BIG,
        vec![device("nvme1n1"), file(1), device("nvme2n1")],
    ));
    assert!(send(&mut app, [code(KeyCode::Enter)]).is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Targets {
            typing: Some(String::new())
        })
    );
    assert_eq!(app.target_sel, 0);
    // A wrong name confirms nothing.
    send(&mut app, "nvme2n1".chars().map(key));
    send(&mut app, [code(KeyCode::Enter)]);
    assert!(!app.drives[0].confirmed && !app.drives[2].confirmed);
    send(&mut app, "nvme1n1".chars().map(key));
    send(&mut app, [code(KeyCode::Enter)]);
    assert!(app.drives[0].confirmed);
    assert_eq!(app.target_sel, 2, "then the next device");
    assert!(matches!(
        app.overlay,
        Some(Overlay::Targets { typing: Some(_) })
    ));
    send(&mut app, "nvme2n1".chars().map(key));
    // The last name typed starts the run: no second start key (issue 29).
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(app.overlay, None);
    assert_eq!(
        fx,
        vec![Effect::StartDrives {
            preset_id: "quick-look".into(),
            destroy_data: vec![
                Some(PathBuf::from("/dev/nvme1n1")),
                None,
                Some(PathBuf::from("/dev/nvme2n1")),
            ],
        }]
    );
    assert!(app.drives.iter().all(|d| d.state == DriveState::Starting));
}

#[test]
fn one_drive_has_no_table_and_ignores_the_drive_keys() {
    let mut app = running(SMALL);
    let before = screen(&app);
    assert!(!before.contains("Drives"));
    assert!(send(&mut app, [key('o'), code(KeyCode::Down), key('X')]).is_empty());
    assert!(!app.all_drives);
    assert_eq!(app.overlay, None);
    app.notice = None;
    let mut again = running(SMALL);
    again.notice = None;
    assert_eq!(screen(&app), screen(&again));
}

#[test]
fn every_theme_draws_the_drives_table() {
    for i in 0..idle_drives(BIG, 3).themes.len() {
        let mut app = running_drives(BIG, 3, true);
        app.theme_idx = i;
        let t = app.theme().clone();
        assert_eq!(colours_of(&app, "failed: ")[0], t.critical, "{}", t.name);
        assert_eq!(colours_of(&app, "Drives (3)")[0], t.title, "{}", t.name);
    }
}

#[test]
fn several_drives_render_at_every_size_without_panicking() {
    const W: [u16; 9] = [0, 10, 59, 60, 80, 109, 110, 111, 130];
    const H: [u16; 10] = [0, 5, 17, 18, 19, 24, 33, 34, 35, 46];
    let base = running_drives(BIG, 24, true);
    for w in W {
        for h in H {
            let mut app = base.clone();
            app.size = (w, h);
            for k in ['o', '?', 't', 'X'] {
                let _ = screen(&app);
                send(&mut app, [key(k)]);
            }
            let _ = screen(&app);
        }
    }
}

#[test]
fn the_overlay_legend_wraps_to_name_every_drive_in_its_colour() {
    for size in [BIG, SMALL] {
        let mut app = running_drives(size, 6, false);
        send(&mut app, [key('o')]);
        let s = screen(&app);
        let panel = &s[s.find("every drive").expect("the overlay")..];
        for i in 1..=6 {
            let label = format!("■ bay-{i} ");
            assert!(
                panel.contains(&label) || panel.contains("more"),
                "{size:?}: {label} neither shown nor counted\n{s}"
            );
        }
        // Each drive's entry in its own colour.
        let (one, four) = (colours_of(&app, "■ bay-1 "), colours_of(&app, "■ bay-4 "));
        if let (Some(a), Some(b)) = (one.first(), four.first()) {
            assert_ne!(a, b, "{size:?}: two drives in one colour\n{s}");
        }
    }
    let mut app = running_drives(BIG, 6, false);
    send(&mut app, [key('o')]);
    let s = screen(&app);
    let panel = &s[s.find("Throughput (IOPS) · every drive").unwrap()..];
    assert!(panel.contains("■ bay-6 "), "every one of 6 at 120x40\n{s}");
}

/// The clock of each line of the events panel (the right one of the bottom row at
/// 120x40) that starts an event (`0:10 phase …`).
fn event_clocks(s: &str) -> Vec<u32> {
    s.lines()
        .skip_while(|l| !l.contains("╭ Events"))
        .filter_map(|l| l.split("││").nth(1))
        .filter_map(|r| {
            let (m, sec) = r.split_whitespace().next()?.split_once(':')?;
            Some(m.parse::<u32>().ok()? * 60 + sec.parse::<u32>().ok()?)
        })
        .collect()
}

#[test]
fn events_of_several_drives_stand_in_time_order() {
    // Drive 1's run reports a step at 0:10, then drive 2 starts (0:00 on its own clock),
    // then drive 1's clock starts again (a fill timed on its own) and it reports more.
    let mut app = idle_drives(BIG, 3);
    send(&mut app, [code(KeyCode::Enter)]);
    let started = |d: usize| {
        on(
            d,
            Msg::RunStarted {
                preset_id: "quick-look".into(),
                target: file(d).path,
            },
        )
    };
    let restarted = StepInfo {
        started_s: 2.0,
        index: 2,
        phase_name: "4k randwrite".into(),
        ..step()
    };
    send(
        &mut app,
        [
            started(0),
            on(0, Msg::StepStarted(step())),
            started(1),
            on(0, Msg::StepStarted(restarted)),
            on(1, Msg::StepStarted(step())),
            // An event of no drive (the session saved), on a clock of its own: last.
            Msg::Event(drivescope::app::EventView {
                t_s: 0.0,
                kind: drivescope::app::EventCategory::Save,
                text: "session saved to /tmp/s".into(),
            }),
        ],
    );
    assert_eq!(
        app.events.last().map(|e| e.text.as_str()),
        Some("session saved to /tmp/s")
    );
    let times: Vec<f64> = app.events.iter().map(|e| e.t_s).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // Drive 1's later step is never shown before its earlier one.
    let bay1: Vec<&str> = app
        .events
        .iter()
        .filter(|e| e.text.starts_with("[bay-1]"))
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(bay1.len(), 3, "{bay1:?}");
    assert!(bay1[0].contains("started"), "{bay1:?}");
    assert!(bay1[2].contains("4k randwrite"), "{bay1:?}");
    let s = screen(&app);
    let clocks = event_clocks(&s);
    assert!(clocks.len() >= 4, "{clocks:?}\n{s}");
    assert!(clocks.windows(2).all(|w| w[0] <= w[1]), "{clocks:?}\n{s}");
}
