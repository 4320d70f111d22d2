//! Remote hosts, over real OpenSSH servers on 127.0.0.1 (started by the test, with keys made
//! for it) and real loop devices: a host's drive counted as its kernel counts it; two hosts
//! in one session, one cut off mid-run (the other completes, the session loads and reports,
//! the lost drive says so without blaming the drive); the write guard deciding on the host;
//! a target name with spaces and shell characters arriving intact; an unreachable host
//! refusing the run unless --keep-going; a host without the agent or with another protocol.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use common::sshd::Lab;
use common::{json_lines, of_type, LoopDev};
use serde_json::Value;

/// drivescope with `args` against the lab's servers, isolated from the user's home.
fn ds(home: &Path, lab: &Lab, args: &[&str]) -> Command {
    let mut c = Command::new(common::bin());
    c.args(&args[..1])
        .arg("--ssh-command")
        .arg(lab.ssh_command())
        .arg("--remote-drivescope")
        .arg(common::bin())
        .args(&args[1..])
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::null());
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_hosts_drive_is_counted_as_its_kernel_counts_it() {
    let Some(lab) = Lab::start(1) else { return };
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("remote.yaml");
    let d = dev.dev.display().to_string();
    let before = dev.stat();
    let out = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--target",
            &d,
            "--destroy-data",
            &d,
            "--rw",
            "randrw",
            "--iodepth",
            "8",
            "--duration",
            "3s",
            "--json",
            "--session",
        ],
    )
    .arg(&session)
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let after = dev.stat();
    let lines = json_lines(&out);
    let s = common::summary(&lines);
    let (r, w) = (
        s["read_ios"].as_u64().unwrap(),
        s["write_ios"].as_u64().unwrap(),
    );
    let (kr, kw) = (after.0 - before.0, after.1 - before.1);
    eprintln!("drivescope over ssh: {r} reads {w} writes; kernel: {kr} reads {kw} writes");
    assert!(r > 1000 && w > 1000, "it did I/O");
    assert!(
        (kr as f64 - r as f64).abs() <= 0.01 * r as f64,
        "reads {r} vs {kr}"
    );
    assert!(
        (kw as f64 - w as f64).abs() <= 0.01 * w as f64,
        "writes {w} vs {kw}"
    );
    let ivs = of_type(&lines, "interval");
    assert_eq!(ivs.len(), 3, "one interval a second: {ivs:?}");
    let sum: u64 = ivs
        .iter()
        .map(|v| v["read"]["ios"].as_u64().unwrap() + v["write"]["ios"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, r + w, "the intervals add up to the summary");

    let loaded = drivescope::session::load(&session).expect("the session loads");
    let sess = &loaded.session;
    assert_eq!(sess.target.host.as_deref(), Some("host0"));
    assert_eq!(sess.target.path, d);
    // The session's latency comes from the histograms that crossed the link.
    let lat = &sess.summary.as_ref().unwrap().lat_us;
    assert_eq!(
        lat.samples,
        r + w,
        "every I/O's latency reached the session: {lat:?}"
    );
    assert!(
        sess.events
            .iter()
            .any(|e| e.message.contains("host host0: drivescope") && e.message.contains("clock")),
        "the handshake's versions and clock are recorded: {:?}",
        sess.events
    );
    // The agent's block stats of its own device: the drive under the target is the loop.
    let ios: Vec<u64> = sess
        .telemetry
        .iter()
        .filter_map(|t| {
            let b = t.read::<serde_yaml::Value>()?.get("block")?.clone();
            Some(b.get("read_ios")?.as_u64()? + b.get("write_ios")?.as_u64()?)
        })
        .collect();
    assert!(
        ios.iter().any(|n| *n > 100),
        "the host's block stats of its device came through the agent: {ios:?}"
    );
    // The agent and its ssh session end with the run.
    lab.wait_disconnected(0);
}

