//! Every real `smartctl -j` fixture (tests/fixtures/smartctl, attribution in its README)
//! decodes to the values its README and the file itself state.

use drivescope::telemetry::{Health, SensorTemp, Source};

use super::fixture;

fn sensors(list: &[(u8, i32)]) -> Vec<SensorTemp> {
    list.iter()
        .map(|&(sensor, c)| SensorTemp { sensor, c })
        .collect()
}

#[test]
fn micron_7450_nvme() {
    let r = fixture("nvme_micron_7450_MTFDKCC3T2TFS.json");
    assert_eq!(r.source, Some(Source::SmartctlFile));
    assert_eq!(r.device.as_deref(), Some("/dev/nvme1"));
    assert_eq!(r.model.as_deref(), Some("Micron_7450_MTFDKCC3T2TFS"));
    assert_eq!(r.temperature_c, Some(33));
    assert_eq!(r.sensors_c, sensors(&[(1, 38), (2, 35), (3, 33)]));
    assert_eq!(r.power_on_hours, Some(2884));
    assert_eq!(r.critical_warning, Some(0));
    assert_eq!(r.data_units_read, Some(170_056));
    assert_eq!(r.data_units_written, Some(1_248_078));
    assert_eq!(r.host_read_commands, Some(412_435));
    assert_eq!(r.host_write_commands, Some(92_595_817));
    assert_eq!(r.unsafe_shutdowns, Some(30));
    assert_eq!(r.power_cycles, Some(32));
    // smartctl reports no power state and no measured power: nothing is made up.
    assert_eq!(r.power_state, None);
    assert_eq!(r.power_state_max_w, None);
    assert_eq!(r.power_w, None);
}

#[test]
fn samsung_970_evo_plus_nvme() {
    let r = fixture("nvme_samsung_970_evo_plus_250GB.json");
    assert_eq!(r.model.as_deref(), Some("Samsung SSD 970 EVO Plus 250GB"));
    assert_eq!(r.temperature_c, Some(35));
    assert_eq!(r.sensors_c, sensors(&[(1, 35), (2, 39)]));
    assert_eq!(r.power_on_hours, Some(3149));
    assert_eq!(r.percentage_used, Some(0));
    assert_eq!(r.data_units_read, Some(2_025_034));
    assert_eq!(r.data_units_written, Some(1_969_459));
}

#[test]
fn intel_p4510_nvme_without_sensor_list() {
    let r = fixture("nvme_intel_p4510_SSDPE2KX080T8.json");
    assert_eq!(r.model.as_deref(), Some("INTEL SSDPE2KX080T8"));
    assert_eq!(r.temperature_c, Some(29));
    assert!(r.sensors_c.is_empty(), "no temperature_sensors key");
    assert_eq!(r.power_on_hours, Some(12_164));
    assert_eq!(r.host_write_commands, Some(4_922_206_599));
    assert_eq!(r.serial.as_deref(), Some("REDACTED"));
}

#[test]
fn micron_5300_sata_attr_194_low_byte() {
    let r = fixture("sata_micron_5300_MTFDDAK1T9TDS.json");
    // raw.value 150324707352 = 0x23000D0018: 24 °C now, min 13, max 35 packed above it.
    assert_eq!(r.temperature_c, Some(24));
    assert_eq!(r.power_on_hours, Some(4175));
    assert_eq!(r.power_cycles, Some(19));
    assert_eq!(r.critical_warning, None, "no NVMe fields on ATA");
    assert_eq!(r.data_units_read, None);
}

#[test]
fn seagate_exos_x16_sata_masks_raw_values() {
    let r = fixture("sata_seagate_exos_x16_ST16000NM001G.json");
    // 194 raw 98784247834 and 190 raw 538509338 both have 26 in byte 0.
    assert_eq!(r.temperature_c, Some(26));
    assert_eq!(r.model.as_deref(), Some("ST16000NM001G-2KK103"));
    assert_eq!(r.power_on_hours, Some(13_114));
}

#[test]
fn samsung_860_evo_full_output() {
    let r = fixture("sata_samsung_860_evo_500GB_full_x.json");
    assert_eq!(r.temperature_c, Some(36));
    assert_eq!(r.model.as_deref(), Some("Samsung SSD 860 EVO 500GB"));
    assert_eq!(r.serial.as_deref(), Some("S3YZNB0KB00864E"));
    assert_eq!(r.firmware.as_deref(), Some("RVT02B6Q"));
    assert_eq!(r.power_on_hours, Some(14_551));
    assert_eq!(r.warning_temp_c, Some(70), "SCT op_limit_max");
    assert_eq!(r.critical_temp_c, Some(70), "temperature.limit_max");
}

#[test]
fn every_real_fixture_passed() {
    for name in super::REAL {
        let r = fixture(name);
        assert_eq!(r.health, Health::judge(Some(true), Vec::new()), "{name}");
        assert_eq!(r.health.to_string(), "passed");
    }
}

#[test]
fn interpreted_temperature_before_sct_and_raw_attributes() {
    // The same decoder on a document built from one fixture's attribute 190 alone.
    let doc = serde_json::json!({
        "model_name": "X",
        "ata_smart_attributes": {"table": [
            {"id": 190, "raw": {"value": 538509338u64, "string": "26 (Min/Max 25/32)"}}
        ]},
        "temperature": {"current": 99}
    });
    let decode = |d: &serde_json::Value| {
        drivescope::telemetry::smartctl::decode(d, Source::Smartctl).temperature_c
    };
    assert_eq!(
        decode(&doc),
        Some(99),
        "smartctl's interpreted temperature.current first"
    );
    let mut raw_only = doc.clone();
    raw_only["temperature"] = serde_json::json!({});
    assert_eq!(decode(&raw_only), Some(26), "190 raw byte 0 without it");
    let mut with_sct = raw_only.clone();
    with_sct["ata_sct_status"] = serde_json::json!({"temperature": {"current": 41}});
    assert_eq!(
        decode(&with_sct),
        Some(41),
        "SCT status before the attributes"
    );
}

#[test]
fn nvme_sensor_gaps_keep_sensor_numbers() {
    // smartctl writes temperature_sensors[i] only for sensors that read non-zero, so a
    // missing sensor 2 leaves a null in the array.
    let doc = serde_json::json!({
        "model_name": "X",
        "nvme_smart_health_information_log": {"temperature": 41, "temperature_sensors": [41, null, 47]}
    });
    let r = drivescope::telemetry::smartctl::decode(&doc, Source::Smartctl);
    assert_eq!(r.sensors_c, sensors(&[(1, 41), (3, 47)]));
    assert_eq!(
        r.thermal_throttle, None,
        "smartctl's JSON has no throttle counts"
    );
}

#[test]
fn running_smartctl_on_something_without_smart_is_an_error() {
    use drivescope::telemetry::smartctl::{run, SmartctlError};
    match run(
        std::path::Path::new("/dev/null"),
        std::time::Duration::from_secs(10),
    ) {
        Err(SmartctlError::NotInstalled) => skip!(Tool, "smartctl is not installed"),
        Err(e @ SmartctlError::Refused { .. }) => {
            let SmartctlError::Refused { messages, .. } = &e else {
                unreachable!()
            };
            assert!(!messages.is_empty(), "smartctl says why: {e}");
            assert!(
                e.to_string().contains(&format!("\"{}\"", messages[0])),
                "{e}"
            );
        }
        other => panic!("expected a refusal with smartctl's own messages, got {other:?}"),
    }
}
