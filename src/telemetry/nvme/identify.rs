//! Decoder of the NVMe Identify Controller data structure (CNS 01h, 4096 bytes): model,
//! serial, firmware, temperature thresholds, host controlled thermal management's support
//! and limits, and the power state descriptors.

use super::le::{ascii_at, u16_at, u32_at};
use super::NvmeError;

/// Length of the Identify Controller data structure.
pub const IDENTIFY_LEN: usize = 4096;
const PSD_OFFSET: usize = 2048;
const PSD_LEN: usize = 32;

/// One power state descriptor.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerState {
    /// Maximum power of this state, watts (MXPS applied): a ceiling, not a measurement.
    pub max_power_w: f64,
    /// Non-operational state (no I/O is processed in it).
    pub non_operational: bool,
    pub entry_latency_us: u32,
    pub exit_latency_us: u32,
    /// Typical idle power, watts, when the descriptor reports it.
    pub idle_power_w: Option<f64>,
    /// Typical active power, watts, when the descriptor reports it.
    pub active_power_w: Option<f64>,
}

/// The fields of Identify Controller that drivescope uses.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentifyController {
    pub serial: Option<String>,
    pub model: Option<String>,
    pub firmware: Option<String>,
    /// Warning composite temperature threshold, Kelvin; 0 = not reported.
    pub wctemp_k: u16,
    /// Critical composite temperature threshold, Kelvin; 0 = not reported.
    pub cctemp_k: u16,
    /// HCTMA bit 0: the controller supports host controlled thermal management.
    pub hctm_supported: bool,
    /// MNTMT: the lowest thermal management temperature the host may set, Kelvin; 0 = not
    /// reported.
    pub mntmt_k: u16,
    /// MXTMT: the highest thermal management temperature the host may set, Kelvin; 0 = not
    /// reported.
    pub mxtmt_k: u16,
    /// Power states 0..=NPSS.
    pub power_states: Vec<PowerState>,
}

/// Idle/active power: value × scale (bits 7:6 of the scale byte): 01b = 0.0001 W,
/// 10b = 0.01 W, 00b = not reported.
fn scaled_power(value: u16, scale_byte: u8) -> Option<f64> {
    match scale_byte >> 6 {
        0b01 => Some(f64::from(value) * 0.0001),
        0b10 => Some(f64::from(value) * 0.01),
        _ => None,
    }
}

impl PowerState {
    /// Decodes one 32-byte descriptor.
    pub fn decode(d: &[u8]) -> Self {
        let mp = u16_at(d, 0);
        let flags = d.get(3).copied().unwrap_or(0);
        let unit = if flags & 0b1 == 0 { 0.01 } else { 0.0001 };
        PowerState {
            max_power_w: f64::from(mp) * unit,
            non_operational: flags & 0b10 != 0,
            entry_latency_us: u32_at(d, 4),
            exit_latency_us: u32_at(d, 8),
            idle_power_w: scaled_power(u16_at(d, 16), d.get(18).copied().unwrap_or(0)),
            active_power_w: scaled_power(u16_at(d, 20), d.get(22).copied().unwrap_or(0)),
        }
    }
}

impl IdentifyController {
    /// Decodes a 4096-byte Identify Controller buffer.
    pub fn decode(buf: &[u8]) -> Result<Self, NvmeError> {
        if buf.len() < IDENTIFY_LEN {
            return Err(NvmeError::Short {
                what: "Identify Controller",
                need: IDENTIFY_LEN,
                got: buf.len(),
            });
        }
        // NPSS is 0-based and at most 31 descriptors fit (2048 + 32 × 32 = 3072).
        let count = usize::from(buf[263]).min(31) + 1;
        let power_states = (0..count)
            .map(|i| {
                let off = PSD_OFFSET + i * PSD_LEN;
                PowerState::decode(&buf[off..off + PSD_LEN])
            })
            .collect();
        Ok(IdentifyController {
            serial: ascii_at(buf, 4, 20),
            model: ascii_at(buf, 24, 40),
            firmware: ascii_at(buf, 64, 8),
            wctemp_k: u16_at(buf, 266),
            cctemp_k: u16_at(buf, 268),
            hctm_supported: u16_at(buf, 322) & 0b1 != 0,
            mntmt_k: u16_at(buf, 324),
            mxtmt_k: u16_at(buf, 326),
            power_states,
        })
    }

    /// The descriptor of power state `ps`, if the controller has it.
    pub fn power_state(&self, ps: u8) -> Option<&PowerState> {
        self.power_states.get(usize::from(ps))
    }
}
