//! The `smart` and `devices` commands through the real binary: JSON keys, YAML, the saved
//! smartctl path, and errors printed as `drivescope: …` with exit code 2.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn drivescope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .args(args)
        .output()
        .expect("run drivescope")
}

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smartctl");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

const KEYS: [&str; 15] = [
    "health",
    "temperature_c",
    "sensors_c",
    "warning_temp_c",
    "critical_temp_c",
    "critical_warning",
    "percentage_used",
    "data_units_read",
    "data_units_written",
    "power_on_hours",
    "power_state",
    "power_state_max_w",
    "power_w",
    "thermal_throttle",
    "source",
];

#[test]
fn every_fixture_through_the_cli() {
    let files = fixtures();
    assert_eq!(files.len(), 7);
    for f in files {
        let out = drivescope(&[
            "smart",
            "--smartctl-json",
            f.to_str().expect("utf-8"),
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout
                .starts_with(b"{\n  \"health\": {\n    \"passed\": true,"),
            "health first: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        for k in KEYS {
            assert!(v.get(k).is_some(), "{}: key {k}", f.display());
        }
        assert_eq!(v["health"]["reasons"], serde_json::json!([]));
        assert_eq!(v["source"], "smartctl_file");
        assert!(v["temperature_c"]
            .as_i64()
            .is_some_and(|t| (20..=40).contains(&t)));
        if v["kind"] != "scsi" {
            assert!(v["power_on_hours"].as_u64().is_some(), "{}", f.display());
        }
        assert!(v["power_w"].is_null(), "no fixture drive measures power");
        let yaml = drivescope(&[
            "smart",
            "--smartctl-json",
            f.to_str().expect("utf-8"),
            "--yaml",
        ]);
        assert!(yaml.status.success());
        let y: serde_yaml::Value = serde_yaml::from_slice(&yaml.stdout).expect("YAML");
        assert_eq!(y["temperature_c"].as_i64(), v["temperature_c"].as_i64());
    }
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ truncated").expect("write");
    for args in [
        vec!["smart", "--smartctl-json", bad.to_str().expect("utf-8")],
        vec!["smart", "--smartctl-json", "/nonexistent/x.json"],
        vec!["smart", "/proc/self/status"],
    ] {
        let out = drivescope(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("drivescope: "), "{args:?}: {err}");
    }
    let out = drivescope(&["smart", "--period", "500ms", "--watch", "1"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "clap refuses a period under 1 s: smartctl's bit 0, the command line"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("500ms"));
}

/// The whole disk under `dir`'s file system, found apart from drivescope: `st_dev` through
/// `/sys/dev/block/MAJ:MIN`, a partition's parent. None where the file system has no block
/// device of its own (overlay, btrfs, tmpfs: an anonymous `st_dev`).
fn disk_under(dir: &std::path::Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).expect("stat the temp dir").dev();
    let (ma, mi) = (libc::major(dev), libc::minor(dev));
    let node = std::fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()?;
    let disk = if node.join("partition").exists() {
        node.parent()?
    } else {
        &node
    };
    Some(disk.file_name()?.to_string_lossy().into_owned())
}

#[test]
fn smart_on_a_path_and_devices_list() {
    let dir = crate::common::disk_tempdir();
    let Some(disk) = disk_under(dir.path()) else {
        skip!(
            NoBlockDevice,
            "{} is on a file system with no block device",
            dir.path().display()
        );
    };
    // The folder is on a block device: drivescope must read it, whatever it finds there.
    let out = drivescope(&["smart", dir.path().to_str().expect("utf-8"), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let one = if v.is_array() { v[0].clone() } else { v };
    // A drive no source answered for is smartctl's bit 1, as smartctl exits 2 there.
    let expected = if one["source"].is_null() { 2 } else { 0 };
    assert_eq!(
        out.status.code().map(|c| c & 2),
        Some(expected),
        "smart on a folder on /dev/{disk} (source {}): {}",
        one["source"],
        String::from_utf8_lossy(&out.stderr)
    );
    for k in KEYS {
        assert!(one.get(k).is_some(), "key {k}");
    }
    assert_eq!(one["device"], format!("/dev/{disk}"), "the folder's disk");
    if one["source"].is_null() {
        let notes = one["notes"].as_array().expect("notes");
        assert!(
            notes
                .iter()
                .any(|n| n.as_str().is_some_and(|n| n.contains(&disk))),
            "a note says why {disk} gave nothing: {notes:?}"
        );
        assert!(one["temperature_c"].is_null(), "no invented temperature");
    }
    let out = drivescope(&["devices", "--json"]);
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = list
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(
        names.contains(&disk.as_str()),
        "{disk} listed among {names:?}"
    );
    for d in list.as_array().expect("array") {
        assert!(d["sources"].to_string().contains("blockstat"), "{d}");
    }
}

/// A loop device has no SMART: `smart` says "none answered" as before and exits 2 (bit 1,
/// what smartctl exits there), so that `smart DEV || alarm` raises the alarm.
#[test]
fn smart_on_a_drive_no_source_answers_exits_2() {
    let Some(lo) = crate::common::LoopDev::new(1 << 20) else {
        return;
    };
    let out = drivescope(&["smart", lo.dev.to_str().expect("utf-8")]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.starts_with("health               unknown\n"), "{text}");
    assert!(
        text.contains("source               none answered\n"),
        "{text}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = drivescope(&["smart", lo.dev.to_str().expect("utf-8"), "--json"]);
    assert_eq!(json.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert!(v["source"].is_null(), "{v}");
}

#[test]
fn text_output_shows_values_and_says_what_is_not_reported() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/nvme_micron_7450_MTFDKCC3T2TFS.json");
    let out = drivescope(&["smart", "--smartctl-json", f.to_str().expect("utf-8")]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("health               passed\n"),
        "health first: {text}"
    );
    assert!(text.contains("critical warning     0x00 (none)"), "{text}");
    assert!(text.contains("33 °C"), "{text}");
    assert!(text.contains("#1 38 °C, #2 35 °C, #3 33 °C"), "{text}");
    assert!(
        text.contains("measured power       not reported by the drive"),
        "{text}"
    );
    assert!(!text.contains(" W"), "no wattage without a source: {text}");
}

fn derived(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/derived")
        .join(name)
        .to_str()
        .expect("utf-8")
        .to_string()
}

#[test]
fn a_failing_drive_says_so_first_with_its_reasons() {
    let f = derived("nvme_micron_7450_critical_warning_09.json");
    let out = drivescope(&["smart", "--smartctl-json", &f]);
    assert_eq!(
        out.status.code(),
        Some(8),
        "a critical warning is smartctl's bit 3, SMART status FAILING"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "health               FAILED: available spare below threshold, media read-only\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "critical warning     0x09 (available spare below threshold, media read-only)"
        ),
        "the warning in words: {text}"
    );
    let out = drivescope(&["smart", "--smartctl-json", &f, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        v["health"],
        serde_json::json!({"passed": false, "reasons": [
            {"reason": "spare_below_threshold"},
            {"reason": "media_read_only"}
        ]})
    );
    let out = drivescope(&["smart", "--smartctl-json", &f, "--yaml"]);
    let y = String::from_utf8_lossy(&out.stdout);
    assert!(y.starts_with("health:\n  passed: false\n"), "{y}");
}

#[test]
fn a_raid_volume_says_why_it_has_no_temperature() {
    let f = derived("raid_perc_h730p_virtual_disk_0c.json");
    let out = drivescope(&["smart", "--smartctl-json", &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("health               unknown\n"), "{text}");
    assert!(
        text.contains("temperature          unknown: the device reports 0 °C"),
        "{text}"
    );
    let out = drivescope(&["smart", "--smartctl-json", &f, "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(v["temperature_c"].is_null());
    assert_eq!(v["temperature_unknown"], "reports_zero");
    assert_eq!(
        v["health"],
        serde_json::json!({"passed": null, "reasons": []})
    );
}

#[test]
fn input_that_is_not_a_smartctl_output_is_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &[u8], &str); 8] = [
        ("array", b"[]", "found an array"),
        ("null", b"null", "found null"),
        ("number", b"7", "found a number"),
        ("empty", b"{}", "found an object without a \"smartctl\" object"),
        ("other", b"{\"temperature\": {\"current\": 30}}", "found an object without"),
        (
            "open",
            br#"{"smartctl": {"exit_status": 2, "messages": [{"string": "Smartctl open device: /dev/sdz failed: No such device"}]}}"#,
            "(exit status 2: the device could not be opened, did not identify itself or is in a low-power mode): \"Smartctl open device: /dev/sdz failed: No such device\"",
        ),
        (
            "messages",
            br#"{"smartctl": {"messages": [{"string": "Permission denied"}]}, "device": {"name": "/dev/sda"}}"#,
            "(the output holds only smartctl's messages): \"Permission denied\"",
        ),
        ("utf32", b"\xFF\xFE\0\0{\0\0\0}\0\0\0", "UTF-32LE text, which drivescope does not read"),
    ];
    for (name, bytes, want) in cases {
        let p = dir.path().join(format!("{name}.json"));
        std::fs::write(&p, bytes).expect("write");
        let out = drivescope(&["smart", "--smartctl-json", p.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("drivescope: "), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        if name != "open" && name != "messages" && name != "utf32" {
            assert!(
                err.contains("expected a JSON object with a \"smartctl\" object in it"),
                "{name}: says what was expected: {err}"
            );
        }
    }
    let huge = dir.path().join("huge.json");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(64 << 20))
        .expect("sparse file");
    let out = drivescope(&["smart", "--smartctl-json", huge.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("larger than the 4MiB"), "{err}");
}

#[test]
fn a_powershell_utf16_file_is_read() {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/sata_micron_5300_MTFDDAK1T9TDS.json");
    let text = std::fs::read_to_string(&f).expect("fixture");
    let mut bytes = vec![0xFF, 0xFE];
    bytes.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("ps.json");
    std::fs::write(&p, bytes).expect("write");
    let out = drivescope(&[
        "smart",
        "--smartctl-json",
        p.to_str().expect("utf-8"),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["temperature_c"], 24);
}

#[test]
fn smart_on_a_path_that_does_not_exist_says_so_instead_of_reading_another_drive() {
    let home = tempfile::tempdir().unwrap();
    for (path, want) in [
        ("/no/such/path", "/no/such/path: no such file or device"),
        ("/dev/sdzz", "/dev/sdzz: no such device"),
    ] {
        let out = crate::common::run(home.path(), &["smart", path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{path}: {err}");
        assert!(err.contains(want), "{path}: {err}");
        assert!(out.stdout.is_empty(), "{path}: printed a reading");
    }
}

#[test]
fn a_failed_smart_fixture_exits_with_smartctls_bits() {
    // The drive's status FAILED (bit 3) with attribute 5, a prefailure one, failing now
    // (bit 4): the 24 smartctl itself wrote in the file's exit_status.
    let f = derived("sata_exos_x16_attr5_failing_now.json");
    for format in [None, Some("--json"), Some("--yaml")] {
        let mut args = vec!["smart", "--smartctl-json", &f];
        args.extend(format);
        let out = drivescope(&args);
        let code = out.status.code().expect("an exit code");
        assert_eq!(
            code,
            8 | 16,
            "{format:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(code & 8 != 0, "bit 3 set");
        if format == Some("--json") {
            let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(
                v["health"],
                serde_json::json!({"passed": false, "reasons": [
                    {"reason": "self_assessment_failed"},
                    {"reason": "ata_attribute_failing_now", "id": 5, "name": "Reallocated_Sector_Ct"}
                ]}),
                "the verdict keeps its reasons"
            );
            assert_eq!(v["smartctl_exit_status"], 24);
        }
    }
    let ok = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/smartctl/nvme_samsung_970_evo_plus_250GB.json");
    let out = drivescope(&["smart", "--smartctl-json", ok.to_str().expect("utf-8")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "22 NVMe error-log entries are not smartctl's bit 6"
    );
    let help = drivescope(&["smart", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("bit 3 (8)") && help.contains("SMART status FAILING"),
        "{help}"
    );
}
