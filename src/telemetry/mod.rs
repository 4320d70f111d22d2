//! Drive telemetry beside the engine's figures: NVMe admin commands, hwmon, `smartctl -j`,
//! the kernel's block counters and host CPU/memory, polled on a thread of its own.

pub mod attributes;
pub mod blockstat;
pub mod collect;
pub mod devices;
pub mod exit_status;
pub mod health;
pub mod host;
pub mod hwmon;
pub mod nvme;
pub mod poller;
pub mod reading;
pub mod smartctl;
pub mod text;
pub mod wear;
pub mod wear_text;

pub use attributes::{
    AtaAttribute, AtaDecoded, DeviceKind, ScsiCounterPage, ScsiErrorCounter, WhenFailed,
};
pub use collect::{read_smart, SmartSource};
pub use exit_status::{SmartExit, SmartExitBit};
pub use health::{Health, HealthChange, HealthReason, HealthWatch};
pub use poller::{Poller, TelemetrySample, DEFAULT_PERIOD, MIN_PERIOD};
pub use reading::{
    NoTemperature, OcpSmartHealth, SensorTemp, SensorThresholds, SmartReading, Source,
    ThermalManagement, ThermalThrottle, ThrottleStatus,
};
pub use wear::{DriveWear, ErrorWatch, MediaCounter, NewDriveErrors, WearSpan};
