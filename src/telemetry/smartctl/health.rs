//! The health verdict of one smartctl output: `smart_status.passed`, with its reasons from
//! the NVMe critical-warning byte, a SCSI informational exception (`smart_status.scsi`)
//! and ATA attributes whose `when_failed` is "now".

use serde_json::Value;

use super::json::{str_of, u8_of};
use crate::telemetry::attributes::WhenFailed;
use crate::telemetry::health::{Health, HealthReason};

/// ATA attributes at or below their threshold now (smartctl's `when_failed` is one of
/// `"now"`, `"past"` and `""`).
fn ata_failing_now(doc: &Value) -> Vec<HealthReason> {
    super::tables::ata_attributes(doc)
        .into_iter()
        .filter(|a| a.when_failed == Some(WhenFailed::Now))
        .map(|a| HealthReason::AtaAttributeFailingNow {
            id: a.id,
            name: a.name,
        })
        .collect()
}

fn scsi_exception(status: &Value) -> Option<HealthReason> {
    let scsi = status.get("scsi")?;
    Some(HealthReason::ScsiInformationalException {
        asc: u8_of(&scsi["asc"])?,
        ascq: u8_of(&scsi["ascq"]).unwrap_or(0),
        detail: str_of(&scsi["ie_string"]),
    })
}

/// The verdict of one output. An NVMe drive's critical-warning byte is its whole verdict
/// when smartctl gave no `smart_status`; a FAILED status that nothing else explains is the
/// self-assessment's own reason.
pub(super) fn health(doc: &Value) -> Health {
    let status_v = &doc["smart_status"];
    let critical_warning = u8_of(&doc["nvme_smart_health_information_log"]["critical_warning"]);
    let mut reasons = critical_warning
        .map(HealthReason::of_critical_warning)
        .unwrap_or_default();
    reasons.extend(scsi_exception(status_v));
    let status = status_v["passed"]
        .as_bool()
        .or(critical_warning.map(|_| true));
    if status == Some(false) && reasons.is_empty() {
        reasons.push(HealthReason::SelfAssessmentFailed);
    }
    reasons.extend(ata_failing_now(doc));
    Health::judge(status, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_alone() {
        let h = health(&json!({"smart_status": {"passed": true}}));
        assert_eq!(h, Health::judge(Some(true), Vec::new()));
        let h = health(&json!({"smart_status": {"passed": false}}));
        assert_eq!(h.reasons, vec![HealthReason::SelfAssessmentFailed]);
        assert!(health(&json!({"model_name": "X"})).is_unknown());
    }

    #[test]
    fn nvme_bits_explain_the_status() {
        let doc = json!({
            "smart_status": {"passed": false, "nvme": {"value": 9}},
            "nvme_smart_health_information_log": {"critical_warning": 9}
        });
        let h = health(&doc);
        assert_eq!(h.passed, Some(false));
        assert_eq!(
            h.reasons,
            vec![
                HealthReason::SpareBelowThreshold,
                HealthReason::MediaReadOnly
            ]
        );
        let no_status = json!({"nvme_smart_health_information_log": {"critical_warning": 0}});
        assert_eq!(health(&no_status).passed, Some(true));
    }

    #[test]
    fn scsi_exception_and_ata_attributes() {
        let scsi = json!({"smart_status": {"passed": false,
            "scsi": {"asc": 93, "ascq": 16, "ie_string": "HARDWARE IMPENDING FAILURE GENERAL HARD DRIVE FAILURE"}}});
        assert_eq!(
            health(&scsi).reasons,
            vec![HealthReason::ScsiInformationalException {
                asc: 0x5D,
                ascq: 0x10,
                detail: Some("HARDWARE IMPENDING FAILURE GENERAL HARD DRIVE FAILURE".into()),
            }]
        );
        let ata = json!({
            "smart_status": {"passed": true},
            "ata_smart_attributes": {"table": [
                {"id": 5, "name": "Reallocated_Sector_Ct", "when_failed": "now"},
                {"id": 187, "name": "Reported_Uncorrect", "when_failed": "past"},
                {"id": 194, "name": "Temperature_Celsius", "when_failed": ""}
            ]}
        });
        let h = health(&ata);
        assert_eq!(h.passed, Some(false), "failing now fails a passed status");
        assert_eq!(
            h.to_string(),
            "FAILED: attribute 5 Reallocated_Sector_Ct failing now"
        );
    }
}
