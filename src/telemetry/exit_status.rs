//! The exit status of `drivescope smart`: a bit mask following smartctl's (`man
//! smartctl`, EXIT STATUS), for what drivescope can tell from its readings. Bits 0 and 1
//! are the command's own (its command line, a device or file it could not read, a drive no
//! source answered for); bits 2–7 come from the readings: what drivescope found, and
//! smartctl's own status where smartctl made the reading.

use super::attributes::{DeviceKind, WhenFailed};
use super::health::HealthReason;
use super::reading::SmartReading;

/// One bit of the exit status, numbered as smartctl numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmartExitBit {
    /// The command line did not parse.
    CommandLine = 0,
    /// The device (or saved output) could not be read, or it is not a reading, or no
    /// source (NVMe admin, hwmon, smartctl) answered for the drive.
    DeviceOpen = 1,
    /// smartctl said a SMART or other command to the device failed.
    CommandFailed = 2,
    /// The drive's health says FAILING: its self-assessment, an NVMe critical warning, a
    /// SCSI informational exception.
    StatusFailing = 3,
    /// A prefailure ATA attribute is at or below its threshold now.
    PrefailBelowThreshold = 4,
    /// An ATA attribute was at or below its threshold in the past (or a usage attribute
    /// is now).
    FailedInPast = 5,
    /// The ATA error log holds errors.
    ErrorLog = 6,
    /// The self-test log holds errors (failed tests a newer extended test did not outdate).
    SelfTestLog = 7,
}

/// smartctl's bits that drivescope takes from its status as smartctl wrote it.
const FROM_SMARTCTL: u8 = 0b1111_1100;

/// The exit status of `drivescope smart` as a mask of [`SmartExitBit`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SmartExit(pub u8);

impl SmartExit {
    pub fn with(self, bit: SmartExitBit) -> SmartExit {
        SmartExit(self.0 | 1 << bit as u8)
    }

    pub fn has(self, bit: SmartExitBit) -> bool {
        self.0 & (1 << bit as u8) != 0
    }

    /// The bits of every reading, together; a drive no source answered for (health
    /// unknown, `source: none answered`) sets bit 1, as smartctl exits 2 on such a drive.
    pub fn of_all(readings: &[SmartReading]) -> SmartExit {
        let all = SmartExit(readings.iter().fold(0, |m, r| m | SmartExit::of(r).0));
        if readings.iter().any(|r| r.source.is_none()) {
            return all.with(SmartExitBit::DeviceOpen);
        }
        all
    }

    /// The bits one reading sets.
    pub fn of(r: &SmartReading) -> SmartExit {
        let mut e = SmartExit(r.smartctl_exit_status.unwrap_or(0) & FROM_SMARTCTL);
        let failing = r
            .health
            .reasons
            .iter()
            .any(|x| !matches!(x, HealthReason::AtaAttributeFailingNow { .. }));
        if failing || (r.health.passed == Some(false) && r.health.reasons.is_empty()) {
            e = e.with(SmartExitBit::StatusFailing);
        }
        for a in &r.ata_attributes {
            match a.when_failed {
                Some(WhenFailed::Now) if a.is_prefailure() => {
                    e = e.with(SmartExitBit::PrefailBelowThreshold)
                }
                Some(WhenFailed::Now) | Some(WhenFailed::Past) => {
                    e = e.with(SmartExitBit::FailedInPast)
                }
                _ => {}
            }
        }
        // smartctl sets bit 6 from the ATA error log only: an NVMe error-log entry is any
        // error the controller logged (a refused command among them), not a failing drive.
        if r.kind == Some(DeviceKind::Ata) && r.error_log_entries.is_some_and(|n| n > 0) {
            e = e.with(SmartExitBit::ErrorLog);
        }
        if r.self_test_errors.is_some_and(|n| n > 0) {
            e = e.with(SmartExitBit::SelfTestLog);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::attributes::{ata_flag, AtaAttribute};
    use crate::telemetry::health::Health;
    use crate::telemetry::Source;

    fn attr(flags: u16, when: WhenFailed) -> AtaAttribute {
        AtaAttribute {
            id: 5,
            flags,
            value: Some(1),
            worst: Some(1),
            threshold: Some(10),
            when_failed: Some(when),
            ..Default::default()
        }
    }

    #[test]
    fn bits_as_smartctl_numbers_them() {
        assert_eq!(SmartExit::of(&SmartReading::default()), SmartExit(0));
        let failing = SmartReading {
            health: Health::judge(Some(false), vec![HealthReason::SelfAssessmentFailed]),
            ata_attributes: vec![attr(ata_flag::PREFAILURE, WhenFailed::Now)],
            ..Default::default()
        };
        assert_eq!(SmartExit::of(&failing), SmartExit(8 | 16));
        let attr_only = SmartReading {
            health: Health::judge(
                Some(true),
                vec![HealthReason::AtaAttributeFailingNow { id: 5, name: None }],
            ),
            ata_attributes: vec![attr(ata_flag::PREFAILURE, WhenFailed::Now)],
            ..Default::default()
        };
        assert_eq!(
            SmartExit::of(&attr_only),
            SmartExit(16),
            "status passed: no bit 3"
        );
        let past = SmartReading {
            ata_attributes: vec![attr(ata_flag::ONLINE, WhenFailed::Past)],
            kind: Some(DeviceKind::Ata),
            error_log_entries: Some(2),
            self_test_errors: Some(1),
            smartctl_exit_status: Some(0b11),
            source: Some(Source::Smartctl),
            ..Default::default()
        };
        assert_eq!(SmartExit::of(&past), SmartExit(32 | 64 | 128));
        let nvme = SmartReading {
            kind: Some(DeviceKind::Nvme),
            error_log_entries: Some(22),
            smartctl_exit_status: Some(4),
            source: Some(Source::Smartctl),
            ..Default::default()
        };
        assert_eq!(
            SmartExit::of(&nvme),
            SmartExit(4),
            "NVMe error log: no bit 6"
        );
        assert_eq!(
            SmartExit::of_all(&[past, nvme]),
            SmartExit(4 | 32 | 64 | 128)
        );
    }

    #[test]
    fn a_drive_no_source_answered_for_is_bit_1() {
        let unread = SmartReading::default();
        assert_eq!(
            SmartExit::of_all(std::slice::from_ref(&unread)),
            SmartExit(2)
        );
        let read = SmartReading {
            source: Some(Source::Hwmon),
            ..Default::default()
        };
        assert_eq!(SmartExit::of_all(std::slice::from_ref(&read)), SmartExit(0));
        assert_eq!(
            SmartExit::of_all(&[read, unread]),
            SmartExit(2),
            "any drive"
        );
    }
}
