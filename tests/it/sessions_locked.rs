//! Sessions and verify states are never shared or replaced (issue 25, part 3), through the
//! real binary on real files: a session path another run holds is refused before any I/O
//! (two real processes; the lock dies with its holder, `kill -9` included); a path holding
//! an earlier session is refused unless `--force`.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common;

use common::{json_lines, lines_of, of_type, run, spawn, stderr, wait_for_line};
use drivescope::session::{self, SessionState};

const LIMIT: Duration = Duration::from_secs(60);

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Refused (exit 2, an error holding each of `words`) with nothing run: no interval.
fn refused(o: &Output, words: &[&str]) {
    common::refused(o, words);
    assert!(
        of_type(&json_lines(o), "interval").is_empty(),
        "{}",
        stderr(o)
    );
}

/// A short run on a new 1 MiB test file `target` with `extra`.
fn short_run(home: &Path, target: &Path, extra: &[&str]) -> Output {
    run(home, &common::short_run_args(target, extra))
}

fn kill(child: &std::process::Child, sig: i32) {
    // SAFETY: kill(2) with a pid of our own child, no pointers.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

#[test]
fn a_session_path_another_run_holds_is_refused_and_the_lock_dies_with_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sp = h.join("s.yaml");
    let mut first = spawn(
        h,
        &[
            "run",
            "--target",
            s(&h.join("a.bin")),
            "--size",
            "1M",
            "--duration",
            "60s",
            "--rate-iops",
            "50",
            "--interval",
            "100ms",
            "--json",
            "--session",
            s(&sp),
        ],
    );
    let rx = lines_of(&mut first);
    // Started: its session is created and locked.
    wait_for_line(&rx, "start", LIMIT);
    let b = h.join("b.bin");
    // Even --force does not take a session path another run holds.
    let out = short_run(h, &b, &["--session", s(&sp), "--force"]);
    refused(&out, &[s(&sp), "is writing a session there now"]);
    assert!(!b.exists(), "refused before the target was made");
    let held = session::load(&sp).unwrap().session;
    assert!(held.target.path.ends_with("a.bin"), "{:?}", held.target);
    // The lock is the kernel's: it goes with its process, however that ends.
    kill(&first, libc::SIGKILL);
    first.wait().unwrap();
    let out = short_run(h, &b, &["--session", s(&sp), "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let l = session::load(&sp).unwrap().session;
    assert_eq!(l.state, SessionState::Complete);
    assert!(l.target.path.ends_with("b.bin"), "{:?}", l.target);
    assert!(
        !h.join(".s.yaml.lock").exists(),
        "the lock file goes with the lock"
    );
}

#[test]
fn a_path_holding_an_earlier_session_is_refused_unless_force() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sp = h.join("s.yaml");
    let out = short_run(h, &h.join("a.bin"), &["--session", s(&sp)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let before = std::fs::read(&sp).unwrap();
    let b = h.join("b.bin");
    let out = short_run(h, &b, &["--session", s(&sp)]);
    refused(
        &out,
        &[s(&sp), "holds an earlier session", "--force replaces it"],
    );
    assert!(!b.exists(), "refused before the target was made");
    assert_eq!(
        std::fs::read(&sp).unwrap(),
        before,
        "the earlier session kept"
    );
    // `verify --session` alike.
    let out = run(
        h,
        &[
            "verify",
            "--target",
            s(&h.join("a.bin")),
            "--session",
            s(&sp),
        ],
    );
    refused(&out, &["holds an earlier session", "--force replaces it"]);
    let out = short_run(h, &b, &["--session", s(&sp), "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let l = session::load(&sp).unwrap().session;
    assert!(l.target.path.ends_with("b.bin"), "{:?}", l.target);
}
