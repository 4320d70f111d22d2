//! Zooming the curve in a real terminal (issue 29): after quick-look, the zoom key shows
//! the curve on the whole screen with every one of its four points (each workload's in
//! its own colour, read from tmux's escape codes), names the key in the footer, and goes
//! back to the dashboard on the key again; at 80x24 and 120x40.

use crate::common;
use crate::dashboard_tmux::{the_saved_session, wait_until, Tmux};

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
    wait_until(&t, "the four steps on the curve", |s| {
        s.contains("4 steps done") && s.contains("completed")
    });
    t.tmux(&["send-keys", "z"]);
    let s = wait_until(&t, "the curve zoomed", |s| {
        s.lines().next().is_some_and(|l| l.starts_with("╭ Curve"))
    });
    assert!(!s.contains("╭ drivescope"), "no header when zoomed\n{s}");
    // The footer names the key once the run's last notice has gone.
    wait_until(&t, "the footer's unzoom key", |s| s.contains("z unzoom"));
    let escaped = t.tmux(&["capture-pane", "-p", "-e"]);
    let shot = std::env::temp_dir().join(format!("drivescope-zoom-{w}x{h}.ansi"));
    let _ = std::fs::write(&shot, &escaped);
    let colours = point_colours(&escaped);
    t.tmux(&["send-keys", "z"]);
    wait_until(&t, "back from the zoom", |s| s.contains("╭ drivescope"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    // Each point in its workload's colour: four colours, but for points so close that
    // they may share a cell of the plot (on a loaded machine two workloads can measure
    // alike; the later point is then drawn over the earlier). Which may, is read from the
    // saved steps, as the curve places them.
    let (_, loaded) = the_saved_session(home.path());
    let points: Vec<(f64, f64)> = loaded
        .session
        .steps
        .iter()
        .map(|st| (st.summary.iops, st.summary.service_lat().mean))
        .collect();
    assert_eq!(points.len(), 4, "{points:?}");
    let apart = cells_apart(&points, w, h);
    assert!(
        colours.len() >= apart,
        "{apart} points a cell or more apart, in {} colours: {colours:?}\n{points:?}\n{s}",
        colours.len()
    );
}

/// How many of `points` (IOPS, mean latency) lie in cells of their own on a zoomed curve
/// at `w`x`h`: points closer than a cell in both directions are one. A cell is counted
/// larger than it is (the plot is narrower than the screen by its borders, labels and
/// legend), so points that may share one are never counted apart.
fn cells_apart(points: &[(f64, f64)], w: u16, h: u16) -> usize {
    // The axes end 8% past the largest point (ui::widgets::padded).
    let x1 = points.iter().map(|p| p.0).fold(1.0, f64::max) * 1.08;
    let y1 = points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.08;
    let (cell_x, cell_y) = (x1 / f64::from(w - 20), y1 / f64::from(h / 2));
    let near =
        |a: (f64, f64), b: (f64, f64)| (a.0 - b.0).abs() < cell_x && (a.1 - b.1).abs() < cell_y;
    // Groups of points joined by nearness, counted.
    let mut group: Vec<usize> = (0..points.len()).collect();
    for i in 0..points.len() {
        for j in 0..i {
            if near(points[i], points[j]) {
                let (gi, gj) = (group[i], group[j]);
                for g in group.iter_mut().filter(|g| **g == gi) {
                    *g = gj;
                }
            }
        }
    }
    group.sort_unstable();
    group.dedup();
    group.len()
}

#[test]
fn the_zoomed_curve_shows_every_quick_look_point_at_80x24() {
    zoom_the_curve("zoom80", 80, 24);
}

#[test]
fn the_zoomed_curve_shows_every_quick_look_point_at_120x40() {
    zoom_the_curve("zoom120", 120, 40);
}
