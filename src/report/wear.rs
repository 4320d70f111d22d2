//! The report's table of what the run and each step did to the drive, from the session's
//! `drive_wear` events: only the columns the drive reports.

use super::page::grid;
use crate::session::{EventKind, Session};
use crate::telemetry::wear_text::{cells, COLUMNS};
use crate::telemetry::WearSpan;

/// The table, under its heading; nothing when the session has no `drive_wear` event.
pub fn section(o: &mut String, s: &Session, heading: &str) {
    let spans: Vec<(f64, WearSpan)> = s
        .events
        .iter()
        .filter(|e| e.kind == EventKind::DriveWear)
        .filter_map(|e| Some((e.t, e.data_as()?)))
        .collect();
    if spans.is_empty() {
        return;
    }
    o.push_str(&format!(
        "<{heading}>What the run did to the drive</{heading}>\n"
    ));
    let mut rows: Vec<Vec<String>> = spans
        .iter()
        .map(|(t, w)| {
            let name = match w.step {
                None => "run".to_string(),
                // The step that ended just before its wear was recorded.
                Some(i) => s
                    .steps
                    .iter()
                    .rfind(|st| st.end_s <= t + 0.5)
                    .map_or_else(|| format!("step {}", i + 1), |st| st.label.clone()),
            };
            let mut row = vec![name];
            row.extend(cells(w));
            row
        })
        .collect();
    // The run's row first, then the steps in order.
    rows.sort_by_key(|r| r[0] != "run");
    let keep: Vec<usize> = (0..COLUMNS.len())
        .filter(|&c| rows.iter().any(|r| !r[c + 1].is_empty()))
        .collect();
    let mut head = vec!["span"];
    head.extend(keep.iter().map(|&c| COLUMNS[c]));
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| {
            let mut out = vec![r[0].clone()];
            out.extend(keep.iter().map(|&c| r[c + 1].clone()));
            out
        })
        .collect();
    grid(o, "drive-wear", &head, &rows);
    o.push_str(
        "<p class=\"note\">The drive's own counters before and after each span, beside what \
         drivescope wrote and read in it; host counters step by one NVMe data unit \
         (512,000 bytes) or one LBA.</p>\n",
    );
}
