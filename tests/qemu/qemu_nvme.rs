//! A real NVMe controller: boots QEMU's emulated NVMe (scripts/qemu-nvme/run.sh) with this
//! drivescope binary inside, then compares `drivescope smart /dev/nvme0 --json` with
//! nvme-cli's `smart-log`, `id-ctrl` and `get-feature` (power state, host controlled thermal
//! management, temperature thresholds) from the same guest, field by field; checks from
//! QEMU's own trace of the commands it was sent that what the controller does not support
//! is asked for once while the poller polls; checks the unprivileged fallback to hwmon and
//! that the poller watched a workload on /dev/nvme0n1; and compares drivescope's reading of
//! the guest's SATA disk with smartctl's. Skipped, with the reason, where QEMU cannot run (a
//! failure under CI: tests/common/skip.rs).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::qemu::{boot, rc, section, skip_reason};
use serde_json::Value;

fn json(out: &Path, name: &str) -> Value {
    assert_eq!(
        rc(out, name),
        0,
        "guest command {name} failed:\n{}",
        section(out, name)
    );
    let text = section(out, name);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON ({e}):\n{text}"))
}

/// nvme-cli prints 128-bit counters as strings and small ones as numbers.
fn num(v: &Value) -> u64 {
    match v {
        Value::Number(n) => n.as_u64().expect("unsigned"),
        Value::String(s) => s.parse().expect("numeric string"),
        other => panic!("not a number: {other}"),
    }
}

/// The value nvme-cli's `get-feature` printed: `Current value:0x00000157` (a zero prints
/// as `00000000`, without the 0x).
fn feature_value(out: &Path, name: &str) -> u32 {
    assert_eq!(rc(out, name), 0, "{name}: {}", section(out, name));
    let text = section(out, name);
    text.rsplit("Current value:")
        .next()
        .map(|v| v.trim().trim_start_matches("0x"))
        .and_then(|v| u32::from_str_radix(v, 16).ok())
        .unwrap_or_else(|| panic!("cannot read nvme get-feature output {name}: {text}"))
}

/// An NVMe threshold as drivescope gives it: Kelvin to whole °C, 0 K none.
fn threshold_c(k: u32) -> Value {
    if k == 0 {
        Value::Null
    } else {
        Value::from(i64::from(k) - 273)
    }
}

/// One command QEMU's controller was sent, from its trace (run.sh's nvme-trace.log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    /// Get Log Page of this log identifier.
    Log(u32),
    /// Get Features of this feature identifier with this command dword 11.
    Feature(u32, u32),
}

/// The Get Log Page and Get Features commands of the whole boot, in the order QEMU took
/// them: `pci_nvme_get_log cid 13 lid 0x2 …` and `pci_nvme_getfeat cid 4 nsid 0x0 fid 0x4
/// sel 0x0 cdw11 0x100000`.
fn sent(out: &Path) -> Vec<Sent> {
    let path = out.join("nvme-trace.log");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("QEMU's trace {}: {e}", path.display()));
    let field = |words: &[&str], key: &str| {
        let i = words.iter().position(|w| *w == key)?;
        u32::from_str_radix(words.get(i + 1)?.trim_start_matches("0x"), 16).ok()
    };
    text.lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let event = words.iter().find(|w| w.contains("pci_nvme_"))?;
            if event.ends_with("pci_nvme_get_log") {
                Some(Sent::Log(field(&words, "lid")?))
            } else if event.ends_with("pci_nvme_getfeat") {
                Some(Sent::Feature(
                    field(&words, "fid")?,
                    field(&words, "cdw11")?,
                ))
            } else {
                None
            }
        })
        .collect()
}

fn notes_with<'a>(notes: &'a Value, what: &str) -> Vec<&'a str> {
    notes
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains(what))
        .collect()
}

