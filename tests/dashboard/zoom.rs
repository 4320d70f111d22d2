//! Zooming a panel to the whole screen and back (the zoom key, Esc), shown in the footer
//! and the help; and the curve drawing every point of quick-look's four workloads at
//! 80×24, 120×40 and zoomed, with its axis labels outside the plot.

use drivescope::app::{Action, App, CurvePoint, Overlay, Panel};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const BIG: (u16, u16) = (120, 40);
const SMALL: (u16, u16) = (80, 24);

/// quick-look's four steps: the 128K ones at low IOPS and high latency, in the plot's
/// top-left corner (where ratatui draws a y-axis title).
const QUICK_LOOK: [(&str, f64, f64); 4] = [
    ("randread 4KiB QD32×1", 300_000.0, 105.0),
    ("randwrite 4KiB QD32×1", 250_000.0, 127.0),
    ("read 128KiB QD32×1", 25_000.0, 1280.0),
    ("write 128KiB QD32×1", 20_000.0, 1600.0),
];

fn quick_look(size: (u16, u16)) -> App {
    let mut app = idle(size);
    app.overlay = None;
    for (series, iops, mean) in QUICK_LOOK {
        send(
            &mut app,
            [finished(
                CurvePoint {
                    series: series.into(),
                    target_iops: None,
                    iops,
                    mean_us: mean,
                    p99_us: mean * 3.0,
                    p999_us: mean * 6.0,
                    response_mean_us: None,
                },
                series,
                1,
            )],
        );
    }
    app.tab = Panel::Curve;
    app
}

/// Each series' point is on the screen: a `•` in the series' colour.
fn assert_every_point(app: &App, what: &str) {
    let t = app.theme();
    let dots = colours_of(app, "•");
    for (i, (name, _, _)) in QUICK_LOOK.iter().enumerate() {
        assert!(
            dots.contains(&t.series(i)),
            "{what}: no point of {name} ({:?}) among {dots:?}\n{}",
            t.series(i),
            screen(app)
        );
    }
}

/// The rows of the curve's plot: those with the y axis `│` after a label column.
fn plot_rows(s: &str) -> usize {
    s.lines()
        .filter(|l| l.contains("│") && l.matches('│').count() >= 3)
        .filter(|l| l.starts_with("│") && l.contains("s│") || l.starts_with("│     │"))
        .count()
}

#[test]
fn the_zoom_key_fills_the_screen_with_the_panel_and_esc_goes_back() {
    for size in [SMALL, BIG] {
        let mut app = quick_look(size);
        let s = screen(&app);
        assert!(s.contains("╭ drivescope"), "{s}");
        assert!(s.contains("z zoom"), "the footer names the key\n{s}");
        send(&mut app, [key('z')]);
        assert!(app.zoomed);
        let s = screen(&app);
        assert!(!s.contains("╭ drivescope"), "no header when zoomed\n{s}");
        assert!(
            s.lines().next().unwrap().starts_with("╭ Curve"),
            "the curve from the first row\n{s}"
        );
        assert!(s.contains("z unzoom"), "{s}");
        assert_every_point(&app, "zoomed");
        insta::assert_snapshot!(format!("zoomed_curve_{}x{}", size.0, size.1), s);
        // Another panel's number shows that one, still zoomed.
        send(&mut app, [key('1')]);
        let s = screen(&app);
        assert!(s.lines().next().unwrap().starts_with("╭ Throughput"), "{s}");
        send(&mut app, [code(KeyCode::Esc)]);
        assert!(!app.zoomed);
        assert!(screen(&app).contains("╭ drivescope"));
        send(&mut app, [key('z'), key('z')]);
        assert!(!app.zoomed, "the key toggles");
    }
}

#[test]
fn the_help_lists_the_zoom_key() {
    let mut app = quick_look(SMALL);
    send(&mut app, [key('?')]);
    assert!(matches!(app.overlay, Some(Overlay::Help { .. })));
    assert!(app.help_actions().contains(&Action::Zoom));
    // Scroll until the zoom row shows: the help is generated from the key map.
    let mut seen = false;
    for _ in 0..40 {
        let s = screen(&app);
        if s.lines()
            .any(|l| l.starts_with("│z ") && l.contains("whole screen"))
        {
            seen = true;
            break;
        }
        send(&mut app, [code(KeyCode::Down)]);
    }
    assert!(seen, "{}", screen(&app));
}

#[test]
fn the_curve_draws_every_point_with_labels_outside_the_plot() {
    for size in [SMALL, BIG] {
        let app = quick_look(size);
        let what = format!("{}x{}", size.0, size.1);
        assert_every_point(&app, &what);
        let s = screen(&app);
        assert!(!s.contains("service"), "no axis title over the plot\n{s}");
        assert!(s.contains(" IOPS│") || s.contains(" IOPS "), "{s}");
        assert!(
            plot_rows(&s) >= 5,
            "{what}: {} plot rows\n{s}",
            plot_rows(&s)
        );
    }
}
