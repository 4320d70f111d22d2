//! What an engineer takes from a dashboard run, in a real terminal (tmux, 80x24): the Steps
//! tab of a time-scaled quick-look shows the plan's steps as it starts, the running one
//! marked, and each step's results (IOPS, MB/s, mean and p99 latency) as it finishes; a
//! note typed mid-run (the `m` key) is in the events, the session, the report and compare.

use crate::common;
use crate::dashboard_tmux::{the_saved_session, wait_until, Tmux};

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
    let s = wait_until(&t, "the plan's four steps listed", |s| {
        s.contains("Steps: ") && s.contains(" of 4 done") && row(s, "4").is_some()
    });
    assert!(s.contains("7 Steps"), "the tab bar names the tab\n{s}");
    // Step 1 done and a later one running (a loaded machine may catch it a step later).
    let s = wait_until(&t, "step 1's results, a later step running", |s| {
        (s.contains("Steps: 1 of 4 done") && row(s, "▶2").is_some())
            || (s.contains("Steps: 2 of 4 done") && row(s, "▶3").is_some())
    });
    let first = row(&s, "1").unwrap_or_default();
    assert!(has_results(&first), "step 1's row: {first:?}\n{s}");
    assert!(row(&s, "3").is_some(), "what remains is listed\n{s}");
    let s = wait_until(&t, "every step done", |s| {
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

#[test]
fn a_note_typed_mid_run_is_in_the_events_the_session_the_report_and_compare() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 256MiB --preset quick-look --time-scale 0.3",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("note", &cmd, home.path(), 80, 24) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "step 2 running", |s| s.contains("step 2/4"));
    t.tmux(&["send-keys", "m"]);
    t.wait_for("Enter records");
    // Typed keys go to the note: a space does not pause, a 7 does not change the tab.
    t.tmux(&["send-keys", "-l", "fw E1MU23BC, fan off 7"]);
    t.wait_for("note: fw E1MU23BC, fan off 7");
    t.tmux(&["send-keys", "Enter"]);
    t.tmux(&["send-keys", "6"]);
    let s = wait_until(&t, "the note in the events", |s| {
        s.lines()
            .any(|l| l.contains("note") && l.contains("fw E1MU23BC, fan off 7"))
    });
    assert!(!s.contains("paused ╯"), "the space went to the note\n{s}");
    wait_until(&t, "the run completed", |s| s.contains("completed"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    let (path, loaded) = the_saved_session(home.path());
    let notes = loaded.session.user_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let (at, text) = notes[0];
    assert_eq!(text, "fw E1MU23BC, fan off 7");
    // Typed during step 2: after step 1's 3 s (0.6 s ramp + 2.4 s at 0.3).
    let step2 = &loaded.session.steps[1];
    assert!(
        // Typed once step 2 showed; four round trips to tmux later, under load, it may land
        // in a later step, never before step 2 nor after the run.
        at >= step2.start_s - 0.5 && at <= loaded.session.steps[3].end_s + 0.5,
        "the note's time {at} is from step 2 ({}) to the end",
        step2.start_s
    );
    let yaml = std::fs::read_to_string(&path).unwrap();
    assert!(yaml.contains("user_note"), "the event's kind in the file");
    let dir = home.path().join("report");
    let out = common::run(
        home.path(),
        &[
            "report",
            &path.display().to_string(),
            "-o",
            &dir.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let notes_at = html.find("<h2>Notes</h2>").expect("a Notes section");
    let section = &html[notes_at
        ..html[notes_at + 1..]
            .find("<h2>")
            .map_or(html.len(), |e| e + notes_at + 1)];
    assert!(section.contains("fw E1MU23BC, fan off 7"), "{section}");
    // The report shows the note's time to the second (rounded or cut, either is its time).
    let clocks = [at.floor(), at.round()].map(|t| format!("0:{:02}", t as u64));
    assert!(
        clocks.iter().any(|c| section.contains(c.as_str())),
        "its time {clocks:?} in {section}"
    );
    let p = path.display().to_string();
    // Its own output folder: compare's default is the working directory, shared by tests.
    let cmp = home.path().join("cmp").display().to_string();
    let out = common::run(home.path(), &["compare", &p, &p, "-o", &cmp]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        clocks
            .iter()
            .any(|c| text.contains(&format!("at {c}: fw E1MU23BC, fan off 7"))),
        "{text}"
    );
}

#[test]
fn a_skipped_step_is_marked_skipped_and_is_an_event_in_the_session() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    // quick-look at 1.0: four steps of 2 s ramp + 8 s; step 2 is skipped early.
    let cmd = format!(
        "{} --target {} --size 256MiB --preset quick-look",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("skip", &cmd, home.path(), 80, 24) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "step 2 running", |s| s.contains("step 2/4"));
    t.tmux(&["send-keys", "n"]);
    wait_until(&t, "step 3 running", |s| s.contains("step 3/4"));
    t.tmux(&["send-keys", "7"]);
    let s = wait_until(&t, "step 2 marked skipped", |s| {
        row(s, "2").is_some_and(|r| r.contains("skipped ·"))
    });
    assert!(s.contains(" done, 1 skipped"), "the title counts it\n{s}");
    let first = row(&s, "1").unwrap_or_default();
    assert!(!first.contains("skipped"), "step 1 ran out its time\n{s}");
    t.tmux(&["send-keys", "x"]);
    t.wait_for("Stop the run");
    t.tmux(&["send-keys", "y"]);
    wait_until(&t, "the run stopped", |s| s.contains("stopped"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    let (_, loaded) = the_saved_session(home.path());
    let skips: Vec<_> = loaded
        .session
        .events
        .iter()
        .filter(|e| e.kind == drivescope::session::EventKind::Skip)
        .collect();
    assert_eq!(skips.len(), 1, "{:?}", loaded.session.events);
    assert!(
        skips[0].message.contains("skipped by the user after"),
        "{}",
        skips[0].message
    );
    assert_eq!(
        loaded.session.steps[1].summary.ended_by,
        drivescope::outcome::EndedBy::Skipped
    );
}
