//! What a run did to the drive, on a real (emulated) NVMe controller: boots the QEMU guest
//! with scripts/qemu-nvme/guest-wear.sh, a write run on /dev/nvme0n1 between two nvme-cli
//! SMART logs. The session's run-wide `drive_wear` event says the host wrote what the
//! controller's data units say (to the unit), and what drivescope counted to within one
//! data unit; the headless run's `drive_wear` line says the same. (Nothing else writes
//! to the namespace between the two logs; drivescope's write guard reads it before the run,
//! outside the run's span.) Skipped, with the reason,
//! where QEMU cannot run (a failure under CI: tests/common/skip.rs).

use crate::common;

use common::qemu::{boot, json_lines, rc, section, skip_reason};
use serde_json::Value;

const DATA_UNIT: u64 = 512_000;

fn num(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.replace(',', "").parse().ok()))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn log(out: &std::path::Path, name: &str) -> Value {
    assert_eq!(common::qemu::rc(out, name), 0, "{}", section(out, name));
    serde_json::from_str(&section(out, name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_run_says_what_it_wrote_to_the_drive_as_the_controller_counts_it() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, "{why}");
    }
    let out = boot(
        "scripts/qemu-nvme/guest-wear.sh",
        "qemu-wear",
        &[("QEMU_SMP", "2"), ("NVME_SIZE", "128M")],
    );
    let (before, after) = (log(&out, "wear_before"), log(&out, "wear_after"));
    let units = |k: &str| num(&after[k]) - num(&before[k]);
    let written_units = units("data_units_written");
    let read_units = units("data_units_read");
    assert_eq!(rc(&out, "wear_run"), 0, "{}", section(&out, "wear_run"));

    let session: serde_yaml::Value =
        serde_yaml::from_str(&section(&out, "wear_session")).expect("session YAML");
    let events = session["events"].as_sequence().expect("events");
    let wear: Vec<&serde_yaml::Value> = events
        .iter()
        .filter(|e| e["kind"].as_str() == Some("drive_wear"))
        .map(|e| &e["data"])
        .collect();
    let run = wear
        .iter()
        .find(|w| w.get("step").is_none())
        .unwrap_or_else(|| panic!("no run-wide drive_wear event in {events:?}"));
    let u = |w: &serde_yaml::Value, k: &str| {
        w[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {w:?}"))
    };
    let own_written = u(run, "drivescope_written_bytes");
    let summary_written = session["summary"]["write_bytes"].as_u64().expect("summary");
    assert!(own_written > 0, "the run wrote");
    assert_eq!(
        own_written, summary_written,
        "drivescope's count is the session's written bytes (no ramp)"
    );
    // The controller's data units, as nvme-cli reads them around the run.
    assert_eq!(u(run, "host_written_bytes"), written_units * DATA_UNIT);
    // Reads: the controller's delta around the command also has what drivescope read
    // before the run (the write guard's look at the device), outside the run's span.
    assert!(u(run, "host_read_bytes") <= read_units * DATA_UNIT);
    assert_eq!(u(run, "host_unit_bytes"), DATA_UNIT);
    // Against drivescope's own count: within one data unit (the drive rounds up).
    let host = written_units * DATA_UNIT;
    assert!(
        host.abs_diff(own_written) <= DATA_UNIT,
        "controller {written_units} units ({host} B) vs drivescope {own_written} B"
    );
    assert!(
        u(run, "host_read_bytes").abs_diff(u(run, "drivescope_read_bytes")) <= DATA_UNIT,
        "reads: {run:?}"
    );
    assert_eq!(u(run, "media_errors"), 0);
    assert_eq!(u(run, "error_log_entries"), 0);
    // The one step's span says the same (a plain run is one step).
    let step = wear
        .iter()
        .find(|w| w.get("step").is_some())
        .expect("the step's drive_wear event");
    assert_eq!(u(step, "drivescope_written_bytes"), own_written);
    assert!(u(step, "host_written_bytes").abs_diff(own_written) <= DATA_UNIT);

    // The headless run ends saying it.
    let lines = json_lines(&out, "wear_run");
    let said = lines
        .iter()
        .find(|l| l["type"] == "drive_wear")
        .unwrap_or_else(|| panic!("no drive_wear line in {}", section(&out, "wear_run")));
    assert_eq!(said["host_written_bytes"].as_u64(), Some(host));
    assert_eq!(said["drivescope_written_bytes"].as_u64(), Some(own_written));
    assert_eq!(said["written_agrees"], true);

    // The report of the session has the table, the run's row first.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("wear.yaml");
    std::fs::write(&file, section(&out, "wear_session")).expect("session copy");
    let report = std::process::Command::new(env!("CARGO_BIN_EXE_drivescope"))
        .arg("report")
        .arg(&file)
        .output()
        .expect("drivescope report");
    assert!(report.status.success(), "{report:?}");
    let html = std::fs::read_to_string(dir.path().join("wear.yaml-report/report.html"))
        .or_else(|_| std::fs::read_to_string(dir.path().join("wear-report/report.html")))
        .expect("report.html");
    let table = html
        .split("<table class=\"drive-wear\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or_else(|| panic!("no drive-wear table in the report"));
    assert!(table.contains("<th>host wrote</th><th>drivescope wrote</th><th>host read</th>"));
    assert!(table.contains("<td>run</td>"), "{table}");

    // A text run ends with the line.
    assert_eq!(rc(&out, "wear_text_run"), 0);
    let text = section(&out, "wear_text_run");
    let line = text
        .lines()
        .find(|l| l.starts_with("drive: host wrote "))
        .unwrap_or_else(|| panic!("no drive line in:\n{text}"));
    assert!(line.contains(" (drivescope "), "{line}");
    assert!(!line.contains("differs"), "{line}");
    assert!(line.contains("media errors +0"), "{line}");
}
