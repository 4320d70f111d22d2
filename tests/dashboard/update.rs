//! `update` driven by message sequences, with the resulting state and effects asserted.

use drivescope::app::history::INTERVAL_HISTORY;
use drivescope::app::{
    update, Action, App, Confirm, Effect, EventCategory, Keymap, Msg, Overlay, Panel, RunState,
};
use drivescope::tui::DashboardOptions;
use ratatui::crossterm::event::{KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use super::fixtures::*;

fn start_effect(preset: &str) -> Effect {
    Effect::StartRun {
        preset_id: preset.into(),
        target: scratch(),
        destroy_data: None,
    }
}

#[test]
fn opens_on_the_preset_picker_with_quick_look_highlighted() {
    let mut cfg = config((120, 40));
    cfg.open_presets = true;
    let mut app = App::new(cfg);
    assert_eq!(app.overlay, Some(Overlay::Presets));
    assert_eq!(
        app.selected_preset().map(|p| p.id.as_str()),
        Some("quick-look")
    );
    assert_eq!(
        app.selected_target().map(|t| t.path.clone()),
        Some(scratch())
    );
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(fx, vec![start_effect("quick-look")]);
    assert_eq!(app.run.state, RunState::Starting);
    assert_eq!(app.overlay, None);
}

#[test]
fn enter_starts_the_highlighted_preset_and_moving_changes_it() {
    let mut app = idle((120, 40));
    let fx = send(
        &mut app,
        [key('p'), code(KeyCode::Down), code(KeyCode::Enter)],
    );
    assert_eq!(fx, vec![start_effect("snia-iops")]);
    let mut app = idle((120, 40));
    let fx = send(
        &mut app,
        [
            key('p'),
            code(KeyCode::Up),
            code(KeyCode::Up),
            code(KeyCode::Enter),
        ],
    );
    assert_eq!(fx, vec![start_effect("snia-iops")], "up wraps around");
}

#[test]
fn enter_during_a_run_does_not_start_another() {
    let mut app = running((120, 40));
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert!(fx.is_empty(), "{fx:?}");
    assert!(app
        .notice
        .as_ref()
        .is_some_and(|(n, _)| n.contains("stop it first")));
}

#[test]
fn quit_when_idle_quits_at_once() {
    let mut app = idle((120, 40));
    assert_eq!(send(&mut app, [key('q')]), vec![Effect::Quit]);
    assert!(app.quit);
}

#[test]
fn quit_while_running_asks_first() {
    let mut app = running((120, 40));
    assert!(send(&mut app, [key('q')]).is_empty());
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::Quit)));
    assert!(!app.quit);
    assert!(send(&mut app, [key('n')]).is_empty());
    assert_eq!(app.overlay, None);
    assert_eq!(app.run.state, RunState::Running);
    let fx = send(&mut app, [key('q'), key('y')]);
    assert_eq!(fx, vec![Effect::Stop, Effect::Quit]);
    assert!(app.quit);
    assert_eq!(app.run.state, RunState::Stopping);
}

#[test]
fn a_run_ending_under_the_quit_question_leaves_it_and_its_yes_quits() {
    let mut app = running((120, 40));
    send(&mut app, [key('q')]);
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::Quit)));
    let fx = send(
        &mut app,
        [run_ended(
            drivescope::app::RunEnd::Completed,
            Some("/s.yaml"),
        )],
    );
    assert!(fx.is_empty());
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::Quit)));
    assert_eq!(
        send(&mut app, [key('y')]),
        vec![Effect::Quit],
        "nothing to stop"
    );
    assert!(app.quit);
}

#[test]
fn q_during_a_replay_seek_quits_at_once() {
    // A seek replays the session's messages from its start: midway the panels hold a
    // running state (a `[` or Home at the end of a session, read mid-seek). The replay has
    // no run to stop: q and Ctrl-C quit, asking nothing, whatever state the seek is in.
    for quit in [key('q'), ctrl('c')] {
        let mut app = running((120, 40));
        app.replay = true;
        send(&mut app, [Msg::ReplayReset]);
        send(
            &mut app,
            [Msg::RunStarted {
                preset_id: "quick-look".into(),
                target: scratch(),
            }],
        );
        assert!(app.run.state.is_active(), "{:?}", app.run.state);
        assert_eq!(send(&mut app, [quit]), vec![Effect::Quit]);
        assert!(app.quit);
        assert_eq!(app.overlay, None);
    }
}