#[test]
fn two_hosts_one_cut_off_mid_run_the_other_completes() {
    let Some(lab) = Lab::start(2) else { return };
    let (Some(a), Some(b)) = (LoopDev::new(64 << 20), LoopDev::new(64 << 20)) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("two.yaml");
    let targets = home.path().join("rack.yaml");
    std::fs::write(
        &targets,
        format!(
            "- {{path: {a}, host: host0, label: a, destroy_data: {a}}}\n\
             - {{path: {b}, host: host1, label: b, destroy_data: {b}}}\n",
            a = a.dev.display(),
            b = b.dev.display()
        ),
    )
    .unwrap();
    let before = a.stat();
    let mut child = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--targets",
            targets.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--iodepth",
            "4",
            "--duration",
            "5s",
            "--json",
            "--session",
        ],
    )
    .arg(&session)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Cut host1 off once drive b has sent an interval (what it sent before is kept), and
    // while drive a still runs (a's 5 s have not begun to end: b's first interval is its
    // first second's).
    let rx = crate::signals::lines_of(&mut child);
    let mut printed = Vec::new();
    loop {
        let l = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("drive b never sent an interval ({e}): {printed:?}"));
        let b_interval = l.contains("\"type\":\"interval\"") && l.contains("\"target\":\"b\"");
        printed.push(l);
        if b_interval {
            break;
        }
    }
    lab.cut(1);
    let out = child.wait_with_output().unwrap();
    printed.extend(rx.iter());
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a lost host fails the run: {err}"
    );
    assert!(err.contains("host lost") && err.contains("host1"), "{err}");
    let lines: Vec<Value> = printed
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sa: Vec<&Value> = of_type(&lines, "summary")
        .into_iter()
        .filter(|v| v["target"] == "a")
        .collect();
    let [sa] = &sa[..] else {
        panic!("drive a's summary: {lines:?}")
    };
    let after = a.stat();
    let w = sa["write_ios"].as_u64().unwrap();
    assert!(
        (after.1 - before.1) as f64 >= w as f64 * 0.99
            && (after.1 - before.1) as f64 <= w as f64 * 1.01,
        "drive a counted as its kernel did: {w} vs {}",
        after.1 - before.1
    );
    assert!(
        sa["runtime_s"].as_f64().unwrap() >= 4.9,
        "a ran its whole 5 s: {sa}"
    );

    let loaded = drivescope::session::load(&session).expect("the session loads");
    let sess = &loaded.session;
    assert_eq!(sess.drive_labels(), ["a", "b"]);
    let drives = &sess.summary.as_ref().unwrap().drives;
    assert_eq!(drives[0].ended_by.to_string(), "completed");
    assert!(
        drives[1].ended_by.to_string().contains("host lost: host1"),
        "b ended as lost: {:?}",
        drives[1].ended_by
    );
    let ended = drivescope::outcome::RunOutcome::parse(&drives[1].ended_by.to_string());
    match ended {
        drivescope::outcome::RunOutcome::Failed { ended_by, .. } => {
            assert!(matches!(
                ended_by,
                drivescope::outcome::EndedBy::HostLost(_)
            ));
            assert!(!ended_by.is_device_failure(), "the drive is not blamed");
        }
        o => panic!("b failed: {o:?}"),
    }
    let views = sess.drive_views();
    let b_ivs = views[1].intervals.len();
    assert!(b_ivs >= 1, "what b sent before the cut is kept");
    let rep = home.path().join("report");
    let out = common::run(
        home.path(),
        &[
            "report",
            session.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_write_guard_decides_on_the_host_that_owns_the_device() {
    let Some(lab) = Lab::start(1) else { return };
    let Some(dev) = LoopDev::new(32 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.display().to_string();
    let sum = dev.sha256();
    let out = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--target",
            &d,
            "--rw",
            "write",
            "--duration",
            "1s",
        ],
    )
    .output()
    .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("host0") && err.contains("--destroy-data"),
        "{err}"
    );
    assert_eq!(dev.sha256(), sum, "not a byte written");
    assert!(
        std::fs::read_dir(home.path().join("data/drivescope/sessions"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "no session for a refused run"
    );
}

#[test]
fn a_target_named_with_spaces_and_shell_characters_arrives_intact() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let name = "a b;touch PWNED;'x\"$(touch PWNED2)";
    let target = dir.path().join(name);
    // The ssh command from the environment, as GIT_SSH_COMMAND is.
    let out = Command::new(common::bin())
        .args([
            "run",
            "--host",
            "host0",
            "--size",
            "4M",
            "--rw",
            "randread",
            "--duration",
            "1s",
        ])
        .arg("--target")
        .arg(&target)
        .arg("--remote-drivescope")
        .arg(common::bin())
        .env("DRIVESCOPE_SSH", lab.ssh_command())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(target.is_file(), "the file has the name as typed");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "and nothing else was made"
    );
    for home in [Path::new("/root"), dir.path()] {
        assert!(!home.join("PWNED").exists() && !home.join("PWNED2").exists());
    }
}

