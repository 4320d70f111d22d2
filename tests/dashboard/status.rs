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
