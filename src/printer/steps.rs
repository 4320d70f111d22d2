//! The steps table printed at the end of a headless run: one row per step and direction
//! of I/O (per drive in a run of several), aligned, with units that scale (k and M IOPS,
//! MB/s and GB/s, µs, ms and s).

use crate::report::page::aligned;
use crate::session::results::LatFigures;
use crate::session::{Direction, StepResult};
use crate::ui::format::{bw, clock, iops, lat, shown, us};

/// Measured time: `2.5 s` under a minute, else a clock (`1:30`).
fn seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        clock(s)
    }
}

/// The table's columns after the optional `drive` column: the direction's response latency
/// (`resp`: from the schedule in a paced step; an unpaced step has none, so it is its service
/// latency), then the service latency of all the step's I/Os (`svc`, from submission).
const COLUMNS: [&str; 20] = [
    "step",
    "label",
    "workload",
    "target",
    "reached",
    "dir",
    "IOPS",
    "MB/s",
    "resp mean",
    "resp p50",
    "resp p99",
    "resp p99.9",
    "resp p99.99",
    "resp p99.999",
    "resp max",
    "svc mean",
    "svc p99",
    "errors",
    "ended",
    "time",
];

/// Columns whose cells are text, left-aligned (the others are figures, right-aligned).
fn left(column: &str) -> bool {
    matches!(column, "drive" | "label" | "workload" | "dir" | "ended")
}

/// The cells of one step's rows: one per direction it did I/O in (one row of reads when it
/// did none, so that every step shows).
fn rows(r: &StepResult) -> Vec<Vec<String>> {
    let mut dirs = crate::report::results::dirs(r);
    if dirs.is_empty() {
        dirs.push(Direction::Read);
    }
    dirs.into_iter()
        .enumerate()
        .map(|(i, d)| {
            let x = r.dir(d);
            let l = x.lat_us;
            let resp = |f: fn(&LatFigures) -> Option<f64>| lat(l.as_ref().and_then(f));
            // All the step's I/Os: on its first row.
            let svc = |f: fn(&LatFigures) -> f64| {
                r.service_lat_us
                    .as_ref()
                    .filter(|_| i == 0)
                    .map(|l| us(f(l)))
                    .unwrap_or_default()
            };
            vec![
                r.step.to_string(),
                shown(&r.label),
                shown(&r.workload),
                r.target_iops.map(iops).unwrap_or_else(|| "max".into()),
                r.reached(),
                d.word().to_string(),
                iops(x.iops),
                bw(x.mbps * 1e6),
                resp(|l| Some(l.mean)),
                resp(|l| Some(l.p50)),
                resp(|l| Some(l.p99)),
                resp(|l| Some(l.p99_9)),
                resp(|l| Some(l.p99_99)),
                resp(|l| l.p99_999),
                resp(|l| Some(l.max)),
                svc(|l| l.mean),
                svc(|l| l.p99),
                r.errors.to_string(),
                shown(&r.ended_by.to_string()),
                seconds(r.measured_s),
            ]
        })
        .collect()
}

/// The table's lines (a header, then the rows); none when no step ran.
pub fn table(results: &[StepResult]) -> Vec<String> {
    if results.is_empty() {
        return Vec::new();
    }
    let body = results
        .iter()
        .flat_map(|r| rows(r).into_iter().map(|row| (r.drive.as_deref(), row)))
        .collect();
    with_drives(&COLUMNS, body, left)
}

