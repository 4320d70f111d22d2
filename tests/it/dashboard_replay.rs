//! `open` of a saved preset session shows the names the live view showed (issue 29): the
//! preset's name (`Quick look`, not its id) and each phase's (`randread-4k`, never
//! `phase 1`), in the replay's timeline and in the header of the real replay in tmux.

use drivescope::app::Msg;

use crate::common;
use crate::dashboard_tmux::{assert_cooked, wait_until, Tmux};

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
