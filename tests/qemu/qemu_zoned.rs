//! A zoned NVMe namespace (ZNS, 16 zones of 4 MiB) in the QEMU guest
//! (scripts/qemu-nvme/guest-zoned.sh, NVME_ZONED=1): detected (`devices`), refused for
//! random writes, a start inside a zone and a write ending by time, each saying why; written
//! zone by zone (the zones reset first) with the kernel's zone report (`blkzone report`)
//! agreeing, as fio's `zonemode=zbd` writes it on the same namespace; and written by NVMe
//! Zone Append through its generic device (/dev/ngXnY) at iodepth 8, each append placed
//! inside its zone, the write pointers where the appended bytes put them, QEMU's trace
//! naming each append, and zone append refused where it cannot be. Skipped, with the
//! reason, where QEMU cannot run (a failure under CI: tests/common/skip.rs).

use crate::common;

use common::qemu::{boot, json_lines, rc, section, skip_reason};
use serde_json::Value;

/// Sectors of a zone (4 MiB).
const ZONE: u64 = 8192;

/// Each zone's write pointer past its start, in sectors, from `blkzone report`.
fn write_pointers(out: &std::path::Path, name: &str) -> Vec<u64> {
    assert_eq!(rc(out, name), 0, "{}", section(out, name));
    let hex = |l: &str, key: &str| {
        let v = l.split(key).nth(1).expect(key).trim_start();
        let v = v.split([',', ' ']).next().expect(key);
        u64::from_str_radix(v.trim_start_matches("0x"), 16).expect(key)
    };
    let wps: Vec<u64> = section(out, name)
        .lines()
        .filter(|l| l.contains("wptr"))
        .map(|l| {
            assert_eq!(hex(l, "len "), ZONE, "{l}");
            hex(l, "wptr ")
        })
        .collect();
    assert_eq!(wps.len(), 16, "{}", section(out, name));
    wps
}

/// The zones of `blkzone report` by condition (its `zcond:N`), counted as drivescope's
/// zone states: empty (1), open (2, 3), closed (4), full (14), other.
fn conditions(out: &std::path::Path, name: &str) -> Value {
    let mut n = [0u64; 5];
    for l in section(out, name).lines().filter(|l| l.contains("zcond:")) {
        let v = l.split("zcond:").nth(1).expect("zcond").trim_start();
        let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
        let i = match digits.parse::<u8>().expect("a condition") {
            1 => 0,
            2 | 3 => 1,
            4 => 2,
            14 => 3,
            _ => 4,
        };
        n[i] += 1;
    }
    serde_json::json!({"empty": n[0], "open": n[1], "closed": n[2], "full": n[3], "other": n[4]})
}

/// Section `name` was refused before any I/O (exit 2), saying `why`.
fn refused(out: &std::path::Path, name: &str, why: &str) {
    let said = section(out, name);
    assert_eq!(rc(out, name), 2, "{name}: {said}");
    assert!(said.contains(why), "{name}: {said}");
}

fn full_then_empty(full: usize) -> Vec<u64> {
    (0..16).map(|i| if i < full { ZONE } else { 0 }).collect()
}

fn step(out: &std::path::Path, name: &str, index: u64) -> Value {
    assert_eq!(rc(out, name), 0, "{}", section(out, name));
    json_lines(out, name)
        .into_iter()
        .find(|l| l["type"] == "step" && l["index"] == index)
        .unwrap_or_else(|| panic!("{name}: no step {index}: {}", section(out, name)))
}

fn notes(out: &std::path::Path, name: &str) -> Vec<String> {
    json_lines(out, name)
        .into_iter()
        .filter(|l| l["kind"] == "note")
        .filter_map(|l| l["text"].as_str().map(str::to_string))
        .collect()
}

