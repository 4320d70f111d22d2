//! Turns the decoded NVMe structures into a [`SmartReading`], and reads one from a device:
//! Identify, the SMART log and the power state every time; the thermal management
//! settings (Get Features 10h and 04h) and the OCP SMART extended log (C0h) where the
//! controller supports them. What a controller refused as unsupported is remembered in a
//! [`NvmeMemory`] and not asked again on the next poll.

use std::fmt;
use std::path::Path;

pub use super::ioctl::AdminCommands;
use super::ocp_smart::OcpSmartLog;
use super::thermal_mgmt::{
    threshold_cdw11, threshold_k, HostThermalManagement, ThresholdKind, ThresholdSensor,
};
use super::{IdentifyController, NvmeDevice, NvmeError, Refusal, SmartLog};
use crate::telemetry::attributes::DeviceKind;
use crate::telemetry::health::{Health, HealthReason};
use crate::telemetry::reading::{
    kelvin_to_c, OcpSmartHealth, SensorTemp, SensorThresholds, SmartReading, Source,
    ThermalManagement,
};

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
    r.thermal_management = Some(ThermalManagement {
        supported: id.hctm_supported,
        mntmt_c: threshold_c(id.mntmt_k),
        mxtmt_c: threshold_c(id.mxtmt_k),
        ..Default::default()
    });
}

/// Fills TMT1 and TMT2 from Get Features 10h (after [`apply_identify`], which says whether
/// the controller supports them).
pub fn apply_host_thermal_management(r: &mut SmartReading, h: &HostThermalManagement) {
    let tm = r.thermal_management.get_or_insert(ThermalManagement {
        supported: true,
        ..Default::default()
    });
    tm.tmt1_c = h.tmt1_k.map(kelvin_to_c);
    tm.tmt2_c = h.tmt2_k.map(kelvin_to_c);
}

/// Fills the OCP SMART extended log's heat and shutdown fields.
pub fn apply_ocp_smart_log(r: &mut SmartReading, log: &OcpSmartLog) {
    r.ocp_smart = Some(OcpSmartHealth {
        media_written_bytes: Some(sat(log.physical_media_written_bytes)),
        media_read_bytes: Some(sat(log.physical_media_read_bytes)),
        throttle_status: log.throttle_status,
        throttle_events: log.throttle_events,
        max_temperature_c: log.max_temperature_recorded.map(i32::from),
        pcie_correctable_errors: log.pcie_correctable_errors,
        incomplete_shutdowns: log.incomplete_shutdowns,
        log_page_version: log.log_page_version,
    });
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
    r.error_log_entries = Some(sat(log.error_log_entries));
    r.warning_temp_minutes = Some(u64::from(log.warning_temp_minutes));
    r.critical_temp_minutes = Some(u64::from(log.critical_temp_minutes));
    r.kind = Some(DeviceKind::Nvme);
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

/// A command a controller need not support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionalCommand {
    /// Get Features 10h (TMT1, TMT2).
    HostThermalManagement,
    /// Get Features 04h for one threshold of one temperature.
    TemperatureThreshold(ThresholdSensor, ThresholdKind),
    /// Get Log Page C0h.
    OcpSmartLog,
}

impl fmt::Display for OptionalCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionalCommand::HostThermalManagement => {
                f.write_str("no host controlled thermal management temperatures (Get Features 10h)")
            }
            OptionalCommand::TemperatureThreshold(sensor, kind) => {
                let kind = match kind {
                    ThresholdKind::Over => "over",
                    ThresholdKind::Under => "under",
                };
                match sensor {
                    ThresholdSensor::Composite => write!(
                        f,
                        "no {kind}-temperature threshold of the composite temperature (Get Features 04h)"
                    ),
                    ThresholdSensor::Sensor(n) => write!(
                        f,
                        "no {kind}-temperature threshold of sensor {n} (Get Features 04h)"
                    ),
                }
            }
            OptionalCommand::OcpSmartLog => {
                f.write_str("no OCP SMART extended log (Get Log Page C0h)")
            }
        }
    }
}

/// Why a controller does not give an optional command's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotSupported {
    /// The controller refused the command as unsupported.
    #[error("the controller does not support it ({0})")]
    Refused(Refusal),
    /// Log page C0h answered, but with another log page GUID: a vendor's own C0h log.
    #[error("log page C0h is the vendor's own, not the OCP log")]
    OtherC0Log,
}

/// An optional command a controller does not support, and why: the note said once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{command}: {why}; not asked again")]
pub struct Unsupported {
    pub command: OptionalCommand,
    pub why: NotSupported,
}

/// What one controller does not support, kept between the poller's readings (every 2 s)
/// so that each optional command it refused is sent once, not on every poll.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NvmeMemory {
    unsupported: Vec<Unsupported>,
}

impl NvmeMemory {
    /// The optional commands found unsupported so far, in the order found.
    pub fn unsupported(&self) -> &[Unsupported] {
        &self.unsupported
    }

    fn knows(&self, command: OptionalCommand) -> bool {
        self.unsupported.iter().any(|u| u.command == command)
    }

    fn remember(&mut self, command: OptionalCommand, why: NotSupported) {
        if !self.knows(command) {
            self.unsupported.push(Unsupported { command, why });
        }
    }