/// Rows as aligned lines under `columns`, after a first `drive` column (each row's drive)
/// when a row has one; the columns `left` names are text, left-aligned (the others are
/// figures, right-aligned).
pub(super) fn with_drives(
    columns: &[&str],
    rows: Vec<(Option<&str>, Vec<String>)>,
    left: fn(&str) -> bool,
) -> Vec<String> {
    let drives = rows.iter().any(|(d, _)| d.is_some());
    let mut head: Vec<&str> = drives.then_some("drive").into_iter().collect();
    head.extend(columns);
    let body: Vec<Vec<String>> = rows
        .into_iter()
        .map(|(d, row)| {
            let drive = drives.then(|| shown(d.unwrap_or("")));
            drive.into_iter().chain(row).collect()
        })
        .collect();
    let left: Vec<usize> = (0..head.len()).filter(|&i| left(head[i])).collect();
    aligned(&head, &body, &left)
        .lines()
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::EndedBy;
    use crate::session::results::DirResult;

    fn dir(ios: u64, iops: f64, p99: f64) -> DirResult {
        DirResult {
            ios,
            iops,
            mbps: iops * 4096.0 / 1e6,
            lat_us: (ios > 0).then_some(LatFigures {
                mean: p99 / 2.0,
                p50: p99 / 3.0,
                p99,
                p99_9: p99,
                p99_99: p99,
                p99_999: None,
                max: p99 * 2.0,
            }),
        }
    }

    fn result(step: u32, read: DirResult, write: DirResult) -> StepResult {
        StepResult {
            step,
            label: format!("point {step}"),
            workload: "randrw 50%read 4KiB QD32×1".into(),
            target_iops: Some(25_000.0),
            read,
            write,
            ended_by: EndedBy::Duration,
            measured_s: 90.0,
            ..StepResult::default()
        }
    }

    #[test]
    fn a_row_per_direction_aligned_with_units_that_scale() {
        let lines = table(&[
            result(1, dir(10, 12_345.0, 850.0), dir(10, 1_500_000.0, 2_500.0)),
            result(2, dir(0, 0.0, 0.0), dir(0, 0.0, 0.0)),
        ]);
        assert_eq!(
            lines.len(),
            4,
            "header, reads and writes of 1, the empty 2: {lines:#?}"
        );
        for (row, words) in [
            (1, ["12.3k", "850 µs"]),
            (2, ["1.50M", "2.50 ms"]),
            (1, ["25.0k", "1:30"]),
        ] {
            assert!(
                words.iter().all(|w| lines[row].contains(w)),
                "{}",
                lines[row]
            );
        }
        // p99.999 unknown: a dash, not a zero.
        assert!(
            lines[1].split_whitespace().any(|w| w == "-"),
            "{}",
            lines[1]
        );
        // Figures right-aligned: the IOPS column ends at the same place on every row.
        let end = |l: &str, w: &str| l.find(w).map(|i| l[..i + w.len()].chars().count());
        let at = end(&lines[0], "IOPS");
        assert_eq!(end(&lines[1], "12.3k"), at, "{lines:#?}");
        assert_eq!(end(&lines[2], "1.50M"), at, "{lines:#?}");
        assert!(table(&[]).is_empty());
    }

    #[test]
    fn a_missed_target_is_marked_and_every_latency_says_which() {
        let mut missed = result(1, dir(10, 12_345.0, 850.0), dir(0, 0.0, 0.0));
        missed.achieved_share = Some(12_345.0 / 25_000.0);
        missed.missed_target = true;
        let mut reached = result(2, dir(10, 24_500.0, 850.0), dir(0, 0.0, 0.0));
        reached.achieved_share = Some(24_500.0 / 25_000.0);
        let lines = table(&[missed, reached]);
        assert!(lines[1].contains(" 49% MISSED "), "{lines:#?}");
        assert!(
            lines[2].contains(" 98% ") && !lines[2].contains("MISSED"),
            "{lines:#?}"
        );
        for h in ["mean", "p50", "p99", "p99.9", "max"] {
            assert!(!COLUMNS.contains(&h), "{h} without its kind");
        }
    }

    #[test]
    fn several_drives_have_a_drive_column() {
        let mut r = result(1, dir(10, 1.0, 1.0), dir(0, 0.0, 0.0));
        r.drive = Some("nvme0".into());
        let lines = table(&[r]);
        assert!(lines[0].starts_with("drive "), "{}", lines[0]);
        assert!(lines[1].starts_with("nvme0 "), "{}", lines[1]);
    }
}
