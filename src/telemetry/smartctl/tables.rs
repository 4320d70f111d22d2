//! The tables of a smartctl output beyond its health log: the ATA attribute table, the
//! ATA error and self-test log counts, the SCSI grown defect list and error counter log.

use serde_json::Value;

use super::json::{first_of, str_of, u64_of, u8_of};
use crate::telemetry::attributes::{
    decode_ata, AtaAttribute, ScsiCounterPage, ScsiErrorCounter, WhenFailed,
};
use crate::telemetry::reading::SmartReading;

fn when_failed(v: &Value) -> Option<WhenFailed> {
    match v.as_str()? {
        "now" => Some(WhenFailed::Now),
        "past" => Some(WhenFailed::Past),
        _ => Some(WhenFailed::Never),
    }
}

/// The attribute table (`ata_smart_attributes.table`); an LBA is `logical_block_size`
/// bytes, 512 where the output does not say.
pub(super) fn ata_attributes(doc: &Value) -> Vec<AtaAttribute> {
    let Some(table) = doc
        .pointer("/ata_smart_attributes/table")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let lba_bytes = doc["logical_block_size"]
        .as_u64()
        .and_then(|b| u32::try_from(b).ok())
        .filter(|&b| b > 0)
        .unwrap_or(512);
    table
        .iter()
        .filter_map(|a| {
            let name = str_of(&a["name"]);
            let raw = u64_of(&a["raw"]["value"]).unwrap_or(0);
            let raw_string = str_of(&a["raw"]["string"]);
            Some(AtaAttribute {
                id: u8_of(&a["id"])?,
                decoded: name
                    .as_deref()
                    .and_then(|n| decode_ata(n, raw, raw_string.as_deref(), lba_bytes)),
                name,
                flags: a["flags"]["value"]
                    .as_u64()
                    .and_then(|f| u16::try_from(f).ok())
                    .unwrap_or(0),
                value: u8_of(&a["value"]),
                worst: u8_of(&a["worst"]),
                threshold: u8_of(&a["thresh"]),
                when_failed: when_failed(&a["when_failed"]),
                raw,
                raw_string,
            })
        })
        .collect()
}

/// The SCSI error counter log: `gigabytes_processed` is text ("2657380.347").
fn scsi_error_counters(doc: &Value) -> Vec<ScsiErrorCounter> {
    let log = &doc["scsi_error_counter_log"];
    [
        ScsiCounterPage::Read,
        ScsiCounterPage::Write,
        ScsiCounterPage::Verify,
    ]
    .into_iter()
    .filter_map(|page| {
        let p = log.get(page.as_str())?.as_object()?;
        let n = |k: &str| p.get(k).and_then(Value::as_u64);
        Some(ScsiErrorCounter {
            page,
            corrected_ecc_fast: n("errors_corrected_by_eccfast"),
            corrected_ecc_delayed: n("errors_corrected_by_eccdelayed"),
            corrected_rereads_rewrites: n("errors_corrected_by_rereads_rewrites"),
            total_corrected: n("total_errors_corrected"),
            correction_algorithm_invocations: n("correction_algorithm_invocations"),
            gigabytes_processed: p.get("gigabytes_processed").and_then(|g| {
                g.as_f64()
                    .or_else(|| g.as_str().and_then(|s| s.trim().parse().ok()))
            }),
            total_uncorrected: n("total_uncorrected_errors"),
        })
    })
    .collect()
}

/// Self-tests that failed and are not outdated, over the standard and extended logs.
fn self_test_errors(doc: &Value) -> Option<u64> {
    let log = doc.get("ata_smart_self_test_log")?;
    let counts: Vec<u64> = ["standard", "extended"]
        .iter()
        .filter_map(|k| {
            let l = log.get(*k)?;
            let total = u64_of(&l["error_count_total"])?;
            Some(total.saturating_sub(u64_of(&l["error_count_outdated"]).unwrap_or(0)))
        })
        .collect();
    counts.into_iter().max()
}

/// Fills the ATA and SCSI tables and log counts of `doc` into `r`.
pub(super) fn ata_scsi_tables(r: &mut SmartReading, doc: &Value) {
    r.ata_attributes = ata_attributes(doc);
    r.error_log_entries = first_of(
        doc,
        &[
            "/ata_smart_error_log/extended/count",
            "/ata_smart_error_log/summary/count",
        ],
        u64_of,
    );
    r.self_test_errors = self_test_errors(doc);
    r.scsi_grown_defects = u64_of(&doc["scsi_grown_defect_list"]);
    r.scsi_error_counters = scsi_error_counters(doc);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn self_tests_outdated_do_not_count() {
        let doc = json!({"ata_smart_self_test_log": {"standard": {
            "error_count_total": 3, "error_count_outdated": 2}}});
        assert_eq!(self_test_errors(&doc), Some(1));
        assert_eq!(self_test_errors(&json!({})), None);
    }

    #[test]
    fn scsi_gigabytes_as_text_or_number() {
        let doc = json!({"scsi_error_counter_log": {
            "read": {"gigabytes_processed": "12.500", "total_uncorrected_errors": 1},
            "verify": {"gigabytes_processed": 3.25}}});
        let c = scsi_error_counters(&doc);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].gigabytes_processed, Some(12.5));
        assert_eq!(c[0].total_uncorrected, Some(1));
        assert_eq!(c[1].page, ScsiCounterPage::Verify);
        assert_eq!(c[1].gigabytes_processed, Some(3.25));
    }
}
