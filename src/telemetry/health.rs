//! A drive's health verdict ([`Health`]): passed, failed or unknown, and why it failed, as
//! [`HealthReason`] values shown as words. Built from the NVMe critical-warning bits,
//! smartctl's `smart_status`, SCSI informational exceptions and ATA attributes failing now;
//! [`HealthWatch`] says when the verdict of a series of readings changes.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a drive's health is not passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum HealthReason {
    /// NVMe critical warning bit 0: available spare has fallen below its threshold.
    #[error("available spare below threshold")]
    SpareBelowThreshold,
    /// NVMe critical warning bit 1: a temperature is above an over- or below an
    /// under-temperature threshold.
    #[error("temperature above or below a threshold")]
    TemperatureThreshold,
    /// NVMe critical warning bit 2: NVM subsystem reliability has been degraded.
    #[error("reliability degraded")]
    ReliabilityDegraded,
    /// NVMe critical warning bit 3: the media has been placed in read-only mode.
    #[error("media read-only")]
    MediaReadOnly,
    /// NVMe critical warning bit 4: the volatile memory backup device has failed.
    #[error("volatile memory backup failed")]
    VolatileBackupFailed,
    /// NVMe critical warning bit 5: the persistent memory region has become read-only or
    /// unreliable.
    #[error("persistent memory region read-only")]
    PersistentMemoryReadOnly,
    /// NVMe critical warning bits 6-7, reserved by the specification, are set.
    #[error("reserved critical warning bits {bits:#04x}")]
    ReservedCriticalWarning { bits: u8 },
    /// The drive's own overall SMART self-assessment says FAILED (ATA SMART RETURN STATUS,
    /// or a source that gives no detail).
    #[error("SMART self-assessment failed")]
    SelfAssessmentFailed,
    /// A SCSI/SAS drive reports an informational exception (a failure prediction, asc 5Dh,
    /// or a warning, asc 0Bh), with the additional sense code and qualifier and smartctl's
    /// reading of them.
    #[error("SCSI informational exception (asc {asc:#04x}, ascq {ascq:#04x}){}", around(": ", .detail, ""))]
    ScsiInformationalException {
        asc: u8,
        ascq: u8,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// An ATA SMART attribute is at or below its threshold now.
    #[error("attribute {id} {}failing now", around("", .name, " "))]
    AtaAttributeFailingNow { id: u8, name: Option<String> },
}

/// `word` between `before` and `after`, or nothing without one.
fn around(before: &str, word: &Option<String>, after: &str) -> String {
    word.as_ref()
        .map_or_else(String::new, |w| format!("{before}{w}{after}"))
}

/// The NVMe critical-warning bits and the reason each names, bit 0 first.
const CRITICAL_WARNING_BITS: [(u8, HealthReason); 6] = [
    (0x01, HealthReason::SpareBelowThreshold),
    (0x02, HealthReason::TemperatureThreshold),
    (0x04, HealthReason::ReliabilityDegraded),
    (0x08, HealthReason::MediaReadOnly),
    (0x10, HealthReason::VolatileBackupFailed),
    (0x20, HealthReason::PersistentMemoryReadOnly),
];

impl HealthReason {
    /// Every reason an NVMe critical-warning byte names, bit 0 first (none for 0).
    pub fn of_critical_warning(bits: u8) -> Vec<HealthReason> {
        let mut out: Vec<HealthReason> = CRITICAL_WARNING_BITS
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|(_, r)| r.clone())
            .collect();
        if bits & 0xC0 != 0 {
            out.push(HealthReason::ReservedCriticalWarning { bits: bits & 0xC0 });
        }
        out
    }
}

/// A drive's health: `passed` is `None` when no source gave a verdict. A failed verdict
/// has at least one reason.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Health {
    pub passed: Option<bool>,
    #[serde(default)]
    pub reasons: Vec<HealthReason>,
}

impl Health {
    /// The verdict from a source's overall status (`None`: it gave none) and the reasons it
    /// found: any reason fails the drive, whatever the overall status says.
    pub fn judge(status: Option<bool>, reasons: Vec<HealthReason>) -> Health {
        let passed = if reasons.is_empty() {
            status
        } else {
            Some(false)
        };
        Health { passed, reasons }
    }

    /// No source gave a verdict.
    pub fn is_unknown(&self) -> bool {
        self.passed.is_none() && self.reasons.is_empty()
    }

    /// A source said the drive fails.
    pub fn is_failing(&self) -> bool {
        self.passed == Some(false) || !self.reasons.is_empty()
    }

