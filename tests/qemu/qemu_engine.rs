//! The engine's polled and passthrough I/O on a real (emulated) NVMe controller: boots the
//! QEMU guest once with scripts/qemu-nvme/guest-engine.sh and the kernel command line
//! `nvme.poll_queues=1`, then checks that a `--hipri` run on /dev/nvme0n1 completes with the
//! kernel polling for it (the NVMe I/O queues' interrupt counters stay put where the same
//! reads without it move them, one per few reads; Linux 6.1 keeps no per-queue completion
//! counters in debugfs), and passthrough reads with `--hipri` too; that `--target
//! /dev/ng0n1` runs the uring-cmd engine, whose NVMe writes a block read of /dev/nvme0n1 then sees (every sampled sector carries its own
//! offset) and whose NVMe reads hit the region's LBAs in QEMU's trace, leaving its data (by
//! sha256 of block reads) as it was; and that without poll queues `--hipri` says why and
//! exits 2. Skipped, with the reason, where QEMU cannot run (a failure under CI:
//! tests/common/skip.rs).

use crate::common;

use std::path::Path;

use common::qemu::{boot, json_lines, rc, section, skip_reason, value};
use serde_json::Value;

fn summary<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    lines
        .iter()
        .rfind(|v| v["type"] == "summary")
        .unwrap_or_else(|| panic!("{name}: no summary"))
}

/// The interrupts the NVMe I/O queues (nvme0q1 and up; q0 is the admin queue) raised, from
/// a section of `nvme0qN=COUNT` lines.
fn io_irqs(out: &Path, name: &str) -> u64 {
    let text = section(out, name);
    let n: Vec<u64> = text
        .lines()
        .filter(|l| l.starts_with("nvme0q") && !l.starts_with("nvme0q0="))
        .filter_map(|l| l.split_once('=')?.1.trim().parse().ok())
        .collect();
    assert!(
        !n.is_empty(),
        "{name}: no NVMe I/O queue interrupts:\n{text}"
    );
    n.iter().sum()
}

/// The first of a polled run's tries (sections `RUN_a`, `RUN_b`, `RUN_c`) that ran its
/// time out, and its I/Os. QEMU 7.2's controller under Linux 6.1 now and then stops
/// completing a poll queue's commands (after none to some fifty thousand of them; a plain
/// liburing loop with IORING_SETUP_IOPOLL, scripts/minloop.c, hangs the same way, so it is
/// not the engine), which the run reports as the device stalling; the guest then resets the
/// controller and tries again. Every try that stalled is printed.
fn polled_try(out: &Path, run: &str) -> (&'static str, u64) {
    let mut tried = Vec::new();
    for t in ["a", "b", "c"] {
        let name = format!("{run}_{t}");
        if !out.join(format!("{name}.txt")).exists() {
            break;
        }
        let lines = json_lines(out, &name);
        let s = summary(&lines, &name);
        let ios = s["ios"].as_u64().expect("ios");
        let ended = s["ended_by"].as_str().unwrap_or("").to_string();
        assert_eq!(s["errors"], 0, "{s}");
        if rc(out, &name) == 0 && ended == "duration" && ios > 0 {
            return (t, ios);
        }
        assert!(ended.starts_with("device stalled"), "{name}: {s}");
        eprintln!("{name}: QEMU's poll queue stopped completing after {ios} I/Os: {ended}");
        tried.push(format!("{name}: {ios} I/Os, {ended}"));
    }
    panic!("no polled run of {run} ran its time out: {tried:#?}");
}

/// The I/Os of a run section's summary, which must have ended well.
fn ios_of(out: &Path, name: &str) -> u64 {
    let text = section(out, name);
    assert_eq!(rc(out, name), 0, "{text}");
    let lines = json_lines(out, name);
    let s = summary(&lines, name);
    assert_eq!(s["errors"], 0, "{s}");
    assert_eq!(s["ended_by"], "duration", "{s}");
    s["ios"].as_u64().expect("ios")
}

/// The LBAs of the NVMe reads QEMU traced between the marker reads (one sector, at LBA
/// `from` and `to`; the engine's reads are 4 KiB).
fn traced_reads(out: &Path, from: u64, to: u64) -> Vec<u64> {
    let trace = std::fs::read_to_string(out.join("nvme-trace.log")).expect("QEMU's trace");
    let lba = |l: &str| {
        l.split("lba 0x")
            .nth(1)
            .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
    };
    let reads: Vec<(bool, u64)> = trace
        .lines()
        .filter(|l| l.contains("pci_nvme_read "))
        .filter_map(|l| Some((l.contains(" nlb 1 "), lba(l)?)))
        .collect();
    let start = reads
        .iter()
        .position(|&r| r == (true, from))
        .expect("first marker traced");
    let end = reads
        .iter()
        .rposition(|&r| r == (true, to))
        .expect("second marker traced");
    reads[start + 1..end].iter().map(|r| r.1).collect()
}

