//! Hostile and odd files, driven through the real binary (issue 18): what drivescope writes
//! is only ever created new or replaces a regular file it wrote itself (device nodes,
//! FIFOs, sockets, directories and links to them or to someone else's file are refused
//! before the run, exit 2); runs started together get distinct dated sessions; outputs do
//! not collide with each other or with their inputs; inputs are regular files read with a
//! cap (a FIFO or /dev/zero fails at once); deep nesting is refused at once; a bad schema
//! version, a junk histogram log and differing workloads are said plainly.

use crate::common;

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{json_lines, refused, stderr};
use drivescope::session::{self, SessionState};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn command(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(common::bin());
    c.args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits for `child` at most `limit`; a child still running then is killed and the test
/// fails (a hang is the bug).
fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

/// Runs drivescope, failing the test if it takes longer than `limit`.
fn run_within(home: &Path, args: &[&str], limit: Duration) -> Output {
    let child = command(home, args).spawn().expect("spawn drivescope");
    finish_within(child, limit, &args.join(" "))
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(s(p)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {p:?}"
    );
}

/// A character device like /dev/null (1:3), made in a temp folder (needs root).
fn mknod_null(p: &Path) -> bool {
    let c = std::ffi::CString::new(s(p)).unwrap();
    // SAFETY: a valid NUL-terminated path; makedev has no preconditions.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if r != 0 {
        common::skip::note(
            common::skip::Skip::NotRoot,
            "the device node case: mknod needs root",
        );
    }
    r == 0
}

/// A short real run with `extra` arguments.
fn short_run(home: &Path, target: &Path, extra: &[&str]) -> Output {
    let args = common::short_run_args(target, extra);
    run_within(home, &args, Duration::from_secs(60))
}

