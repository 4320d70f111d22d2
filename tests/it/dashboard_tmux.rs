//! The real binary in a real terminal (tmux): `drivescope` with no arguments opens the
//! dashboard on the default target with the preset picker up, quits on `q`, and leaves
//! the terminal as it found it (cooked mode, echo) on quit and on SIGTERM; SIGINT, SIGTERM
//! and SIGHUP during a run exit 130 / 143 / 129 with the terminal restored and the session saved;
//! after a kill -9 during a run the autosaved session reports and replays elsewhere.
//! Skipped when tmux is missing (tests/common/skip.rs: a failure under CI).

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `drivescope` in a detached session of `w`×`h`, homed in `home`.
    fn start(name: &str, home: &Path, w: u16, h: u16) -> Option<Tmux> {
        Tmux::start_bin(name, &common::bin(), home, w, h)
    }

    /// Starts `bin` in a detached session of `w`×`h`, homed in `home`.
    fn start_bin(name: &str, bin: &Path, home: &Path, w: u16, h: u16) -> Option<Tmux> {
        Tmux::start_with(name, &bin.display().to_string(), home, w, h)
    }

    /// Starts a command line in a detached session of `w`×`h`, homed in `home`.
    pub(crate) fn start_with(name: &str, bin: &str, home: &Path, w: u16, h: u16) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            common::skip::note(common::skip::Skip::Tool, "tmux is not installed");
            return None;
        }
        let socket = format!("ds-test-{name}-{}", std::process::id());
        let cmd = format!(
            "env HOME={h} XDG_DATA_HOME={h}/data XDG_CONFIG_HOME={h}/config TERM=xterm-256color {bin}; echo EXIT=$?; sleep 60",
            h = home.display(),
        );
        let ok = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(w.to_string())
            .arg("-y")
            .arg(h.to_string())
            .arg(cmd)
            .status()
            .expect("tmux")
            .success();
        assert!(ok, "tmux new-session failed");
        Some(Tmux { socket })
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p"])
    }

    /// Waits for the screen to contain `text` (up to [`SCREEN_DEADLINE`]).
    pub(crate) fn wait_for(&self, text: &str) -> String {
        wait_until(self, &format!("{text:?}"), |s| s.contains(text))
    }

    /// The terminal's line settings (`stty -a` of the pane's tty).
    pub(crate) fn stty(&self) -> String {
        let tty = self.tmux(&["display", "-p", "#{pane_tty}"]);
        let out = Command::new("stty")
            .args(["-a", "-F", tty.trim()])
            .output()
            .expect("stty");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The top of the screen (its header and notice line) and each drivescope thread's
    /// state and kernel stack: put last in a timeout's message, where a CI log that keeps
    /// only a failure's tail shows what the program was doing.
    pub(crate) fn where_it_waits(&self) -> String {
        let top: Vec<String> = self.screen().lines().take(4).map(str::to_string).collect();
        let mut out = format!("top of the screen:\n{}\n", top.join("\n"));
        let shell = self.tmux(&["display", "-p", "#{pane_pid}"]);
        let pids = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        for pid in pids.split_whitespace() {
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten();
            for task in tasks.flatten() {
                let dir = task.path();
                let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
                let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
                let stack = std::fs::read_to_string(dir.join("stack")).unwrap_or_default();
                let state = stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .split_whitespace()
                    .next();
                out.push_str(&format!(
                    "thread {} {} state {}:\n{}",
                    task.file_name().to_string_lossy(),
                    comm.trim(),
                    state.unwrap_or("?"),
                    stack
                ));
            }
        }
        out
    }

    /// The pid of drivescope, the pane shell's child.
    fn drivescope_pid(&self) -> String {
        let shell = self.tmux(&["display", "-p", "#{pane_pid}"]);
        let out = Command::new("pgrep")
            .args(["-P", shell.trim()])
            .output()
            .expect("pgrep");
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(!pid.is_empty(), "drivescope is not running");
        pid
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The one session the dashboard saved under `home`, loaded.
pub(crate) fn the_saved_session(home: &Path) -> (std::path::PathBuf, drivescope::session::Loaded) {
    let dir = home.join("data/drivescope/sessions");
    let sessions: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("no sessions folder {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let loaded = drivescope::session::load(&sessions[0]).unwrap();
    (sessions[0].clone(), loaded)
}

pub(crate) fn assert_cooked(stty: &str) {
    let words: Vec<&str> = stty.split_whitespace().collect();
    assert!(words.contains(&"icanon"), "left in raw mode: {stty}");
    assert!(words.contains(&"echo"), "echo left off: {stty}");
}

#[test]
fn opens_on_the_default_target_and_q_quits_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start("quit", home.path(), 120, 40) else {
        return;
    };
    let s = t.wait_for(" Presets ");
    let target = home.path().join("data/drivescope/scratch.bin");
    assert!(
        s.contains(&format!("drivescope · {}", target.display())),
        "{s}"
    );
    assert!(s.contains("▶ "), "a preset is highlighted: {s}");
    // The picker is open: `?` and `q` would be filter text; F1 is its help.
    t.tmux(&["send-keys", "F1"]);
    t.wait_for("quit (asks first while a run is going)");
    t.tmux(&["send-keys", "Escape"]);
    // The help closed before q (an escape and a q read together are Alt-q).
    wait_until(&t, "the help to close", |s| {
        !s.contains("quit (asks first while a run is going)")
    });
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
}

/// Typing into the picker as a person types (issue 43): `thermal`, `quick` and `snia`
/// each filter the list (a first `t` no longer opens the targets, a `q` no longer quits);
/// Esc clears the filter, a second Esc closes the picker, and then `q` quits.
#[test]
fn typing_a_presets_name_in_the_picker_filters_and_q_is_a_letter() {
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start("typing", home.path(), 80, 24) else {
        return;
    };
    t.wait_for("Presets (type to filter)");
    for (word, row) in [
        ("thermal", "id thermal-soak"),
        ("quick", "id quick-look"),
        ("snia", "id snia-wipc"),
    ] {
        t.tmux(&["send-keys", "-l", word]);
        t.wait_for(&format!("Presets: filter '{word}'"));
        let s = t.wait_for(row);
        assert!(!s.contains("Targets"), "{word}: still the presets\n{s}");
        t.tmux(&["send-keys", "-l", "q"]);
        t.wait_for(&format!("Presets: filter '{word}q' · 0 of"));
        t.tmux(&["send-keys", "Escape"]);
        t.wait_for("Presets (type to filter)");
    }
    // The footer names the keys that are commands here.
    let s = t.wait_for("ctrl-t target");
    assert!(s.contains("f1 help") && s.contains("ctrl-c quit"), "{s}");
    t.tmux(&["send-keys", "Escape"]);
    wait_until(&t, "the picker to close", |s| !s.contains("type to filter"));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
}

#[test]
fn sigterm_restores_the_terminal_and_exits_143() {
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start("term", home.path(), 80, 24) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Escape"]);
    t.wait_for(" 1 Throughput ");
    let pid = t.drivescope_pid();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    t.wait_for("EXIT=143");
    assert_cooked(&t.stty());
}

#[test]
fn a_too_small_terminal_says_so() {
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start("small", home.path(), 50, 12) else {
        return;
    };
    t.wait_for("too small");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
}

/// The `panic_restore` example, built beside this test by `cargo test`.
fn panic_example() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples/panic_restore");
    p.exists().then_some(p)
}

#[test]
fn a_panic_restores_the_terminal_before_printing() {
    let Some(bin) = panic_example() else {
        // `cargo test` builds examples; `cargo test --test it` does not.
        skip!(
            ExampleNotBuilt,
            "examples/panic_restore not built (run plain `cargo test`)"
        );
    };
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start_bin("panic", &bin, home.path(), 100, 30) else {
        return;
    };
    let s = t.wait_for("EXIT=101");
    assert!(
        s.contains("deliberate panic to test that the terminal is restored"),
        "the panic message is on the normal screen: {s}"
    );
    assert!(!s.contains("inside the alternate screen"), "{s}");
    assert_cooked(&t.stty());
}

/// How long a test waits for a screen before it fails: a failure's timeout, never a time
/// asserted. What a test waits for comes in a second or two on an idle machine; a loaded
/// one (a CI runner sharing two CPUs with other builds) takes many times that, and a wait
/// for a state must not fail for it.
pub(crate) const SCREEN_DEADLINE: Duration = Duration::from_secs(300);

/// Waits for `pred` on the screen, polling it (up to [`SCREEN_DEADLINE`]), and returns a
/// settled capture of it.
pub(crate) fn wait_until(t: &Tmux, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let t0 = Instant::now();
    loop {
        let s = t.screen();
        if pred(&s) {
            return settled(t, s, &pred);
        }
        assert!(
            t0.elapsed() < SCREEN_DEADLINE,
            "never saw {what}:\n{s}\n{}",
            t.where_it_waits()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `first`, a capture where `pred` holds, once it has settled: a capture can catch a frame
/// half drawn (its top new, its bottom old) when tmux takes it between two reads of the
/// frame. A later capture that is the same shows the whole frame. On a screen that keeps
/// changing (a run's live figures), the last capture where `pred` holds, after a second.
fn settled(t: &Tmux, first: String, pred: &impl Fn(&str) -> bool) -> String {
    let mut last = first;
    for _ in 0..10 {
        std::thread::sleep(Duration::from_millis(100));
        let s = t.screen();
        if s == last {
            break;
        }
        if !pred(&s) {
            // The state has passed (a notice that went): the capture that showed it.
            break;
        }
        last = s;
    }
    last
}

/// A non-zero IOPS figure in the throughput panel's current line.
fn shows_nonzero_iops(s: &str) -> bool {
    s.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.windows(2).any(|w| {
            w[1] == "IOPS"
                && w[0]
                    .trim_end_matches(['k', 'M'])
                    .parse::<f64>()
                    .is_ok_and(|v| v > 0.0)
        })
    })
}

fn quick_look_end_to_end(name: &str, w: u16, h: u16) {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 256MiB --preset quick-look --time-scale 0.3",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with(name, &cmd, home.path(), w, h) else {
        return;
    };
    let s = t.wait_for(" Presets ");
    assert!(s.contains("Quick look"), "{s}");
    // The target does not exist: the screen says Enter makes it, at the size given.
    assert!(
        s.contains("new test file of 256 MiB, created on Enter"),
        "no word that Enter creates the file:\n{s}"
    );
    assert!(!target.exists(), "the file was made before Enter");
    // Enter starts the highlighted preset (quick-look) on the target given, which does not
    // exist: --size makes it a test file of that size.
    t.tmux(&["send-keys", "Enter"]);
    let s = wait_until(&t, "non-zero IOPS", shows_nonzero_iops);
    assert!(s.contains("running"), "{s}");
    // The thermal panel: a temperature, or the reason there is none. At 80x24 it is a tab.
    let thermal =
        |s: &str| s.contains("°C") || s.contains("no SMART") || s.contains("no drive telemetry");
    if !thermal(&s) {
        for _ in 0..6 {
            t.tmux(&["send-keys", "Tab"]);
            std::thread::sleep(Duration::from_millis(300));
            if thermal(&t.screen()) {
                break;
            }
        }
    }
    let s = t.screen();
    assert!(
        thermal(&s),
        "neither a temperature nor the reason there is none:\n{s}"
    );
    // q asks first while a run is going; y stops, saves and quits.
    t.tmux(&["send-keys", "q"]);
    t.wait_for("Stop it and quit?");
    t.tmux(&["send-keys", "y"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
    let cursor = t.tmux(&["display", "-p", "#{cursor_flag}"]);
    assert_eq!(cursor.trim(), "1", "cursor left hidden");
    let (_, loaded) = the_saved_session(home.path());
    assert!(
        !loaded.session.intervals.is_empty(),
        "the session holds the run's intervals"
    );
    // The test file the dashboard made is the size given (--size), not its 1 GiB default.
    let len = std::fs::metadata(&target).map(|m| m.len()).unwrap_or(0);
    assert_eq!(len, 256 << 20, "the test file made");
}

#[test]
fn quick_look_runs_from_the_keys_at_120x40() {
    quick_look_end_to_end("ql120", 120, 40);
}

#[test]
fn quick_look_runs_from_the_keys_at_80x24() {
    quick_look_end_to_end("ql80", 80, 24);
}

/// The throughput panel's current figure for `dir` ("read" or "write"): the number in
/// `│read 41.0k IOPS` (k and M expanded), if the panel shows one.
fn iops_figure(s: &str, dir: &str) -> Option<f64> {
    s.lines().find_map(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words.windows(3).find_map(|w| {
            if w[0].trim_start_matches('│') != dir || w[2] != "IOPS" {
                return None;
            }
            let (num, scale) = match w[1].chars().last()? {
                'k' => (&w[1][..w[1].len() - 1], 1e3),
                'M' => (&w[1][..w[1].len() - 1], 1e6),
                _ => (w[1], 1.0),
            };
            num.parse::<f64>().ok().map(|v| v * scale)
        })
    })
}

/// The screen shows the replay at `clock` (`0:00:02 of 0:00:04`) with the figures of the
/// session's last interval at or before `at_s` (none: no figures yet).
fn assert_replay_at(
    screen: &str,
    clock: &str,
    at_s: f64,
    intervals: &[drivescope::session::IntervalRecord],
) {
    assert!(
        screen.contains(&format!("replay {clock}")),
        "the clock reads {clock}:\n{screen}"
    );
    let then = intervals.iter().rev().find(|iv| iv.t <= at_s + 1e-9);
    for dir in ["read", "write"] {
        let shown = iops_figure(screen, dir);
        match then {
            None => assert_eq!(
                shown, None,
                "{dir} at {at_s} s, before any interval:\n{screen}"
            ),
            Some(iv) => {
                let want = if dir == "read" {
                    iv.read_iops
                } else {
                    iv.write_iops
                };
                let shown =
                    shown.unwrap_or_else(|| panic!("no {dir} figure at {at_s} s:\n{screen}"));
                // Shown to three significant figures.
                assert!(
                    (shown - want).abs() <= 0.006 * want + 1.0,
                    "{dir} at {at_s} s shows {shown}, the interval at {} s has {want}:\n{screen}",
                    iv.t
                );
            }
        }
    }
}

/// The events panel's lines (the right-hand column of its box, at 120 columns).
fn events_panel(s: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for l in s.lines() {
        let right: String = l.chars().skip(60).collect();
        if right.starts_with("╭ Events") {
            inside = true;
        } else if inside && right.starts_with('╰') {
            break;
        } else if inside {
            out.push(right.trim_matches(['│', ' ']).to_string());
        }
    }
    out
}

#[test]
fn pause_skip_and_snapshot_keys_act_on_a_live_run() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    // quick-look at 0.3: four steps of 0.6 s ramp + 2.4 s.
    let cmd = format!(
        "{} --target {} --size 1GiB --preset quick-look --time-scale 0.3",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("keys", &cmd, home.path(), 120, 40) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "step 1 running", |s| {
        s.contains("step 1/4") && shows_nonzero_iops(s)
    });
    // Space pauses: the header says so and the events panel logs it, and once the
    // interval under way has reported, the engine issues nothing. Space again resumes.
    t.tmux(&["send-keys", "Space"]);
    wait_until(&t, "paused", |s| {
        s.contains("paused ╯")
            && events_panel(s)
                .iter()
                .any(|l| l.ends_with("info     paused"))
    });
    let paused_at = Instant::now();
    wait_until(&t, "no I/O while paused", |s| {
        // Step 1 reads only: no reads is no I/O.
        s.contains("step 1/4") && s.contains("│read 0 IOPS 0.0 MB/s") && s.contains("paused ╯")
    });
    std::thread::sleep(Duration::from_secs(2).saturating_sub(paused_at.elapsed()));
    t.tmux(&["send-keys", "Space"]);
    wait_until(&t, "resumed", |s| {
        s.contains("running ╯")
            && events_panel(s)
                .iter()
                .any(|l| l.ends_with("info     resumed"))
    });
    let paused_for = paused_at.elapsed().as_secs_f64();
    // The step's clock leaves the pause out: step 1 never reads past its 0:03.
    let longest = std::cell::Cell::new(0u64);
    // n skips the step that runs then (step 2, once step 1 has run out its time).
    wait_until(&t, "step 2", |s| {
        if s.contains("step 1/4") {
            if let Some(done) = s
                .split("step 0:")
                .nth(1)
                .filter(|r| r[2..].starts_with(" of 0:03"))
                .and_then(|r| r[..2].parse::<u64>().ok())
            {
                longest.set(longest.get().max(done));
            }
        }
        s.contains("step 2/4")
    });
    assert!(
        longest.get() <= 3,
        "step 1's clock read 0:{:02} of 0:03 after a pause",
        longest.get()
    );
    t.tmux(&["send-keys", "n"]);
    // The notice of the skip goes as the next step starts, not seconds later (issue 29).
    // (Within 2 s, well before the notice's own 6 s: a capture can catch a half-drawn frame.)
    wait_until(&t, "step 3 after the skip", |s| s.contains("step 3/4"));
    wait_until(&t, "the skip's notice gone", |s| {
        !s.contains("skipping to the next step")
    });
    // s exports a snapshot of the session so far; the events panel says where.
    t.tmux(&["send-keys", "s"]);
    let s = wait_until(&t, "the snapshot event", |s| {
        events_panel(s)
            .iter()
            .any(|l| l.contains("snapshot being written to"))
    });
    assert!(s.contains("step 3/4"), "{s}");
    // A second one, once the first is written, goes to a folder of its own (the first is
    // kept as it was).
    wait_for_snapshots(home.path(), 1);
    t.tmux(&["send-keys", "s"]);
    wait_for_snapshots(home.path(), 2);
    // A loaded machine may have let the run end by now: q then quits without asking.
    t.tmux(&["send-keys", "q"]);
    let s = wait_until(&t, "the quit question or the exit", |s| {
        s.contains("Stop it and quit?") || s.contains("has ended") || s.contains("EXIT=0")
    });
    if !s.contains("EXIT=0") {
        t.tmux(&["send-keys", "y"]);
    }
    t.wait_for("EXIT=0");

    let (path, loaded) = the_saved_session(home.path());
    let steps = &loaded.session.steps;
    assert!(steps.len() >= 3, "{steps:?}");
    // The pause held step 1 and lengthened it by as long (its measured time is the same).
    let nominal = 3.0;
    let step1 = steps[0].end_s - steps[0].start_s;
    assert_eq!(
        steps[0].summary.ended_by,
        drivescope::outcome::EndedBy::Duration,
        "{:?}",
        steps[0]
    );
    assert!(
        step1 >= nominal + paused_for - 0.5,
        "step 1 took {step1:.2} s with a pause of {paused_for:.2} s"
    );
    // The pause and the resume are events of the session; the resume says how long.
    let of = |k: drivescope::session::EventKind| {
        loaded
            .session
            .events
            .iter()
            .filter(|e| e.kind == k)
            .cloned()
            .collect::<Vec<_>>()
    };
    let (paused, resumed) = (
        of(drivescope::session::EventKind::Paused),
        of(drivescope::session::EventKind::Resumed),
    );
    assert_eq!(
        (paused.len(), resumed.len()),
        (1, 1),
        "{:?}",
        loaded.session.events
    );
    let held = resumed[0]
        .data_as::<drivescope::session::ResumedData>()
        .expect("a resume's pause")
        .paused_s;
    assert!(
        (held - (resumed[0].t - paused[0].t)).abs() < 0.2 && held <= paused_for + 0.5,
        "paused {held} s, between the events {} s, seen {paused_for} s",
        resumed[0].t - paused[0].t
    );
    assert!(
        (2.2..2.8).contains(&steps[0].summary.runtime_s),
        "{:?}",
        steps[0].summary
    );
    // The skip ended step 2 early, and step 3 ran after it.
    assert_eq!(
        steps[1].summary.ended_by,
        drivescope::outcome::EndedBy::Skipped,
        "{:?}",
        steps[1]
    );
    assert!(
        steps[1].end_s - steps[1].start_s < nominal,
        "{:?}",
        steps[1]
    );
    // Each snapshot is an event of the session and a session of its own on disk, in a
    // folder of its own.
    let snaps: Vec<_> = loaded
        .session
        .events
        .iter()
        .filter(|e| e.kind == drivescope::session::EventKind::Snapshot)
        .collect();
    assert_eq!(snaps.len(), 2, "{:?}", loaded.session.events);
    assert_ne!(snaps[0].message, snaps[1].message, "two folders");
    for snap in snaps {
        assert!(snap.t >= steps[2].start_s, "taken in step 3: {snap:?}");
        let dir = snap.message.trim_start_matches("snapshot to ");
        let copy = drivescope::session::load(&std::path::Path::new(dir).join("session.yaml"))
            .unwrap_or_else(|e| panic!("the snapshot in {dir} ({}): {e}", path.display()));
        assert!(copy.session.steps.len() >= 2, "{:?}", copy.session.steps);
        assert!(!copy.session.intervals.is_empty());
    }
}

/// Waits until `n` snapshot folders (`<session>-snapshot-<time>`) under `home` hold their
/// written report (a minute at most).
fn wait_for_snapshots(home: &std::path::Path, n: usize) {
    fn found(dir: &std::path::Path, out: &mut usize) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name()
                    .is_some_and(|f| f.to_string_lossy().contains("-snapshot-"))
                    && p.join("report.html").exists()
                {
                    *out += 1;
                } else {
                    found(&p, out);
                }
            }
        }
    }
    let t0 = std::time::Instant::now();
    loop {
        let mut count = 0;
        found(home, &mut count);
        if count >= n {
            return;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "{count} snapshot folders, not {n}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn open_replays_a_saved_session_through_time() {
    let home = tempfile::tempdir().unwrap();
    let session = common::recorded_session(home.path(), 4, "1s");
    // The timeline holds every interval, and the step's start and end.
    let loaded = drivescope::session::load(&session).unwrap();
    let tl = drivescope::dashboard::replay::timeline(&loaded.session);
    let ivs = &loaded.session.intervals;
    let intervals = tl
        .iter()
        .filter(|(_, m)| matches!(m, drivescope::app::Msg::Interval(_)))
        .count();
    assert_eq!(intervals, ivs.len());
    assert!(intervals >= 4);
    assert!(tl.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
    // The replay spans the timeline, in steps of a second (a twentieth of it, at least 1 s).
    let end = tl.last().map(|(t, _)| *t).unwrap();
    let clock = |t: f64| format!("0:00:{:02}", t as u64);
    let of = format!("of {}", clock(end));

    let cmd = format!("{} open {}", common::bin().display(), session.display());
    let Some(t) = Tmux::start_with("open", &cmd, home.path(), 120, 40) else {
        return;
    };
    // It opens at the end, with the last interval's figures.
    let s = t.wait_for(&format!("replay {} {of}", clock(end)));
    assert_replay_at(&s, &format!("{} {of}", clock(end)), end, ivs);
    // Home: the start, before any interval.
    // (Each wait is for the whole state: a capture under load can catch a frame half
    // drawn, its header new and its panels old.)
    t.tmux(&["send-keys", "Home"]);
    let at_start = format!("replay 0:00:00 {of}");
    let s = wait_until(&t, &at_start, |s| {
        s.contains(&at_start) && !s.contains("1 step done")
    });
    assert_replay_at(&s, &format!("0:00:00 {of}"), 0.0, ivs);
    // Two seconds forward: the figures of the interval that ended by then.
    t.tmux(&["send-keys", "]"]);
    t.wait_for(&format!("replay 0:00:01 {of}"));
    t.tmux(&["send-keys", "]"]);
    let s = t.wait_for(&format!("replay 0:00:02 {of}"));
    assert_replay_at(&s, &format!("0:00:02 {of}"), 2.0, ivs);
    // End, then a second back.
    t.tmux(&["send-keys", "End"]);
    let at_end = format!("replay {} {of}", clock(end));
    let s = wait_until(&t, &at_end, |s| {
        s.contains(&at_end) && s.contains("1 step done")
    });
    assert_replay_at(&s, &format!("{} {of}", clock(end)), end, ivs);
    t.tmux(&["send-keys", "["]);
    let s = t.wait_for(&format!("replay {} {of}", clock(end - 1.0)));
    assert_replay_at(&s, &format!("{} {of}", clock(end - 1.0)), end - 1.0, ivs);
    // A replay starts nothing.
    t.tmux(&["send-keys", "Enter"]);
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    assert_cooked(&t.stty());
}

#[test]
fn a_closed_terminal_stops_the_run_saves_the_session_and_exits() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    // stderr stays on the terminal: writing there after it closed must not kill the save.
    let cmd = format!(
        "{} --target {} --size 1GiB --preset quick-look",
        common::bin().display(),
        target.display(),
    );
    let Some(t) = Tmux::start_with("hangup", &cmd, home.path(), 100, 30) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "non-zero IOPS", shows_nonzero_iops);
    let pid: i32 = t.drivescope_pid().parse().unwrap();
    // The window goes away.
    t.tmux(&["kill-server"]);
    // Until it has ended: the stop, the final save and the exit take what a busy machine
    // gives them (the minute is a bound on a hang, not the time expected).
    let t0 = Instant::now();
    // SAFETY: kill(2) with signal 0 only asks whether the process exists.
    while unsafe { libc::kill(pid, 0) } == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "drivescope lives on after its terminal closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!(
        "a closed terminal: drivescope ended {:?} after",
        t0.elapsed()
    );
    let (path, loaded) = the_saved_session(home.path());
    assert_eq!(loaded.documents, 1, "the final save happened");
    assert!(
        !loaded.session.intervals.is_empty(),
        "{}",
        std::fs::read_to_string(&path).unwrap()
    );
}