    /// The reasons, as words, comma-separated.
    pub fn reasons_text(&self) -> String {
        let words: Vec<String> = self.reasons.iter().map(ToString::to_string).collect();
        words.join(", ")
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.passed, self.reasons.is_empty()) {
            (Some(true), true) => f.write_str("passed"),
            (None, true) => f.write_str("unknown"),
            (_, true) => f.write_str("FAILED"),
            (_, false) => write!(f, "FAILED: {}", self.reasons_text()),
        }
    }
}

/// A change of a drive's health between two readings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthChange {
    /// The verdict before; `None` for the first verdict of the series.
    pub from: Option<Health>,
    pub to: Health,
}

impl fmt::Display for HealthChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to)?;
        match &self.from {
            Some(h) => write!(f, " (was {h})"),
            None => Ok(()),
        }
    }
}

/// Follows the health of a series of readings. Readings without a verdict are passed
/// over (a source that did not answer once is not a change); the first verdict is news
/// only when it is not passed.
#[derive(Debug, Clone, Default)]
pub struct HealthWatch {
    last: Option<Health>,
}

impl HealthWatch {
    /// The change `h` makes, if any.
    pub fn observe(&mut self, h: &Health) -> Option<HealthChange> {
        if h.is_unknown() || self.last.as_ref() == Some(h) {
            return None;
        }
        let from = self.last.replace(h.clone());
        if from.is_none() && h.passed == Some(true) {
            return None;
        }
        Some(HealthChange {
            from,
            to: h.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_critical_warning_bit_is_named() {
        use HealthReason as R;
        assert!(R::of_critical_warning(0).is_empty());
        assert_eq!(
            R::of_critical_warning(0x3F),
            vec![
                R::SpareBelowThreshold,
                R::TemperatureThreshold,
                R::ReliabilityDegraded,
                R::MediaReadOnly,
                R::VolatileBackupFailed,
                R::PersistentMemoryReadOnly,
            ]
        );
        assert_eq!(
            R::of_critical_warning(0x84),
            vec![
                R::ReliabilityDegraded,
                R::ReservedCriticalWarning { bits: 0x80 }
            ]
        );
        let words: Vec<String> = R::of_critical_warning(0x3F)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            words,
            [
                "available spare below threshold",
                "temperature above or below a threshold",
                "reliability degraded",
                "media read-only",
                "volatile memory backup failed",
                "persistent memory region read-only",
            ]
        );
    }

    #[test]
    fn any_reason_fails_whatever_the_status() {
        let r = vec![HealthReason::AtaAttributeFailingNow {
            id: 5,
            name: Some("Reallocated_Sector_Ct".into()),
        }];
        let h = Health::judge(Some(true), r);
        assert_eq!(h.passed, Some(false));
        assert_eq!(
            h.to_string(),
            "FAILED: attribute 5 Reallocated_Sector_Ct failing now"
        );
        assert_eq!(Health::judge(Some(true), Vec::new()).to_string(), "passed");
        assert!(Health::judge(None, Vec::new()).is_unknown());
        assert_eq!(Health::default().to_string(), "unknown");
    }

    #[test]
    fn json_keeps_null_and_reason_names() {
        let h = Health::judge(
            Some(false),
            vec![
                HealthReason::SpareBelowThreshold,
                HealthReason::ScsiInformationalException {
                    asc: 0x5D,
                    ascq: 0,
                    detail: None,
                },
            ],
        );
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"passed": false, "reasons": [
                {"reason": "spare_below_threshold"},
                {"reason": "scsi_informational_exception", "asc": 93, "ascq": 0}
            ]})
        );
        let back: Health = serde_json::from_value(v).unwrap();
        assert_eq!(back, h);
        let unknown = serde_json::to_value(Health::default()).unwrap();
        assert_eq!(unknown, serde_json::json!({"passed": null, "reasons": []}));
    }

    #[test]
    fn the_watch_reports_changes_between_verdicts() {
        let ok = Health::judge(Some(true), Vec::new());
        let hot = Health::judge(Some(true), vec![HealthReason::TemperatureThreshold]);
        let mut w = HealthWatch::default();
        assert_eq!(w.observe(&Health::default()), None, "no verdict yet");
        assert_eq!(w.observe(&ok), None, "a first pass is not news");
        assert_eq!(w.observe(&ok), None);
        let c = w.observe(&hot).expect("failing is news");
        assert_eq!(c.from.as_ref(), Some(&ok));
        assert_eq!(
            c.to_string(),
            "FAILED: temperature above or below a threshold (was passed)"
        );
        assert_eq!(w.observe(&Health::default()), None, "a gap is not a change");
        assert_eq!(w.observe(&hot), None);
        assert!(w.observe(&ok).is_some(), "recovery is news");
        let mut fresh = HealthWatch::default();
        let first = fresh.observe(&hot).expect("failing from the start");
        assert_eq!(first.from, None);
        assert_eq!(
            first.to_string(),
            "FAILED: temperature above or below a threshold"
        );
    }
}
