//! The diskmark grid live in the real dashboard (tmux, 80x24): `--preset diskmark`,
//! time-scaled, on a file in memory; the curve tab shows the grid as its tests' runs
//! finish, and at the end its cells are the saved session's grid (the headless run's and
//! the report's: one implementation).

use crate::common;
use crate::dashboard_tmux::{the_saved_session, wait_until, Tmux};

/// The grid panel's row of `test` in direction `dir`, split in words.
fn row<'a>(screen: &'a str, test: &str, dir: &str) -> Option<Vec<&'a str>> {
    screen.lines().find_map(|l| {
        let body = l.trim_matches('│').trim();
        let rest = body.strip_prefix(test)?;
        let words: Vec<&str> = rest.split_whitespace().collect();
        (words.first() == Some(&dir)).then_some(words)
    })
}

#[test]
fn the_diskmark_grid_fills_live_and_ends_as_the_session_s() {
    let home = tempfile::tempdir().unwrap();
    // A file in memory: what is checked is the grid made of the runs, not the disk.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("dm.bin");
    let cmd = format!(
        "{} --target {} --size 64MiB --preset diskmark --time-scale 0.04",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("diskmark", &cmd, home.path(), 80, 24) else {
        return;
    };
    let s = t.wait_for(" Presets ");
    assert!(s.contains("CrystalDiskMark 8 default profile"), "{s}");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "the run under way", |s| s.contains("running"));
    // The curve's tab holds the grid once a test's first run has finished.
    t.tmux(&["send-keys", "3"]);
    let s = wait_until(&t, "the first cell", |s| {
        row(s, "SEQ1M Q8T1", "read").is_some()
    });
    assert!(s.contains("╭ Diskmark grid"), "{s}");
    // It fills: the last test's write cell, all its runs done.
    wait_until(&t, "the last cell, whole", |s| {
        row(s, "RND4K Q1T1", "write").is_some_and(|w| w[1] == "5/5")
    });
    // After the run, the cells on the screen are the saved session's grid.
    // The run's end, in the header's corner.
    let s = wait_until(&t, "the run's end", |s| s.contains(" completed ╯"));
    // The pauses between tests are no steps of I/O: the Steps tab never shows them with
    // their placeholder workload (`interval-6 read 512B QD1×1`). At 80 columns the tab has
    // no room for the workload column (the reached share and service latency come first);
    // the saved session's series says `idle (no I/O)`, below.
    t.tmux(&["send-keys", "7"]);
    let steps = wait_until(&t, "the Steps tab", |s| s.contains("interval-7"));
    assert!(!steps.contains("512B"), "{steps}");
    let pause = steps.lines().find(|l| l.contains("interval-7"));
    assert!(
        pause.is_some_and(|l| l.contains(" 0 ") && !l.contains("QD")),
        "{steps}"
    );
    t.tmux(&["send-keys", "3"]);
    t.wait_for("╭ Diskmark grid");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    let (_, loaded) = the_saved_session(home.path());
    for st in loaded
        .session
        .steps
        .iter()
        .filter(|st| st.label.starts_with("interval"))
    {
        assert_eq!(
            st.series(),
            drivescope::workload::IDLE_SHAPE,
            "{}",
            st.label
        );
    }
    let cells = drivescope::session::grid(&loaded.session);
    assert_eq!(cells.len(), 8, "{cells:?}");
    for c in &cells {
        let words = row(&s, &c.test, c.dir.word())
            .unwrap_or_else(|| panic!("no row {} {} in\n{s}", c.test, c.dir.word()));
        assert_eq!(words[1], format!("{}/{}", c.runs, c.of), "{s}");
        assert_eq!(
            words[2],
            format!("{:.2}", c.mbps),
            "{} {}: {s}",
            c.test,
            c.dir.word()
        );
    }
}
