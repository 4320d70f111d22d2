//! Turns the decoded NVMe structures into a [`SmartReading`], and reads one from a device.

use std::path::Path;

use super::{IdentifyController, NvmeDevice, NvmeError, SmartLog};
use crate::telemetry::health::{Health, HealthReason};
use crate::telemetry::reading::{kelvin_to_c, SensorTemp, SmartReading, Source};

fn sat(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

fn threshold_c(k: u16) -> Option<i32> {
    (k != 0).then(|| kelvin_to_c(k))
}

/// Fills identity, thresholds and the power-state ceiling from Identify Controller.
pub fn apply_identify(r: &mut SmartReading, id: &IdentifyController) {
    r.model = id.model.clone();
    r.serial = id.serial.clone();
    r.firmware = id.firmware.clone();
    r.warning_temp_c = threshold_c(id.wctemp_k);
    r.critical_temp_c = threshold_c(id.cctemp_k);
    if let Some(ps) = r.power_state {
        r.power_state_max_w = id.power_state(ps).map(|d| d.max_power_w);
    }
}

/// Fills the health fields from the SMART / Health log. The critical-warning bits are the
/// whole verdict: none set is passed, each one set is a reason.
pub fn apply_smart_log(r: &mut SmartReading, log: &SmartLog) {
    r.health = Health::judge(
        Some(true),
        HealthReason::of_critical_warning(log.critical_warning),
    );
    r.temperature_c = (log.composite_temp_k != 0).then(|| kelvin_to_c(log.composite_temp_k));
    r.sensors_c = log
        .sensors_k
        .iter()
        .enumerate()
        .filter(|(_, &k)| k != 0)
        .map(|(i, &k)| SensorTemp {
            sensor: i as u8 + 1,
            c: kelvin_to_c(k),
        })
        .collect();
    r.critical_warning = Some(log.critical_warning);
    r.available_spare = Some(log.available_spare);
    r.percentage_used = Some(log.percentage_used);
    r.data_units_read = Some(sat(log.data_units_read));
    r.data_units_written = Some(sat(log.data_units_written));
    r.host_read_commands = Some(sat(log.host_read_commands));
    r.host_write_commands = Some(sat(log.host_write_commands));
    r.power_on_hours = Some(sat(log.power_on_hours));
    r.power_cycles = Some(sat(log.power_cycles));
    r.unsafe_shutdowns = Some(sat(log.unsafe_shutdowns));
    r.media_errors = Some(sat(log.media_errors));
    r.power_w = log.measured_power_w();
    r.thermal_throttle = Some(log.thermal_throttle);
}

/// Collects the commands refused for lack of privilege, so that they make one note.
#[derive(Default)]
struct Failures {
    denied: Vec<&'static str>,
    notes: Vec<String>,
}

impl Failures {
    fn add(&mut self, e: NvmeError) {
        match e {
            NvmeError::PermissionDenied { what } => self.denied.push(what),
            other => self.notes.push(other.to_string()),
        }
    }

    fn into_notes(mut self) -> Vec<String> {
        if !self.denied.is_empty() {
            self.notes.insert(
                0,
                format!(
                    "no NVMe admin commands ({}): permission denied, needs CAP_SYS_ADMIN: run as root",
                    self.denied.join(", ")
                ),
            );
        }
        self.notes
    }
}

/// Reads a controller: Identify, SMART log and current power state. Fields a command
/// could not give stay `None`; refusals for lack of privilege make one note, other
/// failures one note each. `source` is [`Source::NvmeAdmin`] only when the SMART log
/// answered.
pub fn read_controller(dev_path: &Path) -> Result<SmartReading, NvmeError> {
    let dev = NvmeDevice::open(dev_path)?;
    let mut r = SmartReading {
        device: Some(dev_path.display().to_string()),
        ..Default::default()
    };
    let mut failed = Failures::default();
    match dev.power_state() {
        Ok(ps) => r.power_state = Some(ps),
        Err(e) => failed.add(e),
    }
    match dev
        .identify_controller()
        .and_then(|b| IdentifyController::decode(&b))
    {
        Ok(id) => apply_identify(&mut r, &id),
        Err(e) => failed.add(e),
    }
    match dev.smart_log().and_then(|b| SmartLog::decode(&b)) {
        Ok(log) => {
            apply_smart_log(&mut r, &log);
            r.source = Some(Source::NvmeAdmin);
        }
        Err(e) => failed.add(e),
    }
    r.notes = failed.into_notes();
    Ok(r)
}