#[test]
fn kill_9_of_a_dashboard_run_leaves_a_session_that_loads_without_its_terminal() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 1GiB --preset quick-look --time-scale 0.3",
        common::bin().display(),
        target.display(),
    );
    let Some(t) = Tmux::start_with("kill9", &cmd, home.path(), 100, 30) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "non-zero IOPS", shows_nonzero_iops);
    // Until an autosave (every 5 s) has put intervals on disk.
    let dir = home.path().join("data/drivescope/sessions");
    let t0 = Instant::now();
    let saved = loop {
        let found = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "yaml"));
        if let Some(l) = found
            .as_deref()
            .and_then(|p| drivescope::session::load(p).ok())
        {
            if !l.session.intervals.is_empty() {
                break l.session.intervals.len();
            }
        }
        assert!(t0.elapsed() < SCREEN_DEADLINE, "no autosave with intervals");
        std::thread::sleep(Duration::from_millis(200));
    };
    let pid = t.drivescope_pid();
    assert!(Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap()
        .success());
    t.wait_for("EXIT=137");
    // What the autosaves wrote is the session: a running one, not finished, no summary.
    let (path, loaded) = the_saved_session(home.path());
    assert!(loaded.documents > 1, "the autosaved stream");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let ses = &loaded.session;
    assert_eq!(ses.state, drivescope::session::SessionState::Running);
    assert!(ses.summary.is_none());
    assert!(
        ses.intervals.len() >= saved,
        "{} < {saved}",
        ses.intervals.len()
    );
    assert_eq!(
        ses.preset_info().id.as_deref(),
        Some("quick-look"),
        "{:?}",
        ses.preset
    );
    // report, with no terminal at all, says what it lacks and writes the page.
    let out_dir = home.path().join("rep");
    let out = Command::new(common::bin())
        .args([
            "report",
            path.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .env_remove("TERM")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("no final summary"), "{err}");
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("had not reached its final save"));
    // open replays it in a new terminal (the killed one is left as drivescope left it).
    let cmd = format!("{} open {}", common::bin().display(), path.display());
    let Some(o) = Tmux::start_with("kill9open", &cmd, home.path(), 100, 30) else {
        return;
    };
    let s = o.wait_for("replay ");
    assert!(s.contains("quick-look") || s.contains("Quick look"), "{s}");
    o.tmux(&["send-keys", "q"]);
    o.wait_for("EXIT=0");
}

