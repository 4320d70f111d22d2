//! The OCP Datacenter NVMe SSD "SMART / Health Information Extended" log (LID C0h, 512
//! bytes), the fields about media writes, heat and unclean stops: physical media units
//! written and read (u128 at 0 and 16, in bytes: what the drive wrote to its NAND), thermal throttling count (byte 96) and
//! current status (byte 97), PCIe correctable errors (u64 at 104), incomplete shutdowns (u32
//! at 112), the maximum temperature recorded (byte 222, OCP 2.5; reserved, so 0, before),
//! the log page version (u16 at 494). A drive's own C0h log that is not this one is told
//! apart by the log page GUID in bytes 496–511.

use super::le::{u128_at, u16_at, u32_at, u64_at};
use super::NvmeError;
pub use crate::telemetry::reading::ThrottleStatus;

/// Log identifier of the OCP SMART / Health Information Extended log.
pub const OCP_SMART_LID: u8 = 0xC0;
/// Its length.
pub const OCP_SMART_LEN: usize = 512;
/// Its log page GUID (AFD514C97C6F4F9CA4F2BFEA2810AFC5h), as the bytes at 496–511.
const GUID: [u8; 16] = [
    0xC5, 0xAF, 0x10, 0x28, 0xEA, 0xBF, 0xF2, 0xA4, 0x9C, 0x4F, 0x6F, 0x7C, 0xC9, 0x14, 0xD5, 0xAF,
];

/// The fields of the log that drivescope uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcpSmartLog {
    /// Bytes the drive wrote to its media (host writes and its own: garbage collection,
    /// wear levelling).
    pub physical_media_written_bytes: u128,
    /// Bytes the drive read from its media.
    pub physical_media_read_bytes: u128,
    /// Thermal throttling events since the log was cleared.
    pub throttle_events: u8,
    pub throttle_status: ThrottleStatus,
    pub pcie_correctable_errors: u64,
    pub incomplete_shutdowns: u32,
    /// The highest temperature the drive recorded, as the byte gives it; `None` for 0 (not
    /// reported, as before OCP 2.5).
    pub max_temperature_recorded: Option<u8>,
    pub log_page_version: u16,
}

impl OcpSmartLog {
    /// Decodes a 512-byte C0h log; `Ok(None)` when it is not the OCP log (another GUID).
    pub fn decode(buf: &[u8]) -> Result<Option<Self>, NvmeError> {
        if buf.len() < OCP_SMART_LEN {
            return Err(NvmeError::Short {
                what: "OCP SMART extended log",
                need: OCP_SMART_LEN,
                got: buf.len(),
            });
        }
        if buf[496..512] != GUID {
            return Ok(None);
        }
        let throttle_status = match buf[97] {
            0 => ThrottleStatus::Unthrottled,
            level @ 1..=3 => ThrottleStatus::Throttled { level },
            value => ThrottleStatus::Reserved { value },
        };
        Ok(Some(OcpSmartLog {
            physical_media_written_bytes: u128_at(buf, 0),
            physical_media_read_bytes: u128_at(buf, 16),
            throttle_events: buf[96],
            throttle_status,
            pcie_correctable_errors: u64_at(buf, 104),
            incomplete_shutdowns: u32_at(buf, 112),
            max_temperature_recorded: Some(buf[222]).filter(|&t| t != 0),
            log_page_version: u16_at(buf, 494),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log() -> Vec<u8> {
        let mut b = vec![0u8; OCP_SMART_LEN];
        b[0..16].copy_from_slice(&(3u128 << 64 | 5).to_le_bytes());
        b[16..32].copy_from_slice(&9_000u128.to_le_bytes());
        b[96] = 7;
        b[97] = 2;
        b[104..112].copy_from_slice(&12_345u64.to_le_bytes());
        b[112..116].copy_from_slice(&3u32.to_le_bytes());
        b[222] = 71;
        b[494..496].copy_from_slice(&4u16.to_le_bytes());
        b[496..512].copy_from_slice(&GUID);
        b
    }

    #[test]
    fn fields_at_their_offsets() {
        let l = OcpSmartLog::decode(&log()).unwrap().expect("the OCP log");
        assert_eq!(l.physical_media_written_bytes, 3u128 << 64 | 5);
        assert_eq!(l.physical_media_read_bytes, 9_000);
        assert_eq!(l.throttle_events, 7);
        assert_eq!(l.throttle_status, ThrottleStatus::Throttled { level: 2 });
        assert_eq!(l.pcie_correctable_errors, 12_345);
        assert_eq!(l.incomplete_shutdowns, 3);
        assert_eq!(l.max_temperature_recorded, Some(71));
        assert_eq!(l.log_page_version, 4);
    }

    #[test]
    fn another_c0_log_short_buffers_and_unset_fields() {
        let mut other = log();
        other[511] ^= 0xFF;
        assert_eq!(
            OcpSmartLog::decode(&other).unwrap(),
            None,
            "a vendor's own C0h"
        );
        assert!(OcpSmartLog::decode(&[0u8; 100]).is_err());
        let mut old = log();
        old[97] = 0;
        old[222] = 0;
        let l = OcpSmartLog::decode(&old).unwrap().expect("the OCP log");
        assert_eq!(l.throttle_status, ThrottleStatus::Unthrottled);
        assert_eq!(l.max_temperature_recorded, None, "reserved before 2.5");
        old[97] = 9;
        let l = OcpSmartLog::decode(&old).unwrap().expect("the OCP log");
        assert_eq!(l.throttle_status, ThrottleStatus::Reserved { value: 9 });
    }
}