#[test]
fn ctrl_c_during_a_run_asks_whether_to_stop() {
    let mut app = running((120, 40));
    assert!(send(&mut app, [ctrl('c')]).is_empty());
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::StopRun)));
    assert!(send(&mut app, [code(KeyCode::Esc)]).is_empty());
    assert_eq!(app.run.state, RunState::Running);
    let fx = send(&mut app, [ctrl('c'), ctrl('c')]);
    assert_eq!(fx, vec![Effect::Stop], "a second Ctrl-C answers yes");
    assert!(!app.quit, "stopping a run does not quit");
    let fx = send(
        &mut app,
        [run_ended(drivescope::app::RunEnd::Stopped, Some("/s.yaml"))],
    );
    assert!(fx.is_empty());
    assert_eq!(
        app.run.state,
        RunState::Ended {
            outcome: "stopped".into()
        }
    );
    assert!(app
        .events
        .iter()
        .any(|e| e.kind == EventCategory::Save && e.text.contains("/s.yaml")));
    assert_eq!(
        send(&mut app, [ctrl('c')]),
        vec![Effect::Quit],
        "idle Ctrl-C quits"
    );
}

#[test]
fn pause_resume_skip_snapshot_stop() {
    let mut app = running((120, 40));
    assert_eq!(send(&mut app, [key(' ')]), vec![Effect::Pause]);
    assert_eq!(app.run.state, RunState::Paused);
    assert_eq!(send(&mut app, [key(' ')]), vec![Effect::Resume]);
    assert_eq!(app.run.state, RunState::Running);
    assert_eq!(send(&mut app, [key('n')]), vec![Effect::SkipStep]);
    assert_eq!(send(&mut app, [key('s')]), vec![Effect::Snapshot]);
    assert!(send(&mut app, [key('x')]).is_empty());
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::StopRun)));
    assert_eq!(send(&mut app, [key('y')]), vec![Effect::Stop]);
    assert!(send(&mut app, [key('x')]).is_empty(), "already stopping");
    let mut idle = idle((120, 40));
    assert!(send(&mut idle, [key(' '), key('n'), key('s'), key('x')]).is_empty());
}

#[test]
fn help_lists_every_action_and_closes() {
    let mut app = idle((120, 40));
    send(&mut app, [key('?')]);
    assert_eq!(app.overlay, Some(Overlay::Help { scroll: 0 }));
    let text = screen(&app);
    // Every action of the key map, those of several drives too: the help cannot miss a key.
    for a in Action::ALL {
        assert!(text.contains(a.description()), "help lacks {}", a.name());
    }
    send(&mut app, [code(KeyCode::Esc)]);
    assert_eq!(app.overlay, None);
    send(&mut app, [code(KeyCode::F(1)), key('?')]);
    assert_eq!(app.overlay, None, "the help key toggles");
}

#[test]
fn theme_picker_previews_keeps_and_undoes() {
    let mut app = idle((120, 40));
    assert_eq!(app.theme().name, "dark");
    send(&mut app, [key('c'), code(KeyCode::Down)]);
    assert_eq!(app.theme().name, "light", "moving previews");
    send(&mut app, [code(KeyCode::Down)]);
    assert_eq!(app.theme().name, "high-contrast");
    send(&mut app, [code(KeyCode::Esc)]);
    assert_eq!(app.theme().name, "dark", "esc undoes");
    let down = code(KeyCode::Down);
    let fx = send(&mut app, [key('c'), down.clone(), down.clone(), down]);
    assert!(fx.is_empty());
    assert_eq!(
        app.theme().name,
        "colorblind",
        "down moves through the themes"
    );
    let fx = send(&mut app, [code(KeyCode::Down), code(KeyCode::Enter)]);
    assert_eq!(
        fx,
        vec![Effect::SetTheme("dark".into())],
        "wraps to the first"
    );
    assert_eq!(app.overlay, None);
}

