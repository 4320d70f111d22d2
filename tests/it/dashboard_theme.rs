//! The theme chosen is kept for the next start (issue 29), in a real terminal: Enter in
//! the theme picker writes theme.yaml under XDG_CONFIG_HOME (the notice names it) and the
//! next dashboard starts in it; a theme.yaml the user wrote is never replaced.

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};

fn start(name: &str, home: &std::path::Path) -> Option<Tmux> {
    Tmux::start_with(name, &common::bin().display().to_string(), home, 120, 40)
}

/// The theme picker's highlighted row.
fn picked_theme(t: &Tmux) -> String {
    t.tmux(&["send-keys", "c"]);
    let s = wait_until(t, "the theme picker", |s| s.contains("╭ Theme"));
    t.tmux(&["send-keys", "Escape"]);
    s.lines()
        .find(|l| l.contains('▶'))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_theme_chosen_is_the_next_starts_and_a_users_file_is_kept() {
    let home = common::disk_tempdir();
    let file = home.path().join("config/drivescope/theme.yaml");
    let Some(t) = start("theme-keep", home.path()) else {
        return;
    };
    t.wait_for("Presets (type to filter)");
    t.tmux(&["send-keys", "Escape"]);
    wait_until(&t, "the picker closed", |s| !s.contains("▶"));
    t.tmux(&["send-keys", "c"]);
    t.wait_for("▶ dark");
    t.tmux(&["send-keys", "Down"]);
    t.wait_for("▶ light");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "the notice naming the file", |s| {
        s.contains("kept for the next start in") && s.contains("theme.yaml")
    });
    let text = std::fs::read_to_string(&file).expect("theme.yaml written");
    assert!(text.contains("theme: light"), "{text}");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    drop(t);

    let Some(t) = start("theme-next", home.path()) else {
        return;
    };
    t.wait_for("Presets (type to filter)");
    t.tmux(&["send-keys", "Escape"]);
    wait_until(&t, "the picker closed", |s| !s.contains("▶"));
    assert!(
        picked_theme(&t).contains("light"),
        "started in the theme kept"
    );
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    drop(t);

    // A file of the user's own: read, never replaced.
    std::fs::write(&file, "theme: high-contrast # mine\n").unwrap();
    let Some(t) = start("theme-mine", home.path()) else {
        return;
    };
    t.wait_for("Presets (type to filter)");
    t.tmux(&["send-keys", "Escape"]);
    wait_until(&t, "the picker closed", |s| !s.contains("▶"));
    assert!(picked_theme(&t).contains("high-contrast"));
    t.tmux(&["send-keys", "c"]);
    t.wait_for("▶ high-contrast");
    t.tmux(&["send-keys", "Down"]);
    t.tmux(&["send-keys", "Enter"]);
    // The notice may wrap over two lines: read them joined.
    wait_until(&t, "the notice saying it is kept", |s| {
        let joined: Vec<&str> = s.lines().map(str::trim_end).collect();
        joined.join(" ").contains("not written by drivescope")
    });
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text, "theme: high-contrast # mine\n");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}