/// A signal from outside while quick-look runs: the exit code is 128 + the signal, the
/// terminal is back in cooked mode, and the session got its final save.
fn signal_during_a_run(name: &str, sig: &str, code: i32) {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 1GiB --preset quick-look",
        common::bin().display(),
        target.display(),
    );
    let Some(t) = Tmux::start_with(name, &cmd, home.path(), 100, 30) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    wait_until(&t, "non-zero IOPS", shows_nonzero_iops);
    let pid = t.drivescope_pid();
    let sent = Instant::now();
    assert!(Command::new("kill")
        .args([&format!("-{sig}"), &pid])
        .status()
        .unwrap()
        .success());
    t.wait_for(&format!("EXIT={code}"));
    let took = sent.elapsed();
    assert!(took < Duration::from_secs(3), "{sig}: {took:?} to exit");
    assert_cooked(&t.stty());
    let (_, loaded) = the_saved_session(home.path());
    assert_eq!(loaded.documents, 1, "{sig}: the final save happened");
    assert_eq!(
        loaded.session.state,
        drivescope::session::SessionState::Stopped,
        "{sig}"
    );
    assert!(!loaded.session.intervals.is_empty(), "{sig}");
}

#[test]
fn sigint_during_a_run_exits_130_restored_and_saved() {
    signal_during_a_run("sigint", "INT", 130);
}

