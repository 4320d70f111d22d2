//! One smartctl output decoded into a [`SmartReading`]: identity, the NVMe health log, ATA
//! temperatures and thresholds, and the health verdict. ATA temperatures come from SCT
//! status when present, else attribute 194 or 190 (raw byte 0 only: the other bytes often
//! pack min/max), else `temperature.current`.

use serde_json::Value;

use super::health::health;
use super::json::{i32_of, str_of, u64_of, u8_of};
use crate::telemetry::reading::{SensorTemp, SmartReading, Source};

/// Current temperature of ATA attribute `id`: raw byte 0 only.
fn ata_attr_temp(doc: &Value, id: u64) -> Option<i32> {
    let table = doc.pointer("/ata_smart_attributes/table")?.as_array()?;
    let attr = table.iter().find(|a| a["id"].as_u64() == Some(id))?;
    let raw = attr.pointer("/raw/value")?.as_u64()?;
    Some((raw & 0xFF) as i32)
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
    // smartctl prints the thermal management counts as text only, not in its JSON, so
    // `thermal_throttle` stays unknown from this source.
}

/// Decodes one `smartctl -j` document (it is not checked to be one: see
/// [`super::check_output`]).
pub fn decode(doc: &Value, source: Source) -> SmartReading {
    let mut r = SmartReading {
        health: health(doc),
        source: Some(source),
        device: str_of(&doc["device"]["name"]),
        model: str_of(&doc["model_name"]).or_else(|| {
            // SCSI/SAS drives: vendor + product.
            let v = str_of(&doc["scsi_vendor"])?;
            Some(match str_of(&doc["scsi_product"]) {
                Some(p) => format!("{v} {p}"),
                None => v,
            })
        }),
        serial: str_of(&doc["serial_number"]),
        firmware: str_of(&doc["firmware_version"]).or_else(|| str_of(&doc["scsi_revision"])),
        power_on_hours: u64_of(&doc["power_on_time"]["hours"]),
        power_cycles: u64_of(&doc["power_cycle_count"]),
        ..Default::default()
    };
    let log = &doc["nvme_smart_health_information_log"];
    if log.is_object() {
        nvme_fields(&mut r, log);
        let th = &doc["nvme_composite_temperature_threshold"];
        r.warning_temp_c = i32_of(&th["warning"]);
        r.critical_temp_c = i32_of(&th["critical"]);
    } else {
        r.temperature_c = i32_of(&doc["ata_sct_status"]["temperature"]["current"])
            .or_else(|| ata_attr_temp(doc, 194))
            .or_else(|| ata_attr_temp(doc, 190))
            .or_else(|| i32_of(&doc["temperature"]["current"]));
        r.warning_temp_c = i32_of(&doc["ata_sct_status"]["temperature"]["op_limit_max"])
            .or_else(|| i32_of(&doc["temperature"]["op_limit_max"]));
        r.critical_temp_c = i32_of(&doc["temperature"]["limit_max"]);
    }
    r
}
