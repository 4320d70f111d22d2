//! Zooming the curve in a real terminal (issue 29): after quick-look, the zoom key shows
//! the curve on the whole screen with every one of its four points (each workload's in
//! its own colour, read from tmux's escape codes), names the key in the footer, and goes
//! back to the dashboard on the key again; at 80x24 and 120x40.

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};

/// The colours (SGR parameters) of the curve's points, `•`, on a screen captured with
/// its escape codes.
fn point_colours(escaped: &str) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for line in escaped.lines() {
        let mut sgr = String::new();
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            if let Some(tail) = rest.strip_prefix("\u{1b}[") {
                let end = tail.find('m').unwrap_or(tail.len());
                sgr = tail[..end].to_string();
                rest = tail.get(end + 1..).unwrap_or("");
                continue;
            }
            if c == '•' {
                out.insert(sgr.clone());
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn zoom_the_curve(name: &str, w: u16, h: u16) {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 64MiB --preset quick-look --time-scale 0.2",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with(name, &cmd, home.path(), w, h) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    t.wait_for("running");
    t.tmux(&["send-keys", "3"]);
    wait_until(&t, 120, "the four steps on the curve", |s| {
        s.contains("4 steps done") && s.contains("completed")
    });
    t.tmux(&["send-keys", "z"]);
    let s = wait_until(&t, 20, "the curve zoomed", |s| {
        s.lines().next().is_some_and(|l| l.starts_with("╭ Curve"))
    });
    assert!(!s.contains("╭ drivescope"), "no header when zoomed\n{s}");
    // The footer names the key once the run's last notice has gone.
    wait_until(&t, 20, "the footer's unzoom key", |s| {
        s.contains("z unzoom")
    });
    let escaped = t.tmux(&["capture-pane", "-p", "-e"]);
    let shot = std::env::temp_dir().join(format!("drivescope-zoom-{w}x{h}.ansi"));
    let _ = std::fs::write(&shot, &escaped);
    let colours = point_colours(&escaped);
    assert!(
        colours.len() >= 4,
        "four workloads' points in four colours, saw {colours:?}\n{s}"
    );
    t.tmux(&["send-keys", "z"]);
    wait_until(&t, 20, "back from the zoom", |s| s.contains("╭ drivescope"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}

#[test]
fn the_zoomed_curve_shows_every_quick_look_point_at_80x24() {
    zoom_the_curve("zoom80", 80, 24);
}

#[test]
fn the_zoomed_curve_shows_every_quick_look_point_at_120x40() {
    zoom_the_curve("zoom120", 120, 40);
}