#[test]
fn sigterm_during_a_run_exits_143_restored_and_saved() {
    signal_during_a_run("sigterm", "TERM", 143);
}

#[test]
fn sighup_during_a_run_exits_129_restored_and_saved() {
    signal_during_a_run("sighup", "HUP", 129);
}

#[test]
fn open_shows_a_damaged_sessions_warnings_and_only_the_keys_a_replay_takes() {
    let home = tempfile::tempdir().unwrap();
    let session = common::recorded_session(home.path(), 2, "1s");
    // Damage it: one interval line that does not parse.
    let text = std::fs::read_to_string(&session).unwrap();
    let damaged = text.replacen("\"read_iops\": ", "\"read_iops\": \"x\", \"was\": ", 1);
    assert_ne!(damaged, text, "no interval line to damage");
    std::fs::write(&session, damaged).unwrap();
    let cmd = format!("{} open {}", common::bin().display(), session.display());
    let Some(t) = Tmux::start_with("opendamaged", &cmd, home.path(), 120, 40) else {
        return;
    };
    let screen = t.wait_for("replay 0:00:0");
    assert!(
        screen.contains("damaged session"),
        "the warning is on screen: {screen}"
    );
    // The footer offers moving through time, and none of the keys a replay refuses.
    let footer = screen.lines().last().unwrap_or("").to_string();
    assert!(
        footer.contains("back") && footer.contains("forward"),
        "{footer}"
    );
    assert!(
        !footer.contains("start ") || footer.contains("] forward"),
        "{footer}"
    );
    assert!(
        !footer.contains("presets") && !footer.contains("targets"),
        "{footer}"
    );
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
}

