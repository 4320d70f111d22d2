//! The hand-made fixtures (tests/fixtures/smartctl/derived, each derived from a real one as
//! its README says): health verdicts, SAS under smartctl 7.2 and 7.4 keys, a RAID virtual
//! disk and a disk behind a MegaRAID controller, ATA temperatures smartctl interprets.

use drivescope::telemetry::{HealthReason, NoTemperature, Source};

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

#[test]
fn sas_under_smartctl_7_2_keys() {
    let r = fixture("derived/sas_hgst_ssd_7_2_failure_prediction.json");
    assert_eq!(r.source, Some(Source::SmartctlFile));
    assert_eq!(r.model.as_deref(), Some("HGST HUSMM1680ASS204"));
    assert_eq!(r.firmware.as_deref(), Some("C29C"), "`revision` before 7.3");
    assert_eq!(r.temperature_c, Some(31));
    assert_eq!(r.critical_temp_c, Some(70), "temperature.drive_trip");
    assert_eq!(
        r.percentage_used,
        Some(97),
        "scsi_percentage_used_endurance_indicator"
    );
    assert_eq!(r.power_on_hours, Some(41_234));
    assert_eq!(r.health.passed, Some(false));
    assert_eq!(
        r.health.reasons,
        vec![HealthReason::ScsiInformationalException {
            asc: 0x5D,
            ascq: 0x03,
            detail: Some("spare area exhaustion failure prediction threshold exceeded".into()),
        }]
    );
}

#[test]
fn sas_under_smartctl_7_4_keys() {
    let r = fixture("derived/sas_hgst_ssd_7_4.json");
    assert_eq!(r.model.as_deref(), Some("HGST HUSMM1680ASS204"));
    assert_eq!(r.firmware.as_deref(), Some("C29C"), "`scsi_revision`");
    assert_eq!(r.temperature_c, Some(34));
    assert_eq!(r.critical_temp_c, Some(70));
    assert_eq!(r.percentage_used, Some(3));
    assert_eq!(r.health.to_string(), "passed");
}

#[test]
fn raid_virtual_disk_at_0_c_has_no_sensor() {
    let r = fixture("derived/raid_perc_h730p_virtual_disk_0c.json");
    assert_eq!(r.model.as_deref(), Some("DELL PERC H730P Mini"));
    assert_eq!(
        r.temperature_c, None,
        "0 °C is no sensor, not a temperature"
    );
    assert_eq!(r.temperature_unknown, Some(NoTemperature::ReportsZero));
    assert!(r.health.is_unknown(), "a volume gives no verdict");
}

#[test]
fn a_disk_behind_megaraid_keeps_its_index() {
    let r = fixture("derived/sata_exos_x16_behind_megaraid_3.json");
    assert_eq!(
        r.device.as_deref(),
        Some("/dev/bus/0 [megaraid_disk_03] [SAT]"),
        "smartctl's info_name: the bus path and the disk number"
    );
    assert_eq!(r.temperature_c, Some(26));
}

#[test]
fn ata_interpreted_temperature_and_raw_zero() {
    let r = fixture("derived/sata_micron_5300_attr194_tenths.json");
    assert_eq!(
        r.temperature_c,
        Some(42),
        "smartctl's reading, not raw byte 0 (164)"
    );
    let r = fixture("derived/sata_micron_5300_attr194_raw_zero.json");
    assert_eq!(r.temperature_c, None, "a raw 0 is not a temperature");
    assert_eq!(r.temperature_unknown, Some(NoTemperature::ReportsZero));
}
