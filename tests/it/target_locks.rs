//! One lock per target, across every engine (issue 39, part 3), through the real binary on
//! a real test file: while one run holds its target (the io_uring or sync engine, or an fio
//! job file; reading or writing it), a second run of any of them is refused before any I/O
//! (exit 2, naming the first, no interval, the file's bytes unchanged) unless both only
//! read, which share it. The first runs hold the target without touching it (a preset's
//! idle phase before its I/O, an fio job's `startdelay`), so that any byte changed would be
//! the second's; each test waits for the first's lock to show in `/proc/locks`, a state.
//! A verified run and an fio job file writing one file exclude each other, whichever came
//! first: the verified run is refused, never left to report the job's writes as corrupt
//! blocks (exit 3).

use std::path::{Path, PathBuf};
use std::process::{Child, Output};

use crate::common;

use common::{json_lines, of_type, stderr};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Engine {
    Uring,
    Sync,
    FioJob,
}

/// A run of `engine` that writes the target, or only reads it.
#[derive(Clone, Copy, Debug)]
struct Kind {
    engine: Engine,
    writes: bool,
}

fn all_kinds() -> Vec<Kind> {
    [Engine::Uring, Engine::Sync, Engine::FioJob]
        .into_iter()
        .flat_map(|engine| [false, true].map(|writes| Kind { engine, writes }))
        .collect()
}

fn rw(writes: bool) -> &'static str {
    if writes {
        "randwrite"
    } else {
        "randread"
    }
}

/// The arguments of a run of `k` on `target`: `hold` (the first run) holds the target for
/// minutes before any I/O; else a short run. Its files are written to `dir`.
fn args(k: Kind, target: &Path, dir: &Path, hold: bool) -> Vec<String> {
    let t = s(target).to_string();
    let name = format!("{:?}-{}-{}", k.engine, rw(k.writes), hold);
    let mut a: Vec<String> = match k.engine {
        Engine::Uring | Engine::Sync => {
            let engine = if k.engine == Engine::Uring {
                "io_uring"
            } else {
                "sync"
            };
            let mut a = vec!["run".into(), "--target".into(), t.clone()];
            if hold {
                let preset = common::hold_preset(dir, rw(k.writes));
                a.extend(["--preset-file".into(), s(&preset).into()]);
            } else {
                a.extend(
                    [
                        "--rw",
                        rw(k.writes),
                        "--size",
                        "1M",
                        "--duration",
                        "300ms",
                        "--interval",
                        "100ms",
                    ]
                    .map(String::from),
                );
            }
            a.extend(["--engine".into(), engine.into()]);
            a
        }
        Engine::FioJob => {
            let job = dir.join(format!("{name}.fio"));
            let wait = if hold { "startdelay=10m\n" } else { "" };
            std::fs::write(
                &job,
                format!(
                    "[j]\nfilename={t}\nrw={}\nbs=4k\nsize=1m\ndirect=1\ntime_based=1\n\
                     runtime=300ms\n{wait}",
                    rw(k.writes)
                ),
            )
            .unwrap();
            vec!["run".into(), "--fio-job".into(), s(&job).into()]
        }
    };
    if k.writes {
        a.extend(["--destroy-data".into(), t]);
    }
    a.push("--json".into());
    a
}

/// Ends the first run (as a user's Ctrl-C would) and waits for it.
fn end(mut child: Child) {
    // SAFETY: kill(2) with a pid of our own child, no pointers.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    child.wait().unwrap();
}

/// A second run refused because of `first` (pid): exit 2 naming it, nothing run.
fn assert_refused(out: &Output, first: u32, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains("in use by another run") && err.contains(&format!("PID {first} ")),
        "{what}: {err}"
    );
    assert!(
        of_type(&json_lines(out), "interval").is_empty(),
        "{what}: it ran"
    );
}