/// The colours of the screen as tmux holds it: the SGR parameters of every escape
/// sequence `capture-pane -e` writes that sets a foreground or background colour.
fn colour_codes(screen_with_escapes: &str) -> Vec<String> {
    screen_with_escapes
        .split("\x1b[")
        .skip(1)
        .filter_map(|s| s.split_once('m').map(|(p, _)| p))
        .filter(|p| {
            p.split(';').any(|n| {
                matches!(
                    n.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
        })
        .map(str::to_string)
        .collect()
}

/// The dashboard started by `cmd` (its picker up), its screen with escapes, then quit.
fn picker_screen(name: &str, cmd: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let Some(t) = Tmux::start_with(name, cmd, home.path(), 100, 30) else {
        return String::new();
    };
    t.wait_for(" Presets ");
    let s = t.tmux(&["capture-pane", "-e", "-p"]);
    // The picker closed before q (an escape and a q read together are Alt-q).
    t.tmux(&["send-keys", "Escape"]);
    wait_until(&t, "the picker to close", |s| !s.contains(" Presets "));
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    s
}

#[test]
fn no_color_and_color_never_give_a_monochrome_dashboard() {
    let bin = common::bin().display().to_string();
    let coloured = picker_screen("colour", &bin);
    if coloured.is_empty() {
        return;
    }
    assert!(
        !colour_codes(&coloured).is_empty(),
        "the default theme colours"
    );
    for (name, cmd) in [
        ("nocolor", format!("NO_COLOR=1 {bin}")),
        ("never", format!("{bin} --color never")),
    ] {
        let s = picker_screen(name, &cmd);
        assert!(s.contains(" Presets "), "{s}");
        assert_eq!(
            colour_codes(&s),
            Vec::<String>::new(),
            "{name}: no colour\n{s}"
        );
        // The highlighted preset is still told apart: reversed.
        assert!(
            s.lines()
                .any(|l| l.contains("\x1b[7m") || l.contains(";7m") || l.contains("[7;")),
            "{name}: the selection is shown reversed\n{s}"
        );
    }
    let forced = picker_screen("always", &format!("NO_COLOR=1 {bin} --color always"));
    assert!(
        !colour_codes(&forced).is_empty(),
        "--color always colours under NO_COLOR"
    );
}