#[test]
fn an_unreachable_host_refuses_the_run_unless_keep_going() {
    let Some(lab) = Lab::start(1) else { return };
    lab.add_dead_host("deadhost");
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (t1, t2) = (dir.path().join("t1"), dir.path().join("t2"));
    let targets = home.path().join("rack.yaml");
    std::fs::write(
        &targets,
        format!(
            "- {{path: {}, host: host0, size: 4MiB}}\n- {{path: {}, host: deadhost, size: 4MiB}}\n",
            t1.display(),
            t2.display()
        ),
    )
    .unwrap();
    let args = [
        "run",
        "--targets",
        targets.to_str().unwrap(),
        "--rw",
        "randread",
        "--duration",
        "1s",
    ];
    let out = ds(home.path(), &lab, &args).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("deadhost") && err.contains("unreachable"),
        "{err}"
    );
    let session = home.path().join("kept.yaml");
    let out = ds(home.path(), &lab, &args)
        .args(["--keep-going", "--session"])
        .arg(&session)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sess = drivescope::session::load(&session).unwrap().session;
    assert!(
        sess.events
            .iter()
            .any(|e| e.message.contains("left out") && e.message.contains("deadhost")),
        "{:?}",
        sess.events
    );
    assert_eq!(sess.target.host.as_deref(), Some("host0"));
}

#[test]
fn a_host_without_the_agent_or_with_another_protocol_is_named() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let run = |program: &str| {
        Command::new(common::bin())
            .args(["run", "--host", "host0", "--size", "4M", "--duration", "1s"])
            .arg("--target")
            .arg(home.path().join("t"))
            .args([
                "--ssh-command",
                &lab.ssh_command(),
                "--remote-drivescope",
                program,
            ])
            .env("HOME", home.path())
            .output()
            .unwrap()
    };
    let out = run("/nonexistent/drivescope");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no drivescope agent there"), "{err}");
    // A drivescope of a later protocol: what such a release answers to the handshake.
    let later = home.path().join("later-drivescope");
    std::fs::write(
        &later,
        "#!/bin/sh\nread line\necho '{\"type\":\"hello\",\"protocol\":99,\"version\":\"9.9.9\",\"mono_ns\":1,\"wall_ns\":1}'\nread line\n",
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&later)
        .status()
        .unwrap();
    let out = run(later.to_str().unwrap());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("9.9.9")
            && err.contains("protocol 99")
            && err.contains(env!("CARGO_PKG_VERSION")),
        "both versions named: {err}"
    );
    assert!(!home.path().join("t").exists(), "nothing was made");
    // A verify state is this host's: verifying a host's target from here is refused.
    let out = Command::new(common::bin())
        .args([
            "run",
            "--host",
            "host0",
            "--size",
            "4M",
            "--duration",
            "1s",
            "--rw",
            "randrw",
        ])
        .arg("--verify")
        .arg("--target")
        .arg(home.path().join("t"))
        .args(["--ssh-command", &lab.ssh_command()])
        .env("HOME", home.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("host0: --verify checks targets on this host only"),
        "{err}"
    );
    assert!(!home.path().join("t").exists(), "nothing was made");
}

/// A run on host `h` through a fake ssh (`--ssh-command`) that never answers the
/// handshake: it writes its pid (its process group's id) to `ssh.pid` and runs `body`.
/// The run and the group, once it is there.
fn run_on_a_silent_host(home: &Path, body: &str) -> (std::process::Child, u32) {
    let ssh = home.join("bin/slow-ssh");
    let pidfile = home.join("ssh.pid");
    common::script(&ssh, &format!("echo $$ > '{}'\n{body}", pidfile.display()));
    let child = common::spawn_keeping_stderr(
        common::command(home)
            .args(["run", "--host", "h", "--size", "16M", "--duration", "30s"])
            .arg("--ssh-command")
            .arg(&ssh)
            .arg("--target")
            .arg(home.join("t.bin")),
    );
    let pgid = common::pid_written(&pidfile);
    (child, pgid)
}

fn sigint(child: &std::process::Child) {
    // SAFETY: kill(2) on our own child, not waited for yet.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
}

#[test]
fn ctrl_c_in_the_handshake_ends_the_run_at_once_and_leaves_no_ssh() {
    let home = tempfile::tempdir().unwrap();
    let (child, pgid) = run_on_a_silent_host(home.path(), "exec sleep 600");
    sigint(&child);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("host h: the run was stopped before the host was ready"),
        "{err}"
    );
    // The handshake waits up to 40 s; a stop ends it at its next check (every 100 ms) and
    // ssh at its SIGTERM, well inside the grace an ssh that ignores it would have.
    assert!(
        took < drivescope::children::STOP_GRACE,
        "stopped in {took:?}"
    );
    common::group_gone(pgid);
    eprintln!("Ctrl-C in the handshake: exit after {took:?}");
}

