//! The hand-made fixtures (tests/fixtures/smartctl/derived, each derived from a real one as
//! its README says): health verdicts.

use drivescope::telemetry::HealthReason;

use super::fixture;

#[test]
fn nvme_critical_warning_bits_fail_the_drive() {
    let r = fixture("derived/nvme_micron_7450_critical_warning_09.json");
    assert_eq!(r.critical_warning, Some(9));
    assert_eq!(r.health.passed, Some(false));
    assert_eq!(
        r.health.reasons,
        vec![
            HealthReason::SpareBelowThreshold,
            HealthReason::MediaReadOnly
        ]
    );
    assert_eq!(r.available_spare, Some(5));
    assert_eq!(r.temperature_c, Some(33), "the rest decodes as before");
}

#[test]
fn ata_attribute_failing_now_fails_the_drive() {
    let r = fixture("derived/sata_exos_x16_attr5_failing_now.json");
    assert_eq!(r.health.passed, Some(false));
    assert_eq!(
        r.health.reasons,
        vec![
            HealthReason::SelfAssessmentFailed,
            HealthReason::AtaAttributeFailingNow {
                id: 5,
                name: Some("Reallocated_Sector_Ct".into())
            }
        ]
    );
    assert_eq!(
        r.health.to_string(),
        "FAILED: SMART self-assessment failed, attribute 5 Reallocated_Sector_Ct failing now"
    );
}
