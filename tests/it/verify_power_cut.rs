//! As root, on a real loop device of 4096-byte logical blocks (its atomic write unit):
//! `run --verify --power-cut`. Twenty cuts at random moments on an honest drive find
//! nothing and count the blocks in flight; blocks put back to an older copy during the cut
//! (a drive dropping writes it had flushed) are reported lost after flush at their
//! offsets, with the generation the old copy holds, and nothing else; a block half put back
//! is reported torn; a drive that comes back at another size stops the loop; a cut command
//! that fails ends the run with its status and says nothing of the drive.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;
use common::{json_lines, run, stderr, LoopDev};

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

/// A 16 MiB loop device of 4 KiB sectors, a home (the sessions) and a verify state's path,
/// both on another drive than the loop device.
fn setup() -> Option<(LoopDev, tempfile::TempDir, PathBuf)> {
    let dev = LoopDev::sectors_4k(16 << 20)?;
    let home = common::disk_tempdir();
    let state = home.path().join("state");
    Some((dev, home, state))
}

/// `run --verify --power-cut CUT` on `dev`'s first `size`, with `extra` arguments, JSON.
fn power_cut(home: &Path, dev: &str, state: &Path, cut: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "-t",
        dev,
        "--destroy-data",
        dev,
        "--verify",
        "--verify-state",
        state.to_str().unwrap(),
        "--json",
        "--power-cut",
        cut,
    ];
    args.extend_from_slice(extra);
    run(home, &args)
}

fn cycles(out: &Output) -> Vec<Value> {
    json_lines(out)
        .into_iter()
        .filter(|v| v["type"] == "power_cut_cycle")
        .collect()
}

fn record(out: &Output) -> Value {
    json_lines(out)
        .into_iter()
        .find(|v| v["type"] == "power_cut")
        .unwrap_or_else(|| panic!("no power_cut record: {}", stderr(out)))
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"))
}

