//! One smartctl output decoded into a [`SmartReading`]: identity (ATA, NVMe, and SCSI under
//! the keys of smartctl 7.0–7.2 as well as 7.3 and later), the NVMe health log, ATA and
//! SCSI temperatures, thresholds and endurance, and the health verdict.
//!
//! ATA and SCSI temperatures: smartctl's interpreted `temperature.current` first (its drive
//! database knows drives whose attribute 194 is tenths of a degree or proprietary), then
//! SCT status, then the raw byte 0 of attribute 194 or 190 (the other bytes often pack
//! min/max). Zero from any of them is no sensor, not a temperature: RAID virtual disks
//! report 0 °C.

use serde_json::Value;

use super::health::health;
use super::json::{first_of, i32_of, str_of, u64_of, u8_of};
use super::tables::ata_scsi_tables;
use crate::telemetry::attributes::DeviceKind;
use crate::telemetry::reading::{NoTemperature, SensorTemp, SmartReading, Source};

/// A temperature threshold: 0 is "not reported" (RAID virtual disks and drives without a
/// trip point write 0), never a 0 °C threshold.
fn threshold_of(v: &Value) -> Option<i32> {
    i32_of(v).filter(|&c| c != 0)
}

/// Current temperature of ATA attribute `id`: raw byte 0 only.
fn ata_attr_temp(doc: &Value, id: u64) -> Option<i32> {
    let table = doc.pointer("/ata_smart_attributes/table")?.as_array()?;
    let attr = table.iter().find(|a| a["id"].as_u64() == Some(id))?;
    let raw = attr.pointer("/raw/value")?.as_u64()?;
    Some((raw & 0xFF) as i32)
}

/// The drive temperature of an ATA or SCSI output, or why there is none although a
/// source answered (each reported 0).
fn drive_temperature(doc: &Value) -> Result<Option<i32>, NoTemperature> {
    let candidates = [
        i32_of(&doc["temperature"]["current"]),
        i32_of(&doc["ata_sct_status"]["temperature"]["current"]),
        ata_attr_temp(doc, 194),
        ata_attr_temp(doc, 190),
    ];
    match candidates.iter().flatten().find(|&&c| c != 0) {
        Some(&c) => Ok(Some(c)),
        None if candidates.iter().flatten().next().is_some() => Err(NoTemperature::ReportsZero),
        None => Ok(None),
    }
}

fn nvme_fields(r: &mut SmartReading, log: &Value) {
    r.temperature_c = i32_of(&log["temperature"]);
    if let Some(list) = log["temperature_sensors"].as_array() {
        r.sensors_c = list
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(SensorTemp {
                    sensor: u8::try_from(i + 1).ok()?,
                    c: i32_of(v)?,
                })
            })
            .collect();
    }
    r.critical_warning = u8_of(&log["critical_warning"]);
    r.available_spare = u8_of(&log["available_spare"]);
    r.percentage_used = u8_of(&log["percentage_used"]);
    r.data_units_read = u64_of(&log["data_units_read"]);
    r.data_units_written = u64_of(&log["data_units_written"]);
    r.host_read_commands = u64_of(&log["host_reads"]);
    r.host_write_commands = u64_of(&log["host_writes"]);
    r.power_on_hours = u64_of(&log["power_on_hours"]);
    r.power_cycles = u64_of(&log["power_cycles"]);
    r.unsafe_shutdowns = u64_of(&log["unsafe_shutdowns"]);
    r.media_errors = u64_of(&log["media_errors"]);
    r.error_log_entries = u64_of(&log["num_err_log_entries"]);
    r.warning_temp_minutes = u64_of(&log["warning_temp_time"]);
    r.critical_temp_minutes = u64_of(&log["critical_comp_time"]);
    // smartctl prints the thermal management counts as text only, not in its JSON, so
    // `thermal_throttle` stays unknown from this source.
}

fn ata_scsi_fields(r: &mut SmartReading, doc: &Value) {
    match drive_temperature(doc) {
        Ok(t) => r.temperature_c = t,
        Err(why) => r.temperature_unknown = Some(why),
    }
    r.warning_temp_c = first_of(
        doc,
        &[
            "/ata_sct_status/temperature/op_limit_max",
            "/temperature/op_limit_max",
        ],
        threshold_of,
    );
    // ATA's SCT limit; SCSI's drive trip temperature (smartctl 7.3 alone wrote it under
    // `scsi_temperature`).
    r.critical_temp_c = first_of(
        doc,
        &[
            "/temperature/limit_max",
            "/temperature/drive_trip",
            "/scsi_temperature/drive_trip",
        ],
        threshold_of,
    );
    // SCSI's percentage used endurance indicator: smartctl 7.0–7.4, then 7.5's name.
    r.percentage_used = first_of(
        doc,
        &[
            "/scsi_percentage_used_endurance_indicator",
            "/endurance_used/current_percent",
        ],
        u8_of,
    );
}