#[test]
fn a_second_ctrl_c_in_the_handshake_kills_an_ssh_that_ignores_sigterm() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, pgid) = run_on_a_silent_host(home.path(), "trap '' TERM INT\nexec sleep 600");
    sigint(&child);
    // The first stop is under way (ssh told to end, given its grace) ...
    let t = Instant::now();
    while t.elapsed() < drivescope::children::STOP_GRACE / 2 && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "still in ssh's grace");
    // ... and the second ends drivescope at once, ssh's group with it.
    sigint(&child);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    common::group_gone(pgid);
}

#[test]
fn an_agent_line_past_its_bound_is_a_protocol_error_naming_the_host() {
    let home = tempfile::tempdir().unwrap();
    let (child, pgid) = run_on_a_silent_host(
        home.path(),
        "head -c 9000000 /dev/zero | tr '\\0' x\nexec sleep 600",
    );
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("host h: the agent sent a line longer than 8388608 bytes"),
        "{err}"
    );
    common::group_gone(pgid);
}

#[test]
fn a_signal_stops_the_hosts_step_and_the_agent_ends() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let session = home.path().join("stopped.yaml");
    let target = home.path().join("t.bin");
    let mut child = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--size",
            "16M",
            "--duration",
            "30s",
            "--json",
            "--session",
        ],
    )
    .arg(&session)
    .arg("--target")
    .arg(&target)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // The host's step is running once its first interval has come through.
    let rx = common::lines_of(&mut child);
    common::wait_for_line(&rx, "interval", Duration::from_secs(120));
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "stopped within an interval and the link's round trip: {:?}",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let sess = drivescope::session::load(&session).unwrap().session;
    assert_eq!(sess.state, drivescope::session::SessionState::Stopped);
    let s = sess.steps.last().expect("the step was recorded");
    assert_eq!(s.summary.ended_by, drivescope::outcome::EndedBy::Stopped);
    lab.wait_disconnected(0);
}

#[test]
fn the_dashboard_runs_a_preset_on_two_hosts_drives() {
    use crate::dashboard_tmux::{assert_cooked, the_saved_session, wait_until, Tmux};
    let Some(lab) = Lab::start(2) else { return };
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The same file name on both hosts: two drives, told apart by their host.
    let t = dir.path().join("shelf.bin");
    std::fs::write(
        dir.path().join("rack.yaml"),
        format!(
            "- {{path: {t}, host: host0, size: 16MiB}}\n- {{path: {t}2, host: host1, size: 16MiB}}\n",
            t = t.display()
        ),
    )
    .unwrap();
    let cmd = format!(
        "sh -c 'cd {} && exec {} --targets rack.yaml --ssh-command \"{}\" --remote-drivescope {} --preset quick-look --time-scale 0.2'",
        dir.path().display(),
        common::bin().display(),
        lab.ssh_command(),
        common::bin().display(),
    );
    let Some(tm) = Tmux::start_with("hosts2", &cmd, home.path(), 140, 40) else {
        return;
    };
    wait_until(&tm, "the picker over the drives table", |s| {
        s.contains(" Presets ") && s.contains("Drives (2)")
    });
    let (l0, l1) = (
        format!("host0:{}", t.display()),
        format!("host1:{}2", t.display()),
    );
    tm.tmux(&["send-keys", "Enter"]);
    let s = wait_until(&tm, "the run's end on both hosts", |s| {
        s.contains("session saved to")
    });
    assert!(!s.contains("failed"), "{s}");
    tm.tmux(&["send-keys", "q"]);
    tm.wait_for("EXIT=0");
    assert_cooked(&tm.stty());
    let (_, loaded) = the_saved_session(home.path());
    let sess = &loaded.session;
    assert_eq!(sess.drive_labels(), vec![l0, l1]);
    let ends: Vec<String> = sess
        .summary
        .as_ref()
        .map(|x| x.drives.iter().map(|d| d.ended_by.to_string()).collect())
        .unwrap_or_default();
    assert_eq!(ends, vec!["completed", "completed"]);
    for v in sess.drive_views() {
        assert!(v.intervals.len() >= 4, "{} ran its steps", v.target.path);
        assert!(v.target.host.is_some(), "its host is recorded");
    }
}

