//! What a stretch of time did to a drive, from two readings of it (before and after a
//! run or a phase): the bytes the host wrote and read as the drive counts them, the new
//! media errors and error-log entries, the minutes above its warning and critical
//! temperatures, the endurance used. A counter that went backwards (a reset, another
//! drive) or that either reading lacks is `None`, never a guess.
//!
//! The run does not read the drive at its edges yet (issue 32, part 3): this is the
//! arithmetic it will use.

use super::attributes::{AtaAttribute, AtaDecoded};
use super::reading::{SmartReading, DATA_UNIT_BYTES};

/// The differences between two readings of one drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmartDelta {
    /// NVMe data units written, in bytes; ATA `Total_LBAs_Written`, in bytes.
    pub host_bytes_written: Option<u128>,
    /// NVMe data units read, in bytes; ATA `Total_LBAs_Read`, in bytes.
    pub host_bytes_read: Option<u128>,
    pub media_errors: Option<u64>,
    pub error_log_entries: Option<u64>,
    pub unsafe_shutdowns: Option<u64>,
    pub warning_temp_minutes: Option<u64>,
    pub critical_temp_minutes: Option<u64>,
    /// Points of rated endurance used.
    pub percentage_used: Option<u8>,
}

fn grew(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

fn ata_bytes(attrs: &[AtaAttribute], name: &str) -> Option<u128> {
    attrs
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
        .and_then(|a| match a.decoded {
            Some(AtaDecoded::Bytes { bytes, .. }) => Some(bytes),
            _ => None,
        })
}

fn bytes_grew(before: Option<u128>, after: Option<u128>) -> Option<u128> {
    after?.checked_sub(before?)
}

/// Host bytes by the NVMe data units, else by the ATA attribute `ata`.
fn host_bytes(
    before: &SmartReading,
    after: &SmartReading,
    units: fn(&SmartReading) -> Option<u64>,
    ata: &str,
) -> Option<u128> {
    grew(units(before), units(after))
        .map(|u| u128::from(u) * u128::from(DATA_UNIT_BYTES))
        .or_else(|| {
            bytes_grew(
                ata_bytes(&before.ata_attributes, ata),
                ata_bytes(&after.ata_attributes, ata),
            )
        })
}

impl SmartDelta {
    /// What happened to the drive between `before` and `after`.
    pub fn between(before: &SmartReading, after: &SmartReading) -> SmartDelta {
        SmartDelta {
            host_bytes_written: host_bytes(
                before,
                after,
                |r| r.data_units_written,
                "Total_LBAs_Written",
            ),
            host_bytes_read: host_bytes(before, after, |r| r.data_units_read, "Total_LBAs_Read"),
            media_errors: grew(before.media_errors, after.media_errors),
            error_log_entries: grew(before.error_log_entries, after.error_log_entries),
            unsafe_shutdowns: grew(before.unsafe_shutdowns, after.unsafe_shutdowns),
            warning_temp_minutes: grew(before.warning_temp_minutes, after.warning_temp_minutes),
            critical_temp_minutes: grew(before.critical_temp_minutes, after.critical_temp_minutes),
            percentage_used: after
                .percentage_used
                .zip(before.percentage_used)
                .and_then(|(a, b)| a.checked_sub(b)),
        }
    }
}

/// Whether `counted` bytes (drivescope's own count of what it wrote) agree with the drive's
/// data-unit count of them: the drive rounds each count up to whole units of 512 000
/// bytes, so the two differ by less than one unit either way.
pub fn agrees_within_a_data_unit(drive_bytes: u128, counted: u128) -> bool {
    drive_bytes.abs_diff(counted) < u128::from(DATA_UNIT_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::attributes::decode_ata;

    fn nvme(written: u64, media: u64, warn: u64) -> SmartReading {
        SmartReading {
            data_units_written: Some(written),
            data_units_read: Some(10),
            media_errors: Some(media),
            warning_temp_minutes: Some(warn),
            percentage_used: Some(3),
            ..Default::default()
        }
    }

    #[test]
    fn nvme_counters_grow() {
        let d = SmartDelta::between(&nvme(1_969_459, 0, 5), &nvme(1_971_507, 2, 7));
        assert_eq!(d.host_bytes_written, Some(2048 * 512_000));
        assert_eq!(d.host_bytes_read, Some(0));
        assert_eq!(d.media_errors, Some(2));
        assert_eq!(d.warning_temp_minutes, Some(2));
        assert_eq!(d.percentage_used, Some(0));
        assert_eq!(d.error_log_entries, None, "neither reading has it");
        let back = SmartDelta::between(&nvme(10, 3, 0), &nvme(5, 1, 0));
        assert_eq!((back.host_bytes_written, back.media_errors), (None, None));
        assert!(agrees_within_a_data_unit(
            2048 * 512_000,
            2048 * 512_000 - 4096
        ));
        assert!(!agrees_within_a_data_unit(2048 * 512_000, 2046 * 512_000));
    }

    #[test]
    fn ata_lbas_written_in_bytes() {
        let attr = |raw: u64| AtaAttribute {
            id: 241,
            name: Some("Total_LBAs_Written".into()),
            flags: 0,
            value: None,
            worst: None,
            threshold: None,
            when_failed: None,
            raw,
            raw_string: None,
            decoded: decode_ata("Total_LBAs_Written", raw, None, 512),
        };
        let r = |raw| SmartReading {
            ata_attributes: vec![attr(raw)],
            ..Default::default()
        };
        let d = SmartDelta::between(&r(385_165_652_077), &r(385_165_654_125));
        assert_eq!(d.host_bytes_written, Some(2048 * 512));
        assert_eq!(d.host_bytes_read, None);
    }
}