/// Whether this binary's `run` does a real short read workload on the host.
fn host_run_works() -> bool {
    let Ok(dir) = tempfile::tempdir() else {
        return false;
    };
    let target = dir.path().join("t.bin");
    Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .args([
            "run",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--duration",
            "1s",
            "--json",
            "--target",
        ])
        .arg(&target)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn drivescope_agrees_with_nvme_cli_on_a_real_nvme_controller() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, "{why}");
    }
    let run_works = host_run_works();
    let out = boot(
        "scripts/qemu-nvme/guest-init.sh",
        "qemu-nvme/test-out",
        &[
            // With one vCPU, QEMU's emulated NVMe controller under TCG now and then stops
            // completing I/O (this guest's workload once ended 'device stalled' after 1 s
            // of I/O): two vCPUs, as the safety and engine guests boot.
            ("QEMU_SMP", "2"),
            ("BOOT_TIMEOUT", "1200"),
        ],
    );

    let ours = json(&out, "smart_json");
    let log = json(&out, "nvme_smart_log");
    let id = json(&out, "nvme_id_ctrl");

    // Temperature: nvme-cli prints Kelvin.
    assert_eq!(
        ours["temperature_c"].as_i64(),
        Some(num(&log["temperature"]) as i64 - 273)
    );
    assert_eq!(
        ours["temperature_c"].as_i64(),
        Some(50),
        "QEMU reports 323 K"
    );
    assert_eq!(
        ours["critical_warning"].as_u64(),
        Some(num(&log["critical_warning"]))
    );
    // Health: the critical-warning byte is the verdict (QEMU's is 0: passed).
    assert_eq!(
        ours["health"]["passed"].as_bool(),
        Some(num(&log["critical_warning"]) == 0),
        "{}",
        ours["health"]
    );
    assert_eq!(
        ours["percentage_used"].as_u64(),
        Some(num(&log["percent_used"]))
    );
    for (o, n) in [
        ("data_units_read", "data_units_read"),
        ("data_units_written", "data_units_written"),
        ("host_read_commands", "host_read_commands"),
        ("host_write_commands", "host_write_commands"),
        ("power_on_hours", "power_on_hours"),
        ("power_cycles", "power_cycles"),
        ("unsafe_shutdowns", "unsafe_shutdowns"),
        ("media_errors", "media_errors"),
    ] {
        assert_eq!(ours[o].as_u64(), Some(num(&log[n])), "{o} vs nvme-cli {n}");
    }
    // drivescope's own Identify and SMART log reads happened before nvme-cli's, so the
    // guest read at least once: the counters are live, not defaults.
    assert!(ours["host_read_commands"].as_u64().unwrap_or(0) > 0);
    let tt = &ours["thermal_throttle"];
    assert_eq!(
        tt["tmt1_transitions"].as_u64(),
        Some(num(&log["thm_temp1_trans_count"]))
    );
    assert_eq!(
        tt["tmt2_seconds"].as_u64(),
        Some(num(&log["thm_temp2_total_time"]))
    );

    // Identify: identity, thresholds (Kelvin), power state ceiling (centiwatts, MXPS 0).
    assert_eq!(ours["model"].as_str(), id["mn"].as_str().map(str::trim));
    assert_eq!(ours["serial"].as_str(), Some("TEST0001"));
    assert_eq!(ours["firmware"].as_str(), id["fr"].as_str().map(str::trim));
    assert_eq!(
        ours["warning_temp_c"].as_i64(),
        Some(num(&id["wctemp"]) as i64 - 273)
    );
    assert_eq!(
        ours["critical_temp_c"].as_i64(),
        Some(num(&id["cctemp"]) as i64 - 273)
    );
    let ps = u64::from(feature_value(&out, "nvme_power_state") & 0x1f);
    assert_eq!(ours["power_state"].as_u64(), Some(ps));
    let psd = &id["psds"][ps as usize];
    assert_eq!(
        num(&psd["flags"]) & 1,
        0,
        "QEMU's descriptor uses 0.01 W units"
    );
    let ceiling = num(&psd["max_power"]) as f64 * 0.01;
    assert_eq!(ours["power_state_max_w"].as_f64(), Some(ceiling));
    assert_eq!(ceiling, 25.0);
    assert!(ours["power_w"].is_null(), "QEMU reports no measured power");
    assert_eq!(ours["source"].as_str(), Some("nvme_admin"));

    thermal_management(&out, &ours, &id);

    // The namespace resolves to the same controller.
    let ns = json(&out, "smart_ns_json");
    assert_eq!(ns["device"].as_str(), Some("/dev/nvme0"));
    assert_eq!(ns["serial"], ours["serial"]);

    // Without CAP_SYS_ADMIN: said once per command, and hwmon answers (49850 → 50 °C).
    let unpriv = json(&out, "smart_unprivileged");
    assert_eq!(unpriv["source"].as_str(), Some("hwmon"));
    assert_eq!(unpriv["temperature_c"].as_i64(), Some(50));
    assert_eq!(unpriv["critical_temp_c"], ours["critical_temp_c"]);
    assert!(unpriv["data_units_read"].is_null());
    assert!(
        unpriv["health"]["passed"].is_null(),
        "hwmon's temperature alarm alone gives no verdict: {}",
        unpriv["health"]
    );
    let notes: Vec<&str> = unpriv["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let said = notes.iter().filter(|n| n.contains("run as root")).count();
    assert_eq!(said, 1, "said once: {notes:?}");
    assert!(section(&out, "hwmon").contains("nvme 49850"));

    // devices lists the namespace with the NVMe sources working.
    let devices = json(&out, "devices_json");
    let nvme = devices
        .as_array()
        .and_then(|a| a.iter().find(|d| d["name"] == "nvme0n1"))
        .expect("nvme0n1 listed");
    assert_eq!(nvme["transport"], "nvme");
    assert_eq!(nvme["capacity_bytes"].as_u64(), Some(256 << 20));
    for s in ["nvme_admin", "hwmon", "blockstat"] {
        assert!(
            nvme["sources"].to_string().contains(s),
            "{s} in {}",
            nvme["sources"]
        );
    }

    // A workload on /dev/nvme0n1 ran while the poller watched it: `drivescope run` where
    // this binary has it (it ran on the host just now), else the script's dd fallback.
    let workload = section(&out, "workload");
    assert_eq!(rc(&out, "workload"), 0, "{workload}");
    if run_works {
        assert!(
            !workload.contains("WORKLOAD FALLBACK"),
            "drivescope run works on the host but failed in the guest:\n{workload}"
        );
    } else {
        common::skip::note(
            common::skip::Skip::Tool,
            "drivescope run failed on the host, so the guest's workload was dd's",
        );
    }
    let samples: Vec<Value> = section(&out, "watch_json")
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("sample is JSON"))
        .collect();
    // The poller's first sample came before the workload and one more after it.
    assert!(
        samples.len() >= 2,
        "samples at 1 s around the workload: {samples:?}"
    );
    let read_ios: u64 = samples
        .iter()
        .filter_map(|s| s["block"]["read_ios"].as_u64())
        .sum();
    assert!(
        read_ios > 0,
        "the poller's block stats saw the workload's reads"
    );
    let t: Vec<u64> = samples.iter().filter_map(|s| s["t_ns"].as_u64()).collect();
    assert!(
        t.windows(2).all(|w| w[1] > w[0]),
        "timestamps increase: {t:?}"
    );
    assert!(samples.iter().all(|s| s["smart"]["temperature_c"] == 50));

    // Layers on a real kernel: a file on ext4 on partition 2, a folder made in this boot
    // under it, and device-mapper over partition 1 all resolve to the NVMe drive; a path
    // that does not exist is refused (not read as the drive of the nearest folder).
    assert_eq!(rc(&out, "layers_missing_path"), 2);
    let missing = section(&out, "layers_missing_path");
    assert!(
        missing.contains("/mnt/data/not/yet/created.bin: no such file or device"),
        "{missing}"
    );
    for name in ["layers_file_json", "layers_new_file_json", "layers_dm_json"] {
        let r = json(&out, name);
        assert_eq!(r["device"].as_str(), Some("/dev/nvme0"), "{name}");
        assert_eq!(r["serial"].as_str(), Some("TEST0001"), "{name}");
        assert_eq!(r["source"].as_str(), Some("nvme_admin"), "{name}");
    }
    // The file's block stats come from the partition's own stat file.
    let watch: Vec<Value> = section(&out, "layers_file_watch")
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("sample is JSON"))
        .collect();
    assert_eq!(watch.len(), 2);
    assert!(
        watch.iter().all(|s| s["block"].is_object()),
        "partition stat read"
    );
    let devices = json(&out, "layers_devices_json");
    let nvme = devices
        .as_array()
        .and_then(|a| a.iter().find(|d| d["name"] == "nvme0n1"))
        .expect("nvme0n1 listed");
    let in_use: Vec<&str> = nvme["in_use"]
        .as_array()
        .expect("in_use")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        in_use,
        [
            "/dev/nvme0n1p2 is mounted on /mnt",
            "/dev/nvme0n1p1 is held by device-mapper device dstest (/dev/dm-0)"
        ]
    );

    sata_disk(&out);
}

