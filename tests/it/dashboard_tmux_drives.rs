//! The real binary in tmux on three test files at once (`drivescope --target a --target b
//! --target c`): the drives table, a preset run on all three, picking a drive, the overlay
//! of every drive, stopping one drive while the others go on, quitting; the saved session
//! holds three drives and `drivescope report` reads it.

use std::process::Command;

use drivescope::outcome::{RunOutcome, StopBy};

use crate::common;
use crate::dashboard_tmux::{assert_cooked, the_saved_session, wait_until, Tmux};

/// The drives table's row of `label` (the text after its label).
fn row<'a>(s: &'a str, label: &str) -> Option<&'a str> {
    s.lines().find_map(|l| {
        let l = l.trim_start_matches('│');
        l.strip_prefix(&format!("▶{label} "))
            .or_else(|| l.strip_prefix(&format!(" {label} ")))
    })
}

/// A drives-table row's IOPS cell: the word after its step (`2/4`).
fn live_iops(row: &str) -> Option<&str> {
    let words: Vec<&str> = row.split_whitespace().collect();
    let step = words.iter().position(|w| {
        w.split_once('/')
            .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
    })?;
    words.get(step + 1).copied()
}

#[test]
fn three_targets_run_pick_overlay_stop_one_and_quit() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Three loop devices (one drive each: targets on one drive are never written together),
    // labelled a, b and c, each write confirmed in the targets file.
    let devs: Vec<common::LoopDev> = (0..3)
        .filter_map(|_| common::LoopDev::new(64 << 20))
        .collect();
    if devs.len() < 3 {
        return;
    }
    let shelf: String = devs
        .iter()
        .zip(["a", "b", "c"])
        .map(|(d, l)| {
            let p = d.dev.display();
            format!("- path: {p}\n  label: {l}\n  destroy_data: {p}\n")
        })
        .collect();
    std::fs::write(dir.path().join("shelf.yaml"), shelf).unwrap();
    // quick-look at 0.3: four steps of 0.6 s ramp + 2.4 s on each drive.
    let cmd = format!(
        "sh -c 'cd {} && exec {} --targets shelf.yaml --preset quick-look --time-scale 0.3'",
        dir.path().display(),
        common::bin().display()
    );
    let Some(t) = Tmux::start_with("drives3", &cmd, home.path(), 120, 40) else {
        return;
    };
    // The picker and the table whole: a capture may catch a frame half drawn.
    wait_until(&t, "the picker over the drives table", |s| {
        s.contains(" Presets ") && s.contains("3 drives a, b, c") && s.contains("Drives (3)")
    });
    t.tmux(&["send-keys", "Enter"]);
    let s = wait_until(&t, "every drive running", |s| {
        ["a", "b", "c"]
            .iter()
            .all(|l| row(s, l).is_some_and(|r| r.contains("running") && r.contains("1/4")))
    });
    assert!(s.contains("drive a ·"), "the first drive is picked:\n{s}");
    // Down picks b: the header and the highlighted row say so.
    t.tmux(&["send-keys", "Down"]);
    wait_until(&t, "b picked", |s| {
        s.contains("drive b ·") && s.contains("│▶b ")
    });
    // o draws every drive on the charts, each named in the legend.
    t.tmux(&["send-keys", "o"]);
    let s = wait_until(&t, "the overlay", |s| {
        s.contains("Throughput (IOPS) · every drive") && s.contains("■ c ")
    });
    for l in ["■ a ", "■ b ", "■ c "] {
        assert!(s.contains(l), "{l}\n{s}");
    }
    assert!(s.contains("Latency p99 · every drive"), "{s}");
    // X stops the picked drive (b) after asking; a and c go on.
    t.tmux(&["send-keys", "X"]);
    t.wait_for("Stop drive b (");
    t.tmux(&["send-keys", "y"]);
    let s = wait_until(&t, "b stopped", |s| {
        row(s, "b").is_some_and(|r| r.contains("stopped"))
    });
    // A stopped drive shows no figures of its last interval as if it still ran.
    assert_eq!(
        live_iops(row(&s, "b").unwrap_or_default()),
        Some("-"),
        "{s}"
    );
    assert!(
        row(&s, "a").is_some_and(|r| r.contains("running") || r.contains("done")),
        "{s}"
    );
    // The others run to their end; then q quits at once.
    let s = wait_until(&t, "the run's end", |s| {
        row(s, "a").is_some_and(|r| r.contains("done"))
            && row(s, "c").is_some_and(|r| r.contains("done"))
            && s.contains("session saved to")
    });
    assert!(row(&s, "b").is_some_and(|r| r.contains("stopped")), "{s}");
    t.tmux(&["send-keys", "o"]);
    wait_until(&t, "the overlay off", |s| !s.contains("every drive"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());

    let (path, loaded) = the_saved_session(home.path());
    let s = &loaded.session;
    assert_eq!(s.drive_labels(), vec!["a", "b", "c"]);
    let views = s.drive_views();
    assert_eq!(views.len(), 3);
    for v in &views {
        assert!(!v.intervals.is_empty(), "{} has intervals", v.target.path);
    }
    let ends: Vec<String> = s
        .summary
        .as_ref()
        .map(|x| x.drives.iter().map(|d| d.ended_by.to_string()).collect())
        .unwrap_or_default();
    assert_eq!(ends, vec!["completed", "stopped", "completed"]);
    let out = home.path().join("report");
    let report = Command::new(common::bin())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .arg("report")
        .arg(&path)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for l in ["a", "b", "c"] {
        assert!(
            html.contains(&format!(">{l}<")),
            "the report names drive {l}"
        );
    }
    replays_with_its_drives(s);
    // `drivescope open` shows the drives table of the session.
    let cmd = format!("{} open {}", common::bin().display(), path.display());
    let Some(t) = Tmux::start_with("drives3open", &cmd, home.path(), 120, 40) else {
        return;
    };
    let s = wait_until(&t, "the replayed drives", |s| {
        row(s, "b").is_some_and(|r| r.contains("stopped"))
    });
    assert!(row(&s, "a").is_some_and(|r| r.contains("done")), "{s}");
    assert!(!s.contains("X stop one"), "a replay stops nothing:\n{s}");
    t.tmux(&["send-keys", "Down"]);
    wait_until(&t, "b picked in the replay", |s| s.contains("drive b ·"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}

/// The session's replay timeline, fed to the app: each drive's end and figures where they
/// belong.
fn replays_with_its_drives(s: &drivescope::session::Session) {
    use drivescope::app::drives::DriveState;
    use drivescope::app::{update, App, Msg};
    use drivescope::dashboard::replay;
    let opts = drivescope::tui::DashboardOptions {
        drives: replay::drive_setups(s),
        replay: true,
        ..Default::default()
    };
    let mut app = App::new(opts.app_config((120, 40)));
    let mut msgs = vec![Msg::ReplayReset];
    msgs.extend(replay::timeline(s).into_iter().map(|(_, m)| m));
    for m in msgs {
        update(&mut app, m);
    }
    let states: Vec<&DriveState> = app.drives.iter().map(|d| &d.state).collect();
    assert!(
        matches!(
            states[..],
            [
                DriveState::Ended(RunOutcome::Completed { .. }),
                DriveState::Ended(RunOutcome::Stopped(StopBy::User)),
                DriveState::Ended(RunOutcome::Completed { .. }),
            ]
        ),
        "{states:?}"
    );
    let views = s.drive_views();
    for (i, v) in views.iter().enumerate() {
        drivescope::app::drives::pick(&mut app, i);
        assert_eq!(
            app.picked_slot().run.intervals.len(),
            v.intervals.len(),
            "drive {i}"
        );
        let steps = app
            .picked_slot()
            .run
            .step
            .as_ref()
            .map(|st| (st.index, st.count));
        assert!(
            steps.is_some_and(|(k, n)| k < n),
            "drive {i}: its steps counted from its own first: {steps:?}"
        );
    }
}

#[test]
fn a_targets_file_opens_the_dashboard_on_its_drives_with_their_labels() {
    let home = tempfile::tempdir().unwrap();
    let shelf = home.path().join("shelf.yaml");
    std::fs::write(
        &shelf,
        format!(
            "- path: {d}/one.bin\n  label: bay-1\n  size: 16MiB\n- path: {d}/two.bin\n  label: bay-2\n  size: 16MiB\n",
            d = home.path().display()
        ),
    )
    .unwrap();
    let cmd = format!("{} --targets {}", common::bin().display(), shelf.display());
    let Some(t) = Tmux::start_with("drivesfile", &cmd, home.path(), 80, 24) else {
        return;
    };
    // The picker names the drives it will run on; waited for as the text itself, since a
    // capture may catch the overlay half drawn.
    t.wait_for("2 drives bay-1, bay-2");
    t.tmux(&["send-keys", "Escape"]);
    // Both rows, bay-1 idle: the table drawn whole, not a frame caught half drawn.
    wait_until(&t, "the drives table with both rows", |s| {
        s.contains("Drives (2)")
            && row(s, "bay-1").is_some_and(|r| r.contains("idle"))
            && row(s, "bay-2").is_some()
    });
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}

#[test]
fn a_bad_targets_file_or_both_ways_at_once_are_refused_before_the_terminal() {
    let home = tempfile::tempdir().unwrap();
    let shelf = home.path().join("shelf.yaml");
    std::fs::write(&shelf, "- path: /tmp/x\n  lable: typo\n").unwrap();
    let out = common::run(home.path(), &["--targets", &shelf.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shelf.yaml:2:"), "{err}");
    let out = common::run(home.path(), &["--target", "a", "--targets", "b.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}

/// A targets file of one local entry opens the drives table too: its label is shown, its
/// `destroy_data` lets a run write the device without asking again; an entry without it is
/// asked for and, unconfirmed, not written.
#[test]
fn a_targets_file_of_one_drive_keeps_its_label_and_confirmation() {
    let Some(dev) = common::LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.display();
    let open = |name: &str, entry: String| {
        let shelf = home.path().join(format!("{name}.yaml"));
        std::fs::write(&shelf, entry).unwrap();
        let cmd = format!(
            "{} --targets {} --preset quick-look --time-scale 0.1",
            common::bin().display(),
            shelf.display()
        );
        Tmux::start_with(name, &cmd, home.path(), 120, 40)
    };

    // Not confirmed: the run asks for the device's name, and nothing is written.
    let Some(t) = open("onedrive_ask", format!("- path: {d}\n  label: bay-9\n")) else {
        return;
    };
    // The picker whole (it names its drive last): a capture may catch it half drawn.
    t.wait_for("1 drive bay-9");
    let before = dev.stat();
    t.tmux(&["send-keys", "Enter"]);
    t.wait_for("type its name to allow writing to it");
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!(dev.stat().1, before.1, "an unconfirmed device was written");
    // Ctrl-C quits from the name being typed (in a picker `q` is text).
    t.tmux(&["send-keys", "C-c"]);
    t.wait_for("EXIT=0");
    assert_eq!(dev.stat().1, before.1, "an unconfirmed device was written");
    drop(t);

    // Confirmed in the file: the run starts at once, on the device, under its label.
    let Some(t) = open(
        "onedrive_run",
        format!("- path: {d}\n  label: bay-1\n  destroy_data: {d}\n"),
    ) else {
        return;
    };
    // The picker whole (it names its drive last): a capture may catch it half drawn.
    t.wait_for("1 drive bay-1");
    let before = dev.stat();
    t.tmux(&["send-keys", "Enter"]);
    // The key was taken (the picker closed), then the run ends: a failure says which.
    wait_until(&t, "the picker close on enter", |s| {
        !s.contains("1 drive bay-1")
    });
    let s = wait_until(&t, "the run's end", |s| {
        row(s, "bay-1").is_some_and(|r| r.contains("completed")) && s.contains("session saved to")
    });
    assert!(s.contains("Drives (1)"), "{s}");
    assert!(
        s.contains("drive bay-1 ·"),
        "the header names the drive:\n{s}"
    );
    assert!(!s.contains("type its name"), "asked again:\n{s}");
    assert!(dev.stat().1 > before.1, "the confirmed device was written");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}