#[test]
fn a_stalled_link_drops_and_counts_records_and_never_holds_up_the_engine() {
    use drivescope::remote::agent::serve_with;
    use drivescope::remote::proto::{FromAgent, PrepareRequest, ToAgent};
    use drivescope::workload::{
        BlockSizes, EngineKind, Region, RwMode, StepEnd, StepSpec, Workload,
    };
    use std::io::{BufRead, BufReader, Write};
    let dir = common::disk_tempdir();
    let (req_r, mut req_w) = std::io::pipe().unwrap();
    let (out_r, out_w) = std::io::pipe().unwrap();
    // The agent's records go into a real pipe nobody reads for a while (shrunk to one page,
    // as a slow link's buffers fill), then into a queue of 4: what does not fit is dropped
    // and counted.
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on a pipe's open descriptor; F_SETPIPE_SZ takes an int.
        let r = unsafe { libc::fcntl(out_w.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
        assert!(r >= 4096, "the pipe shrinks to a page");
    }
    let agent = std::thread::spawn(move || serve_with(BufReader::new(req_r), out_w, 4));
    let send = |w: &mut std::io::PipeWriter, r: &ToAgent| {
        let mut l = serde_json::to_vec(r).unwrap();
        l.push(b'\n');
        w.write_all(&l).unwrap();
    };
    let path = dir.path().join("t.bin");
    send(
        &mut req_w,
        &ToAgent::Prepare(PrepareRequest {
            path: Some(path.clone()),
            size: Some(16 << 20),
            writes: true,
            random_writes: false,
            destroy_data: None,
            create_missing: true,
            engine: EngineKind::IoUring,
        }),
    );
    let spec = StepSpec {
        engine: EngineKind::IoUring,
        options: Default::default(),
        workload: Workload::new(
            RwMode::RandWrite,
            BlockSizes::single(4096),
            4,
            Region {
                offset: 0,
                len: 16 << 20,
            },
            1,
        ),
        ramp: Duration::ZERO,
        end: StepEnd {
            duration: Some(Duration::from_secs(3)),
            bytes: None,
        },
        interval: Duration::from_millis(100),
        fio_file: None,
        fio_version: None,
    };
    let t0 = Instant::now();
    send(
        &mut req_w,
        &ToAgent::Step {
            spec: Box::new(spec),
        },
    );
    // Nobody answers and nobody reads for 4 s: the link is stalled past the step's end.
    std::thread::sleep(Duration::from_secs(4));
    let mut lines = BufReader::new(out_r).lines();
    let (mut intervals, mut dropped, mut done) = (0u64, 0u64, None);
    for l in lines.by_ref() {
        match serde_json::from_str::<FromAgent>(&l.unwrap()).unwrap() {
            FromAgent::Interval(_) => intervals += 1,
            FromAgent::Dropped { records } => dropped += records,
            FromAgent::StepDone { summary } => {
                done = Some(summary);
                break;
            }
            FromAgent::Failed { message, .. } => panic!("{message}"),
            _ => {}
        }
    }
    let s = done.expect("the step ended");
    eprintln!(
        "{intervals} intervals sent, {dropped} dropped, step of {:.2} s, {} writes, read after {:.1} s",
        s.runtime_s,
        s.write_ios,
        t0.elapsed().as_secs_f64()
    );
    assert!(dropped > 0, "records were dropped, not queued without end");
    assert!(intervals >= 1, "what fitted was sent");
    assert_eq!(
        intervals + dropped,
        30,
        "every interval was sent or counted as dropped"
    );
    assert!(
        (s.runtime_s - 3.0).abs() < 0.2,
        "the step ran its time: {}",
        s.runtime_s
    );
    assert_eq!(s.ended_by, drivescope::outcome::EndedBy::Duration);
    assert!(s.write_ios > 1000);
    send(&mut req_w, &ToAgent::Bye);
    drop(req_w);
    agent.join().unwrap();
}

#[test]
fn two_targets_on_one_hosts_drive_are_read_together_never_written() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let dir = common::disk_tempdir();
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let run = |rw: &str| {
        ds(
            home.path(),
            &lab,
            &[
                "run",
                "--host",
                "host0",
                "--size",
                "8M",
                "--duration",
                "1s",
                "--rw",
                rw,
            ],
        )
        .arg("--target")
        .arg(&a)
        .arg("--target")
        .arg(&b)
        .output()
        .unwrap()
    };
    let out = run("randread");
    assert!(
        out.status.success(),
        "reads together: {}",
        text(&out.stderr)
    );
    let out = run("randwrite");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("of host host0") && err.contains("not written"),
        "{err}"
    );
    // Nop runs no target, here or there.
    let out = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--engine",
            "nop",
            "--duration",
            "1s",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nothing to run there"));
}