fn which(tool: &str) -> String {
    let o = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .expect("sh");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

#[test]
fn a_zoned_namespace_is_detected_refused_at_random_and_written_zone_by_zone() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, "{why}");
    }
    let (fio, blkzone) = (which("fio"), which("blkzone"));
    if fio.is_empty() || blkzone.is_empty() {
        skip!(Qemu, "fio or blkzone (util-linux) is not installed");
    }
    let bins = format!("{fio} {blkzone}");
    let out = boot(
        "scripts/qemu-nvme/guest-zoned.sh",
        "qemu-zoned",
        &[
            ("NVME_ZONED", "1"),
            ("GUEST_BINS", &bins),
            ("QEMU_TRACE", "pci_nvme_write pci_nvme_rw_complete_cb"),
        ],
    );
    let sysfs = section(&out, "zoned_sysfs");
    assert!(sysfs.contains("zoned=host-managed"), "{sysfs}");
    assert!(sysfs.contains("nr_zones=16"), "{sysfs}");

    // Detected: as sysfs says, in the JSON and in the table.
    let dev = common::qemu::value(&out, "zoned_sysfs", "dev").expect("dev=");
    let name = dev.trim_start_matches("/dev/");
    let listed: Value = serde_json::from_str(&section(&out, "zoned_devices")).expect("JSON");
    let row = listed
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {listed}"));
    assert_eq!(
        row["zones"],
        serde_json::json!({"model": "host-managed", "zone_bytes": 4 << 20, "count": 16,
            "max_open": 4, "max_active": 6}),
    );
    let table = section(&out, "zoned_devices_text");
    assert!(
        table.contains("zoned: host-managed, 16 zones of 4 MiB, open at most 4, active at most 6"),
        "{table}"
    );

    // Refused before any I/O, saying why.
    for (name, why) in [
        ("zoned_random", "writes at random"),
        (
            "zoned_offset",
            "the region starts at 6MiB, inside the zone at 4MiB",
        ),
        (
            "zoned_wrap",
            "end the step by data of at most the region (64MiB)",
        ),
    ] {
        refused(&out, name, why);
    }

    // fio (zonemode=zbd) filled zones 0-3; drivescope's 10 MiB write resets zones 0-2 and
    // writes them in order: 2 zones full, the third half, zone 3 as fio left it.
    assert_eq!(write_pointers(&out, "zoned_before"), full_then_empty(4));
    let mut partial = full_then_empty(4);
    partial[2] = ZONE / 2;
    assert_eq!(write_pointers(&out, "zoned_partial_report"), partial);
    // The telemetry poller (the dashboard's drive line) counts the zones as the kernel's
    // report has them: 3 full, the half-written one open or closed, 12 empty.
    let said = section(&out, "zoned_states");
    assert_eq!(rc(&out, "zoned_states"), 0, "{said}");
    let sample: Value = said
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no sample: {said}"));
    let kernel = conditions(&out, "zoned_partial_report");
    assert_eq!(sample["zones"], kernel, "{said}");
    assert_eq!(kernel["full"], 3, "{kernel}");
    assert_eq!(kernel["empty"], 12, "{kernel}");
    assert_eq!(
        step(&out, "zoned_partial", 0)["summary"]["write_bytes"],
        10 << 20
    );
    assert!(
        notes(&out, "zoned_partial")
            .iter()
            .any(|n| n.starts_with("zone report: 3 zones written in order")),
        "{}",
        section(&out, "zoned_partial")
    );
    // Queued (iodepth 8): mq-deadline's zone write locking keeps them in order.
    assert!(sysfs.contains("scheduler=[mq-deadline]"), "{sysfs}");
    assert_eq!(
        write_pointers(&out, "zoned_deep_report"),
        full_then_empty(4)
    );

    // The preset: the whole namespace, zone by zone, as the kernel counts it.
    assert_eq!(
        write_pointers(&out, "zoned_preset_report"),
        full_then_empty(16)
    );
    let write = step(&out, "zoned_preset", 0);
    assert_eq!(write["summary"]["write_bytes"], 64 << 20);
    assert_eq!(write["summary"]["errors"], 0);
    assert!(
        notes(&out, "zoned_preset")
            .iter()
            .any(|n| n.starts_with("zone report: 16 zones written in order")),
        "{}",
        section(&out, "zoned_preset")
    );
    let sectors_written = |name: &str| -> u64 {
        let stat = common::qemu::value(&out, name, "stat").expect("stat=");
        stat.split_whitespace()
            .nth(6)
            .expect("field 7")
            .parse()
            .expect("number")
    };
    assert_eq!(
        sectors_written("zoned_stat_after") - sectors_written("zoned_stat_before"),
        (64 << 20) / 512,
        "the kernel's block stats count the preset's writes"
    );

    // fio writes the same namespace the same way, with the same zone report.
    for name in ["zoned_fio", "zoned_fio_uring"] {
        assert_eq!(rc(&out, name), 0, "{}", section(&out, name));
        let fio: Value = serde_json::from_str(&section(&out, name)).expect("fio JSON");
        let w = &fio["jobs"][0]["write"];
        assert_eq!(w["io_bytes"], 64 << 20, "{name}");
        assert_eq!(fio["jobs"][0]["error"], 0, "{name}");
        assert_eq!(
            write_pointers(&out, &format!("{name}_report")),
            full_then_empty(16)
        );
    }
    // Side by side, alternating rounds: each writes all 64 MiB without an error. Their
    // throughput is printed, not compared: under TCG a 64 MiB write takes well under a
    // second and swings with the host's load from round to round.
    for r in ["a", "b", "c"] {
        let ds = step(&out, &format!("cmp_drivescope_{r}"), 0);
        assert_eq!(ds["summary"]["write_bytes"], 64 << 20);
        assert_eq!(ds["summary"]["errors"], 0);
        let name = format!("cmp_fio_{r}");
        assert_eq!(rc(&out, &name), 0, "{}", section(&out, &name));
        let fio: Value = serde_json::from_str(&section(&out, &name)).expect("fio JSON");
        let w = &fio["jobs"][0]["write"];
        assert_eq!(w["io_bytes"], 64 << 20, "{name}");
        let mib = |v: &Value| v.as_f64().unwrap_or(0.0) / 1048576.0;
        eprintln!(
            "round {r}: drivescope {:.1} MiB/s {:.0} IOPS mean {:.0} us; fio {:.1} MiB/s \
             {:.0} IOPS mean {:.0} us (zonemode=zbd, io_uring, iodepth 1, TCG guest)",
            mib(&ds["summary"]["write_bw_bytes"]),
            ds["summary"]["write_iops"].as_f64().unwrap_or(0.0),
            ds["summary"]["lat_us"]["mean"].as_f64().unwrap_or(0.0),
            mib(&w["bw_bytes"]),
            w["iops"].as_f64().unwrap_or(0.0),
            w["lat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1000.0,
        );
    }
    // Zone append through the generic device (uring-cmd, NVMe Zone Append).
    let ng = common::qemu::value(&out, "append_ng", "ng").expect("ng=");
    assert_eq!(ng, format!("/dev/ng{}", name.trim_start_matches("nvme")));
    let said = section(&out, "append_ng");
    assert!(
        said.lines().any(|l| l.starts_with('c') && l.ends_with(&ng)),
        "a character device: {said}"
    );
    for (section_name, why) in [
        ("append_refused_block", "it needs the uring-cmd engine"),
        // The write guard refuses random writes on a zoned device before the step's checks.
        ("append_refused_random", "writes at random"),
        ("append_refused_read", "it needs rw write, not read"),
        ("append_refused_sync", "not the sync engine"),
        (
            "append_refused_conventional",
            "is not a host-managed zoned device",
        ),
        (
            "append_refused_queued",
            "NVMe passthrough bypasses the kernel's zone write ordering",
        ),
    ] {
        refused(&out, section_name, why);
    }
    // fio dirtied zones 0-1; the append step reset zones 0-3 and appended 14 MiB there at
    // iodepth 8: zones 0-2 full, zone 3 half, the rest empty, as the step counted.
    assert_eq!(
        rc(&out, "append_dirty"),
        0,
        "{}",
        section(&out, "append_dirty")
    );
    let appended = step(&out, "append", 0);
    let summary = &appended["summary"];
    assert_eq!(summary["write_bytes"], 14 << 20, "{summary}");
    assert_eq!(summary["write_ios"], 112, "{summary}");
    assert_eq!(summary["errors"], 0, "{summary}");
    let mut wps = full_then_empty(3);
    wps[3] = ZONE / 2;
    let report = write_pointers(&out, "append_report");
    assert_eq!(report, wps);
    let sectors: u64 = report.iter().sum();
    assert_eq!(
        sectors * 512,
        summary["write_bytes"].as_u64().expect("bytes"),
        "the write pointers add up to the bytes appended"
    );
    assert_eq!(
        sectors * 512 / (128 << 10),
        summary["write_ios"].as_u64().expect("ios"),
        "and to the step's write count of 128 KiB appends"
    );
    let said = notes(&out, "append");
    assert!(
        said.iter().any(|n| n
            == "zone append: 112 appends, each placed by the device inside the zone it was \
                sent to"),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|n| n.starts_with("zone report: 4 zones written in order")),
        "{said:?}"
    );
    // The device was sent Zone Appends (not writes), 128 KiB each, to zones 0-3 only: 32,
    // 32, 32 and 16 of them (QEMU's trace of its NVMe writes; nothing else in the guest
    // appends), several in flight to one zone at once (its trace of their completions).
    let trace = std::fs::read_to_string(out.join("nvme-trace.log")).expect("nvme-trace.log");
    let mut per_zone = [0u64; 16];
    let mut in_flight: Vec<(String, usize)> = Vec::new();
    let mut most_in_one_zone = 0;
    for l in trace.lines() {
        let field = |key: &str| {
            let v = l.split(key).nth(1).expect(key).trim_start();
            v.split(' ').next().expect(key).to_string()
        };
        if l.contains("pci_nvme_rw_complete_cb") {
            let cid = field(" cid ");
            in_flight.retain(|(c, _)| *c != cid);
            continue;
        }
        if !(l.contains("pci_nvme_write ") && l.contains("ZONE_APPEND")) {
            continue;
        }
        assert_eq!(field(" nlb "), "256", "{l}");
        let lba = u64::from_str_radix(field(" lba ").trim_start_matches("0x"), 16).expect(l);
        let zone = (lba / ZONE) as usize;
        per_zone[zone] += 1;
        in_flight.push((field(" cid "), zone));
        let here = in_flight.iter().filter(|(_, z)| *z == zone).count();
        most_in_one_zone = most_in_one_zone.max(here);
    }
    let mut want = [0u64; 16];
    want[..4].copy_from_slice(&[32, 32, 32, 16]);
    assert_eq!(per_zone, want, "Zone Appends per zone in QEMU's trace");
    assert!(
        most_in_one_zone > 1,
        "never more than one append in flight to a zone (iodepth 8)"
    );
    eprintln!("zone append: at most {most_in_one_zone} appends in flight to one zone");
}