#[test]
fn keymap_override_from_yaml_changes_the_keys() {
    let mut cfg = config((120, 40));
    cfg.keymap = Keymap::from_yaml("quit: Q\nstart: [g]\n", "keys.yaml").unwrap();
    let mut app = App::new(cfg);
    assert!(send(&mut app, [key('q'), code(KeyCode::Enter)]).is_empty());
    assert!(!app.quit);
    assert_eq!(send(&mut app, [key('g')]), vec![start_effect("quick-look")]);
    let mut app = App::new({
        let mut c = config((120, 40));
        c.keymap = Keymap::from_yaml("quit: Q\n", "keys.yaml").unwrap();
        c
    });
    assert_eq!(
        send(
            &mut app,
            [Msg::Key(ratatui::crossterm::event::KeyEvent::new(
                KeyCode::Char('Q'),
                KeyModifiers::SHIFT
            ))]
        ),
        vec![Effect::Quit]
    );
    send(&mut app, [key('?')]);
    let text = screen(&app);
    let line = text
        .lines()
        .find(|l| l.contains("quit (asks first"))
        .unwrap();
    assert!(
        line.contains("│Q "),
        "help shows the overridden key: {line}"
    );
}

#[test]
fn bad_keys_and_theme_files_fall_back_and_say_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("themes")).unwrap();
    std::fs::write(
        dir.path().join("themes/mine.yaml"),
        "name: mine\nfg: notacolour\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("keys.yaml"),
        "quit: q\nhelp: [f1, hyper-h]\n",
    )
    .unwrap();
    let opts = DashboardOptions {
        presets: presets(),
        targets: targets(),
        theme: Some("mine".into()),
        config_dir: Some(dir.path().to_path_buf()),
        ..DashboardOptions::default()
    };
    let app = App::new(opts.app_config((120, 40)));
    assert_eq!(app.theme().name, "dark", "falls back to the default theme");
    assert_eq!(
        app.keymap,
        Keymap::default(),
        "falls back to the default keys"
    );
    let errors: Vec<&str> = app
        .events
        .iter()
        .filter(|e| e.kind == EventCategory::Error)
        .map(|e| e.text.as_str())
        .collect();
    let theme_file = dir.path().join("themes/mine.yaml");
    assert!(
        errors
            .iter()
            .any(|e| e.contains(&format!("{}:2:5:", theme_file.display()))),
        "{errors:?}"
    );
    let keys_file = dir.path().join("keys.yaml");
    assert!(
        errors
            .iter()
            .any(|e| e.contains(&format!("{}:2:12:", keys_file.display()))),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("theme 'mine' not found")),
        "{errors:?}"
    );
    assert!(app.notice.is_some());
}

#[test]
fn a_device_needs_its_name_typed_before_a_run() {
    let mut app = idle((120, 40));
    send(
        &mut app,
        [key('t'), code(KeyCode::Down), code(KeyCode::Enter)],
    );
    assert_eq!(
        app.overlay,
        Some(Overlay::Targets {
            typing: Some(String::new())
        })
    );
    let typed: Vec<Msg> = "nvme1n".chars().map(key).collect();
    send(&mut app, typed);
    assert!(
        screen(&app).contains("> nvme1n"),
        "the prompt echoes what was typed"
    );
    send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(app.confirmed_target, None, "a wrong name does not confirm");
    assert!(app
        .notice
        .as_ref()
        .is_some_and(|(n, _)| n.contains("not confirmed")));
    let typed: Vec<Msg> = "nvme1n1x".chars().map(key).collect();
    send(&mut app, typed);
    send(&mut app, [code(KeyCode::Backspace), code(KeyCode::Enter)]);
    assert_eq!(app.confirmed_target, Some("/dev/nvme1n1".into()));
    assert_eq!(app.overlay, Some(Overlay::Presets));
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(
        fx,
        vec![Effect::StartRun {
            preset_id: "quick-look".into(),
            target: "/dev/nvme1n1".into(),
            destroy_data: Some("/dev/nvme1n1".into()),
        }]
    );
}

