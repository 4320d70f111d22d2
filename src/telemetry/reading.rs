//! The SMART-ish reading of one drive, whichever source answered: NVMe admin commands,
//! hwmon, or `smartctl -j`. Unknown fields stay `None` (JSON `null`); nothing is invented.

use serde::{Deserialize, Serialize};

use super::attributes::{AtaAttribute, DeviceKind, ScsiErrorCounter};
use super::health::Health;

/// Which source answered a reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// NVMe admin passthrough: SMART / Health log, Identify Controller, Get Features.
    NvmeAdmin,
    /// The kernel's hwmon sensors (`nvme` or `drivetemp`), readable without root.
    Hwmon,
    /// `smartctl -j` run on the device.
    Smartctl,
    /// A saved `smartctl -j` output file.
    SmartctlFile,
}

impl Source {
    /// The name printed for this source (matches the JSON spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            Source::NvmeAdmin => "nvme_admin",
            Source::Hwmon => "hwmon",
            Source::Smartctl => "smartctl",
            Source::SmartctlFile => "smartctl_file",
        }
    }
}

/// One temperature sensor besides the composite: its 1-based number and degrees Celsius.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SensorTemp {
    /// Sensor number as the drive numbers it (NVMe: 1..=8).
    pub sensor: u8,
    /// Degrees Celsius.
    pub c: i32,
}

/// NVMe host-controlled thermal management: how often and how long the drive throttled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ThermalThrottle {
    /// Transitions into light throttling (thermal management temperature 1).
    pub tmt1_transitions: u32,
    /// Transitions into heavy throttling (thermal management temperature 2).
    pub tmt2_transitions: u32,
    /// Total seconds spent at thermal management temperature 1.
    pub tmt1_seconds: u32,
    /// Total seconds spent at thermal management temperature 2.
    pub tmt2_seconds: u32,
}

/// NVMe host controlled thermal management: whether the controller supports it (Identify
/// HCTMA bit 0), the range the host may set (Identify MNTMT, MXTMT) and the temperatures in
/// force (Get Features 10h TMT1, TMT2), whole °C. `None` is not reported, disabled (a TMT of
/// 0 K) or not read (the notes say why).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ThermalManagement {
    pub supported: bool,
    /// TMT1: from here the controller throttles lightly.
    pub tmt1_c: Option<i32>,
    /// TMT2: from here the controller throttles heavily.
    pub tmt2_c: Option<i32>,
    /// MNTMT: the lowest TMT the host may set.
    pub mntmt_c: Option<i32>,
    /// MXTMT: the highest TMT the host may set.
    pub mxtmt_c: Option<i32>,
}

/// One temperature's thresholds (NVMe Get Features 04h), whole °C; `None` where not read, or
/// a threshold of 0 K (an under-temperature threshold no temperature can cross).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SensorThresholds {
    /// As TMPSEL numbers it: 0 is the composite temperature, 1–8 the sensors of
    /// [`SmartReading::sensors_c`].
    pub sensor: u8,
    /// Over-temperature threshold: above it the drive raises its temperature warning.
    pub over_c: Option<i32>,
    /// Under-temperature threshold: below it the drive raises its temperature warning.
    pub under_c: Option<i32>,
}

/// Whether the drive throttles for heat now (OCP SMART extended log, byte 97).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ThrottleStatus {
    Unthrottled,
    /// First, second or third level.
    Throttled {
        level: u8,
    },
    /// A value the specification reserves.
    Reserved {
        value: u8,
    },
}

/// The OCP Datacenter NVMe SSD SMART / Health Information Extended log (C0h): the fields
/// about heat and unclean stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OcpSmartHealth {
    /// Physical media units written: bytes the drive wrote to its media, its own writes
    /// included (saturates at `u64::MAX`; `None` in sessions written before it was read).
    #[serde(default)]
    pub media_written_bytes: Option<u64>,
    /// Physical media units read, bytes.
    #[serde(default)]
    pub media_read_bytes: Option<u64>,
    pub throttle_status: ThrottleStatus,
    /// Thermal throttling events (the log's counter saturates at 255).
    pub throttle_events: u8,
    /// The highest temperature the drive recorded, °C (OCP 2.5; `None` before, where the
    /// byte is reserved and 0).
    pub max_temperature_c: Option<i32>,
    pub pcie_correctable_errors: u64,
    pub incomplete_shutdowns: u32,
    /// The log page version (OCP specification revision the drive follows).
    pub log_page_version: u16,
}

/// Why a source that answered gave no temperature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum NoTemperature {
    /// The device reports 0 °C, as RAID virtual disks (MegaRAID/PERC volumes) and ATA
    /// attributes without a sensor behind them do: no sensor, not a temperature.
    #[error("the device reports 0 °C, which means no sensor (RAID virtual disks report it)")]
    ReportsZero,
}