/// A saved session from a real short run, at `home/NAME.yaml`.
fn real_session(home: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let sp = home.join(format!("{name}.yaml"));
    let target = home.join(format!("{name}.bin"));
    let mut args = vec!["--session", s(&sp)];
    args.extend_from_slice(extra);
    let out = short_run(home, &target, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    sp
}

#[test]
fn a_session_path_that_is_not_a_regular_file_of_ours_is_refused_before_the_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let notes = h.join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    // Mentions schema_version (what used to pass for a session) without being one.
    let lookalike = h.join("lookalike.yaml");
    let lookalike_text = "# my notes\nschema_version: 1\ntodo: [buy disks]\n";
    std::fs::write(&lookalike, lookalike_text).unwrap();
    let fifo = h.join("fifo");
    mkfifo(&fifo);
    let sock = h.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let dir = h.join("folder");
    std::fs::create_dir(&dir).unwrap();
    let to_stdout = h.join("to-stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &to_stdout).unwrap();
    let to_notes = h.join("to-notes.yaml");
    std::os::unix::fs::symlink(&notes, &to_notes).unwrap();
    let null = h.join("null");
    let mut cases: Vec<(&Path, &str)> = vec![
        (&fifo, "a FIFO"),
        (&sock, "a socket"),
        (&dir, "a directory"),
        (&to_stdout, "a symbolic link to"),
        (&to_notes, "did not write"),
        (&lookalike, "did not write"),
    ];
    if mknod_null(&null) {
        cases.push((&null, "a character device"));
    }
    for (path, what) in &cases {
        let kind_before = std::fs::symlink_metadata(path).unwrap().file_type();
        let target = h.join("never.bin");
        let started = Instant::now();
        let out = short_run(h, &target, &["--session", s(path)]);
        assert_eq!(out.status.code(), Some(2), "{path:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(s(path)) && err.contains(what),
            "{path:?}: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{path:?}: refused late"
        );
        // Before the run: no test file, no I/O, nothing printed as an interval.
        assert!(!target.exists(), "{path:?}: the test file was created");
        assert!(json_lines(&out).is_empty(), "{path:?}: {:?}", out.stdout);
        let kind_after = std::fs::symlink_metadata(path).unwrap().file_type();
        assert_eq!(kind_before, kind_after, "{path:?} was replaced");
    }
    if null.exists() {
        assert!(std::fs::metadata(&null)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    assert_eq!(std::fs::read_to_string(&lookalike).unwrap(), lookalike_text);
    assert!(std::fs::symlink_metadata(&to_notes)
        .unwrap()
        .file_type()
        .is_symlink());

    // The files that go beside the session: its histogram log, its snapshot folder's.
    let target = h.join("never.bin");
    let hlog = h.join("h.hlog");
    mkfifo(&hlog);
    let o = short_run(
        h,
        &target,
        &["--session", s(&h.join("h.yaml")), "--histograms"],
    );
    refused(&o, &[s(&hlog), "a FIFO", "histogram log"]);
    assert!(std::fs::symlink_metadata(&hlog)
        .unwrap()
        .file_type()
        .is_fifo());
    let snap = h.join("p-snapshot");
    std::fs::create_dir(&snap).unwrap();
    let page = snap.join("report.html");
    std::os::unix::fs::symlink(&notes, &page).unwrap();
    let o = short_run(
        h,
        &target,
        &["--session", s(&h.join("p.yaml")), "--snapshot-every", "1s"],
    );
    refused(&o, &[s(&page), "a symbolic link to"]);
    assert!(!target.exists() && !h.join("h.yaml").exists() && !h.join("p.yaml").exists());
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");

    // A link to a session of ours is followed: the session it names is rewritten (an
    // earlier session, so only with --force).
    let real = real_session(h, "real", &[]);
    let link = h.join("latest.yaml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = short_run(h, &h.join("again.bin"), &["--session", s(&link)]);
    refused(&out, &[s(&real), "earlier session", "--force"]);
    let out = short_run(h, &h.join("again.bin"), &["--session", s(&link), "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let l = session::load(&real).unwrap();
    assert!(
        l.session.target.path.ends_with("again.bin"),
        "{:?}",
        l.session.target
    );
}

#[test]
fn the_final_save_does_not_replace_a_fifo_put_there_mid_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sp = h.join("s.yaml");
    let child = command(
        h,
        &[
            "run",
            "--target",
            s(&h.join("t.bin")),
            "--size",
            "1M",
            "--duration",
            "2s",
            "--rate-iops",
            "100",
            "--session",
            s(&sp),
        ],
    )
    .spawn()
    .unwrap();
    let start = Instant::now();
    while !sp.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "no session");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_file(&sp).unwrap();
    mkfifo(&sp);
    let out = finish_within(child, Duration::from_secs(60), "run");
    // The FIFO stays; the session, never lost, is saved beside it and says so.
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(std::fs::symlink_metadata(&sp)
        .unwrap()
        .file_type()
        .is_fifo());
    let beside = h.join("s-2.yaml");
    assert!(
        common::stderr(&out).contains(&format!("session saved to {}", beside.display())),
        "{}",
        common::stderr(&out)
    );
    let l = drivescope::session::load(&beside).unwrap().session;
    assert!(l.events.iter().any(|e| e
        .message
        .contains("not drivescope's: the session was saved beside it")));
}

#[test]
fn runs_started_together_get_distinct_dated_sessions() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    const N: usize = 6;
    let children: Vec<Child> = (0..N)
        .map(|i| {
            let target = h.join(format!("t{i}.bin"));
            command(h, &common::short_run_args(&target, &[]))
                .spawn()
                .unwrap()
        })
        .collect();
    let mut paths = Vec::new();
    for c in children {
        let out = finish_within(c, Duration::from_secs(120), "run");
        assert!(out.status.success(), "{}", stderr(&out));
        let lines = json_lines(&out);
        let p = lines
            .iter()
            .find(|v| v["type"] == "session")
            .and_then(|v| v["path"].as_str())
            .unwrap_or_else(|| panic!("no session line: {lines:?}"))
            .to_string();
        paths.push(PathBuf::from(p));
    }
    let mut distinct = paths.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), N, "{paths:?}");
    let dir = h.join("data/drivescope/sessions");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), N);
    for p in &paths {
        assert!(p.starts_with(&dir), "{p:?}");
        let l = session::load(p).unwrap();
        assert_eq!(l.session.state, SessionState::Complete, "{p:?}");
        assert_eq!(l.session.steps.len(), 1, "{p:?}");
    }
}

