//! The edge cases of issue 32 on fixtures cut from the real ones: a 0 trip temperature is
//! not reported, a disk behind a RAID controller keeps its bus path and disk number, and
//! an output whose `smartctl` header was cut away is read with a note (refused only when
//! it holds none of smartctl's device fields).

use std::path::{Path, PathBuf};
use std::process::Command;

use drivescope::telemetry::smartctl::{decode_file, SmartctlError};
use drivescope::telemetry::text::reading_text;
use serde_json::Value;

use super::{fixture, path};

fn json_of(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(path(name)).expect("fixture")).expect("JSON")
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec_pretty(v).expect("JSON")).expect("write");
    p
}

fn drivescope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .args(args)
        .output()
        .expect("run drivescope")
}

#[test]
fn a_zero_trip_temperature_is_not_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The real SAS drive reports drive_trip 65; a RAID volume reports 0.
    assert_eq!(
        fixture("sas_toshiba_mg08_behind_megaraid_1.json").critical_temp_c,
        Some(65)
    );
    let mut sas = json_of("sas_toshiba_mg08_behind_megaraid_1.json");
    sas["temperature"]["drive_trip"] = 0.into();
    let r = decode_file(&write(dir.path(), "sas.json", &sas)).expect("decodes");
    assert_eq!(r.critical_temp_c, None, "0 is not a 0 °C threshold");
    let text = reading_text(&r);
    assert!(
        text.contains("critical threshold   not reported\n"),
        "{text}"
    );
    assert!(!text.contains("0 °C"), "{text}");
    let mut nvme = json_of("nvme_micron_7450_MTFDKCC3T2TFS.json");
    nvme["nvme_composite_temperature_threshold"] = serde_json::json!({"warning": 0, "critical": 0});
    let r = decode_file(&write(dir.path(), "nvme.json", &nvme)).expect("decodes");
    assert_eq!((r.warning_temp_c, r.critical_temp_c), (None, None));
    nvme["nvme_composite_temperature_threshold"] =
        serde_json::json!({"warning": 70, "critical": 85});
    let r = decode_file(&write(dir.path(), "nvme70.json", &nvme)).expect("decodes");
    assert_eq!((r.warning_temp_c, r.critical_temp_c), (Some(70), Some(85)));
}

#[test]
fn a_pass_through_address_keeps_bus_path_and_disk_number() {
    // smartctl's info_name, as its header and --scan show the disk.
    let r = fixture("sas_toshiba_mg08_behind_megaraid_1.json");
    assert_eq!(r.device.as_deref(), Some("/dev/bus/0 [megaraid_disk_01]"));
    let r = fixture("derived/sata_exos_x16_behind_megaraid_3.json");
    assert_eq!(
        r.device.as_deref(),
        Some("/dev/bus/0 [megaraid_disk_03] [SAT]")
    );
    // Without info_name, the type's address beside the bus path.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut v = json_of("derived/sata_exos_x16_behind_megaraid_3.json");
    v["device"]
        .as_object_mut()
        .expect("device object")
        .remove("info_name");
    let r = decode_file(&write(dir.path(), "no_info.json", &v)).expect("decodes");
    assert_eq!(r.device.as_deref(), Some("/dev/bus/0 [megaraid,3]"));
    let out = drivescope(&[
        "smart",
        "--smartctl-json",
        path("sas_toshiba_mg08_behind_megaraid_1.json")
            .to_str()
            .expect("utf-8"),
        "--json",
    ]);
    let j: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(j["device"], "/dev/bus/0 [megaraid_disk_01]");
}

#[test]
fn a_cut_smartctl_header_is_read_with_a_note_and_nothing_else_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut v = json_of("sata_seagate_exos_x16_ST16000NM001G.json");
    let m = v.as_object_mut().expect("object");
    for k in ["smartctl", "json_format_version", "local_time"] {
        m.remove(k);
    }
    let cut = write(dir.path(), "cut.json", &v);
    let r = decode_file(&cut).expect("read from its device fields");
    assert_eq!(r.temperature_c, Some(26));
    assert_eq!(r.model.as_deref(), Some("ST16000NM001G-2KK103"));
    assert_eq!(r.ata_attributes.len(), 22);
    assert_eq!(r.smartctl_exit_status, None);
    assert!(
        r.notes.iter().any(|n| n.contains("no \"smartctl\" header")),
        "{:?}",
        r.notes
    );
    let out = drivescope(&["smart", "--smartctl-json", cut.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("note                 the output has no \"smartctl\" header object"),
        "{text}"
    );
    // Only the envelope and a temperature: nothing of smartctl's, refused.
    let none = serde_json::json!({"json_format_version": [1, 0], "local_time": {"time_t": 1},
                                  "temperature": {"current": 30}});
    let p = write(dir.path(), "none.json", &none);
    match decode_file(&p) {
        Err(e @ SmartctlError::NotSmartctl { .. }) => {
            assert!(e.to_string().contains("smartctl's device fields"), "{e}")
        }
        other => panic!("refused, got {other:?}"),
    }
    let out = drivescope(&["smart", "--smartctl-json", p.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2), "bit 1: not a reading");
}