/// Host controlled thermal management, the temperature thresholds and the OCP log against
/// nvme-cli's answers on the same controller, and what the controller does not support
/// asked for once (QEMU's own trace counts the commands).
fn thermal_management(out: &Path, ours: &Value, id: &Value) {
    // HCTM (Identify HCTMA bit 0, MNTMT, MXTMT; Get Features 10h).
    let hctma = num(&id["hctma"]) & 1 == 1;
    let tm = &ours["thermal_management"];
    assert_eq!(tm["supported"].as_bool(), Some(hctma), "{tm}");
    assert_eq!(tm["mntmt_c"], threshold_c(num(&id["mntmt"]) as u32), "{tm}");
    assert_eq!(tm["mxtmt_c"], threshold_c(num(&id["mxtmt"]) as u32), "{tm}");
    let hctm = section(out, "nvme_hctm");
    if hctma {
        let dw0 = feature_value(out, "nvme_hctm");
        assert_eq!(tm["tmt1_c"], threshold_c(dw0 >> 16), "{tm} vs {hctm}");
        assert_eq!(tm["tmt2_c"], threshold_c(dw0 & 0xFFFF), "{tm} vs {hctm}");
    } else {
        // QEMU 7.2: no HCTM, and Get Features 10h is refused (Invalid Field, DNR), so
        // drivescope, which trusts HCTMA, neither asks nor has TMT figures.
        assert_ne!(rc(out, "nvme_hctm"), 0, "{hctm}");
        assert!(
            hctm.contains("Invalid Field") && hctm.contains("0x4002"),
            "{hctm}"
        );
        assert!(tm["tmt1_c"].is_null() && tm["tmt2_c"].is_null(), "{tm}");
    }

    // Temperature thresholds (Get Features 04h): QEMU reports no sensor besides the
    // composite, so the composite's over (THSEL 00b) and under (THSEL 01b) are all.
    assert_eq!(ours["sensors_c"], serde_json::json!([]));
    let over = feature_value(out, "nvme_temp_over");
    let under = feature_value(out, "nvme_temp_under");
    let expect = |over: u32, under: u32| serde_json::json!([{"sensor": 0, "over_c": threshold_c(over), "under_c": threshold_c(under)}]);
    assert_eq!(ours["temperature_thresholds"], expect(over, under));
    assert_eq!((over, under), (343, 0), "QEMU's defaults: 70 °C and none");
    // Thresholds the host set: read from the feature, not Identify's WCTEMP (still 343 K).
    let set = json(out, "thresholds_set_json");
    let (over, under) = (
        feature_value(out, "nvme_temp_over_set"),
        feature_value(out, "nvme_temp_under_set"),
    );
    assert_eq!((over, under), (348, 283), "the guest set 75 °C and 10 °C");
    assert_eq!(set["temperature_thresholds"], expect(over, under));
    assert_eq!(set["warning_temp_c"].as_i64(), Some(70), "WCTEMP unchanged");

    // The OCP SMART extended log (C0h): QEMU 7.2 has none; nvme-cli's read is refused.
    let ocp = section(out, "nvme_ocp_log");
    assert_ne!(rc(out, "nvme_ocp_log"), 0, "QEMU 7.2 has no C0h log: {ocp}");
    assert!(
        ocp.contains("Invalid Field") && ocp.contains("0x4002"),
        "{ocp}"
    );
    assert!(ours["ocp_smart"].is_null(), "{}", ours["ocp_smart"]);
    // Said once, in words, and nothing else is said about the optional commands.
    assert_eq!(
        notes_with(&ours["notes"], "C0h"),
        [
            "no OCP SMART extended log (Get Log Page C0h): the controller does not support it \
          (invalid field in command); not asked again"
        ],
    );
    assert_eq!(
        ours["notes"].as_array().map(Vec::len),
        Some(1),
        "{}",
        ours["notes"]
    );

    // Polling: the watch between the two marker commands (the threshold of sensor 8, which
    // drivescope never asks QEMU for) asked for the SMART log and the thresholds on every
    // poll and for the C0h log once; Get Features 10h never (HCTMA 0).
    let all = sent(out);
    let at = |m: Sent| {
        all.iter()
            .position(|s| *s == m)
            .unwrap_or_else(|| panic!("marker {m:?} not in QEMU's trace: {all:?}"))
    };
    let watch = &all[at(Sent::Feature(4, 0x8_0000)) + 1..at(Sent::Feature(4, 0x18_0000))];
    let count = |m: Sent| watch.iter().filter(|s| **s == m).count();
    let samples = common::qemu::json_lines(out, "thermal_watch_json");
    assert_eq!(samples.len(), 4, "four samples at 1 s");
    let polls = count(Sent::Log(0x02));
    assert!(polls >= 3, "the SMART log on every poll: {watch:?}");
    assert!(count(Sent::Feature(4, 0)) >= polls - 1, "{watch:?}");
    assert!(count(Sent::Feature(4, 0x10_0000)) >= polls - 1, "{watch:?}");
    assert_eq!(count(Sent::Log(0xC0)), 1, "C0h asked once: {watch:?}");
    let tenh = |s: &&Sent| matches!(s, Sent::Feature(0x10, _));
    assert_eq!(watch.iter().filter(tenh).count(), 0, "{watch:?}");
    if !hctma {
        // The only Get Features 10h of the whole boot is nvme-cli's.
        assert_eq!(all.iter().filter(tenh).count(), 1, "{all:?}");
    }
    // Each reading says why it has no C0h figures; the poller passes the note on once.
    for s in &samples {
        assert_eq!(notes_with(&s["smart"]["notes"], "C0h").len(), 1, "{s}");
        assert_eq!(
            s["smart"]["temperature_thresholds"],
            ours["temperature_thresholds"]
        );
    }
    let passed_on: usize = samples
        .iter()
        .map(|s| notes_with(&s["notes"], "C0h").len())
        .sum();
    assert_eq!(passed_on, 1, "the sample notes");
}

