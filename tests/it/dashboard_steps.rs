//! The Steps tab in a real terminal (tmux, 80x24): a time-scaled quick-look shows the
//! plan's steps as it starts, the running one marked, and each step's results (IOPS, MB/s,
//! mean and p99 latency) as it finishes.

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};

/// The panel's row of step `n` (the running one's number is marked `▶`).
fn row(s: &str, n: &str) -> Option<String> {
    s.lines()
        .filter(|l| l.starts_with('│'))
        .find(|l| {
            let cells: Vec<&str> = l.trim_matches('│').split_whitespace().collect();
            cells.first() == Some(&n)
        })
        .map(str::to_string)
}

/// A done step's row holds an IOPS figure above zero (after the target, `max` for a
/// closed-loop step) and two latencies.
fn has_results(row: &str) -> bool {
    let lat = row.matches(" µs").count() + row.matches(" ms").count();
    let words: Vec<&str> = row.split_whitespace().collect();
    let iops = words.windows(2).any(|w| {
        w[0] == "max"
            && w[1]
                .trim_end_matches(['k', 'M'])
                .parse::<f64>()
                .is_ok_and(|v| v > 0.0)
    });
    lat >= 2 && iops
}

#[test]
fn the_steps_tab_fills_in_as_a_quick_look_runs() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    // quick-look at 0.3: four steps of 0.6 s ramp + 2.4 s.
    let cmd = format!(
        "{} --target {} --size 256MiB --preset quick-look --time-scale 0.3",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("steps", &cmd, home.path(), 80, 24) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    t.tmux(&["send-keys", "7"]);
    let s = wait_until(&t, 60, "the plan's four steps, the first running", |s| {
        s.contains("Steps: 0 of 4 done") && row(s, "▶1").is_some() && row(s, "4").is_some()
    });
    assert!(s.contains("7 Steps"), "the tab bar names the tab\n{s}");
    let s = wait_until(&t, 60, "step 1's results, step 2 running", |s| {
        s.contains("Steps: 1 of 4 done") && row(s, "▶2").is_some()
    });
    let first = row(&s, "1").unwrap_or_default();
    assert!(has_results(&first), "step 1's row: {first:?}\n{s}");
    assert!(row(&s, "3").is_some(), "what remains is listed\n{s}");
    let s = wait_until(&t, 60, "every step done", |s| {
        s.contains("Steps: 4 of 4 done") && s.contains("completed")
    });
    for n in ["1", "2", "3", "4"] {
        let r = row(&s, n).unwrap_or_default();
        assert!(has_results(&r), "step {n}'s row: {r:?}\n{s}");
    }
    assert!(
        row(&s, "▶4").is_none(),
        "nothing runs once it completed\n{s}"
    );
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}
