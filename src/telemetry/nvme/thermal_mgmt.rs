//! NVMe thermal management settings from Get Features, as the NVMe Base Specification lays
//! them out: Host Controlled Thermal Management (FID 10h; completion dword 0 holds TMT1 in
//! bits 31:16 and TMT2 in bits 15:0, Kelvin, 0 = that level disabled) and Temperature
//! Threshold (FID 04h; command dword 11 selects the sensor, TMPSEL bits 19:16, and the
//! kind, THSEL bits 21:20; dword 0 of the completion holds TMPTH in bits 15:0, Kelvin).
//! Decoders and the dword 11 encoder only: no command is sent from here.

/// Feature identifier of Temperature Threshold.
pub const FID_TEMPERATURE_THRESHOLD: u8 = 0x04;
/// Feature identifier of Host Controlled Thermal Management.
pub const FID_HCTM: u8 = 0x10;

/// The host's thermal management temperatures (FID 10h): where the controller starts light
/// (TMT1) and heavy (TMT2) throttling; `None` where that level is disabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostThermalManagement {
    pub tmt1_k: Option<u16>,
    pub tmt2_k: Option<u16>,
}

impl HostThermalManagement {
    /// Decodes dword 0 of a Get Features 10h completion.
    pub fn decode(dword0: u32) -> Self {
        let k = |v: u32| u16::try_from(v & 0xFFFF).ok().filter(|&k| k != 0);
        HostThermalManagement {
            tmt1_k: k(dword0 >> 16),
            tmt2_k: k(dword0),
        }
    }
}

/// Which threshold of a sensor (THSEL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdKind {
    /// 00b: the over-temperature threshold.
    Over,
    /// 01b: the under-temperature threshold.
    Under,
}

/// Which temperature a threshold is of (TMPSEL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdSensor {
    /// 0000b: the composite temperature.
    Composite,
    /// 0001b–1000b: temperature sensor 1–8 of the SMART log.
    Sensor(u8),
}

/// Why a threshold cannot be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("temperature sensor {0} does not exist: NVMe numbers them 1 to 8")]
pub struct NoSuchSensor(pub u8);

/// Command dword 11 of a Get Features 04h that reads the `kind` threshold of `sensor`.
pub fn threshold_cdw11(sensor: ThresholdSensor, kind: ThresholdKind) -> Result<u32, NoSuchSensor> {
    let tmpsel = match sensor {
        ThresholdSensor::Composite => 0,
        ThresholdSensor::Sensor(n @ 1..=8) => u32::from(n),
        ThresholdSensor::Sensor(n) => return Err(NoSuchSensor(n)),
    };
    let thsel = match kind {
        ThresholdKind::Over => 0b00,
        ThresholdKind::Under => 0b01,
    };
    Ok((thsel << 20) | (tmpsel << 16))
}

/// The threshold (TMPTH, Kelvin) in dword 0 of a Get Features 04h completion.
pub fn threshold_k(dword0: u32) -> u16 {
    (dword0 & 0xFFFF) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hctm_levels_and_disabled() {
        // TMT1 353 K (80 °C), TMT2 363 K (90 °C).
        let h = HostThermalManagement::decode((353 << 16) | 363);
        assert_eq!(h.tmt1_k, Some(353));
        assert_eq!(h.tmt2_k, Some(363));
        let off = HostThermalManagement::decode(353 << 16);
        assert_eq!(off.tmt2_k, None, "0 disables that level");
        assert_eq!(HostThermalManagement::decode(0).tmt1_k, None);
    }

    #[test]
    fn threshold_selects_sensor_and_kind() {
        use ThresholdKind::{Over, Under};
        use ThresholdSensor::{Composite, Sensor};
        assert_eq!(threshold_cdw11(Composite, Over), Ok(0));
        assert_eq!(threshold_cdw11(Sensor(1), Over), Ok(0x0001_0000));
        assert_eq!(threshold_cdw11(Sensor(8), Under), Ok(0x0018_0000));
        assert_eq!(threshold_cdw11(Sensor(9), Over), Err(NoSuchSensor(9)));
        assert_eq!(threshold_cdw11(Sensor(0), Over), Err(NoSuchSensor(0)));
        assert_eq!(threshold_k(0x0001_0000 | 358), 358);
    }
}