#[test]
fn outputs_collide_neither_with_each_other_nor_with_inputs() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // The session and its histogram log would be one file.
    let x = h.join("x.hlog");
    let target = h.join("t.bin");
    let out = short_run(h, &target, &["--session", s(&x), "--histograms"]);
    refused(&out, &["histogram log"]);
    assert!(!x.exists() && !target.exists());

    // A second report into the same folder needs --force.
    let sp = real_session(h, "a", &[]);
    let rep = h.join("rep");
    let first = run_within(
        h,
        &["report", s(&sp), "--out", s(&rep)],
        Duration::from_secs(30),
    );
    assert!(first.status.success(), "{}", stderr(&first));
    let page = rep.join("report.html");
    let before = std::fs::read(&page).unwrap();
    let again = run_within(
        h,
        &["report", s(&sp), "--out", s(&rep)],
        Duration::from_secs(30),
    );
    refused(&again, &[s(&rep), "--force"]);
    assert_eq!(std::fs::read(&page).unwrap(), before);
    // --force replaces drivescope's files, but not one it did not write.
    std::fs::write(rep.join("intervals.csv"), b"t_s,dt_s\n").unwrap();
    let forced = run_within(
        h,
        &["report", s(&sp), "--out", s(&rep), "--force"],
        Duration::from_secs(30),
    );
    refused(&forced, &["intervals.csv"]);
    std::fs::remove_file(rep.join("intervals.csv")).unwrap();
    let forced = run_within(
        h,
        &["report", s(&sp), "--out", s(&rep), "--force"],
        Duration::from_secs(30),
    );
    assert!(forced.status.success(), "{}", stderr(&forced));

    // Never over its own input, --force or not.
    let inside = h.join("inside");
    std::fs::create_dir(&inside).unwrap();
    let named = inside.join("report.html");
    std::fs::copy(&sp, &named).unwrap();
    let text = std::fs::read(&named).unwrap();
    let o = run_within(
        h,
        &["report", s(&named), "--out", s(&inside), "--force"],
        Duration::from_secs(30),
    );
    refused(&o, &["session this command reads"]);
    assert_eq!(std::fs::read(&named).unwrap(), text);

    // compare: the same folder rule, and its sessions are inputs.
    let b = real_session(h, "b", &[]);
    let cmp = h.join("cmp");
    let args = ["compare", s(&sp), s(&b), "--out", s(&cmp)];
    let o = run_within(h, &args, Duration::from_secs(30));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_within(h, &args, Duration::from_secs(30));
    refused(&o, &["--force"]);
    let mut forced = args.to_vec();
    forced.push("--force");
    let o = run_within(h, &forced, Duration::from_secs(30));
    assert!(o.status.success(), "{}", stderr(&o));
    let into_input = h.join("cmp2");
    std::fs::create_dir(&into_input).unwrap();
    let as_page = into_input.join("compare.html");
    std::fs::copy(&b, &as_page).unwrap();
    let o = run_within(
        h,
        &[
            "compare",
            s(&sp),
            s(&as_page),
            "--out",
            s(&into_input),
            "--force",
        ],
        Duration::from_secs(30),
    );
    refused(&o, &["session this command reads"]);
    assert!(session::load(&as_page).is_ok());
}