fn check_hipri(out: &Path) {
    let setup = section(out, "poll_setup");
    assert!(setup.contains("nvme.poll_queues=1"), "{setup}");
    assert_eq!(
        value(out, "poll_setup", "poll_queues").as_deref(),
        Some("1"),
        "{setup}"
    );
    assert_eq!(
        value(out, "poll_setup", "io_poll").as_deref(),
        Some("1"),
        "{setup}"
    );
    let queues = section(out, "poll_queues");
    assert!(
        queues.contains("=poll"),
        "blk-mq made no poll queue:\n{queues}"
    );
    let (t, polled) = polled_try(out, "poll_run");
    let run = format!("poll_run_{t}");
    let lines = json_lines(out, &run);
    let start = lines
        .iter()
        .find(|v| v["type"] == "start")
        .expect("start line");
    assert_eq!(start["engine_options"]["hipri"], true, "{start}");
    assert!(
        start["description"]
            .as_str()
            .unwrap_or("")
            .contains("(hipri)"),
        "{start}"
    );
    assert_eq!(summary(&lines, &run)["engine_options"]["hipri"], true);
    // The kernel polled for the completions: the NVMe I/O queues' interrupts, which the
    // same reads without --hipri move (QEMU raises one per few completions), stayed put.
    let plain = ios_of(out, "plain_run");
    let plain_irqs = io_irqs(out, "plain_after") - io_irqs(out, "plain_before");
    let polled_irqs =
        io_irqs(out, &format!("poll_after_{t}")) - io_irqs(out, &format!("poll_before_{t}"));
    eprintln!(
        "QEMU NVMe: {plain} reads raised {plain_irqs} interrupts; {polled} polled reads {polled_irqs}"
    );
    assert!(
        plain_irqs * 20 >= plain,
        "{plain} reads, {plain_irqs} interrupts"
    );
    assert!(
        polled_irqs * 100 <= polled,
        "{polled} polled reads raised {polled_irqs} interrupts"
    );
    let session = section(out, &format!("poll_session_{t}"));
    assert!(session.contains("hipri: true"), "{session}");
    // Polled passthrough reads too.
    let (t, cmd) = polled_try(out, "cmd_hipri_run");
    let cmd_irqs = io_irqs(out, &format!("cmd_hipri_after_{t}"))
        - io_irqs(out, &format!("cmd_hipri_before_{t}"));
    assert!(
        cmd_irqs * 100 <= cmd,
        "{cmd} polled NVMe commands raised {cmd_irqs} interrupts"
    );
}

fn check_passthrough_write(out: &Path) {
    let text = section(out, "cmd_write_run");
    assert_eq!(rc(out, "cmd_write_run"), 0, "{text}");
    let lines = json_lines(out, "cmd_write_run");
    let s = summary(&lines, "cmd_write_run");
    assert_eq!(s["engine"], "uring-cmd", "chosen for /dev/ng0n1: {s}");
    assert!(
        s["write_ios"].as_u64().unwrap_or(0) >= 128,
        "a pass over 16 MiB: {s}"
    );
    assert_eq!(s["errors"], 0, "{s}");
    let start = lines
        .iter()
        .find(|v| v["type"] == "start")
        .expect("start line");
    assert_eq!(start["target_kind"], "nvme_generic", "{start}");
    // The drive behind the generic device is watched as the namespace's.
    assert!(!text.contains("no drive telemetry"), "{text}");
    assert_ne!(
        data_sum(out, "cmd_write_before"),
        data_sum(out, "cmd_write_after"),
        "the block device shows the passthrough writes"
    );
    // Every sampled sector, read through the block device, starts with drivescope's stamp
    // and its own byte offset: the NVMe writes landed where the engine meant them to.
    let sectors = section(out, "cmd_write_sectors");
    let mut seen = 0;
    for l in sectors.lines().filter(|l| l.starts_with("sector=")) {
        let field = |k: &str| -> u64 {
            l.split_whitespace()
                .find_map(|f| f.strip_prefix(k))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{k} in {l}"))
        };
        let sector = field("sector=");
        assert_eq!(field("offset="), sector * 512, "{l}");
        assert_ne!(field("stamp="), 0, "{l}");
        seen += 1;
    }
    assert_eq!(seen, 10, "{sectors}");
    let session = section(out, "cmd_write_session");
    assert!(session.contains("engine: uring-cmd"), "{session}");
    assert!(session.contains("kind: nvme_generic"), "{session}");
}

