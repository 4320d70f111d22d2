//! A zoned NVMe namespace (ZNS, 16 zones of 4 MiB) in the QEMU guest
//! (scripts/qemu-nvme/guest-zoned.sh, NVME_ZONED=1): detected (`devices`), refused for
//! random writes, a start inside a zone and a write ending by time, each saying why; written
//! zone by zone (the zones reset first) with the kernel's zone report (`blkzone report`)
//! agreeing, as fio's `zonemode=zbd` writes it on the same namespace. Skipped, with the
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
        &[("NVME_ZONED", "1"), ("GUEST_BINS", &bins)],
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
        let said = section(&out, name);
        assert_eq!(rc(&out, name), 2, "{name}: {said}");
        assert!(said.contains(why), "{name}: {said}");
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
}