/// The device as smartctl names it. A disk behind a RAID controller or another
/// pass-through (`device.type` with an address: `megaraid,3`, `sat+megaraid,3`, `areca,1/2`,
/// `cciss,0`) keeps smartctl's `info_name`, which holds the bus path and the disk number
/// (`/dev/bus/0 [megaraid_disk_03] [SAT]`): every disk behind the controller has the same
/// `name`. Without `info_name` the type's address is added to the name.
fn device_name(doc: &Value) -> Option<String> {
    let name = str_of(&doc["device"]["name"]);
    let ty = doc["device"]["type"].as_str().unwrap_or_default();
    let Some(comma) = ty.find(',') else {
        return name;
    };
    if let Some(info) = str_of(&doc["device"]["info_name"]) {
        return Some(info);
    }
    let start = ty[..comma].rfind('+').map_or(0, |p| p + 1);
    Some(format!("{} [{}]", name?, &ty[start..]))
}

/// The kind of device: smartctl's `device.protocol`, else what the output holds.
fn kind(doc: &Value) -> Option<DeviceKind> {
    match doc["device"]["protocol"].as_str() {
        Some("NVMe") => return Some(DeviceKind::Nvme),
        Some("ATA") => return Some(DeviceKind::Ata),
        Some("SCSI") => return Some(DeviceKind::Scsi),
        _ => {}
    }
    let m = doc.as_object()?;
    if m.contains_key("nvme_smart_health_information_log") {
        Some(DeviceKind::Nvme)
    } else if m.keys().any(|k| k.starts_with("ata_")) {
        Some(DeviceKind::Ata)
    } else if m.keys().any(|k| k.starts_with("scsi_")) {
        Some(DeviceKind::Scsi)
    } else {
        None
    }
}

/// The model: ATA and NVMe `model_name` (SCSI too up to smartctl 7.2), else the SCSI
/// vendor and product (`scsi_vendor`/`scsi_product` from 7.3, `vendor`/`product` before).
fn model(doc: &Value) -> Option<String> {
    str_of(&doc["model_name"]).or_else(|| {
        let v = first_of(doc, &["/scsi_vendor", "/vendor"], str_of)?;
        Some(
            match first_of(doc, &["/scsi_product", "/product"], str_of) {
                Some(p) => format!("{v} {p}"),
                None => v,
            },
        )
    })
}

/// Decodes one `smartctl -j` document (it is not checked to be one: see
/// [`super::check_output`]).
pub fn decode(doc: &Value, source: Source) -> SmartReading {
    let mut r = SmartReading {
        health: health(doc),
        source: Some(source),
        device: device_name(doc),
        model: model(doc),
        serial: str_of(&doc["serial_number"]),
        // SCSI firmware: `scsi_revision` from smartctl 7.3, `revision` before.
        firmware: first_of(
            doc,
            &["/firmware_version", "/scsi_revision", "/revision"],
            str_of,
        ),
        power_on_hours: u64_of(&doc["power_on_time"]["hours"]),
        power_cycles: u64_of(&doc["power_cycle_count"]),
        kind: kind(doc),
        smartctl_exit_status: doc["smartctl"]["exit_status"]
            .as_u64()
            .and_then(|s| u8::try_from(s).ok()),
        ..Default::default()
    };
    let log = &doc["nvme_smart_health_information_log"];
    if log.is_object() {
        nvme_fields(&mut r, log);
        let th = &doc["nvme_composite_temperature_threshold"];
        r.warning_temp_c = threshold_of(&th["warning"]);
        r.critical_temp_c = threshold_of(&th["critical"]);
    } else {
        ata_scsi_fields(&mut r, doc);
        ata_scsi_tables(&mut r, doc);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn temperature_order_and_zero() {
        let attr = |id: u64, raw: u64| json!({"id": id, "raw": {"value": raw}});
        let doc = json!({
            "temperature": {"current": 30},
            "ata_smart_attributes": {"table": [attr(194, 0x0023_000D_00FA)]}
        });
        assert_eq!(
            drive_temperature(&doc),
            Ok(Some(30)),
            "smartctl's reading first"
        );
        let doc = json!({"ata_smart_attributes": {"table": [attr(194, 0), attr(190, 0x1A)]}});
        assert_eq!(
            drive_temperature(&doc),
            Ok(Some(26)),
            "a raw 0 is passed over"
        );
        let doc = json!({"ata_smart_attributes": {"table": [attr(194, 0x0023_000D_0000)]}});
        assert_eq!(drive_temperature(&doc), Err(NoTemperature::ReportsZero));
        assert_eq!(
            drive_temperature(&json!({"temperature": {"current": 0}})),
            Err(NoTemperature::ReportsZero)
        );
        assert_eq!(drive_temperature(&json!({})), Ok(None));
    }

    #[test]
    fn megaraid_index_stays() {
        let doc = json!({"device": {"name": "/dev/bus/0", "type": "sat+megaraid,3"}});
        assert_eq!(
            device_name(&doc).as_deref(),
            Some("/dev/bus/0 [megaraid,3]")
        );
        let doc = json!({"device": {"name": "/dev/bus/0", "type": "megaraid,1",
                                    "info_name": "/dev/bus/0 [megaraid_disk_01]"}});
        assert_eq!(
            device_name(&doc).as_deref(),
            Some("/dev/bus/0 [megaraid_disk_01]")
        );
        let doc = json!({"device": {"name": "/dev/sg1", "type": "areca,2/1"}});
        assert_eq!(device_name(&doc).as_deref(), Some("/dev/sg1 [areca,2/1]"));
        let doc = json!({"device": {"name": "/dev/sda", "type": "sat"}});
        assert_eq!(device_name(&doc).as_deref(), Some("/dev/sda"));
    }
}
