//! Output and stops against the real binary: a closed stdout (a pipe whose reader left, a
//! terminal gone) ends the output and stops the run with its session saved as `stopped`;
//! a hung fio that ignores SIGTERM is killed with its process group after the grace, and
//! none of its processes is left; text output escapes the control characters of labels
//! and paths.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use drivescope::session::{self, SessionState};

use crate::common;

/// A minute-long run on a new test file in `home`, its session at `home/s.yaml`.
fn long_run(home: &Path) -> Vec<String> {
    let target = home.join("t.bin");
    let session = home.join("s.yaml");
    [
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "16MiB",
        "--duration",
        "60s",
        "--interval",
        "200ms",
        "--session",
        session.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// Waits for `child` to end (a minute at most: a run that did not stop), with its stderr.
fn ended(mut child: Child) -> (std::process::ExitStatus, String) {
    let mut stderr = child.stderr.take();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "drivescope went on after its output closed: {}",
                err.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status, err.join().unwrap_or_default())
}

/// The run stopped with its session saved, no panic.
fn stopped_and_saved(home: &Path, status: std::process::ExitStatus, err: &str) {
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(141), "stopped as on SIGPIPE: {err}");
    let l = session::load(&home.join("s.yaml")).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(l.session.state, SessionState::Stopped, "{err}");
    assert_eq!(l.documents, 1, "the final save happened");
}

#[test]
fn run_piped_into_head_1_stops_and_saves_its_session() {
    for json in [false, true] {
        let home = common::disk_tempdir();
        let mut args = long_run(home.path());
        if json {
            args.push("--json".into());
        }
        let mut child = common::command(home.path())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // `head -1`: one line read, then the pipe closed.
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        drop(out);
        let (status, err) = ended(child);
        stopped_and_saved(home.path(), status, &err);
        assert!(
            !err.contains("session saved"),
            "nothing is printed once the output closed: {err}"
        );
    }
}

#[test]
fn a_closed_terminal_stops_the_run_and_saves_its_session() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let home = common::disk_tempdir();
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes the two descriptors into our locals; no name, termios or size.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    for fd in [master, slave] {
        // SAFETY: fcntl on the descriptors openpty just gave us: drivescope must not inherit
        // them (a master it held itself would keep its terminal open).
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both descriptors are ours alone from here on.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let child = common::command(home.path())
        .args(long_run(home.path()))
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut tty = BufReader::new(std::fs::File::from(master));
    let mut first = String::new();
    tty.read_line(&mut first).unwrap();
    assert!(first.contains("t.bin"), "{first}");
    // The terminal goes away: its writes fail with EIO.
    drop(tty);
    let (status, err) = ended(child);
    stopped_and_saved(home.path(), status, &err);
}