#[test]
fn starting_on_an_unconfirmed_device_asks_for_its_name() {
    let mut cfg = config((120, 40));
    cfg.target = 1;
    let mut app = App::new(cfg);
    assert!(send(&mut app, [code(KeyCode::Enter)]).is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Targets {
            typing: Some(String::new())
        })
    );
    assert_eq!(app.run.state, RunState::Idle);
}

#[test]
fn a_read_only_preset_starts_on_a_device_without_its_name() {
    let mut cfg = config((120, 40));
    cfg.target = 1;
    for p in &mut cfg.presets {
        p.writes = false;
    }
    let mut app = App::new(cfg);
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(app.overlay, None, "nothing to type: it only reads");
    let [Effect::StartRun {
        target,
        destroy_data,
        ..
    }] = &fx[..]
    else {
        panic!("it starts: {fx:?}");
    };
    assert_eq!(target, &std::path::PathBuf::from("/dev/nvme1n1"));
    assert_eq!(destroy_data, &None, "and may destroy nothing");
}

#[test]
fn a_guarded_target_says_what_the_guard_found() {
    let mut app = idle((120, 40));
    send(
        &mut app,
        [
            key('t'),
            code(KeyCode::Down),
            code(KeyCode::Down),
            code(KeyCode::Enter),
        ],
    );
    let (n, _) = app.notice.clone().unwrap();
    assert!(
        n.contains("writes will be refused (sda2 is mounted at /)"),
        "{n}"
    );
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert!(
        matches!(&fx[..], [Effect::StartRun { destroy_data: None, target, .. }] if target.as_os_str() == "/dev/sda"),
        "{fx:?}"
    );
}

#[test]
fn intervals_are_bounded_and_placed_on_the_run_clock() {
    let mut app = running((120, 40));
    let n = INTERVAL_HISTORY as u64 + 400;
    for i in 0..n {
        update(
            &mut app,
            Msg::Interval(Box::new(interval(i, 1000.0 + i as f64, 0.0, 50.0))),
        );
    }
    assert_eq!(app.picked_slot().run.intervals.len(), INTERVAL_HISTORY);
    let last = app.picked_slot().run.intervals.last().unwrap();
    assert_eq!(last.read_iops, 1000.0 + (n - 1) as f64);
    assert_eq!(last.t_s, 540.0 + n as f64, "step start + interval end");
    assert!(app.picked_slot().run.last.as_ref().unwrap().hists.is_none());
}

#[test]
fn throttling_marks_the_time_and_logs_it_once() {
    let app = throttling((120, 40));
    assert_eq!(app.picked_slot().telemetry.throttle_marks, vec![581.0]);
    let throttles: Vec<_> = app
        .events
        .iter()
        .filter(|e| e.kind == EventCategory::Throttle)
        .collect();
    assert_eq!(throttles.len(), 1);
    assert!(
        throttles[0].text.contains("1 transition at 70 °C"),
        "{}",
        throttles[0].text
    );
    assert_eq!(throttles[0].t_s, 581.0);
}

#[test]
fn unavailable_telemetry_is_reported_once() {
    let app = no_smart((120, 40));
    let n = app
        .events
        .iter()
        .filter(|e| e.text == "no SMART: run as root")
        .count();
    assert_eq!(n, 1);
    assert_eq!(
        app.picked_slot().telemetry.unavailable,
        vec!["no SMART: run as root".to_string()]
    );
}

#[test]
fn io_errors_are_counted_and_logged() {
    let app = errored((120, 40));
    assert_eq!(app.picked_slot().run.errors, 3);
    assert!(app.events.iter().any(|e| e.kind == EventCategory::Error
        && e.text
            .contains("3 I/O errors: read of 4096 B at offset 315392")));
    assert!(app
        .events
        .iter()
        .any(|e| e.text == "run failed: every I/O failed"));
    assert_eq!(
        app.run.state,
        RunState::Ended {
            outcome: "failed".into()
        }
    );
}

