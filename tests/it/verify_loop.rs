//! As root, on a real loop device: data verification finds real faults made behind
//! drivescope's back (sectors overwritten with random bytes, older copies of blocks put
//! back over newer ones, two blocks swapped), exactly those, by kind, at their offsets;
//! and a verified run killed with SIGKILL leaves a state that `verify` checks without a
//! finding on a healthy device.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common;

use common::{json_lines, of_type, run, succeeded, summary, LoopDev};

const BLOCK: u64 = 4096;

fn dd(args: &[&str]) {
    let out = Command::new("dd")
        .args(args)
        .arg("status=none")
        .output()
        .expect("run dd");
    assert!(
        out.status.success(),
        "dd {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A 16 MiB loop device, a home for drivescope, and a verify state's path in it.
fn setup() -> Option<(LoopDev, tempfile::TempDir, std::path::PathBuf)> {
    let dev = LoopDev::new(16 << 20)?;
    let home = tempfile::tempdir().unwrap();
    let state = home.path().join("state");
    Some((dev, home, state))
}

/// Block `n` of `dev` read past the page cache.
fn read_block(dev: &str, n: u64, to: &Path) {
    dd(&[
        &format!("if={dev}"),
        &format!("of={}", to.display()),
        "bs=4096",
        &format!("skip={n}"),
        "count=1",
        "iflag=direct",
    ]);
}

/// `from` (one block) written over block `n` of `dev`, past the page cache.
fn write_block(dev: &str, n: u64, from: &Path) {
    dd(&[
        &format!("if={}", from.display()),
        &format!("of={dev}"),
        "bs=4096",
        &format!("seek={n}"),
        "count=1",
        "oflag=direct",
        "conv=notrunc",
    ]);
}

/// The generation map's byte of each block (bits 0..6 the generation).
fn map(state: &Path) -> Vec<u8> {
    std::fs::read(state.join("map")).expect("the verify state's map")
}

fn verified_write(home: &Path, dev: &str, state: &Path, extra: &[&str]) {
    let st = state.to_str().unwrap();
    let mut args = vec![
        "run",
        "--target",
        dev,
        "--destroy-data",
        dev,
        "--rw",
        "write",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--duration",
        "1s",
        "--verify",
        "--verify-state",
        st,
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = run(home, &args);
    let lines = succeeded(&out);
    let v = &summary(&lines)["verify"];
    assert!(v["blocks_written"].as_u64().unwrap() > 0, "{v}");
    assert!(of_type(&lines, "verify_finding").is_empty());
}

#[test]
fn verify_reports_exactly_the_faults_made_behind_its_back() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    // Pass 1: sequential 4k writes from the start, every block of the first MiB at least.
    verified_write(home.path(), d, &state, &["--verify-reset"]);
    let first = map(&state);
    let lost: Vec<u64> = vec![10, 11, 40];
    for &b in &lost {
        assert_ne!(first[b as usize] & 0x3f, 0, "block {b} written by pass 1");
        read_block(d, b, &home.path().join(format!("old{b}")));
    }
    // Pass 2: the same blocks again, a newer generation.
    verified_write(home.path(), d, &state, &[]);
    let second = map(&state);
    for &b in &lost {
        assert_ne!(
            second[b as usize] & 0x3f,
            first[b as usize] & 0x3f,
            "block {b} rewritten by pass 2"
        );
        // A lost write: the older copy back over the newer one.
        write_block(d, b, &home.path().join(format!("old{b}")));
    }
    // Corrupt sectors: random bytes over one sector of each of these blocks.
    let corrupt: Vec<(u64, u64)> = vec![(100, 0), (130, 3), (200, 7)];
    for &(b, s) in &corrupt {
        dd(&[
            "if=/dev/urandom",
            &format!("of={d}"),
            "bs=512",
            &format!("seek={}", b * 8 + s),
            "count=1",
            "oflag=direct",
            "conv=notrunc",
        ]);
    }
    // Misdirected: two blocks swapped.
    let (x, y) = (150u64, 170u64);
    read_block(d, x, &home.path().join("x"));
    read_block(d, y, &home.path().join("y"));
    write_block(d, x, &home.path().join("y"));
    write_block(d, y, &home.path().join("x"));

    let session = home.path().join("verify.yaml");
    let out = run(
        home.path(),
        &[
            "verify",
            "--target",
            d,
            "--verify-state",
            state.to_str().unwrap(),
            "--json",
            "--session",
            session.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "findings exit with 3: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out);
    let findings = of_type(&lines, "verify_finding");
    let found: BTreeSet<(String, u64, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["offset"].as_u64().unwrap(),
                f["sector"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut want = BTreeSet::new();
    for &b in &lost {
        want.insert(("lost".to_string(), b * BLOCK, b * BLOCK));
    }
    for &(b, s) in &corrupt {
        want.insert(("corrupt".to_string(), b * BLOCK, b * BLOCK + s * 512));
    }
    for b in [x, y] {
        want.insert(("misdirected".to_string(), b * BLOCK, b * BLOCK));
    }
    assert_eq!(found, want, "exactly the faults made, and nothing else");
    assert_eq!(findings.len(), want.len());
    for f in &findings {
        assert_eq!(f["length"], BLOCK);
        assert!(f["expected"]["generation"].as_u64().is_some(), "{f}");
        assert!(!f["excerpt"].as_str().unwrap().is_empty());
        match f["kind"].as_str().unwrap() {
            "lost" => assert!(
                f["found"]["generation"] != f["expected"]["generation"]
                    && f["found"]["lba"] == f["offset"],
                "{f}"
            ),
            "misdirected" => assert_ne!(f["found"]["lba"], f["offset"], "{f}"),
            _ => {}
        }
    }
    let v = &summary(&lines)["verify"];
    assert_eq!(v["blocks_checked"], (16u64 << 20) / BLOCK);
    assert_eq!(
        (
            v["lost"].as_u64(),
            v["corrupt"].as_u64(),
            v["misdirected"].as_u64()
        ),
        (Some(3), Some(3), Some(2))
    );
    assert_eq!(
        (v["torn"].as_u64(), v["unexpected"].as_u64()),
        (Some(0), Some(0))
    );

    // The session keeps them as events; the report has a section of them.
    let saved: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&session).unwrap()).unwrap();
    let events = saved["events"].as_sequence().unwrap();
    let kept: BTreeSet<(String, u64)> = events
        .iter()
        .filter(|e| e["kind"] == "verify_finding")
        .map(|e| {
            let d = &e["data"];
            (
                d["kind"].as_str().unwrap().to_string(),
                d["offset"].as_u64().unwrap(),
            )
        })
        .collect();
    let want_kept: BTreeSet<(String, u64)> = want.iter().map(|(k, o, _)| (k.clone(), *o)).collect();
    assert_eq!(
        kept, want_kept,
        "the session keeps each finding as an event"
    );
    let report = home.path().join("report");
    let out = run(
        home.path(),
        &[
            "report",
            session.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
    );
    succeeded(&out);
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains("<h2>Data verification</h2>"));
    for (kind, offset, _) in &want {
        assert!(
            html.contains(&format!("<td>{kind}</td><td class=\"n\">{offset}</td>")),
            "{kind} at {offset} in the report"
        );
    }
}

#[test]
fn a_verified_run_killed_mid_write_leaves_no_finding_on_a_healthy_device() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let st = state.to_str().unwrap();
    let mut child = Command::new(common::bin())
        .args([
            "run",
            "--target",
            d,
            "--destroy-data",
            d,
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--iodepth",
            "32",
            "--jobs",
            "2",
            "--duration",
            "60s",
            "--verify",
            "--verify-state",
            st,
            "--verify-reset",
        ])
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start drivescope");
    // Long enough for several flush epochs, then SIGKILL with writes in flight.
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let journal = std::fs::read_to_string(state.join("journal")).unwrap();
    assert!(journal.contains("flushed"), "{journal}");
    assert!(!journal.lines().last().unwrap().starts_with("closed"));
    assert!(
        map(&state).iter().any(|&b| b & 0x3f != 0),
        "the flushed map records writes"
    );

    // A run that writes is refused until the state is checked.
    let refused = run(
        home.path(),
        &[
            "run",
            "--target",
            d,
            "--destroy-data",
            d,
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--verify",
            "--verify-state",
            st,
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("did not end cleanly"));

    let check = |home: &Path| {
        let out = run(
            home,
            &["verify", "--target", d, "--verify-state", st, "--json"],
        );
        let lines = json_lines(&out);
        (out.status.code(), lines)
    };
    let (code, lines) = check(home.path());
    assert!(
        of_type(&lines, "verify_finding").is_empty(),
        "{:?}",
        of_type(&lines, "verify_finding")
    );
    assert_eq!(code, Some(0));
    let v = &summary(&lines)["verify"];
    assert_eq!(v["blocks_checked"], (16u64 << 20) / BLOCK);
    // The pass settled the state: closed cleanly, and exact again.
    let journal = std::fs::read_to_string(state.join("journal")).unwrap();
    assert!(
        journal.lines().last().unwrap().starts_with("closed"),
        "{journal}"
    );
    let (code, lines) = check(home.path());
    assert_eq!(code, Some(0));
    assert!(of_type(&lines, "verify_finding").is_empty());
}

const VERIFY_PRESET: &str = "id: v\nname: V\ndescription: d\nverify: readback\nphases:\n  - name: w\n    workload: {rw: randwrite, bs: 4k, iodepth: 8}\n    end: {duration: 1s}\n";

#[test]
fn a_preset_turns_verification_on_and_a_bad_mode_is_placed() {
    let home = tempfile::tempdir().unwrap();
    let preset = home.path().join("p.yaml");
    std::fs::write(&preset, VERIFY_PRESET).unwrap();
    let target = home.path().join("t.bin");
    let (p, t) = (preset.to_str().unwrap(), target.to_str().unwrap());
    let out = run(
        home.path(),
        &[
            "run",
            "--preset-file",
            p,
            "--target",
            t,
            "--size",
            "8MiB",
            "--json",
        ],
    );
    let lines = succeeded(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 2, "the workload, then the read-back pass");
    assert_eq!(steps[1]["name"], "verify: read back");
    let v = &steps[1]["verify"];
    assert!(v["blocks_written"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["blocks_checked"], (8u64 << 20) / BLOCK, "{v}");
    assert_eq!(v["lost"], 0);

    std::fs::write(&preset, VERIFY_PRESET.replace("readback", "sometimes")).unwrap();
    let out = run(
        home.path(),
        &["run", "--preset-file", p, "--target", t, "--json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("p.yaml:4:9"), "{err}");
    assert!(err.contains("verify"), "{err}");
}

#[test]
fn a_mixed_run_of_two_jobs_on_a_small_region_checks_every_read_and_finds_nothing() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let st = state.to_str().unwrap();
    // 256 blocks, two jobs of 16 I/Os each: reads race writes of the same blocks all the time.
    let lines = succeeded(&run(
        home.path(),
        &[
            "run",
            "--target",
            d,
            "--destroy-data",
            d,
            "--rw",
            "randrw",
            "--bs",
            "4k",
            "--bssplit",
            "4k/50:16k/50",
            "--iodepth",
            "16",
            "--jobs",
            "2",
            "--size",
            "1MiB",
            "--duration",
            "2s",
            "--verify",
            "--verify-reset",
            "--verify-state",
            st,
            "--json",
        ],
    ));
    assert!(
        of_type(&lines, "verify_finding").is_empty(),
        "{:?}",
        of_type(&lines, "verify_finding")
    );
    let s = summary(&lines);
    let v = &s["verify"];
    let blocks =
        |ios: &str, bytes: &str| (s[ios].as_u64().unwrap(), s[bytes].as_u64().unwrap() / BLOCK);
    let (_, read_blocks) = blocks("read_ios", "read_bytes");
    let (_, write_blocks) = blocks("write_ios", "write_bytes");
    assert!(read_blocks > 1000 && write_blocks > 1000, "{s}");
    assert_eq!(
        v["blocks_checked"], read_blocks,
        "every block read was checked: {v}"
    );
    assert_eq!(v["blocks_written"], write_blocks, "{v}");
    let lines = succeeded(&run(
        home.path(),
        &[
            "verify",
            "--target",
            d,
            "--size",
            "1MiB",
            "--verify-state",
            st,
            "--json",
        ],
    ));
    assert!(of_type(&lines, "verify_finding").is_empty());
    assert_eq!(summary(&lines)["verify"]["blocks_checked"], 256);
}

#[test]
fn verification_is_refused_where_it_cannot_be_done() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("t.bin");
    let t = target.to_str().unwrap();
    let refused = |args: &[&str], why: &str| {
        let out = run(home.path(), args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
    };
    let base = [
        "run",
        "--target",
        t,
        "--size",
        "4MiB",
        "--rw",
        "randrw",
        "--duration",
        "1s",
    ];
    refused(
        &[&base[..], &["--verify", "--engine", "sync"]].concat(),
        "--verify runs on the io_uring engine, not sync",
    );
    refused(
        &[&base[..], &["--verify=sometimes"]].concat(),
        "not a verify mode (reads, readback)",
    );
    // No state for this target yet: nothing to check against.
    let state = home.path().join("none");
    refused(
        &[
            "verify",
            "--target",
            t,
            "--size",
            "4MiB",
            "--verify-state",
            state.to_str().unwrap(),
        ],
        "no verify state there",
    );
    assert!(!state.exists());
    // A state made with 8k blocks: a 4k run on it is refused.
    let st = home.path().join("st");
    let s = st.to_str().unwrap();
    succeeded(&run(
        home.path(),
        &[
            &base[..],
            &["--bs", "8k", "--verify", "--verify-state", s, "--json"],
        ]
        .concat(),
    ));
    refused(
        &[&base[..], &["--bs", "4k", "--verify", "--verify-state", s]].concat(),
        "uses 8192-byte blocks",
    );
}

/// `drivescope` with `args` in `home`, its exit code and stderr.
fn ds(home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = run(home, args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_verify_state_never_replaces_files_it_did_not_write() {
    let home = common::disk_tempdir();
    let t = home.path().join("t.bin");
    let t = t.to_str().unwrap();
    // A folder of the user's with a file named as a state's: refused, left as it was.
    let user = home.path().join("mine");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("map"), b"my map").unwrap();
    let st = user.to_str().unwrap();
    let args = [
        "run",
        "--target",
        t,
        "--size",
        "4M",
        "--rw",
        "randwrite",
        "--duration",
        "1s",
    ];
    for reset in [false, true] {
        let mut a = args.to_vec();
        a.extend(["--verify", "--verify-state", st]);
        if reset {
            a.push("--verify-reset");
        }
        let (code, err) = ds(home.path(), &a);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("only in a new or empty folder"), "{err}");
        assert_eq!(
            std::fs::read(user.join("map")).unwrap(),
            b"my map",
            "reset: {reset}"
        );
    }
    // A state's file that is a link to a file elsewhere is not written through.
    let victim = home.path().join("victim.txt");
    std::fs::write(&victim, b"keep me").unwrap();
    let linked = home.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&victim, linked.join("map")).unwrap();
    let mut a = args.to_vec();
    a.extend([
        "--verify",
        "--verify-state",
        linked.to_str().unwrap(),
        "--verify-reset",
    ]);
    let (code, err) = ds(home.path(), &a);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
}

#[test]
fn two_targets_never_share_a_state_and_partial_checks_are_whole_blocks() {
    let home = common::disk_tempdir();
    let dir = home.path().join("x");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    // Names that read alike once made file-safe.
    let (ab, a_b) = (dir.join("a-b.img"), dir.join("a/b.img"));
    for t in [&ab, &a_b] {
        let out = run(
            home.path(),
            &[
                "run",
                "--target",
                t.to_str().unwrap(),
                "--size",
                "4M",
                "--rw",
                "randread",
                "--duration",
                "200ms",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(
        home.path(),
        &[
            "run",
            "--target",
            ab.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--verify",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The other file has no state: said so, not checked against the first one's.
    let (code, err) = ds(home.path(), &["verify", "--target", a_b.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no verify state there"), "{err}");
    // A check from within a block is refused, not checked against the wrong blocks.
    let (code, err) = ds(
        home.path(),
        &[
            "verify",
            "--target",
            ab.to_str().unwrap(),
            "--offset",
            "512",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("multiples of it"), "{err}");
    let (code, err) = ds(home.path(), &["verify", "--target", ab.to_str().unwrap()]);
    assert_eq!(code, Some(0), "the whole check is clean: {err}");
}

#[test]
fn findings_on_one_of_several_drives_exit_3_and_the_report_adds_the_drives_up() {
    let home = common::disk_tempdir();
    let (a, b) = (home.path().join("a.img"), home.path().join("b.img"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for t in [a, b] {
        let out = run(
            home.path(),
            &[
                "run",
                "--target",
                t,
                "--size",
                "4M",
                "--rw",
                "write",
                "--bs",
                "64k",
                "--duration",
                "5s",
                "--verify=readback",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // One sector of a's first block overwritten behind drivescope's back.
    dd(&[
        "if=/dev/urandom",
        &format!("of={a}"),
        "bs=512",
        "count=1",
        "seek=3",
        "conv=notrunc",
    ]);
    let session = home.path().join("two.yaml");
    let out = run(
        home.path(),
        &[
            "run",
            "-t",
            a,
            "-t",
            b,
            "--rw",
            "read",
            "--bs",
            "64k",
            "--duration",
            "2s",
            "--verify",
            "--session",
            session.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "a finding on one drive: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sess = drivescope::session::load(&session).unwrap().session;
    let (totals, findings) = drivescope::report::verify::of(&sess).expect("verified");
    assert!(totals.corrupt >= 1, "{totals:?}");
    assert!(findings.iter().all(|f| f.offset == 0), "{findings:?}");
    assert!(
        totals.blocks_checked > 2 * 64,
        "both drives' checks: {totals:?}"
    );
}