#[test]
fn a_preset_runs_step_after_step_on_a_host() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let dir = common::disk_tempdir();
    let session = home.path().join("preset.yaml");
    let out = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--preset",
            "quick-look",
            "--time-scale",
            "0.1",
            "--size",
            "16M",
            "--session",
        ],
    )
    .arg(&session)
    .arg("--target")
    .arg(dir.path().join("t.bin"))
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sess = drivescope::session::load(&session).unwrap().session;
    assert_eq!(sess.steps.len(), 4, "every step ran, one after the other");
    for s in &sess.steps {
        assert_eq!(
            s.summary.ended_by,
            drivescope::outcome::EndedBy::Duration,
            "{}",
            s.label
        );
        assert!(s.summary.ios > 0, "{}", s.label);
    }
}

#[test]
fn a_request_line_past_its_bound_ends_the_agent_with_a_failure_said() {
    use std::io::{Read, Write};
    let home = tempfile::tempdir().unwrap();
    let mut agent = common::command(home.path())
        .arg("agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    // Written from a thread: the agent stops reading at the bound, and the rest may not fit
    // in the pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&vec![b'x'; drivescope::remote::proto::LINE_MAX + 1024]);
        // The input stays open: the agent ends by its own bound, not at end of input.
        stdin
    });
    let mut out = String::new();
    agent
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = agent.wait().unwrap();
    drop(writer.join());
    assert!(status.success(), "{out}");
    assert!(
        out.contains("longer than 8388608 bytes") && out.contains("the agent ends"),
        "{out}"
    );
}