#[test]
fn a_fifo_or_a_device_given_as_input_fails_at_once() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let fifo = h.join("fifo.yaml");
    mkfifo(&fifo);
    let zero = Path::new("/dev/zero");
    let target = h.join("t.bin");
    let limit = Duration::from_secs(10);
    for input in [fifo.as_path(), zero] {
        let cases: Vec<(Vec<&str>, &str)> = vec![
            (vec!["presets", "validate", s(input)], "1MiB"),
            (vec!["smart", "--smartctl-json", s(input)], "4MiB"),
            (
                vec!["run", "--preset-file", s(input), "--target", s(&target)],
                "1MiB",
            ),
            (vec!["report", s(input)], "1GiB"),
            (vec!["open", s(input)], "1GiB"),
            (vec!["compare", s(input), s(input)], "1GiB"),
        ];
        for (args, cap) in cases {
            let o = run_within(h, &args, limit);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
            let err = stderr(&o);
            let kind = if input == zero {
                "a character device"
            } else {
                "a FIFO"
            };
            assert!(
                err.contains(s(input)) && err.contains(kind) && err.contains(cap),
                "{args:?}: {err}"
            );
        }
    }
    assert!(!target.exists());

    // A session's `histograms:` entry naming a FIFO, a link to /dev/zero, or a path that
    // leads out of the session's folder.
    let sp = real_session(h, "hist", &["--histograms"]);
    let hlog = h.join("hist.hlog");
    std::fs::remove_file(&hlog).unwrap();
    mkfifo(&hlog);
    let span = ["report", s(&sp), "--span", "0s..10s"];
    let o = run_within(h, &span, limit);
    refused(&o, &["a FIFO"]);
    std::fs::remove_file(&hlog).unwrap();
    std::os::unix::fs::symlink(zero, &hlog).unwrap();
    let o = run_within(h, &span, limit);
    refused(&o, &["a character device"]);
    let text = std::fs::read_to_string(&sp).unwrap();
    let away = h.join("away.yaml");
    std::fs::write(
        &away,
        text.replace("histograms: hist.hlog", "histograms: /dev/zero"),
    )
    .unwrap();
    let o = run_within(h, &["report", s(&away), "--span", "0s..10s"], limit);
    refused(&o, &["not the name of a file"]);
}

#[test]
fn deeply_nested_yaml_is_refused_at_once() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let depth = 100_000;
    let nested = h.join("nested.yaml");
    std::fs::write(
        &nested,
        format!(
            "schema_version: 1\ndrivescope_version: 0.1.0\nhost: {}{}\nintervals: []\n",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
    )
    .unwrap();
    assert!(std::fs::metadata(&nested).unwrap().len() >= 200_000);
    for args in [vec!["report", s(&nested)], vec!["compare", s(&nested)]] {
        let started = Instant::now();
        let o = run_within(h, &args, Duration::from_secs(20));
        let took = started.elapsed();
        refused(&o, &["nest more than 64 deep", ":3:"]);
        assert!(took < Duration::from_secs(1), "{args:?} took {took:?}");
    }
    // As a session path to write: not recognised as a session, so not overwritten.
    let o = short_run(h, &h.join("t.bin"), &["--session", s(&nested)]);
    refused(&o, &["did not write"]);
}

#[test]
fn bad_schema_versions_junk_histograms_and_differing_workloads_are_said_plainly() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    for value in ["-1", "\"1\"", "0", "one"] {
        let p = h.join("v.yaml");
        std::fs::write(&p, format!("schema_version: {value}\nintervals: []\n")).unwrap();
        let o = run_within(h, &["report", s(&p)], Duration::from_secs(10));
        refused(&o, &[&format!("`schema_version: {value}`")]);
    }

    // A junk histogram log: no silent zeros, no parser debug output, exit 2.
    let sp = real_session(h, "a", &["--histograms"]);
    std::fs::write(h.join("a.hlog"), "this is not a histogram log\n").unwrap();
    let o = run_within(
        h,
        &["report", s(&sp), "--span", "0s..10s"],
        Duration::from_secs(10),
    );
    refused(&o, &["a.hlog", "not an HdrHistogram interval log"]);
    assert!(!stderr(&o).contains("ParseError"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).is_empty());

    // compare: differing workloads are named; a failed session shows its state.
    let b = real_session(h, "b", &["--bs", "8k"]);
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("state: complete"), "{text}");
    std::fs::write(
        &b,
        text.replace("state: complete", "state: failed").replacen(
            "ended_by: completed",
            "ended_by: 'error: the device went away'",
            1,
        ),
    )
    .unwrap();
    let o = run_within(
        h,
        &["compare", s(&sp), s(&b), "--out", s(&h.join("cmp"))],
        Duration::from_secs(30),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("workloads differ") && err.contains("bs: 4KiB in") && err.contains("8KiB in"),
        "{err}"
    );
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("state"), "{table}");
    assert!(
        table.contains("failed: error: the device went away"),
        "{table}"
    );
    assert!(table.contains("complete"), "{table}");
}
