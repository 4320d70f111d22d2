//! Sessions and verify states are never shared or replaced (issue 25, part 3), through the
//! real binary on real files: a session path another run holds is refused before any I/O
//! (two real processes; the lock dies with its holder, `kill -9` included); a path holding
//! an earlier session is refused unless `--force`; a verify state another process uses is
//! refused, to a run and to `verify`; a damaged map reads as "state damaged", never as
//! findings; a plain write, or a test file drivescope re-created, retires the state and
//! `verify` says so and why.

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

/// A verified write of pattern `rw` for `duration` over `target` (a new 16 MiB test file),
/// with `extra`.
fn verified_args<'a>(
    target: &'a Path,
    rw: &'a str,
    duration: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--target",
        s(target),
        "--size",
        "16M",
        "--rw",
        rw,
        "--duration",
        duration,
        "--verify",
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

/// A verified sequential write of 1 s over a new 16 MiB test file (or `extra`'s).
fn verified_write(home: &Path, target: &Path, extra: &[&str]) {
    let out = run(home, &verified_args(target, "write", "1s", extra));
    let lines = common::succeeded(&out);
    assert!(common::summary(&lines)["verify"]["blocks_written"].as_u64() > Some(0));
}

/// `drivescope verify` of `target` with `extra`.
fn verify(home: &Path, target: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["verify", "--target", s(target), "--json"];
    args.extend_from_slice(extra);
    run(home, &args)
}

#[test]
fn a_verify_state_in_use_is_refused_to_a_second_run_and_to_a_check() {
    let home = common::disk_tempdir();
    let h = home.path();
    let t = h.join("t.bin");
    let st = h.join("state");
    let mut first = spawn(
        h,
        &verified_args(
            &t,
            "randwrite",
            "60s",
            &["--rate-iops", "100", "--verify-state", s(&st)],
        ),
    );
    let rx = lines_of(&mut first);
    // Started: its state is open and locked (it is opened before the run starts).
    wait_for_line(&rx, "start", LIMIT);
    let out = verify(h, &t, &["--verify-state", s(&st)]);
    refused(&out, &["is in use by another drivescope"]);
    assert!(of_type(&json_lines(&out), "verify_finding").is_empty());
    let other = h.join("other.bin");
    let out = run(
        h,
        &verified_args(&other, "write", "1s", &["--verify-state", s(&st)]),
    );
    refused(&out, &["is in use by another drivescope"]);
    kill(&first, libc::SIGTERM);
    let end = first.wait_with_output().unwrap();
    assert_eq!(end.status.code(), Some(143), "{}", stderr(&end));
    // Let go: the check runs, and the drive shows nothing wrong.
    let out = verify(h, &t, &["--verify-state", s(&st)]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_damaged_map_is_state_damaged_never_findings_and_an_old_state_still_reads() {
    let home = common::disk_tempdir();
    let h = home.path();
    let t = h.join("t.bin");
    let st = h.join("state");
    verified_write(h, &t, &["--verify-state", s(&st)]);
    let map_path = st.join("map");
    let good = std::fs::read(&map_path).unwrap();
    assert_ne!(good[0] & 0x3f, 0, "block 0 written");
    let mut bad = good.clone();
    bad[0] ^= 0x3f;
    std::fs::write(&map_path, &bad).unwrap();
    let out = verify(h, &t, &["--verify-state", s(&st)]);
    refused(&out, &["is damaged", "fail their checksum"]);
    assert!(of_type(&json_lines(&out), "verify_finding").is_empty());
    // Put right, the same check passes: it was the map, not the drive.
    std::fs::write(&map_path, &good).unwrap();
    let out = verify(h, &t, &["--verify-state", s(&st)]);
    assert!(out.status.success(), "{}", stderr(&out));
    // A state of the format before sums (no `format:`, no sums file) reads as before.
    std::fs::remove_file(st.join("sums")).unwrap();
    let meta = std::fs::read_to_string(st.join("meta.yaml")).unwrap();
    let old: String = meta
        .lines()
        .filter(|l| !l.starts_with("format:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(st.join("meta.yaml"), old).unwrap();
    let out = verify(h, &t, &["--verify-state", s(&st)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(st.join("sums").exists(), "given sums from then on");
}

#[test]
fn a_plain_write_or_a_recreated_test_file_retires_the_state_and_verify_says_why() {
    let home = common::disk_tempdir();
    let h = home.path();
    let t = h.join("t.bin");
    // The target's own state (in the data directory), made by a verified run.
    verified_write(h, &t, &[]);
    let out = short_write(h, &t);
    let lines = common::succeeded(&out);
    let said = of_type(&lines, "note").iter().any(|n| {
        n["message"]
            .as_str()
            .is_some_and(|m| m.contains("is retired"))
    });
    assert!(said, "the plain write says it retired the state: {lines:?}");
    let out = verify(h, &t, &[]);
    refused(
        &out,
        &["was retired at", "a run without --verify wrote the target"],
    );
    assert!(of_type(&json_lines(&out), "verify_finding").is_empty());
    // A verified run on it too, until a new state is started.
    let again = run(
        h,
        &[
            "run",
            "--target",
            s(&t),
            "--rw",
            "write",
            "--duration",
            "1s",
            "--verify",
            "--json",
        ],
    );
    refused(&again, &["was retired at", "--verify-reset"]);
    verified_write(h, &t, &["--verify-reset"]);
    let out = verify(h, &t, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The test file gone and made again by a run (that only reads it).
    std::fs::remove_file(&t).unwrap();
    let out = run(
        h,
        &[
            "run",
            "--target",
            s(&t),
            "--size",
            "16M",
            "--duration",
            "200ms",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = verify(h, &t, &[]);
    refused(&out, &["was retired at", "re-created the test file"]);
    assert!(of_type(&json_lines(&out), "verify_finding").is_empty());
}

/// A plain (unverified) write of 200 ms over `target`.
fn short_write(home: &Path, target: &Path) -> Output {
    run(
        home,
        &[
            "run",
            "--target",
            s(target),
            "--rw",
            "randwrite",
            "--duration",
            "200ms",
            "--json",
        ],
    )
}
