//! A real NVMe controller: boots QEMU's emulated NVMe (scripts/qemu-nvme/run.sh) with this
//! drivescope binary inside, then compares `drivescope smart /dev/nvme0 --json` with
//! nvme-cli's `smart-log`, `id-ctrl` and `get-feature -f 2` from the same guest, field by
//! field; checks the unprivileged fallback to hwmon and that the poller watched a
//! workload on /dev/nvme0n1. Skipped, with the reason, where QEMU cannot run (a failure
//! under CI: tests/common/skip.rs).

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
    let out = boot("scripts/qemu-nvme/guest-init.sh", "qemu-nvme/test-out", &[]);

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
    let feature = section(&out, "nvme_power_state");
    let current = feature
        .rsplit("Current value:")
        .next()
        .and_then(|v| u32::from_str_radix(v.trim(), 16).ok())
        .unwrap_or_else(|| panic!("cannot read nvme get-feature output: {feature}"));
    let ps = (current & 0x1f) as u64;
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
    assert_eq!(samples.len(), 4, "four samples at 1 s");
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
        ["nvme0n1p1 held by dm-0", "nvme0n1p2 mounted on /mnt"]
    );
}