/// The guest's AHCI disk (QEMU's IDE SMART): drivescope's reading equals smartctl's.
fn sata_disk(out: &Path) {
    let ours = json(out, "sata_json");
    let ctl = json(out, "sata_smartctl");
    assert_eq!(ours["source"].as_str(), Some("smartctl"));
    assert_eq!(ours["device"].as_str(), Some("/dev/sda"));
    assert_eq!(ours["model"], ctl["model_name"]);
    assert_eq!(ours["model"].as_str(), Some("QEMU HARDDISK"));
    assert_eq!(ours["serial"], ctl["serial_number"]);
    assert_eq!(ours["serial"].as_str(), Some("SATA0001"), "run.sh's serial");
    assert_eq!(ours["firmware"], ctl["firmware_version"]);
    assert_eq!(ours["health"]["passed"], ctl["smart_status"]["passed"]);
    assert_eq!(ours["health"]["passed"].as_bool(), Some(true));
    assert_eq!(ours["power_on_hours"], ctl["power_on_time"]["hours"]);
    assert_eq!(ours["power_cycles"], ctl["power_cycle_count"]);
    let attr = |id: u64| {
        ctl["ata_smart_attributes"]["table"]
            .as_array()
            .and_then(|t| t.iter().find(|a| a["id"] == id))
            .unwrap_or_else(|| panic!("no attribute {id} in smartctl's table"))
            .clone()
    };
    assert_eq!(
        ours["power_on_hours"].as_u64(),
        attr(9)["raw"]["value"].as_u64()
    );
    // The temperature: smartctl's, and the low byte of attribute 190's raw value, where
    // QEMU packs min and max above it (the whole raw value is no temperature).
    assert_eq!(ours["temperature_c"], ctl["temperature"]["current"]);
    let raw190 = attr(190)["raw"]["value"].as_u64().expect("raw value");
    assert!(raw190 > 0xFF, "min/max above byte 0: {raw190:#x}");
    assert_eq!(ours["temperature_c"].as_u64(), Some(raw190 & 0xFF));
    // Thresholds where smartctl gives them (from the SCT status; QEMU's disk has none).
    let limit = |p: &str| ctl.pointer(p).cloned().unwrap_or(Value::Null);
    assert_eq!(ours["warning_temp_c"], limit("/temperature/op_limit_max"));
    assert_eq!(ours["critical_temp_c"], limit("/temperature/limit_max"));
    assert!(
        ctl.get("ata_sct_status").is_none(),
        "QEMU's IDE disk answers no SCT status: compare its limits now"
    );
    // NVMe-only figures stay unknown on SATA.
    for k in [
        "critical_warning",
        "data_units_written",
        "thermal_management",
        "ocp_smart",
    ] {
        assert!(ours[k].is_null(), "{k}: {}", ours[k]);
    }
}