/// The findings of a cycle: (kind, block number).
fn findings(c: &Value) -> Vec<(String, u64)> {
    c["findings"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    let kind = f["kind"].as_str().unwrap().to_string();
                    (kind, n(&f["block"], "offset") / BLOCK)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every block of the first `size` bytes written at least once, the state closed: a first
/// honest cycle of sequential writes over them.
fn fill(home: &Path, dev: &str, state: &Path, size: &str) {
    let out = power_cut(
        home,
        dev,
        state,
        "true",
        &[
            "--verify-reset",
            "--rw",
            "write",
            "--size",
            size,
            // Under 31 writes of a block between two flushes (the generations' horizon).
            "--rate-iops",
            "2000",
            "--duration",
            "60s",
            "--cut-at",
            "after 2 epochs",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = &cycles(&out)[0];
    assert_eq!(findings(c), vec![]);
}

/// The generation in the header of block `b` of the image `img`.
fn generation_in(img: &Path, b: u64) -> u64 {
    let bytes = std::fs::read(img).unwrap();
    u64::from(bytes[(b * BLOCK) as usize + 24])
}

#[test]
fn twenty_cuts_on_an_honest_drive_find_nothing_and_count_what_was_in_flight() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let out = power_cut(
        home.path(),
        d,
        &state,
        "true",
        &[
            "--rw",
            "randwrite",
            "--iodepth",
            "16",
            "--duration",
            "60s",
            "--cycles",
            "20",
            "--cut-at",
            "random 0.2s..0.6s",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cs = cycles(&out);
    assert_eq!(cs.len(), 20);
    let mut in_flight = 0;
    let mut moments = BTreeSet::new();
    for c in &cs {
        assert_eq!(findings(c), vec![], "{c}");
        for k in [
            "lost_after_flush",
            "torn",
            "corrupt",
            "misdirected",
            "unexpected",
        ] {
            assert_eq!(n(c, k), 0, "{k} in {c}");
        }
        // A drive that loses nothing: nothing acknowledged is found older.
        assert_eq!(n(c, "not_durable"), 0, "{c}");
        assert!(n(c, "blocks_checked") > 0, "every cycle verified: {c}");
        // Every block busy at the cut is judged as in flight (old or new, both allowed).
        assert_eq!(n(c, "in_flight"), n(c, "blocks_in_flight"), "{c}");
        in_flight += n(c, "blocks_in_flight");
        let at = c["cut_after_s"].as_f64().unwrap();
        assert!(at >= 0.2, "cut before its window: {c}");
        moments.insert((at * 1000.0) as u64);
    }
    assert!(in_flight > 0, "writes in flight at the cuts are counted");
    assert!(moments.len() > 1, "random moments: {moments:?}");
    let r = record(&out);
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["cycles"].as_array().unwrap().len(), 20);
    assert_eq!(n(&r["totals"], "in_flight"), in_flight);
    let saved = std::fs::read_dir(home.path().join("data/drivescope/sessions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with("-power-cut.yaml"))
        .count();
    assert_eq!(saved, 1, "the power-cut record beside the cycles' sessions");
}

#[test]
fn blocks_dropped_after_a_flush_are_lost_after_flush_at_their_offsets_and_nothing_else() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    fill(home.path(), d, &state, "1MiB");
    let old = home.path().join("old.img");
    dd(&[
        &format!("if={d}"),
        &format!("of={}", old.display()),
        "bs=1M",
        "count=1",
        "iflag=direct",
    ]);
    // The lying drive: at the cut, 16 blocks go back to the copy before this cycle.
    let dropped: Vec<u64> = (0..16).map(|i| 5 + i * 15).collect();
    let cut = home.path().join("cut.sh");
    let body: String = dropped
        .iter()
        .map(|b| {
            format!(
                "dd if={} of={d} bs=4096 skip={b} seek={b} count=1 iflag=direct oflag=direct conv=notrunc status=none || exit 1\n",
                old.display()
            )
        })
        .collect();
    common::script(&cut, &body);
    let out = power_cut(
        home.path(),
        d,
        &state,
        cut.to_str().unwrap(),
        &[
            "--rw",
            "randwrite",
            "--size",
            "1MiB",
            "--rate-iops",
            "500",
            "--duration",
            "60s",
            "--cut-at",
            "after 4 epochs",
        ],
    );
    let c = &cycles(&out)[0];
    let f = findings(c);
    assert!(!f.is_empty(), "a dropped flushed block is found: {c}");
    for (kind, b) in &f {
        assert_eq!(kind, "lost_after_flush", "{c}");
        assert!(dropped.contains(b), "block {b} was not dropped: {c}");
    }
    // What was found is the old copy, read here from the image itself.
    for x in c["findings"].as_array().unwrap() {
        let b = n(&x["block"], "offset") / BLOCK;
        assert_eq!(
            n(&x["block"]["found"], "generation"),
            generation_in(&old, b),
            "{x}"
        );
    }
    for k in ["torn", "corrupt", "misdirected", "unexpected"] {
        assert_eq!(n(c, k), 0, "{k} in {c}");
    }
    assert_eq!(n(c, "lost_after_flush"), f.len() as u64);
    assert_eq!(
        out.status.code(),
        Some(3),
        "findings: exit 3; {}",
        stderr(&out)
    );
    assert_eq!(record(&out)["verdict"], "fail");
}

#[test]
fn a_block_half_put_back_is_torn() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    fill(home.path(), d, &state, "1MiB");
    let old = home.path().join("old.img");
    dd(&[
        &format!("if={d}"),
        &format!("of={}", old.display()),
        "bs=1M",
        "count=1",
        "iflag=direct",
    ]);
    // The second half of 16 blocks from the copy before this cycle: a 4 KiB unit holding
    // two writes (through the page cache: half a logical block, then synced).
    let torn: Vec<u64> = (0..16).map(|i| 7 + i * 15).collect();
    let cut = home.path().join("cut.sh");
    let body: String = torn
        .iter()
        .map(|b| {
            format!(
                "dd if={} of={d} bs=2048 skip={h} seek={h} count=1 conv=notrunc,fsync status=none || exit 1\n",
                old.display(),
                h = b * 2 + 1
            )
        })
        .collect();
    common::script(&cut, &body);
    let out = power_cut(
        home.path(),
        d,
        &state,
        cut.to_str().unwrap(),
        &[
            "--rw",
            "randwrite",
            "--size",
            "1MiB",
            "--rate-iops",
            "500",
            "--duration",
            "60s",
            "--cut-at",
            "after 4 epochs",
        ],
    );
    let c = &cycles(&out)[0];
    let f = findings(c);
    // A block written in this cycle holds two writes; one not written since holds the
    // same write twice (nothing to find).
    assert!(!f.is_empty(), "a torn block is found: {c}");
    for (kind, b) in &f {
        assert_eq!(kind, "torn", "{c}");
        assert!(torn.contains(b), "block {b} was not torn: {c}");
    }
    for x in c["findings"].as_array().unwrap() {
        assert_eq!(
            n(&x["block"], "sector") % BLOCK,
            2048,
            "the first sector of the old half: {x}"
        );
    }
    for k in ["lost_after_flush", "corrupt", "misdirected", "unexpected"] {
        assert_eq!(n(c, k), 0, "{k} in {c}");
    }
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn a_drive_back_at_another_size_stops_the_loop_and_a_failed_cut_ends_the_run() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let backing = dev.backing_file();
    let other = format!("truncate -s 20M {} && losetup -c {d}", backing.display());
    let out = power_cut(
        home.path(),
        d,
        &state,
        &other,
        &[
            "--rw",
            "randwrite",
            "--size",
            "1MiB",
            "--duration",
            "60s",
            "--cycles",
            "5",
            "--cut-at",
            "fixed 0.3s",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("came back as another drive") && err.contains("size 20971520 bytes"),
        "{err}"
    );
    assert!(
        cycles(&out).is_empty(),
        "no cycle verified on another drive"
    );
    let r = record(&out);
    assert_eq!(r["verdict"], "incomplete");
    assert!(r["stopped"].as_str().unwrap().contains("another drive"));

    // A cut command that fails: its status, nothing about the drive.
    let (dev2, home2, state2) = setup().unwrap();
    let d2 = dev2.dev.to_str().unwrap();
    let out = power_cut(
        home2.path(),
        d2,
        &state2,
        "echo no PDU >&2; exit 7",
        &[
            "--rw",
            "randwrite",
            "--duration",
            "60s",
            "--cut-at",
            "fixed 0.2s",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`echo no PDU >&2; exit 7` exited with status 7"),
        "{err}"
    );
    assert!(err.contains("nothing is said about the drive"), "{err}");
    assert!(!err.contains("finding"), "{err}");
    // Nothing was cut: the state was closed cleanly, a later verified run starts at once.
    let out = run(
        home2.path(),
        &[
            "run",
            "-t",
            d2,
            "--destroy-data",
            d2,
            "--verify",
            "--verify-state",
            state2.to_str().unwrap(),
            "--rw",
            "randwrite",
            "--duration",
            "1s",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_verify_state_on_the_drive_cut_is_refused_before_anything_is_written() {
    let home = common::disk_tempdir();
    let target = home.path().join("t.bin");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let state = home.path().join("state");
    let t = target.to_str().unwrap();
    let out = power_cut(
        home.path(),
        t,
        &state,
        "true",
        &["--rw", "randwrite", "--duration", "10s"],
    );
    common::refused(&out, &["the verify state", "the drive whose power is cut"]);
    assert!(!state.exists(), "no state made");
    assert_eq!(std::fs::read(&target).unwrap(), vec![0u8; 1 << 20]);
}

/// The power-cut record a run saved in `home`'s sessions folder.
fn record_file(home: &Path) -> PathBuf {
    std::fs::read_dir(home.join("data/drivescope/sessions"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-power-cut.yaml"))
        .expect("a power-cut record")
}

#[test]
fn the_power_loss_page_reads_in_headless_chromium_and_export_gives_every_cycle() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    let out = power_cut(
        home.path(),
        d,
        &state,
        "true",
        &[
            "--rw",
            "randwrite",
            "--iodepth",
            "8",
            "--duration",
            "60s",
            "--cycles",
            "3",
            "--cut-at",
            "after 1 epochs",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cs = cycles(&out);
    let rec = record_file(home.path());
    // Each cycle names its workload session, a file beside the record, which records the
    // cut: its cycle, epoch and writes in flight, as the cycle says.
    for c in &cs {
        let s = c["session"].as_str().expect("the cycle's session");
        let loaded = drivescope::session::load(&rec.with_file_name(s)).expect("loads");
        let cut: Vec<drivescope::session::PowerCutData> = loaded
            .session
            .events
            .iter()
            .filter(|e| e.kind == drivescope::session::EventKind::PowerCut)
            .filter_map(|e| e.data_as())
            .collect();
        assert_eq!(
            cut,
            vec![drivescope::session::PowerCutData {
                cycle: n(c, "cycle") as u32,
                epoch: n(c, "epoch"),
                blocks_in_flight: n(c, "blocks_in_flight"),
            }],
            "{s}"
        );
    }
    // The dashboard shows the cut in its events when the cycle's session is opened.
    let last = rec.with_file_name(cs[2]["session"].as_str().unwrap());
    let cmd = format!("{} open {}", common::bin().display(), last.display());
    if let Some(t) = crate::dashboard_tmux::Tmux::start_with("open-cut", &cmd, home.path(), 120, 40)
    {
        let said = format!("power cut 3 (epoch {}", n(&cs[2], "epoch"));
        crate::dashboard_tmux::wait_until(&t, "the cut in the events", |s| s.contains(&said));
        t.tmux(&["send-keys", "q"]);
        t.wait_for("EXIT=0");
        crate::dashboard_tmux::assert_cooked(&t.stty());
    }

    // export: one row per cycle, the figures the run printed.
    let out = run(
        home.path(),
        &["export", rec.to_str().unwrap(), "--format", "csv"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let csv = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4, "a header and 3 cycles: {csv}");
    let head: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    for (line, c) in lines[1..].iter().zip(&cs) {
        let cells: Vec<&str> = line.split(',').collect();
        for k in [
            "cycle",
            "epoch",
            "blocks_in_flight",
            "blocks_checked",
            "torn",
        ] {
            assert_eq!(cells[col(k)], n(c, k).to_string(), "{k}: {line} / {c}");
        }
        assert_eq!(cells[col("verdict_so_far")], "pass");
    }
    let out = run(
        home.path(),
        &["export", rec.to_str().unwrap(), "--format", "json"],
    );
    let j: Value = serde_json::from_slice(&out.stdout).expect("export json");
    assert_eq!(j["cycles"].as_array().unwrap().len(), 3);
    assert_eq!(j["verdict"], "pass");

    // report: the page, read by Chromium.
    let out = run(home.path(), &["report", rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let page = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .find(|p| p.ends_with("report.html"))
        .expect("report.html written");
    let Some(dom) = common::chromium::dom(&page) else {
        return;
    };
    let verdict = common::chromium::text_of_id(&dom, "verdict").expect("the verdict");
    assert!(
        verdict.starts_with("PASS: 3 of 3 cycles; 0 lost after flush, 0 torn"),
        "{verdict}"
    );
    let rows = common::chromium::table_rows(&dom, "cycles");
    assert_eq!(rows.len(), 4, "a header row and 3 cycles: {rows:?}");
    let h = &rows[0];
    let at = |name: &str| h.iter().position(|c| c == name).unwrap();
    for (row, c) in rows[1..].iter().zip(&cs) {
        assert_eq!(row[at("cycle")], n(c, "cycle").to_string());
        assert_eq!(row[at("epoch")], n(c, "epoch").to_string());
        assert_eq!(row[at("in flight")], n(c, "blocks_in_flight").to_string());
        assert_eq!(row[at("checked")], n(c, "blocks_checked").to_string());
        assert_eq!(row[at("result")], "pass");
    }
    assert_eq!(
        common::chromium::text_of_id(&dom, "no-findings").as_deref(),
        Some("None.")
    );
}

#[test]
fn a_cut_that_takes_the_machine_down_is_finished_by_verify_after_the_restart() {
    let Some((dev, home, state)) = setup() else {
        return;
    };
    let d = dev.dev.to_str().unwrap();
    fill(home.path(), d, &state, "1MiB");
    // The machine goes down: the cut kills drivescope itself (no cycle recorded, the
    // verify state left as a crash leaves it). A second cycle was asked for.
    let out = power_cut(
        home.path(),
        d,
        &state,
        "kill -KILL $PPID",
        &[
            "--rw",
            "randwrite",
            "--size",
            "1MiB",
            "--rate-iops",
            "500",
            "--duration",
            "60s",
            "--cycles",
            "2",
            "--cut-at",
            "after 2 epochs",
        ],
    );
    assert!(out.status.code().is_none(), "killed: {}", stderr(&out));
    assert!(state.join("power-cut-pending.yaml").is_file());
    // Until the cycle is finished, no new power-cut run starts on that state.
    let again = power_cut(home.path(), d, &state, "true", &["--duration", "5s"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("a cut under way there was never finished"),
        "{}",
        stderr(&again)
    );
    // After the "restart": verify finishes the cycle into the record.
    let out = run(
        home.path(),
        &[
            "verify",
            "--target",
            d,
            "--verify-state",
            state.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = &cycles(&out)[0];
    assert_eq!(c["machine_down"], true, "{c}");
    assert_eq!(n(c, "cycle"), 1);
    assert!(c["blocks_in_flight"].is_null(), "unknown: {c}");
    assert!(n(c, "blocks_checked") >= 256, "every block written: {c}");
    assert!(n(c, "epoch") >= 2, "the journal's last flush: {c}");
    assert_eq!(findings(c), vec![]);
    let r = record(&out);
    assert_eq!(r["verdict"], "incomplete", "1 of 2 cycles: {r}");
    assert!(!state.join("power-cut-pending.yaml").exists());
    // The record on disk says the same: the killed run's own record, no new one (the
    // fill's and the killed run's are the two there are).
    let err = stderr(&out);
    let rec = err
        .lines()
        .find_map(|l| l.strip_prefix("note: power-cut record saved to "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("where the record is: {err}"));
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(text.contains("machine_down: true"), "{text}");
    let records = std::fs::read_dir(rec.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with("-power-cut.yaml"))
        .count();
    assert_eq!(records, 2, "the fill's and the killed run's");
    // The state is settled: a new power-cut run starts on it.
    let out = power_cut(
        home.path(),
        d,
        &state,
        "true",
        &[
            "--rw",
            "randwrite",
            "--size",
            "1MiB",
            "--duration",
            "60s",
            "--cut-at",
            "after 1 epochs",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(findings(&cycles(&out)[0]), vec![]);
}
