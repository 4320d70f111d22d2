//! `open` of a saved preset session shows the names the live view showed (issue 29): the
//! preset's name (`Quick look`, not its id) and each phase's (`randread-4k`, never
//! `phase 1`), in the replay's timeline and in the header of the real replay in tmux; and
//! (issue 40) the replay of a run at its end draws what the live run drew at its end.

use drivescope::app::Msg;

use crate::common;
use crate::dashboard_tmux::{assert_cooked, the_saved_session, wait_until, Tmux};

/// A quick-look run, headless, at a twentieth of its time on a new 16 MiB file: its
/// session, and the phase names it printed as it ran (`phase: phase 1 of 4: randread-4k`).
fn quick_look_session(home: &std::path::Path) -> (std::path::PathBuf, Vec<String>) {
    let target = home.join("ql.bin");
    let session = home.join("ql.yaml");
    let out = common::run(
        home,
        &[
            "run",
            "--target",
            target.to_str().expect("utf-8"),
            "--size",
            "16MiB",
            "--preset",
            "quick-look",
            "--time-scale",
            "0.05",
            "--session",
            session.to_str().expect("utf-8"),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let phases: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once("phase: phase ")?.1.split_once(": "))
        .map(|(_, name)| name.trim().to_string())
        .collect();
    assert_eq!(phases.len(), 4, "{text}");
    (session, phases)
}

#[test]
fn open_of_a_quick_look_session_names_its_preset_and_phases_as_the_live_view() {
    let home = common::disk_tempdir();
    let (session, live) = quick_look_session(home.path());
    let loaded = drivescope::session::load(&session).expect("the session loads");
    let tl = drivescope::dashboard::replay::timeline(&loaded.session);
    let started: Vec<&str> = tl
        .iter()
        .filter_map(|(_, m)| match m {
            Msg::RunStarted { preset_id, .. } => Some(preset_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["quick-look"]);
    let mut replayed: Vec<String> = tl
        .iter()
        .filter_map(|(_, m)| match m {
            Msg::StepStarted(s) => Some(s.phase_name.clone()),
            _ => None,
        })
        .collect();
    replayed.dedup();
    assert_eq!(replayed, live, "the replay's phases against the live run's");

    let cmd = format!("{} open {}", common::bin().display(), session.display());
    let Some(t) = Tmux::start_with("open-ql", &cmd, home.path(), 120, 40) else {
        return;
    };
    // It opens at the end: the header names the preset and the last phase as live.
    let header = |s: &str| s.lines().take(6).collect::<Vec<_>>().join("\n");
    let last = format!("phase {}", live[3]);
    let s = wait_until(&t, "the header of the replay's end", |s| {
        let h = header(s);
        h.contains("preset Quick look") && h.contains(&last)
    });
    assert!(!header(&s).contains("phase phase"), "{s}");
    // From Home, a second at a time until a step is shown: its phase by the name the live
    // run gave it (`phase randwrite-4k  │  step 2/4`), the first step's among them.
    t.tmux(&["send-keys", "Home"]);
    t.wait_for("replay 0:00:00");
    let step_of = |h: &str| {
        h.split_once("│  step ")
            .and_then(|(_, r)| r.split_once('/'))
            .and_then(|(n, _)| n.trim().parse::<usize>().ok())
    };
    let mut seen = Vec::new();
    for sec in 1..=20 {
        t.tmux(&["send-keys", "]"]);
        let s = t.wait_for(&format!("replay 0:00:{sec:02}"));
        let h = header(&s);
        if let Some(n) = step_of(&h) {
            assert!(h.contains("preset Quick look"), "{s}");
            assert!(
                h.contains(&format!("phase {}  ", live[n - 1])),
                "step {n}:\n{s}"
            );
            seen.push(n);
        }
        if s.contains(&format!("replay 0:00:{sec:02} of 0:00:{sec:02}")) {
            break;
        }
    }
    assert!(
        !seen.is_empty(),
        "no step shown at any second of the replay"
    );
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
}

/// The rows of a 120x40 screen that a replay at its end must draw as the live run drew at
/// its end: the header's drive, step and progress lines, and the panels down to the row
/// above `Kernel & host`: throughput, latency, the curve (or the Steps table, in its
/// cell) and thermal. Left out: the header's title (the live view names the target's kind,
/// `(test file)`, which a session does not keep) and its state line (`completed` against
/// the replay's clock), the bottom row of panels (the host's CPU and memory as they are
/// now; the events, where the live view has the run's end and the save and the replay
/// the start and the fill, which scroll off live), and the key bar (live keys against the
/// replay's).
fn compared(s: &str) -> Vec<&str> {
    let rows: Vec<&str> = s.lines().collect();
    let bottom = rows
        .iter()
        .position(|l| l.starts_with("╭ Kernel & host"))
        .unwrap_or(rows.len())
        .max(6);
    let header = rows.get(1..5).unwrap_or_default();
    let panels = rows.get(6..bottom).unwrap_or_default();
    header.iter().chain(panels).copied().collect()
}

/// Waits for `pred` on a screen whose compared rows are the same on two captures in a
/// row: a frame is not taken half written to the terminal.
fn settled(t: &Tmux, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let last = std::cell::RefCell::new(String::new());
    wait_until(t, what, |s| {
        let same = compared(s) == compared(&last.borrow());
        *last.borrow_mut() = s.to_string();
        same && pred(s)
    })
}

/// The header's state line (the header box's bottom border).
fn state(s: &str) -> &str {
    s.lines().nth(5).unwrap_or("")
}

/// The replay's clock is at its end (`replay 0:00:04 of 0:00:04`).
fn at_end(s: &str) -> bool {
    state(s)
        .split_once("replay ")
        .and_then(|(_, r)| r.split_once(" of "))
        .is_some_and(|(at, end)| end.trim_end_matches([' ', '╯']) == at)
}

fn assert_same(what: &str, live: &str, replay: &str) {
    assert_eq!(
        compared(live),
        compared(replay),
        "{what}: the replay at its end against the live run at its end\nlive:\n{live}\nreplay:\n{replay}"
    );
}

#[test]
fn the_replay_of_a_run_at_its_end_draws_what_the_live_run_drew() {
    let home = common::disk_tempdir();
    let target = home.path().join("ql.bin");
    let cmd = format!(
        "{} --target {} --size 16MiB --preset quick-look --time-scale 0.1",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("replay-live", &cmd, home.path(), 120, 40) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    // Its end: the run completed and its session saved (the last thing the run says).
    let live = settled(&t, "the live run's end", |s| {
        state(s).contains("completed") && s.contains("session saved to")
    });
    t.tmux(&["send-keys", "7"]);
    let live_steps = settled(&t, "the live Steps table", |s| {
        s.contains("Steps: 4 of 4 done")
    });
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    drop(t);
    assert!(
        live.contains("4 steps done"),
        "the curve of four steps:\n{live}"
    );

    let (session, _) = the_saved_session(home.path());
    let cmd = format!("{} open {}", common::bin().display(), session.display());
    let Some(t) = Tmux::start_with("replay-end", &cmd, home.path(), 120, 40) else {
        return;
    };
    let replay = settled(&t, "the replay at its end", at_end);
    t.tmux(&["send-keys", "7"]);
    let replay_steps = settled(&t, "the replayed Steps table", |s| {
        s.contains("Steps: 4 of 4 done")
    });
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert!(compared(&live).len() > 20, "the panels' rows:\n{live}");
    assert_same("the curve", &live, &replay);
    assert_same("the Steps table", &live_steps, &replay_steps);
}

/// The saved sessions of earlier releases (tests/fixtures/sessions) replay through the
/// live sink: each recorded step starts and finishes, in order, with its label and its
/// IOPS (each drive's in a session of several, as messages of that drive); a preset's
/// steps are named by their phases; diskmark's runs make its best-of grid as live.
#[test]
fn the_sessions_of_earlier_releases_replay_through_the_live_sink() {
    use drivescope::app::Msg;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions");
    for name in [
        "quick-look",
        "diskmark",
        "stopped",
        "storagereview-sweep",
        "fio-job",
        "two-drives",
    ] {
        let loaded = drivescope::session::load(&dir.join(name).join("session.yaml"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = &loaded.session;
        let tl = drivescope::dashboard::replay::timeline(s);
        let drives = s.drives.len().max(1);
        for d in 0..drives {
            let mine = |m: &Msg| -> Option<Msg> {
                match m {
                    Msg::OnDrive(i, m) if *i == d && drives > 1 => Some((**m).clone()),
                    m if drives == 1 => Some(m.clone()),
                    _ => None,
                }
            };
            let msgs: Vec<Msg> = tl.iter().filter_map(|(_, m)| mine(m)).collect();
            let records: Vec<_> = s
                .steps
                .iter()
                .filter(|st| drives == 1 || st.drive == Some(d as u32))
                .collect();
            let started: Vec<_> = msgs
                .iter()
                .filter_map(|m| match m {
                    Msg::StepStarted(i) => Some(i.clone()),
                    _ => None,
                })
                .collect();
            let finished: Vec<(String, f64)> = msgs
                .iter()
                .filter_map(|m| match m {
                    Msg::StepFinished(_, r) => Some((r.label.clone(), r.iops())),
                    _ => None,
                })
                .collect();
            let want: Vec<(String, f64)> = records
                .iter()
                .map(|st| {
                    let s = &st.summary;
                    (st.label.clone(), s.read_iops + s.write_iops + s.trim_iops)
                })
                .collect();
            assert_eq!(
                finished.len(),
                want.len(),
                "{name}, drive {d}: {finished:?}"
            );
            for ((l, iops), (wl, wiops)) in finished.iter().zip(&want) {
                assert_eq!(l, wl, "{name}, drive {d}");
                assert!(
                    (iops - wiops).abs() <= 1e-6 * wiops.max(1.0),
                    "{name}, drive {d}, {l}: {iops} against {wiops}"
                );
            }
            let labels: Vec<&str> = started.iter().map(|i| i.name.as_str()).collect();
            let want: Vec<&str> = records.iter().map(|st| st.label.as_str()).collect();
            assert_eq!(labels, want, "{name}, drive {d}");
            if s.preset.is_some() {
                assert!(
                    started.iter().all(|i| !i.phase_name.is_empty()),
                    "{name}: {started:?}"
                );
            }
            if name == "diskmark" {
                assert!(msgs.iter().any(|m| matches!(m, Msg::Grid(_))), "{name}");
            }
        }
    }
}
