//! The engine's polled and passthrough I/O on a real (emulated) NVMe controller: boots the
//! QEMU guest once with scripts/qemu-nvme/guest-engine.sh and the kernel command line
//! `nvme.poll_queues=1`, then checks that a `--hipri` run on /dev/nvme0n1 completes with the
//! poll queue's counter moving; that `--target /dev/ng0n1` runs the uring-cmd engine, whose
//! NVMe writes a block read of /dev/nvme0n1 then sees (every sampled sector carries its own
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

/// `hctxN TYPE COMPLETED` lines: the poll queues' counts added up, and the others'.
fn completed(out: &Path, name: &str) -> (u64, u64) {
    let text = section(out, name);
    let mut poll = 0;
    let mut other = 0;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some(n) = f.get(2).and_then(|q| q.parse::<u64>().ok()) else {
            continue;
        };
        if f[1] == "poll" {
            poll += n;
        } else {
            other += n;
        }
    }
    assert!(text.contains(" poll "), "{name}: no poll queue:\n{text}");
    (poll, other)
}

/// The LBAs of the NVMe reads QEMU traced between the marker reads at `from` and `to`.
fn traced_reads(out: &Path, from: u64, to: u64) -> Vec<u64> {
    let trace = std::fs::read_to_string(out.join("nvme-trace.log")).expect("QEMU's trace");
    let lba = |l: &str| {
        l.split("lba 0x")
            .nth(1)
            .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
    };
    let reads: Vec<u64> = trace
        .lines()
        .filter(|l| l.contains("pci_nvme_read "))
        .filter_map(lba)
        .collect();
    let start = reads
        .iter()
        .position(|&l| l == from)
        .expect("first marker traced");
    let end = reads
        .iter()
        .rposition(|&l| l == to)
        .expect("second marker traced");
    reads[start + 1..end].to_vec()
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
    let text = section(out, "poll_run");
    assert_eq!(rc(out, "poll_run"), 0, "{text}");
    let lines = json_lines(out, "poll_run");
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
    let s = summary(&lines, "poll_run");
    let ios = s["ios"].as_u64().expect("ios");
    assert!(ios > 0 && s["errors"] == 0, "{s}");
    assert_eq!(s["engine_options"]["hipri"], true, "{s}");
    // The poll queue completed the run's reads: its counter moved by at least as many.
    let (poll0, _) = completed(out, "poll_before");
    let (poll1, _) = completed(out, "poll_after");
    assert!(
        poll1 - poll0 >= ios,
        "the poll queue completed {} requests for {ios} reads:\n{}\n{}",
        poll1 - poll0,
        section(out, "poll_before"),
        section(out, "poll_after")
    );
    let session = section(out, "poll_session");
    assert!(session.contains("hipri: true"), "{session}");
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
    assert_ne!(
        value(out, "cmd_write_before", "sum"),
        value(out, "cmd_write_after", "sum"),
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
    let before = value(out, "cmd_read_before", "sum");
    assert!(before.is_some());
    assert_eq!(before, value(out, "cmd_read_after", "sum"));
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

#[test]
fn hipri_and_passthrough_on_an_emulated_nvme_controller() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, why);
    }
    let out = boot(
        "scripts/qemu-nvme/guest-engine.sh",
        "qemu-engine",
        &[
            ("KERNEL_APPEND", "nvme.poll_queues=1"),
            ("QEMU_TRACE", "pci_nvme_read pci_nvme_write"),
            ("NVME_SIZE", "128M"),
        ],
    );
    check_hipri(&out);
    check_passthrough_write(&out);
    check_passthrough_read(&out);
    check_no_poll_queues(&out);
}
