//! Every file drivescope writes for itself, against every way a user's file can stand where
//! it writes: a file planted at the name first, a second name (hard link) of a file of the
//! user's, a link to one, a folder swapped for a link mid-run, and a file that reuses the
//! identity of a test file drivescope made. One generated test over all writers (sessions,
//! histogram logs, lock files, snapshots, reports, comparisons, exports, man pages, test
//! files, verify states): the user's bytes are never changed, whatever each command answers.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const USERS: &str = "the user's bytes, not to be touched\n";

/// drivescope in `home` (its HOME, XDG folders and working folder), output piped.
fn command(home: &Path, args: &[String]) -> Command {
    let mut c = common::command(home);
    c.args(args)
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn run(home: &Path, args: &[String]) -> Output {
    command(home, args).output().expect("run drivescope")
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// A short run on `target` (a new 1 MiB test file) saving `session`, and `extra`.
fn short_run(target: &str, session: &str, extra: &str) -> Vec<String> {
    let duration = if extra.contains("--duration") {
        ""
    } else {
        "--duration 0.3s"
    };
    words(&format!(
        "run --target {target} --size 1M --rate-iops 300 --session {session} {duration} {extra}"
    ))
}

/// A writer: what it is, the file of its own it writes (relative to the home folder),
/// what to make first, and the command.
struct Writer {
    what: &'static str,
    out: &'static str,
    setup: fn(&Path),
    args: fn() -> Vec<String>,
}

fn nothing(_: &Path) {}

/// A session to read (`base.yaml`) and the folders the commands write into.
fn a_session(home: &Path) {
    let out = run(home, &short_run("base.bin", "base.yaml", ""));
    assert!(out.status.success(), "{}", common::stderr(&out));
    folders(home);
}

fn folders(home: &Path) {
    for d in ["rep", "cmp", "man", "s-snapshot", "vs"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
}

const WRITERS: &[Writer] = &[
    Writer {
        what: "session",
        out: "s.yaml",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", ""),
    },
    Writer {
        what: "session, --force",
        out: "s.yaml",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", "--force"),
    },
    Writer {
        what: "histogram log",
        out: "s.hlog",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", "--histograms --force"),
    },
    Writer {
        what: "session lock",
        out: ".s.yaml.lock",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", ""),
    },
    Writer {
        what: "snapshot",
        out: "s-snapshot/report.html",
        setup: folders,
        args: || short_run("t.bin", "s.yaml", "--snapshot-every 1s --duration 1.2s"),
    },
    Writer {
        what: "snapshot's session",
        out: "s-snapshot/session.yaml",
        setup: folders,
        args: || short_run("t.bin", "s.yaml", "--snapshot-every 1s --duration 1.2s"),
    },
    Writer {
        what: "report",
        out: "rep/report.html",
        setup: a_session,
        args: || words("report base.yaml --out rep --force"),
    },
    Writer {
        what: "report's steps",
        out: "rep/steps.csv",
        setup: a_session,
        args: || words("report base.yaml --out rep --force"),
    },
    Writer {
        what: "comparison",
        out: "cmp/compare.html",
        setup: a_session,
        args: || words("compare base.yaml base.yaml --out cmp --force"),
    },
    Writer {
        what: "export",
        out: "e.csv",
        setup: a_session,
        args: || words("export base.yaml --format csv --out e.csv"),
    },
    Writer {
        what: "man page",
        out: "man/drivescope-run.1",
        setup: folders,
        args: || words("man --dir man"),
    },
    Writer {
        what: "test file, written",
        out: "t.bin",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", "--rw randwrite"),
    },
    Writer {
        what: "test file, read",
        out: "t.bin",
        setup: nothing,
        args: || short_run("t.bin", "s.yaml", ""),
    },
    Writer {
        what: "verify state",
        out: "vs/map",
        setup: folders,
        args: || {
            short_run(
                "v.bin",
                "s.yaml",
                "--rw randwrite --verify --verify-state vs",
            )
        },
    },
    Writer {
        what: "verify state, reset",
        out: "vs/map",
        setup: folders,
        args: || {
            short_run(
                "v.bin",
                "s.yaml",
                "--rw randwrite --verify --verify-state vs --verify-reset",
            )
        },
    },
];

/// How a user's file stands at a writer's name.
#[derive(Debug, Clone, Copy)]
enum Planted {
    File,
    HardLink,
    SymLink,
}

fn plant(home: &Path, out: &Path, how: Planted) -> PathBuf {
    let theirs = home.join("users-file");
    std::fs::write(&theirs, USERS).unwrap();
    match how {
        Planted::File => std::fs::write(out, USERS).unwrap(),
        Planted::HardLink => std::fs::hard_link(&theirs, out).unwrap(),
        Planted::SymLink => std::os::unix::fs::symlink(&theirs, out).unwrap(),
    }
    theirs
}

#[test]
fn no_writer_changes_a_users_file_planted_at_its_name() {
    let mut checked = 0;
    for w in WRITERS {
        // With nothing planted, the writer writes that name (so the cases below test it).
        let home = common::disk_tempdir();
        (w.setup)(home.path());
        let answer = run(home.path(), &(w.args)());
        assert!(
            answer.status.success(),
            "{}: {}",
            w.what,
            common::stderr(&answer)
        );
        // (A lock file is there only while the run holds it.)
        if !w.out.ends_with(".lock") {
            assert!(
                home.path().join(w.out).is_file(),
                "{}: no {}",
                w.what,
                w.out
            );
        }
        for how in [Planted::File, Planted::HardLink, Planted::SymLink] {
            let home = common::disk_tempdir();
            let h = home.path();
            (w.setup)(h);
            let out = h.join(w.out);
            let theirs = plant(h, &out, how);
            let answer = run(h, &(w.args)());
            let what = format!("{} over a {how:?}", w.what);
            assert_eq!(
                std::fs::read_to_string(&theirs).unwrap(),
                USERS,
                "{what}: the user's file changed ({})",
                common::stderr(&answer)
            );
            let now = out.symlink_metadata().unwrap();
            match how {
                Planted::SymLink => assert!(now.file_type().is_symlink(), "{what}"),
                _ => {
                    assert_eq!(std::fs::read_to_string(&out).unwrap(), USERS, "{what}");
                }
            }
            if matches!(how, Planted::HardLink) {
                assert_eq!(
                    now.ino(),
                    std::fs::metadata(&theirs).unwrap().ino(),
                    "{what}: the second name was replaced"
                );
            }
            // Where the command went on, it said what it did instead (a refusal exits
            // non-zero and names the path).
            if !answer.status.success() {
                assert!(
                    !common::stderr(&answer).is_empty(),
                    "{what}: failed silently"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, WRITERS.len() * 3);
}

/// Waits until `p` exists (the run got that far), failing after a minute.
fn wait_for(p: &Path, child: &mut std::process::Child) {
    let start = Instant::now();
    while !p.exists() {
        if let Ok(Some(st)) = child.try_wait() {
            panic!("ended ({st}) before {} existed", p.display());
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{}", p.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn folders_swapped_for_links_mid_run_send_nothing_into_the_users_folders() {
    let home = common::disk_tempdir();
    let h = home.path();
    std::fs::create_dir(h.join("runs")).unwrap();
    let users = h.join("users-folder");
    std::fs::create_dir(&users).unwrap();
    std::fs::write(users.join("keep.txt"), USERS).unwrap();
    let args = words(
        "run --target t.bin --size 1M --duration 4s --rate-iops 300 \
         --session runs/s.yaml --snapshot-every 1s",
    );
    let mut child = command(h, &args).spawn().unwrap();
    // Once the first snapshot is there, both folders are swapped for links to the
    // user's folder.
    wait_for(&h.join("runs/s-snapshot/report.html"), &mut child);
    std::fs::rename(h.join("runs/s-snapshot"), h.join("snap-moved")).unwrap();
    std::os::unix::fs::symlink(&users, h.join("runs/s-snapshot")).unwrap();
    std::fs::rename(h.join("runs"), h.join("runs-moved")).unwrap();
    std::os::unix::fs::symlink(&users, h.join("runs")).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let names: Vec<String> = std::fs::read_dir(&users)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["keep.txt"], "{}", common::stderr(&out));
    assert_eq!(
        std::fs::read_to_string(users.join("keep.txt")).unwrap(),
        USERS
    );
    // The session was saved whole, in the folder it was made in.
    let l = drivescope::session::load(&h.join("runs-moved/s.yaml")).unwrap();
    assert_eq!(l.session.state, drivescope::session::SessionState::Complete);
}

#[test]
fn a_file_that_reuses_a_test_files_identity_is_the_users() {
    let home = common::disk_tempdir();
    let h = home.path();
    let made = run(h, &short_run("t.bin", "a.yaml", "--rw randwrite"));
    assert!(made.status.success(), "{}", common::stderr(&made));
    let old = std::fs::metadata(h.join("t.bin")).unwrap();
    // The test file goes; a file of the user's takes its name (and, on most
    // filesystems, its inode number), with the old record line of an older release that
    // names its device and inode.
    std::fs::remove_file(h.join("t.bin")).unwrap();
    let mut users = USERS.repeat(1 + (1 << 20) / USERS.len()).into_bytes();
    users.truncate(1 << 20);
    std::fs::write(h.join("t.bin"), &users).unwrap();
    let new = std::fs::metadata(h.join("t.bin")).unwrap();
    let state = h.join("state/drivescope");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("created-files"),
        format!("{} {}\n{} {}\n", old.dev(), old.ino(), new.dev(), new.ino()),
    )
    .unwrap();
    for extra in ["--rw randwrite", "", "--rw randwrite --force"] {
        let out = run(h, &short_run("t.bin", "b.yaml", extra));
        assert_eq!(
            std::fs::read(h.join("t.bin")).unwrap(),
            users,
            "{extra}: {}",
            common::stderr(&out)
        );
        if extra.contains("randwrite") {
            assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
            assert!(common::stderr(&out).contains("--destroy-data"));
        }
        let _ = std::fs::remove_file(h.join("b.yaml"));
    }
}