    /// Sends `command` unless it is known unsupported: `None` when not sent or refused as
    /// unsupported (now remembered), the answer otherwise; other failures go to `failed`.
    fn ask<T>(
        &mut self,
        command: OptionalCommand,
        failed: &mut Failures,
        send: impl FnOnce() -> Result<T, NvmeError>,
    ) -> Option<T> {
        if self.knows(command) {
            return None;
        }
        match send() {
            Ok(v) => Some(v),
            Err(e) => {
                match e.refusal() {
                    Some(r) => self.remember(command, NotSupported::Refused(r)),
                    None => failed.add(e),
                }
                None
            }
        }
    }
}

/// The composite temperature's and each reported sensor's thresholds, over and under.
/// The whole feature counts as unsupported when the composite's over threshold is refused.
fn read_thresholds(
    dev: &impl AdminCommands,
    sensors: &[u8],
    memory: &mut NvmeMemory,
    failed: &mut Failures,
) -> Vec<SensorThresholds> {
    let feature =
        OptionalCommand::TemperatureThreshold(ThresholdSensor::Composite, ThresholdKind::Over);
    let temps = std::iter::once(ThresholdSensor::Composite)
        .chain(sensors.iter().map(|&n| ThresholdSensor::Sensor(n)));
    let mut out = Vec::new();
    for sensor in temps {
        let mut one = |kind| {
            if memory.knows(feature) {
                return None;
            }
            // Sensors come from the SMART log's eight slots: always 1..=8.
            let cdw11 = threshold_cdw11(sensor, kind).ok()?;
            memory
                .ask(
                    OptionalCommand::TemperatureThreshold(sensor, kind),
                    failed,
                    || dev.temperature_threshold(cdw11),
                )
                .map(|dw0| threshold_c(threshold_k(dw0)))
        };
        let over = one(ThresholdKind::Over);
        let under = one(ThresholdKind::Under);
        if over.is_some() || under.is_some() {
            out.push(SensorThresholds {
                sensor: match sensor {
                    ThresholdSensor::Composite => 0,
                    ThresholdSensor::Sensor(n) => n,
                },
                over_c: over.flatten(),
                under_c: under.flatten(),
            });
        }
    }
    out
}

/// Reads a controller: Identify, SMART log and current power state, then the optional
/// thermal figures `memory` does not know to be unsupported. Fields a command could not
/// give stay `None`; refusals for lack of privilege make one note (and skip the optional
/// commands, which need the same privilege), other failures one note each, and each
/// unsupported optional command one note. `source` is [`Source::NvmeAdmin`] only when the
/// SMART log answered.
pub fn read_with(dev: &impl AdminCommands, device: &Path, memory: &mut NvmeMemory) -> SmartReading {
    let mut r = SmartReading {
        device: Some(device.display().to_string()),
        ..Default::default()
    };
    let mut failed = Failures::default();
    match dev.power_state() {
        Ok(ps) => r.power_state = Some(ps),
        Err(e) => failed.add(e),
    }
    let identify = dev
        .identify_controller()
        .and_then(|b| IdentifyController::decode(&b));
    let hctm_supported = match identify {
        Ok(id) => {
            apply_identify(&mut r, &id);
            id.hctm_supported
        }
        Err(e) => {
            failed.add(e);
            false
        }
    };
    let mut sensors = Vec::new();
    match dev.smart_log().and_then(|b| SmartLog::decode(&b)) {
        Ok(log) => {
            apply_smart_log(&mut r, &log);
            r.source = Some(Source::NvmeAdmin);
            sensors = r.sensors_c.iter().map(|s| s.sensor).collect();
        }
        Err(e) => failed.add(e),
    }
    if failed.denied.is_empty() {
        if hctm_supported {
            let dw0 = memory.ask(OptionalCommand::HostThermalManagement, &mut failed, || {
                dev.host_thermal_management()
            });
            if let Some(dw0) = dw0 {
                apply_host_thermal_management(&mut r, &HostThermalManagement::decode(dw0));
            }
        }
        r.temperature_thresholds = read_thresholds(dev, &sensors, memory, &mut failed);
        let ocp = memory.ask(OptionalCommand::OcpSmartLog, &mut failed, || {
            dev.ocp_smart_log()
        });
        match ocp.map(|b| OcpSmartLog::decode(&b)) {
            Some(Ok(Some(log))) => apply_ocp_smart_log(&mut r, &log),
            Some(Ok(None)) => {
                memory.remember(OptionalCommand::OcpSmartLog, NotSupported::OtherC0Log)
            }
            Some(Err(e)) => failed.add(e),
            None => {}
        }
    }
    r.notes = failed.into_notes();
    r.notes
        .extend(memory.unsupported().iter().map(ToString::to_string));
    r
}

/// Reads a controller, remembering in `memory` what it does not support (see [`read_with`]).
pub fn read_controller_with(
    dev_path: &Path,
    memory: &mut NvmeMemory,
) -> Result<SmartReading, NvmeError> {
    let dev = NvmeDevice::open(dev_path)?;
    Ok(read_with(&dev, dev_path, memory))
}
