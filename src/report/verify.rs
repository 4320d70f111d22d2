//! The report's data verification section: a verified run's totals (its last `verified`
//! event) and the findings the session kept (`verify_finding` events, with their data).

use super::page::{grid, kv_table, para};
use crate::session::{EventKind, Session};
use crate::verify::{Finding, VerifyTotals};

/// The totals (each drive's last, added up) and the findings a session kept; `None`
/// when the run did not verify.
pub fn of(s: &Session) -> Option<(VerifyTotals, Vec<Finding>)> {
    let of_kind = |k: EventKind| s.events.iter().filter(move |e| e.kind == k);
    // Each drive's totals are running ones: its last event holds them all.
    let mut last: std::collections::BTreeMap<Option<u32>, VerifyTotals> = Default::default();
    for e in of_kind(EventKind::Verified) {
        if let Some(t) = e.data_as() {
            last.insert(e.drive, t);
        }
    }
    if last.is_empty() {
        return None;
    }
    let mut totals = VerifyTotals::default();
    for t in last.values() {
        totals.add(t);
    }
    let findings = of_kind(EventKind::VerifyFinding)
        .filter_map(|e| e.data_as())
        .collect();
    Some((totals, findings))
}

/// Writes the section, if the run verified.
pub fn section(o: &mut String, s: &Session) {
    let Some((t, findings)) = of(s) else { return };
    o.push_str("<h2>Data verification</h2>\n");
    let rows: Vec<(String, String)> = [
        ("blocks written", t.blocks_written),
        ("blocks checked", t.blocks_checked),
        ("corrupt", t.corrupt),
        ("misdirected", t.misdirected),
        ("lost", t.lost),
        ("torn", t.torn),
        ("unexpected", t.unexpected),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    kv_table(o, "summary", &rows);
    if findings.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            let found = match f.found {
                Some(_) => f.found_text(),
                None => format!("no header: {}", f.found_text()),
            };
            vec![
                f.kind.to_string(),
                f.offset.to_string(),
                f.length.to_string(),
                f.sector.to_string(),
                f.expected
                    .generation
                    .map_or_else(|| "never written".to_string(), |g| g.to_string()),
                found,
            ]
        })
        .collect();
    grid(
        o,
        "events",
        &[
            "kind",
            "offset",
            "length",
            "sector",
            "expected generation",
            "found",
        ],
        &rows,
    );
    let kept = findings.len() as u64;
    if t.findings() > kept {
        let more = t.findings() - kept;
        para(
            o,
            "note",
            &format!("{more} more findings were counted, not kept."),
        );
    }
}