#[test]
fn a_local_and_a_remote_target_on_the_same_file_are_refused_before_either_starts() {
    let Some(lab) = Lab::start(1) else { return };
    let home = common::disk_tempdir();
    let f = home.path().join("one.bin");
    std::fs::write(&f, vec![5u8; 4 << 20]).unwrap();
    let targets = home.path().join("rack.yaml");
    // host0 is this machine (127.0.0.1): the same file by another road.
    std::fs::write(
        &targets,
        format!(
            "- {{path: {f}, label: here}}\n- {{path: {f}, host: host0, label: there}}\n",
            f = f.display()
        ),
    )
    .unwrap();
    let session = home.path().join("s.yaml");
    let reads = |extra: &[&str]| {
        let mut args = vec!["run", "--targets", targets.to_str().unwrap()];
        args.extend_from_slice(&["--rw", "randread", "--duration", "300ms", "--json"]);
        args.extend_from_slice(extra);
        ds(home.path(), &lab, &args).output().unwrap()
    };
    let out = reads(&["--session", session.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("here and there are the same file"), "{err}");
    assert!(!session.exists(), "a refused run made a session");
    assert_eq!(std::fs::read(&f).unwrap(), vec![5u8; 4 << 20]);
    // Two different files through the same host are not refused.
    let g = home.path().join("two.bin");
    std::fs::write(&g, vec![5u8; 4 << 20]).unwrap();
    std::fs::write(
        &targets,
        format!(
            "- {{path: {f}, label: here}}\n- {{path: {g}, host: host0, label: there}}\n",
            f = f.display(),
            g = g.display()
        ),
    )
    .unwrap();
    let out = reads(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// A run on a host and a run here writing one file (host0 is this machine): whichever
/// holds it first, the other is refused before any I/O, naming it. The agent holds the
/// host's lock until it ends.
#[test]
fn a_hosts_run_and_a_run_here_on_one_file_exclude_each_other() {
    let Some(lab) = Lab::start(1) else { return };
    let home = common::disk_tempdir();
    let h = home.path();
    let f = h.join("shared.bin");
    let bytes = vec![7u8; 4 << 20];
    std::fs::write(&f, &bytes).unwrap();
    let fs = f.to_str().unwrap();
    let hold = common::hold_preset(h, "randwrite");
    let hold = hold.to_str().unwrap();
    let write_args = |extra: &[&'static str]| -> Vec<String> {
        let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        a.extend(["--target", fs, "--destroy-data", fs, "--json"].map(String::from));
        a
    };
    let short = ["--rw", "randwrite", "--size", "1M", "--duration", "300ms"];
    let interrupt = |child: &std::process::Child| {
        // SAFETY: kill(2) with a pid of our own child, no pointers.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    };
    // The host's run first: its agent holds the file.
    let mut args = write_args(&["run", "--host", "host0", "--preset-file"]);
    args.insert(4, hold.to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut first = ds(h, &lab, &args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    common::wait_for_flock(&mut first, &f, false);
    let mut here: Vec<&str> = vec!["run"];
    here.extend(short);
    let here_args = write_args(&here);
    let out = common::run(h, &here_args.iter().map(String::as_str).collect::<Vec<_>>());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("in use by another run") && err.contains("agent"),
        "{err}"
    );
    assert!(of_type(&json_lines(&out), "interval").is_empty(), "{err}");
    interrupt(&first);
    first.wait().unwrap();
    lab.wait_disconnected(0);
    // The run here first: the host's run is refused, in the host's words.
    let here_hold = write_args(&["run", "--preset-file"]);
    let mut here_hold: Vec<&str> = here_hold.iter().map(String::as_str).collect();
    here_hold.insert(2, hold);
    let mut first = common::spawn(h, &here_hold);
    common::wait_for_flock(&mut first, &f, true);
    let mut there: Vec<&str> = vec!["run", "--host", "host0"];
    there.extend(short);
    let there_args = write_args(&there);
    let there_args: Vec<&str> = there_args.iter().map(String::as_str).collect();
    let out = ds(h, &lab, &there_args).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("host0") && err.contains(&format!("PID {} ", first.id())),
        "{err}"
    );
    assert!(of_type(&json_lines(&out), "interval").is_empty(), "{err}");
    interrupt(&first);
    first.wait().unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), bytes, "nothing was written");
}

#[test]
fn direct_0_fills_a_hosts_new_test_file_through_the_page_cache() {
    let Some(lab) = Lab::start(1) else { return };
    // ramfs refuses O_DIRECT: only a fill that follows --direct 0 works there.
    let Some(fs) = crate::new_files::Ramfs::mount() else {
        return;
    };
    let home = common::disk_tempdir();
    let t = fs.path().join("far.bin");
    let t = t.to_str().unwrap();
    let args = [
        "run",
        "--host",
        "host0",
        "--target",
        t,
        "--size",
        "1M",
        "--duration",
        "300ms",
    ];
    let out = ds(
        home.path(),
        &lab,
        &[&args[..], &["--direct", "0", "--json"]].concat(),
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert_eq!(of_type(&lines, "start")[0]["page_cache"], true);
    assert!(common::summary(&lines)["read_ios"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn refusals_on_a_host_after_its_test_file_is_made_leave_no_file_behind() {
    let Some(lab) = Lab::start(1) else { return };
    let home = common::disk_tempdir();
    let dir = common::disk_tempdir();
    let on_host = |t: &Path, extra: &[&str]| {
        let mut args = vec!["run", "--host", "host0", "--target", t.to_str().unwrap()];
        args.extend_from_slice(extra);
        ds(home.path(), &lab, &args).output().unwrap()
    };
    // A size smaller than a block: refused when the host checks the step, after the agent
    // made the file.
    let t = dir.path().join("tiny.bin");
    let out = on_host(&t, &["--size", "1k", "--duration", "1s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(!t.exists(), "the refused run left {} behind", t.display());
    // A thermal soak on a host's test file (no temperature sensor under it).
    let t = dir.path().join("soak.bin");
    let soak = [
        "--size",
        "4M",
        "--preset",
        "thermal-soak",
        "--time-scale",
        "0.001",
    ];
    let out = on_host(&t, &soak);
    common::refused(&out, &["temperature"]);
    assert!(!t.exists(), "the refused run left {} behind", t.display());
    // A guard refusal after both files are made: two targets on one host's drive are not
    // written together.
    let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
    let out = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--size",
            "4M",
            "--duration",
            "1s",
            "--rw",
            "randwrite",
            "--target",
            a.to_str().unwrap(),
            "--target",
            b.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    common::refused(&out, &["of host host0", "not written"]);
    assert!(
        !a.exists() && !b.exists(),
        "the refused run left a file behind"
    );
    // A file that was there before a refusal stays, as it was.
    let t = dir.path().join("kept.bin");
    std::fs::write(&t, vec![7u8; 4096]).unwrap();
    let out = on_host(&t, &["--size", "1k", "--duration", "1s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read(&t).unwrap(),
        vec![7u8; 4096],
        "a file that was there changed"
    );
    lab.wait_disconnected(0);
}

#[test]
fn host_install_puts_this_drivescope_on_a_host_and_a_run_then_streams_from_it() {
    use std::os::unix::fs::PermissionsExt;
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let remote_home = tempfile::tempdir().unwrap();
    lab.set_home(remote_home.path());
    let ssh = lab.ssh_command();
    let target = home.path().join("t.bin");
    let run = || {
        Command::new(common::bin())
            .args(["run", "--host", "host0", "--size", "8M", "--duration", "2s"])
            .args(["--rw", "randread", "--json", "--ssh-command", &ssh])
            .arg("--target")
            .arg(&target)
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let install = |extra: &[&str]| {
        Command::new(common::bin())
            .args(["host", "install", "host0", "--ssh-command", &ssh])
            .args(extra)
            .env("HOME", home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // No drivescope on the host (not on its PATH, none in its home): the run says how to
    // put one there.
    let out = run();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no drivescope agent there") && err.contains("drivescope host install host0"),
        "{err}"
    );

    let out = install(&[]);
    let (said, err) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{err}");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        said.contains(&format!(
            "host0: installed drivescope {version} at ~/.local/bin/drivescope"
        )) && said.contains("its agent answers"),
        "what it did, on stdout: {said} / {err}"
    );
    let placed = remote_home.path().join(".local/bin/drivescope");
    let meta = std::fs::metadata(&placed).expect("the binary is in the remote home");
    assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    assert_eq!(
        std::fs::read(&placed).unwrap(),
        std::fs::read(common::bin()).unwrap(),
        "this very binary"
    );
    let left: Vec<_> = std::fs::read_dir(placed.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["drivescope"], "no temporary file is left");
    let mtime = meta.modified().unwrap();

    // Installed again: the same version and protocol answer, nothing is copied.
    let out = install(&[]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        said.contains(&format!("host0: drivescope {version}")) && said.contains("already at"),
        "{said}"
    );
    assert_eq!(
        std::fs::metadata(&placed).unwrap().modified().unwrap(),
        mtime
    );

    // A --host run (no --remote-drivescope) now finds it and streams from it.
    let out = run();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert!(
        of_type(&lines, "interval").len() >= 2,
        "intervals streamed from the host: {lines:?}"
    );
    assert!(common::summary(&lines)["read_ios"].as_u64().unwrap() > 100);

    // A file of that name that is not a drivescope is never replaced.
    let other = remote_home.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let stranger = other.join("drivescope");
    common::script(&stranger, "echo not this one");
    let before = std::fs::read(&stranger).unwrap();
    let out = install(&["--dir", other.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a drivescope") && err.contains("not replaced"),
        "{err}"
    );
    assert_eq!(std::fs::read(&stranger).unwrap(), before);
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);

    // A drivescope of another version is replaced, and said to be.
    let older = remote_home.path().join("older");
    common::script(&older.join("drivescope"), "echo drivescope 0.0.1");
    let out = install(&["--dir", older.to_str().unwrap()]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        said.contains("replaced drivescope 0.0.1")
            && said.contains("need --remote-drivescope")
            && said.contains(&older.join("drivescope").display().to_string()),
        "{said}"
    );
    assert_eq!(
        std::fs::metadata(older.join("drivescope")).unwrap().len(),
        std::fs::metadata(common::bin()).unwrap().len()
    );
}

/// The whole answer of one plain HTTP GET of `/metrics` at `port` on 127.0.0.1.
fn scrape(port: u16) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("the agent listens");
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    s
}

/// The value of the first series of `text` whose line starts with `series` and holds
/// `label`.
fn series(text: &str, series: &str, label: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l.contains(label))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn the_agent_serves_its_drives_metrics_on_its_host() {
    let Some(lab) = Lab::start(1) else { return };
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("t.bin");
    let port = common::sshd::free_port();
    let mut child = ds(
        home.path(),
        &lab,
        &[
            "run",
            "--host",
            "host0",
            "--size",
            "16M",
            "--rw",
            "randread",
            "--duration",
            "60s",
            "--json",
            "--host-metrics",
            &format!("127.0.0.1:{port}"),
        ],
    )
    .arg("--target")
    .arg(&target)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let rx = common::lines_of(&mut child);
    let first = common::wait_for_line(&rx, "interval", Duration::from_secs(120));
    let second = common::wait_for_line(&rx, "interval", Duration::from_secs(30));
    let seen = first["read"]["ios"].as_u64().unwrap() + second["read"]["ios"].as_u64().unwrap();
    // The agent on the host (sshd's child, not this run) answers the scrape.
    let got = scrape(port);
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(got.contains("application/openmetrics-text"), "{got}");
    let path = target.display().to_string();
    assert!(
        got.contains(&format!("label=\"{path}\"")),
        "the drive is the host's target: {got}"
    );
    let ios = series(&got, "drivescope_ios_total{", "direction=\"read\"")
        .unwrap_or_else(|| panic!("read I/Os: {got}"));
    assert!(
        ios >= seen as f64,
        "the agent's count ({ios}) holds at least the two intervals printed here ({seen})"
    );
    assert_eq!(
        series(&got, "drivescope_run_state{", "state=\"running\""),
        Some(1.0),
        "{got}"
    );
    assert!(got.contains("drivescope_latency_seconds_bucket{"), "{got}");
    assert!(got.trim_end().ends_with("# EOF"), "{got}");
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    // The agent ended with its run, and its endpoint with it.
    let t = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the agent's endpoint is still open 30 s after its run ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