#[test]
fn redraw_only_when_something_changed() {
    let mut app = running((120, 40));
    app.dirty = false;
    update(&mut app, Msg::Tick { now_s: 1.0 });
    assert!(!app.dirty, "a tick with nothing to expire changes nothing");
    update(&mut app, Msg::Notice("hello".into()));
    assert!(app.dirty);
    app.dirty = false;
    update(&mut app, Msg::Tick { now_s: 2.0 });
    assert!(!app.dirty);
    update(&mut app, Msg::Tick { now_s: 60.0 });
    assert!(app.dirty, "the notice expired");
    assert!(app.notice.is_none());
    app.dirty = false;
    update(
        &mut app,
        Msg::Interval(Box::new(interval(99, 1.0, 0.0, 5.0))),
    );
    assert!(app.dirty);
    app.dirty = false;
    update(&mut app, Msg::Resize(80, 24));
    assert!(app.dirty);
    assert_eq!(app.size, (80, 24));
}

#[test]
fn tabs_cycle_by_key_wheel_and_click() {
    let mut app = idle((80, 24));
    send(&mut app, [code(KeyCode::Tab), code(KeyCode::Tab)]);
    assert_eq!(app.tab, Panel::Curve);
    send(&mut app, [code(KeyCode::BackTab)]);
    assert_eq!(app.tab, Panel::Latency);
    let wheel = |kind| {
        Msg::Mouse(MouseEvent {
            kind,
            column: 10,
            row: 10,
            modifiers: KeyModifiers::NONE,
        })
    };
    send(&mut app, [wheel(MouseEventKind::ScrollDown)]);
    assert_eq!(app.tab, Panel::Curve);
    let (_, x, _) = drivescope::ui::layout::tab_spans(0)[5];
    let click = Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x + 1,
        row: 6,
        modifiers: KeyModifiers::NONE,
    });
    send(&mut app, [click]);
    assert_eq!(app.tab, Panel::Events);
}

#[test]
fn signals_stop_the_run_and_quit() {
    let mut app = running((120, 40));
    assert_eq!(
        send(&mut app, [Msg::Signal(15)]),
        vec![Effect::Stop, Effect::Quit]
    );
    assert!(app.quit);
    let mut app = idle((120, 40));
    assert_eq!(send(&mut app, [Msg::Signal(1)]), vec![Effect::Quit]);
}

#[test]
fn new_lists_keep_the_selection() {
    let mut app = idle((120, 40));
    let mut p = presets();
    p.reverse();
    send(&mut app, [Msg::Presets(p)]);
    assert_eq!(app.selected_preset().unwrap().id, "quick-look");
    send(&mut app, [Msg::Targets(Vec::new())]);
    assert!(app.selected_target().is_none());
    assert!(
        send(&mut app, [code(KeyCode::Enter)]).is_empty(),
        "no target, no start"
    );
    assert!(app.notice.as_ref().unwrap().0.contains("no target"));
}

#[test]
fn ctrl_c_reaches_through_every_overlay() {
    // typing a device name
    let mut app = running((120, 40));
    send(
        &mut app,
        [
            key('t'),
            code(KeyCode::Down),
            code(KeyCode::Enter),
            key('n'),
        ],
    );
    assert!(matches!(
        app.overlay,
        Some(Overlay::Targets { typing: Some(_) })
    ));
    send(&mut app, [ctrl('c')]);
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::StopRun)));
    // the theme picker: undone, then asked
    let mut app = running((120, 40));
    send(&mut app, [key('c'), code(KeyCode::Down), ctrl('c')]);
    assert_eq!(app.theme().name, "dark");
    assert_eq!(app.overlay, Some(Overlay::Confirm(Confirm::StopRun)));
    // asked whether to quit: Ctrl-C means yes
    let mut app = running((120, 40));
    assert_eq!(
        send(&mut app, [key('q'), ctrl('c')]),
        vec![Effect::Stop, Effect::Quit]
    );
    // help and pickers when idle: quits
    for k in ['?', 'p', 't'] {
        let mut app = idle((120, 40));
        assert_eq!(
            send(&mut app, [key(k), ctrl('c')]),
            vec![Effect::Quit],
            "{k}"
        );
    }
}