#[test]
fn a_hung_fio_is_killed_with_its_group_after_the_grace_and_the_session_is_stopped() {
    let home = common::disk_tempdir();
    let real = common::real_fio();
    let pidfile = home.path().join("fio.pid");
    // The step's fio ignores SIGTERM (as one hung in the kernel would not end) and has a
    // child of its own; the version and the probe are the real fio's.
    let bin = crate::fio_job_file::fio_script(
        home.path(),
        &format!(
            "case \"$1\" in\n  --ioengine=io_uring) trap '' TERM; sleep 600 & cut -d' ' -f5 /proc/self/stat >&3; wait ;;\n  *) exec {real} \"$@\" ;;\nesac"
        ),
    );
    let mut args = long_run(home.path());
    args.extend(["--engine", "fio", "--json"].map(String::from));
    // fio's cage lets it write no file it is not given: the script says its process group
    // (the host's number: fio's own pid is 1 in its PID namespace) on a descriptor it
    // inherits.
    let mut cmd = common::command(home.path());
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .args(&args);
    crate::fio_job_file::log_on_fd_3(&mut cmd, &pidfile);
    let child = common::spawn_keeping_stderr(&mut cmd);
    let pgid = common::pid_written(&pidfile);
    // Its group: the script and its sleep.
    let t1 = Instant::now();
    while common::group_members(pgid).len() < 2 {
        assert!(
            t1.elapsed() < Duration::from_secs(60),
            "no sleep in fio's group"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child, not waited for yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let sent = Instant::now();
    let (status, err) = ended(child);
    let took = sent.elapsed();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        took >= drivescope::children::STOP_GRACE,
        "the grace was given: {took:?}"
    );
    common::group_gone(pgid);
    let l = session::load(&home.path().join("s.yaml")).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(l.session.state, SessionState::Stopped, "{err}");
    eprintln!("a hung fio: drivescope ended {took:?} after SIGINT");
}

#[test]
fn labels_and_paths_with_control_characters_are_escaped_in_text_output() {
    let home = common::disk_tempdir();
    let a = home.path().join("a\nsummary: 999 IOs\x1b[2J.bin");
    let b = home.path().join("b.bin");
    let targets = home.path().join("rack.yaml");
    std::fs::write(
        &targets,
        format!(
            "- {{path: \"{}\", label: \"a\\nsummary: fake\\e[31m\"}}\n- {{path: {}, label: b}}\n",
            a.to_str()
                .unwrap()
                .replace('\n', "\\n")
                .replace('\x1b', "\\e"),
            b.display()
        ),
    )
    .unwrap();
    let out = common::run(
        home.path(),
        &[
            "run",
            "--targets",
            targets.to_str().unwrap(),
            "--size",
            "4MiB",
            "--duration",
            "1s",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for s in [&text, &err] {
        assert!(
            !s.contains('\x1b'),
            "no escape sequence reaches the terminal: {s}"
        );
        assert!(
            !s.lines()
                .any(|l| l.starts_with("summary: fake") || l.starts_with("summary: 999")),
            "no line of a label's or a path's own: {s}"
        );
    }
    assert!(
        text.contains("[a\\nsummary: fake\\e[31m] summary:"),
        "{text}"
    );
}

/// Every command that prints, its stdout a pipe whose reader left before it wrote (`| head`
/// at its most abrupt, so a short output fails too): it ends quietly with 141, as a run
/// does, never with a panic's 101; what it writes to files it still writes.
#[test]
fn every_command_with_a_closed_stdout_ends_quietly_with_141() {
    let home = common::disk_tempdir();
    let h = home.path();
    let p = |name: &str| h.join(name).to_str().unwrap().to_string();
    // Two sessions with histograms, for `report` and `compare`.
    for name in ["a", "b"] {
        let target = h.join(format!("{name}.bin"));
        let session = p(&format!("{name}.yaml"));
        let out = common::run(
            h,
            &common::short_run_args(&target, &["--session", &session, "--histograms"]),
        );
        common::succeeded(&out);
    }
    let presets = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let preset = |f: &str| presets.join(f).to_str().unwrap().to_string();
    let smartctl = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/nvme_micron_7450_MTFDKCC3T2TFS.json")
        .to_str()
        .unwrap()
        .to_string();
    let watched = h.join("watched.bin");
    std::fs::write(&watched, b"x").unwrap();
    let run_target = h.join("run.bin");
    let run = common::short_run_args(&run_target, &[]);
    let cases: Vec<Vec<String>> = [
        run,
        vec!["--help"],
        vec!["presets", "--help"],
        vec!["--version"],
        vec!["presets", "list"],
        vec!["presets", "show", "quick-look"],
        vec!["presets", "show", "snia-iops", "--plan"],
        vec!["presets", "plan", "snia-iops"],
        vec!["presets", "plan", "snia-iops", "--json"],
        vec!["presets", "fio", "quick-look"],
        vec![
            "presets",
            "validate",
            &preset("quick-look.yaml"),
            &preset("seq-128k.yaml"),
        ],
        vec!["devices"],
        vec!["devices", "--json"],
        vec!["smart", "--smartctl-json", &smartctl],
        vec!["smart", "--smartctl-json", &smartctl, "--json"],
        vec!["smart", "--smartctl-json", &smartctl, "--yaml"],
        vec![
            "smart",
            watched.to_str().unwrap(),
            "--watch",
            "3",
            "--period",
            "1s",
        ],
        vec!["report", &p("a.yaml"), "--out", &p("a-report")],
        vec!["report", &p("a.yaml"), "--span", "0s..1h"],
        vec!["compare", &p("a.yaml"), &p("b.yaml"), "--out", &p("ab")],
    ]
    .iter()
    .map(|a| a.iter().map(|s| s.to_string()).collect())
    .collect();
    for args in &cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = common::command(h)
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = common::stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(141), "{args:?}: {err}");
    }
    // The files were written all the same.
    for dir in ["a-report", "ab"] {
        assert!(std::fs::read_dir(h.join(dir)).unwrap().count() > 1, "{dir}");
    }
}
