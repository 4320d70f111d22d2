//! Test files drivescope makes, and what it says of them: `--direct 0` honoured by the fill
//! (on ramfs, which refuses O_DIRECT), results through the page cache said in the text, the
//! JSON, the session and the report; a path that does not exist never becomes a test file
//! without a size (headless or dashboard, and never a folder); a refused run leaves no file
//! it created behind, and never removes one that was there.

use std::path::Path;
use std::process::Command;

use crate::common::{self, json_lines, of_type, run};

/// A ramfs mounted on a temp dir (no O_DIRECT there); unmounted on drop.
pub(crate) struct Ramfs {
    dir: tempfile::TempDir,
}

impl Ramfs {
    pub(crate) fn mount() -> Option<Ramfs> {
        if !common::is_root() {
            common::skip::note(common::skip::Skip::NotRoot, "mounting a ramfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "ramfs", "none"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::skip::note(common::skip::Skip::Tool, "mount -t ramfs failed");
            return None;
        }
        Some(Ramfs { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Ramfs {
    fn drop(&mut self) {
        // A process still leaving (an fio cage's namespace) may hold it: detached then.
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// drivescope `run` on `t` (a new file of 1 MiB, 200 ms, text output) with `extra`.
fn run_on(home: &Path, t: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--target",
        s(t),
        "--size",
        "1M",
        "--duration",
        "200ms",
    ];
    args.extend_from_slice(extra);
    run(home, &args)
}

#[test]
fn direct_0_fills_and_runs_on_ramfs_and_says_the_page_cache_everywhere() {
    let Some(fs) = Ramfs::mount() else { return };
    let home = common::disk_tempdir();
    let t = fs.path().join("t.bin");
    let session = home.path().join("s.yaml");
    let out = run_on(
        home.path(),
        &t,
        &["--direct", "0", "--json", "--session", s(&session)],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let lines = json_lines(&out);
    let start = of_type(&lines, "start");
    assert_eq!(start[0]["page_cache"], true, "{start:?}");
    assert!(
        of_type(&lines, "note")
            .iter()
            .any(|n| n["message"].as_str().unwrap_or("").contains("page cache")),
        "{lines:?}"
    );
    assert!(common::summary(&lines)["read_ios"].as_u64().unwrap_or(0) > 0);
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.contains("page_cache: true"), "{text}");
    let ses = drivescope::session::load(&session).unwrap().session;
    assert!(ses.target.page_cache);
    assert!(
        ses.events
            .iter()
            .any(|e| e.kind == drivescope::session::EventKind::Fill),
        "no fill event"
    );
    // The report says so.
    let report = home.path().join("report");
    let r = run(home.path(), &["report", s(&session), "-o", s(&report)]);
    assert!(r.status.success(), "{}", common::stderr(&r));
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(
        html.contains("through the page cache"),
        "no page cache in the report"
    );
    // The same run in text mode says it too.
    let out = run_on(home.path(), &fs.path().join("t2.bin"), &["--direct", "0"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stderr(&out).contains("through the page cache"));
}

#[test]
fn a_direct_run_says_nothing_of_the_page_cache_and_o_direct_on_ramfs_is_refused() {
    let home = common::disk_tempdir();
    let session = home.path().join("s.yaml");
    let out = run_on(
        home.path(),
        &home.path().join("t.bin"),
        &["--json", "--session", s(&session)],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(of_type(&lines, "start")[0]["page_cache"], false);
    // An older session (none says page_cache when it went through O_DIRECT) still loads.
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(!text.contains("page_cache"), "{text}");
    let ses = drivescope::session::load(&session).unwrap().session;
    assert!(!ses.target.page_cache);
    let Some(fs) = Ramfs::mount() else { return };
    // With O_DIRECT (the default) the fill cannot work there: refused, and the file is gone.
    let t = fs.path().join("t.bin");
    let out = run_on(home.path(), &t, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(!t.exists(), "a refused run left {} behind", t.display());
}

#[test]
fn a_missing_path_without_size_is_refused_and_no_folder_is_made() {
    let home = common::disk_tempdir();
    let typo = home.path().join("typo").join("nvme0n1");
    // The dashboard refuses before it sets up the terminal.
    let out = run(home.path(), &["--target", s(&typo)]);
    common::refused(&out, &["does not exist", "--size"]);
    // With a size, a missing folder is never made (headless or dashboard).
    let out = run(home.path(), &["--target", s(&typo), "--size", "1M"]);
    assert_ne!(out.status.code(), Some(0));
    let out = run_on(home.path(), &typo, &[]);
    common::refused(&out, &["does not exist", "makes no folders"]);
    assert!(!typo.parent().unwrap().exists(), "a folder was made");
    // Headless without a size: the same rule.
    let out = run(home.path(), &["run", "--target", s(&typo)]);
    common::refused(&out, &["does not exist", "--size"]);
}

#[test]
fn refusals_after_the_test_file_is_made_leave_no_file_behind() {
    let home = common::disk_tempdir();
    // A size smaller than a block: refused when the step is checked, after the file is made.
    let t = home.path().join("tiny.bin");
    let out = run(home.path(), &["run", "--target", s(&t), "--size", "1k"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(!t.exists(), "the refused run left {} behind", t.display());
    // A thermal soak on a test file (no temperature sensor under it).
    let t = home.path().join("soak.bin");
    let soak = [
        "--size",
        "4M",
        "--preset",
        "thermal-soak",
        "--time-scale",
        "0.001",
    ];
    let out = run(
        home.path(),
        &[&["run", "--target", s(&t)][..], &soak].concat(),
    );
    common::refused(&out, &["temperature"]);
    assert!(!t.exists(), "the refused run left {} behind", t.display());
    // A file that was there before a refusal stays, as it was.
    let t = home.path().join("kept.bin");
    std::fs::write(&t, vec![7u8; 4096]).unwrap();
    let out = run(home.path(), &["run", "--target", s(&t), "--size", "1k"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert_eq!(
        std::fs::read(&t).unwrap(),
        vec![7u8; 4096],
        "a file that was there changed"
    );
}
