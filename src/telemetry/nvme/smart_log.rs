//! Decoder of the NVMe SMART / Health Information log page (LID 02h, 512 bytes), from the
//! NVMe Base Specification. Works on a byte buffer, so tests build one from the spec.

use super::le::{u128_at, u16_at, u32_at, u64_at};
use super::NvmeError;
use crate::telemetry::reading::ThermalThrottle;

/// Length of the SMART / Health log page.
pub const SMART_LOG_LEN: usize = 512;

/// The SMART / Health log, raw units (Kelvin, data units of 512 000 bytes, minutes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartLog {
    pub critical_warning: u8,
    pub composite_temp_k: u16,
    pub available_spare: u8,
    pub available_spare_threshold: u8,
    pub percentage_used: u8,
    pub data_units_read: u128,
    pub data_units_written: u128,
    pub host_read_commands: u128,
    pub host_write_commands: u128,
    pub controller_busy_minutes: u128,
    pub power_cycles: u128,
    pub power_on_hours: u128,
    pub unsafe_shutdowns: u128,
    pub media_errors: u128,
    pub error_log_entries: u128,
    pub warning_temp_minutes: u32,
    pub critical_temp_minutes: u32,
    /// Temperature sensors 1–8 in Kelvin; 0 means the sensor is absent.
    pub sensors_k: [u16; 8],
    pub thermal_throttle: ThermalThrottle,
    /// NVMe 2.1 operational lifetime energy consumed, Wh; 0 = not reported.
    pub lifetime_energy_wh: u64,
    /// NVMe 2.1 interval power measurement, raw dword (value bits 15:0, scale bits 17:16).
    pub interval_power_raw: u32,
}

impl SmartLog {
    /// Decodes a 512-byte log page.
    pub fn decode(buf: &[u8]) -> Result<Self, NvmeError> {
        if buf.len() < SMART_LOG_LEN {
            return Err(NvmeError::Short {
                what: "SMART log",
                need: SMART_LOG_LEN,
                got: buf.len(),
            });
        }
        let mut sensors_k = [0u16; 8];
        for (i, s) in sensors_k.iter_mut().enumerate() {
            *s = u16_at(buf, 200 + 2 * i);
        }
        Ok(SmartLog {
            critical_warning: buf[0],
            composite_temp_k: u16_at(buf, 1),
            available_spare: buf[3],
            available_spare_threshold: buf[4],
            percentage_used: buf[5],
            data_units_read: u128_at(buf, 32),
            data_units_written: u128_at(buf, 48),
            host_read_commands: u128_at(buf, 64),
            host_write_commands: u128_at(buf, 80),
            controller_busy_minutes: u128_at(buf, 96),
            power_cycles: u128_at(buf, 112),
            power_on_hours: u128_at(buf, 128),
            unsafe_shutdowns: u128_at(buf, 144),
            media_errors: u128_at(buf, 160),
            error_log_entries: u128_at(buf, 176),
            warning_temp_minutes: u32_at(buf, 192),
            critical_temp_minutes: u32_at(buf, 196),
            sensors_k,
            thermal_throttle: ThermalThrottle {
                tmt1_transitions: u32_at(buf, 216),
                tmt2_transitions: u32_at(buf, 220),
                tmt1_seconds: u32_at(buf, 224),
                tmt2_seconds: u32_at(buf, 228),
            },
            lifetime_energy_wh: u64_at(buf, 232),
            interval_power_raw: u32_at(buf, 240),
        })
    }

    /// Measured power in watts (NVMe 2.1 interval power), or `None` when not reported.
    ///
    /// The scale field (bits 17:16) is the power scale used across NVMe: 01b = 0.0001 W,
    /// 10b = 0.01 W; 00b means not reported (so an all-zero field is "not reported"),
    /// 11b is reserved. With a valid scale, the value is the drive's measurement as is.
    pub fn measured_power_w(&self) -> Option<f64> {
        let value = self.interval_power_raw & 0xFFFF;
        let scale = (self.interval_power_raw >> 16) & 0b11;
        match scale {
            0b01 => Some(f64::from(value) * 0.0001),
            0b10 => Some(f64::from(value) * 0.01),
            _ => None,
        }
    }
}
