//! The status line tells the whole notice (issue 29): one longer than the width wraps
//! over the rows above it at 80 columns instead of being cut, and the footer's keys come
//! back once it has gone.

use super::fixtures::*;

#[test]
fn a_long_notice_wraps_at_80_columns() {
    let mut app = idle((80, 24));
    app.overlay = None;
    let long = "theme light, kept for the next start in \
                /home/someone/with/a/long/config/path/drivescope/theme.yaml";
    app.notify(long);
    let s = screen(&app);
    let tail: Vec<&str> = s.lines().rev().take(2).collect();
    let joined = format!("{} {}", tail[1], tail[0]);
    assert_eq!(joined.trim(), long, "{s}");
    app.notice = None;
    let s = screen(&app);
    assert!(s.lines().last().unwrap().contains("q quit"), "{s}");
}

#[test]
fn events_stand_in_the_order_they_came_and_whole() {
    use drivescope::app::{EventCategory, EventView, Msg, StepInfo};
    let mut app = idle((80, 24));
    app.overlay = None;
    app.tab = drivescope::app::Panel::Events;
    // The fill's note, timed on the session's clock, then the first step at 0:00 of the
    // engine's.
    send(
        &mut app,
        [Msg::Event(EventView {
            t_s: 2.0,
            kind: EventCategory::Save,
            text: "filled /srv/a/long/path/to/the/test/file/that/wraps/over/two/lines.bin".into(),
        })],
    );
    send(
        &mut app,
        [Msg::StepStarted(StepInfo {
            index: 0,
            count: 4,
            name: "randread-4k".into(),
            phase_name: "randread-4k".into(),
            started_s: 0.0,
            expected_s: Some(10.0),
            plan_expected_s: Some(40.0),
            rate_limited: false,
            target_iops: None,
            engine: Default::default(),
            engine_options: Default::default(),
        })],
    );
    let times: Vec<f64> = app.events.iter().map(|e| e.t_s).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let s = screen(&app);
    let panel = &s[s.find("╭ Events").unwrap()..];
    let filled = panel.find("filled").expect("the fill shown");
    let phase = panel.find("phase randread-4k").expect("the phase shown");
    assert!(filled < phase, "{s}");
    // Many events: the top one is whole (a time on the first line shown).
    for i in 0..30 {
        send(
            &mut app,
            [Msg::Event(EventView {
                t_s: 3.0 + f64::from(i),
                kind: EventCategory::Info,
                text: format!(
                    "event {i} with a long text that wraps over two lines at eighty columns"
                ),
            })],
        );
    }
    let s = screen(&app);
    let first = s
        .lines()
        .find(|l| l.starts_with("│ ") && !l.trim_matches(['│', ' ']).is_empty())
        .unwrap();
    assert!(first.contains(':'), "a time heads the panel: {first}\n{s}");
}
