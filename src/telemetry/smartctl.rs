//! `smartctl -j` (smartmontools ≥ 7.0): run on SATA, SAS and USB-bridged drives, or read
//! from a saved output file, and decoded into a [`SmartReading`]. ATA temperatures come
//! from SCT status when present, else attribute 194 or 190 (raw byte 0 only: the other
//! bytes often pack min/max), else `temperature.current`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::telemetry::reading::{SensorTemp, SmartReading, Source};

/// Errors of the smartctl source.
#[derive(Debug, thiserror::Error)]
pub enum SmartctlError {
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{path}: not smartctl JSON: {source}")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("smartctl is not installed (apt-get install smartmontools)")]
    NotInstalled,
    #[error("cannot run smartctl: {0}")]
    Spawn(std::io::Error),
    #[error("smartctl did not answer within {0:?}")]
    Timeout(Duration),
    #[error("smartctl: {0}")]
    Failed(String),
}

/// How long one `smartctl` run may take before it is killed.
pub const SMARTCTL_TIMEOUT: Duration = Duration::from_secs(10);

fn u64_of(v: &Value) -> Option<u64> {
    v.as_u64()
}

fn i32_of(v: &Value) -> Option<i32> {
    v.as_i64().and_then(|x| i32::try_from(x).ok())
}

fn u8_of(v: &Value) -> Option<u8> {
    v.as_u64().and_then(|x| u8::try_from(x).ok())
}

fn str_of(v: &Value) -> Option<String> {
    v.as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

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

/// Decodes one `smartctl -j` document.
pub fn decode(doc: &Value, source: Source) -> SmartReading {
    let mut r = SmartReading {
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
    if r.temperature_c.is_none() && r.model.is_none() {
        if let Some(msgs) = doc["smartctl"]["messages"].as_array() {
            for m in msgs.iter().filter_map(|m| str_of(&m["string"])) {
                r.notes.push(format!("smartctl: {m}"));
            }
        }
        r.source = None;
    }
    r
}

/// The largest saved smartctl output read.
pub const MAX_FILE_BYTES: u64 = 16 * crate::input::MIB;

/// Decodes a saved `smartctl -j` output file (a regular file of at most
/// [`MAX_FILE_BYTES`], or `-` for standard input).
pub fn decode_file(path: &Path) -> Result<SmartReading, SmartctlError> {
    let bytes = crate::input::read_input_or_stdin(path, MAX_FILE_BYTES, "smartctl JSON")?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|source| SmartctlError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(decode(&doc, Source::SmartctlFile))
}

/// Runs `smartctl -j -i -H -A [-l scttemp]` on `device`, killed after `timeout`.
pub fn run(device: &Path, timeout: Duration) -> Result<SmartReading, SmartctlError> {
    let mut child = Command::new("smartctl")
        .args(["-j", "-i", "-H", "-A", "-l", "scttempsts", "-n", "standby"])
        .arg(device)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SmartctlError::NotInstalled,
            _ => SmartctlError::Spawn(e),
        })?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| SmartctlError::Failed("no stdout".into()))?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SmartctlError::Timeout(timeout));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(SmartctlError::Spawn(e)),
        }
    }
    let out = reader
        .join()
        .map_err(|_| SmartctlError::Failed("reader thread panicked".into()))?;
    let doc: Value = serde_json::from_str(&out).map_err(|source| SmartctlError::Json {
        path: device.to_path_buf(),
        source,
    })?;
    let r = decode(&doc, Source::Smartctl);
    if r.source.is_none() {
        let mut why = r.notes.join("; ");
        if why.is_empty() {
            why = "no SMART data".into();
        } else if why.contains("Permission denied") {
            why.push_str(" (run as root)");
        }
        return Err(SmartctlError::Failed(why));
    }
    Ok(r)
}