#[test]
fn a_second_run_of_any_engine_is_refused_unless_both_only_read() {
    let home = common::disk_tempdir();
    let h = home.path();
    let target = h.join("t.bin");
    // The user's data, 4 MiB (no fill: drivescope did not make it).
    let bytes: Vec<u8> = (0..4u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&target, &bytes).unwrap();
    let mut shared = 0;
    for first in all_kinds() {
        let mut child = common::spawn(h, &strs(&args(first, &target, h, true)));
        common::wait_for_flock(&mut child, &target, true);
        for second in all_kinds() {
            let what = format!("{second:?} beside {first:?}");
            let before = std::fs::read(&target).unwrap();
            let out = common::run(h, &strs(&args(second, &target, h, false)));
            if first.writes || second.writes {
                assert_refused(&out, child.id(), &what);
                assert_eq!(
                    std::fs::read(&target).unwrap(),
                    before,
                    "{what}: the target changed"
                );
            } else {
                let lines = json_lines(&out);
                assert!(out.status.success(), "{what}: {}", stderr(&out));
                assert!(!of_type(&lines, "interval").is_empty(), "{what}: no I/O");
                shared += 1;
            }
            assert!(
                common::flock_holders(&target).contains(&child.id()),
                "{what}: the first lost its lock"
            );
        }
        end(child);
        assert!(
            common::flock_holders(&target).is_empty(),
            "the lock ends with its run"
        );
    }
    assert_eq!(shared, 9, "every pair of readers shared the target");
    // Nothing was written (the runs that write were each refused or held off).
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
}

/// A verified write run (`--verify`) of `secs` seconds on `target`, at a low rate.
fn verified(target: &Path, secs: &str) -> Vec<String> {
    [
        "run",
        "--target",
        s(target),
        "--destroy-data",
        s(target),
        "--verify",
        "--rw",
        "randwrite",
        "--size",
        "4M",
        "--duration",
        secs,
        "--rate-iops",
        "200",
        "--interval",
        "100ms",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

/// An fio job file writing `target` for `runtime`, at a low rate.
fn fio_writer(dir: &Path, target: &Path, runtime: &str) -> PathBuf {
    let job = dir.join(format!("writer-{runtime}.fio"));
    std::fs::write(
        &job,
        format!(
            "[w]\nfilename={}\nrw=randwrite\nbs=4k\nsize=4m\ndirect=1\ntime_based=1\n\
             runtime={runtime}\nrate_iops=200\n",
            target.display()
        ),
    )
    .unwrap();
    job
}

#[test]
fn a_verified_run_and_an_fio_job_writing_its_file_exclude_each_other() {
    let home = common::disk_tempdir();
    let h = home.path();
    let target = h.join("v.bin");
    std::fs::write(&target, vec![0x5au8; 4 << 20]).unwrap();
    // The job file first, writing: the verified run is refused, never run to find its
    // writes (exit 3).
    let job = fio_writer(h, &target, "10m");
    let args = ["run", "--fio-job", s(&job), "--destroy-data", s(&target)];
    let mut child = common::spawn(h, &args);
    common::wait_for_flock(&mut child, &target, true);
    let out = common::run(h, &strs(&verified(&target, "2s")));
    assert_refused(&out, child.id(), "a verified run beside a job file");
    end(child);
    // The verified run first: the job file is refused.
    let v = verified(&target, "10m");
    let mut child = common::spawn(h, &strs(&v));
    common::wait_for_flock(&mut child, &target, true);
    let short = fio_writer(h, &target, "1s");
    let out = common::run(
        h,
        &[
            "run",
            "--fio-job",
            s(&short),
            "--destroy-data",
            s(&target),
            "--json",
        ],
    );
    assert_refused(&out, child.id(), "a job file beside a verified run");
    end(child);
    // Alone, each runs: the verified run finds no corrupt block.
    let out = common::run(h, &strs(&verified(&target, "1s")));
    assert!(out.status.success(), "{}", stderr(&out));
}