fn check_passthrough_read(out: &Path) {
    let text = section(out, "cmd_read_run");
    assert_eq!(rc(out, "cmd_read_run"), 0, "{text}");
    let lines = json_lines(out, "cmd_read_run");
    let s = summary(&lines, "cmd_read_run");
    assert_eq!(s["engine"], "uring-cmd", "{s}");
    assert_eq!(s["errors"], 0, "{s}");
    let reads = s["read_ios"].as_u64().expect("read_ios");
    // The NVMe reads QEMU served between the markers: one per I/O the run counted (and the
    // few still in flight when its last interval closed), all inside the region.
    let lbas = traced_reads(out, 200_000, 200_001);
    let (lo, hi) = ((32u64 << 20) / 512, (48u64 << 20) / 512);
    assert!(
        lbas.iter().all(|l| (lo..hi).contains(l)),
        "reads outside {lo}..{hi}: {:?}",
        lbas.iter()
            .filter(|l| !(lo..hi).contains(*l))
            .take(5)
            .collect::<Vec<_>>()
    );
    assert!(
        lbas.len() as u64 >= reads && lbas.len() as u64 <= reads + 16,
        "{} NVMe reads traced for {reads} counted",
        lbas.len()
    );
    // A passthrough read leaves the data as a block read sees it.
    assert_eq!(
        data_sum(out, "cmd_read_before"),
        data_sum(out, "cmd_read_after")
    );
}

/// The sha256 a guest section printed of what dd read: there, and not the hash of no
/// data (a dd that failed would leave both sides of a comparison equal and empty).
fn data_sum(out: &Path, name: &str) -> String {
    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    let sum = value(out, name, "sum").unwrap_or_else(|| panic!("{name}: no sum"));
    assert_ne!(sum, EMPTY, "{name}: dd read nothing");
    sum
}

fn check_no_poll_queues(out: &Path) {
    assert_eq!(
        value(out, "nopoll_setup", "poll_queues").as_deref(),
        Some("0")
    );
    let text = section(out, "nopoll_run");
    assert_eq!(rc(out, "nopoll_run"), 2, "{text}");
    assert!(text.contains("--hipri on /dev/nvme0n1"), "{text}");
    assert!(text.contains("no poll queues"), "{text}");
    assert!(text.contains("nvme.poll_queues"), "{text}");
    // Refused before anything started: no session.
    assert!(section(out, "nopoll_session").contains("No such file"));
}

/// The `nvme_readback` example, built beside this test by `cargo test`.
fn readback_example() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let p = exe.parent()?.parent()?.join("examples/nvme_readback");
    p.exists().then_some(p)
}

/// A region read through passthrough and through the block device hashes the same.
fn check_readback(out: &Path, name: &str) {
    let text = section(out, name);
    assert_eq!(rc(out, name), 0, "{text}");
    let p = value(out, name, "passthrough");
    assert!(p.is_some(), "{text}");
    let (pass, block) = text
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("{name}: {text}"));
    assert_eq!(
        pass.strip_prefix("passthrough="),
        block.strip_prefix("block="),
        "{name}: {text}"
    );
}

#[test]
fn hipri_and_passthrough_on_an_emulated_nvme_controller() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, "{why}");
    }
    let readback = readback_example();
    let bins = readback
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let out = boot(
        "scripts/qemu-nvme/guest-engine.sh",
        "qemu-engine",
        &[
            ("KERNEL_APPEND", "nvme.poll_queues=1"),
            ("QEMU_TRACE", "pci_nvme_read pci_nvme_write"),
            ("NVME_SIZE", "128M"),
            ("GUEST_BINS", &bins),
            // With one vCPU the emulated poll queue often stops completing (see
            // guest-engine.sh); with two it has not.
            ("QEMU_SMP", "2"),
        ],
    );
    check_hipri(&out);
    check_passthrough_write(&out);
    check_passthrough_read(&out);
    match readback {
        Some(_) => {
            // What the passthrough writes left, and the random data the passthrough
            // reads read: the same through NVMe read commands as through the block device.
            check_readback(&out, "cmd_write_readback");
            check_readback(&out, "cmd_read_readback");
        }
        // `cargo test` builds examples; `cargo test --test qemu` does not.
        None => common::skip::note(
            common::skip::Skip::ExampleNotBuilt,
            "examples/nvme_readback not built (run plain `cargo test`): the read-back \
             comparison was left out",
        ),
    }
    check_no_poll_queues(&out);
}
