//! SIGINT, SIGTERM and SIGHUP against the real binary in headless mode, a single run and a
//! preset: the workers stop within about one interval, the summary is printed, the
//! session gets its final save (state `stopped`, ended by a signal), and the exit code is
//! 128 + the signal (130, 143, 129). The dashboard's side is in tests/it/dashboard_tmux.rs.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use drivescope::session::{self, SessionState};

const INTERVAL_MS: u64 = 250;

fn spawn(home: &Path, args: &[&str]) -> Child {
    Command::new(common::bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn drivescope")
}

/// Stdout lines as they come, on a channel; ends when stdout closes.
pub(crate) fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let out = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Sends `sig` once `n` interval lines have been printed; then checks the exit code, how
/// long the stop took, the printed summary and the saved session.
fn signal_mid_run(args: &[&str], sig: i32, code: i32, what: &str) {
    let home = tempfile::tempdir().unwrap();
    let sp = home.path().join("s.yaml");
    let target = home.path().join("scratch.bin");
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "--target",
        target.to_str().unwrap(),
        "--json",
        "--session",
        sp.to_str().unwrap(),
    ]);
    let mut child = spawn(home.path(), &all);
    let rx = lines_of(&mut child);
    let start = Instant::now();
    let mut intervals = 0;
    while intervals < 4 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: no intervals printed"
        );
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            intervals += usize::from(l.contains("\"type\":\"interval\""));
        }
    }
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let sent = Instant::now();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let rest: Vec<String> = rx.iter().collect();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    assert_eq!(status.code(), Some(code), "{what}: {stderr}");
    // Within one interval, plus the final save and some slack for a loaded CI machine.
    assert!(
        took < Duration::from_millis(INTERVAL_MS + 1500),
        "{what}: took {took:?} to stop"
    );
    assert!(
        rest.iter()
            .any(|l| l.contains("\"type\":\"summary\"") || l.contains("\"type\":\"plan_summary\"")),
        "{what}: no summary after the signal: {rest:?}"
    );
    let l = session::load(&sp).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(l.documents, 1, "{what}: the final save happened");
    assert_eq!(l.session.state, SessionState::Stopped, "{what}");
    // Nothing was autosaved yet (a 30 s period), and everything is there.
    assert!(l.session.intervals.len() >= 4, "{what}");
    assert!(
        !l.session.steps.is_empty(),
        "{what}: the step under way is recorded"
    );
    let sm = l.session.summary.expect("a summary");
    assert_eq!(sm.ended_by.to_string(), "stopped by a signal", "{what}");
    eprintln!("{what}: exit {code} {took:?} after the signal");
}

fn single_run() -> Vec<&'static str> {
    vec![
        "run",
        "--size",
        "16MiB",
        "--rw",
        "randrw",
        "--iodepth",
        "4",
        "--duration",
        "60s",
        "--interval",
        "250ms",
        "--autosave",
        "30s",
    ]
}

#[test]
fn sigint_in_a_run_exits_130_with_the_session_saved() {
    signal_mid_run(&single_run(), libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_in_a_run_exits_143_with_the_session_saved() {
    signal_mid_run(&single_run(), libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn sighup_in_a_run_exits_129_with_the_session_saved() {
    signal_mid_run(&single_run(), libc::SIGHUP, 129, "SIGHUP");
}

#[test]
fn sigterm_in_a_preset_exits_143_with_the_session_saved() {
    signal_mid_run(
        &[
            "run",
            "--preset",
            "quick-look",
            "--size",
            "16MiB",
            "--interval",
            "250ms",
        ],
        libc::SIGTERM,
        143,
        "SIGTERM in a preset",
    );
}
