//! A target path that is not there yet, given with a size (`--size`): the target picker,
//! the preset picker's target line and the header say plainly that Enter creates a new
//! test file of that size (issue 29), until a run has started on it.

use drivescope::app::{App, Msg, TargetEntry, TargetKind};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

/// The idle app with a missing `/srv/new/typo.bin` given a size of 1 GiB, picked.
fn with_a_new_file(size: (u16, u16)) -> App {
    let mut cfg = config(size);
    cfg.targets.insert(
        0,
        TargetEntry {
            path: "/srv/new/typo.bin".into(),
            label: "test file".into(),
            kind: TargetKind::File,
            size: Some(1 << 30),
            safety: None,
            creates: true,
        },
    );
    App::new(cfg)
}

#[test]
fn a_missing_path_with_a_size_says_enter_creates_a_new_test_file_of_that_size() {
    for (size, name) in [((120, 40), "120x40"), ((80, 24), "80x24")] {
        let app = with_a_new_file(size);
        let s = screen(&app);
        let title = s.lines().next().unwrap_or_default();
        assert!(
            title.contains("/srv/new/typo.bin (new test file of 1 GiB, created"),
            "{s}"
        );
        let mut app = with_a_new_file(size);
        send(&mut app, [key('t')]);
        let s = screen(&app);
        assert!(s.contains("writable: a new file"), "{s}");
        assert!(
            s.contains("/srv/new/typo.bin: not there yet: new test file of 1 GiB, created on"),
            "{s}"
        );
        // The built-in test file of 1 GiB is shown as the 1 GiB it is, not as "1.1 GB".
        assert!(!s.contains("1.1 GB"), "{s}");
        insta::assert_snapshot!(format!("new_file_targets_{name}"), s);
        let mut app = with_a_new_file(size);
        send(&mut app, [key('p')]);
        let s = screen(&app);
        assert!(
            s.contains("new test file of 1 GiB, created on Enter"),
            "{s}"
        );
        insta::assert_snapshot!(format!("new_file_presets_{name}"), s);
    }
}

#[test]
fn once_a_run_started_on_it_the_file_is_no_longer_new() {
    let mut app = with_a_new_file((120, 40));
    send(
        &mut app,
        [
            Msg::RunStarted {
                preset_id: "quick-look".into(),
                target: "/srv/new/typo.bin".into(),
            },
            code(KeyCode::Char('t')),
        ],
    );
    assert!(!app.targets[0].creates);
    let s = screen(&app);
    assert!(!s.contains("new test file"), "{s}");
    assert!(s.contains("(test file)"), "{s}");
}

#[test]
fn a_long_path_loses_its_start_in_the_header_so_the_new_file_words_stay_whole() {
    let mut cfg = config((80, 24));
    cfg.targets[0] = TargetEntry {
        path: "/srv/a/rather/long/folder/of/test/files/for/the/bench/new.bin".into(),
        label: "test file".into(),
        kind: TargetKind::File,
        size: Some(1 << 30),
        safety: None,
        creates: true,
    };
    let s = screen(&App::new(cfg));
    let title = s.lines().next().unwrap_or_default();
    assert!(title.contains("drivescope · …"), "{title}");
    assert!(
        title.contains("/new.bin (new test file of 1 GiB, created on Enter)"),
        "{title}"
    );
}
