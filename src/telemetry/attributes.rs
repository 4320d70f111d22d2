//! What a reading keeps of a drive's own counters beyond the NVMe health log: the ATA
//! SMART attribute table (as smartctl reads it, with the meaning of the standard ones
//! decoded) and the SCSI error counter log.

use serde::{Deserialize, Serialize};

/// The kind of device a reading is of, which says what fields it can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    Nvme,
    Ata,
    Scsi,
}

/// When an ATA attribute was at or below its threshold (smartctl's `when_failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhenFailed {
    Never,
    Now,
    Past,
}

/// An ATA attribute's raw value read for its standard meaning, where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AtaDecoded {
    /// Power-on or head-flying hours.
    Hours { hours: u64 },
    /// The current temperature, °C (as smartctl reads it: its drive database knows the
    /// drives whose raw value is tenths of a degree).
    Celsius { c: f64 },
    /// Reallocated, pending or uncorrectable sectors.
    Sectors { count: u64 },
    /// Total LBAs written or read, in bytes (`lba_bytes` each).
    Bytes { bytes: u128, lba_bytes: u32 },
}

/// The ATA attribute flag bits (the FLAGS column of `smartctl -A -f brief`).
pub mod ata_flag {
    pub const PREFAILURE: u16 = 0x01;
    pub const ONLINE: u16 = 0x02;
    pub const PERFORMANCE: u16 = 0x04;
    pub const ERROR_RATE: u16 = 0x08;
    pub const EVENT_COUNT: u16 = 0x10;
    pub const SELF_PRESERVING: u16 = 0x20;
}

/// One row of the ATA SMART attribute table. Value, worst and threshold are absent where
/// smartctl wrote none (an attribute without a normalized value or threshold).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AtaAttribute {
    pub id: u8,
    pub name: Option<String>,
    /// The flag word ([`ata_flag`]).
    pub flags: u16,
    pub value: Option<u8>,
    pub worst: Option<u8>,
    pub threshold: Option<u8>,
    pub when_failed: Option<WhenFailed>,
    /// The raw value as smartctl reads it (48 bits, in the byte order its database gives).
    pub raw: u64,
    /// smartctl's text of the raw value ("24 (Min/Max 13/35)").
    pub raw_string: Option<String>,
    pub decoded: Option<AtaDecoded>,
}

impl AtaAttribute {
    /// A prefailure attribute (its failing predicts the drive's).
    pub fn is_prefailure(&self) -> bool {
        self.flags & ata_flag::PREFAILURE != 0
    }
}

/// The leading number of smartctl's raw text ("26 (Min/Max 25/32)" is 26, "12523h+17m"
/// is 12523, "42.0" is 42.0), the raw value where the text has none.
fn leading_number(raw: u64, text: Option<&str>) -> f64 {
    let t = text.unwrap_or_default().trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t[..end].parse().unwrap_or(raw as f64)
}

/// The standard meaning of an attribute, by the name smartctl's drive database gives it
/// (the same id means other things on other drives): hours, temperatures, sector counts
/// and LBAs (of `lba_bytes` each) written or read.
pub fn decode_ata(name: &str, raw: u64, text: Option<&str>, lba_bytes: u32) -> Option<AtaDecoded> {
    let n = leading_number(raw, text);
    if name.contains("Temperature") {
        // 0 is no sensor behind the attribute, not a temperature.
        return (n != 0.0).then_some(AtaDecoded::Celsius { c: n });
    }
    if name.ends_with("_Hours") {
        return Some(AtaDecoded::Hours { hours: n as u64 });
    }
    if name.contains("Sector") || name == "Offline_Uncorrectable" {
        return Some(AtaDecoded::Sectors { count: n as u64 });
    }
    if name.starts_with("Total_LBAs_") {
        return Some(AtaDecoded::Bytes {
            bytes: u128::from(raw) * u128::from(lba_bytes),
            lba_bytes,
        });
    }
    None
}

/// Which of the SCSI error counter log pages a row is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScsiCounterPage {
    Read,
    Write,
    Verify,
}

impl ScsiCounterPage {
    pub fn as_str(self) -> &'static str {
        match self {
            ScsiCounterPage::Read => "read",
            ScsiCounterPage::Write => "write",
            ScsiCounterPage::Verify => "verify",
        }
    }
}

/// One page of the SCSI error counter log (read, write or verify).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScsiErrorCounter {
    pub page: ScsiCounterPage,
    pub corrected_ecc_fast: Option<u64>,
    pub corrected_ecc_delayed: Option<u64>,
    pub corrected_rereads_rewrites: Option<u64>,
    pub total_corrected: Option<u64>,
    pub correction_algorithm_invocations: Option<u64>,
    /// Gigabytes (10^9 bytes) processed.
    pub gigabytes_processed: Option<f64>,
    pub total_uncorrected: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_meanings_by_name() {
        assert_eq!(
            decode_ata(
                "Temperature_Celsius",
                0x0023_000D_0018,
                Some("24 (Min/Max 13/35)"),
                512
            ),
            Some(AtaDecoded::Celsius { c: 24.0 })
        );
        assert_eq!(
            decode_ata(
                "Head_Flying_Hours",
                4_417_953_684_533_483,
                Some("12523h+17m+08.635s"),
                512
            ),
            Some(AtaDecoded::Hours { hours: 12523 })
        );
        assert_eq!(
            decode_ata("Current_Pending_Sector", 8, None, 512),
            Some(AtaDecoded::Sectors { count: 8 })
        );
        assert_eq!(
            decode_ata("Total_LBAs_Written", 2, Some("2"), 4096),
            Some(AtaDecoded::Bytes {
                bytes: 8192,
                lba_bytes: 4096
            })
        );
        assert_eq!(decode_ata("Raw_Read_Error_Rate", 5, Some("5"), 512), None);
    }
}