#[test]
fn throttle_marks_and_reasons_stay_bounded() {
    use drivescope::app::history::{THROTTLE_MARKS, UNAVAILABLE_REASONS};
    let mut app = running((120, 40));
    for i in 0..(THROTTLE_MARKS as u64 + 50) {
        let mut t = telemetry(600.0 + i as f64, 60.0, i + 1);
        t.unavailable = vec![format!("reason {i}")];
        update(&mut app, Msg::Telemetry(Box::new(t)));
    }
    assert_eq!(
        app.picked_slot().telemetry.throttle_marks.len(),
        THROTTLE_MARKS
    );
    assert_eq!(
        app.picked_slot().telemetry.throttle_marks.last(),
        Some(&(600.0 + (THROTTLE_MARKS + 49) as f64))
    );
    assert_eq!(
        app.picked_slot().telemetry.unavailable.len(),
        UNAVAILABLE_REASONS
    );
}

#[test]
fn an_fio_job_file_entry_starts_the_file_and_a_device_it_writes_needs_its_name() {
    let job = std::path::PathBuf::from("/home/u/.config/drivescope/presets/two.fio");
    let mut cfg = config((120, 40));
    if let Some(p) = cfg.presets.iter_mut().find(|p| p.id == "quick-look") {
        p.fio_job = Some(job.clone());
    }
    // On a file target: nothing to type, and the file's own targets run.
    let mut app = App::new(cfg.clone());
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(
        fx,
        vec![Effect::StartFioJob {
            preset_id: "quick-look".into(),
            file: job.clone(),
            destroy_data: None,
        }]
    );
    // On a device: its typed name first, as for a preset that writes.
    cfg.target = 1;
    let mut app = App::new(cfg);
    assert!(send(&mut app, [code(KeyCode::Enter)]).is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Targets {
            typing: Some(String::new())
        })
    );
}

#[test]
fn the_note_key_takes_a_line_and_enter_sends_it_to_the_run() {
    let mut app = idle((80, 24));
    app.overlay = None;
    send(&mut app, [key('m')]);
    assert_eq!(app.overlay, None, "no run: no note");
    assert!(
        app.notice
            .as_ref()
            .is_some_and(|(n, _)| n.contains("no run going")),
        "{:?}",
        app.notice
    );
    let mut app = running((80, 24));
    send(&mut app, [key('m')]);
    assert!(matches!(app.overlay, Some(Overlay::Note { .. })));
    // Keys of the main screen are text here: a space does not pause, x does not stop.
    let fx = send(&mut app, "fw 2 x".chars().map(key));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(app.run.state, RunState::Running);
    send(&mut app, [code(KeyCode::Backspace), key('y')]);
    assert_eq!(
        app.overlay,
        Some(Overlay::Note {
            text: "fw 2 y".into()
        })
    );
    let s = screen(&app);
    assert!(
        s.contains("note: fw 2 y▏  Enter records · Esc drops"),
        "{s}"
    );
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert_eq!(fx, vec![Effect::Note("fw 2 y".into())]);
    assert_eq!(app.overlay, None);
    let last = app.events.iter().last().cloned();
    assert!(
        last.as_ref()
            .is_some_and(|e| e.kind == EventCategory::Note && e.text == "fw 2 y"),
        "{last:?}"
    );
    // Esc drops a note; an empty one is not sent.
    send(&mut app, [key('m'), key('a'), code(KeyCode::Esc)]);
    assert_eq!(app.overlay, None);
    let fx = send(&mut app, [key('m'), key(' '), code(KeyCode::Enter)]);
    assert!(fx.is_empty(), "{fx:?}");
}