/// One SMART-ish reading. Field names are the JSON keys of `drivescope smart --json`;
/// `health` comes first. A key missing (a session of an older release, a hand-made one)
/// reads as none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SmartReading {
    /// The drive's health verdict and why it failed (sessions written before it read as
    /// unknown).
    pub health: Health,
    /// The device the reading is of (`/dev/nvme0`, `/dev/sda`, or the file's `device.name`).
    pub device: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// Composite (NVMe) or drive (ATA) temperature, °C.
    pub temperature_c: Option<i32>,
    /// Why the temperature is unknown although the source answered.
    pub temperature_unknown: Option<NoTemperature>,
    /// Further sensors that report a value (NVMe sensors reading 0 are absent and left out).
    pub sensors_c: Vec<SensorTemp>,
    /// Warning threshold, °C (NVMe WCTEMP / hwmon temp1_max / ATA SCT operating limit).
    pub warning_temp_c: Option<i32>,
    /// Critical threshold, °C (NVMe CCTEMP / hwmon temp1_crit / ATA SCT limit).
    pub critical_temp_c: Option<i32>,
    /// NVMe critical warning bit field (bit 1 is temperature); 0 is healthy.
    pub critical_warning: Option<u8>,
    /// Available spare, percent.
    pub available_spare: Option<u8>,
    /// Percentage of rated endurance used; may exceed 100.
    pub percentage_used: Option<u8>,
    /// NVMe data units read (1 unit = 1000 × 512 bytes).
    pub data_units_read: Option<u64>,
    /// NVMe data units written (1 unit = 1000 × 512 bytes).
    pub data_units_written: Option<u64>,
    pub host_read_commands: Option<u64>,
    pub host_write_commands: Option<u64>,
    pub power_on_hours: Option<u64>,
    pub power_cycles: Option<u64>,
    pub unsafe_shutdowns: Option<u64>,
    pub media_errors: Option<u64>,
    /// The kind of device the reading is of, which says what fields it can have (`None`
    /// where no source said, and in sessions written before it).
    pub kind: Option<DeviceKind>,
    /// NVMe error information log entries; the ATA SMART error log's count.
    pub error_log_entries: Option<u64>,
    /// NVMe: minutes the composite temperature spent at or above the warning threshold.
    pub warning_temp_minutes: Option<u64>,
    /// NVMe: minutes the composite temperature spent at or above the critical threshold.
    pub critical_temp_minutes: Option<u64>,
    /// ATA: self-tests in the log that failed, less those a newer passed extended test
    /// outdated (smartctl's `error_count_total - error_count_outdated`).
    pub self_test_errors: Option<u64>,
    /// The ATA SMART attribute table, in the drive's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ata_attributes: Vec<AtaAttribute>,
    /// SCSI: entries of the grown defect list.
    pub scsi_grown_defects: Option<u64>,
    /// SCSI: the error counter log, a row per page the drive has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scsi_error_counters: Vec<ScsiErrorCounter>,
    /// smartctl's own exit status, where smartctl made the reading.
    pub smartctl_exit_status: Option<u8>,
    /// Current NVMe power state (Get Features 02h).
    pub power_state: Option<u8>,
    /// That power state's maximum power from its descriptor: a ceiling, not a measurement.
    pub power_state_max_w: Option<f64>,
    /// Power the drive itself measured (NVMe 2.1); `None` unless the drive reports it.
    pub power_w: Option<f64>,
    pub thermal_throttle: Option<ThermalThrottle>,
    /// NVMe host controlled thermal management (Identify and Get Features 10h).
    pub thermal_management: Option<ThermalManagement>,
    /// NVMe temperature thresholds (Get Features 04h) of the composite temperature and of
    /// each sensor the SMART log reports.
    pub temperature_thresholds: Vec<SensorThresholds>,
    /// The OCP SMART / Health extended log (C0h), on drives that have it.
    pub ocp_smart: Option<OcpSmartHealth>,
    /// Which source answered; `None` when no source did.
    pub source: Option<Source>,
    /// Why fields are missing, one line per reason ("no NVMe SMART log: run as root").
    pub notes: Vec<String>,
}

/// Bytes in an NVMe data unit (the SMART / Health log counts data read and written in
/// units of 1000 × 512 bytes).
pub const DATA_UNIT_BYTES: u64 = 512_000;

/// NVMe reports Kelvin; drivescope shows whole degrees Celsius, as smartctl and nvme-cli do.
pub fn kelvin_to_c(k: u16) -> i32 {
    i32::from(k) - 273
}
