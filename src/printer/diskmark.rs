//! The grid printed at the end of a headless run whose steps ran several times to make one
//! figure (the `diskmark` presets: CrystalDiskMark's best of N runs): a row per test and
//! direction with MB/s, IOPS, mean and p99 service latency, and which run gave them.

use crate::report::page::aligned;
use crate::session::GridCell;
use crate::ui::format::{iops, lat, shown};
use crate::workload::RunPick;

/// The latency: service, from submission (a grid's steps are unpaced).
const COLUMNS: [&str; 8] = [
    "test", "dir", "MB/s", "IOPS", "svc mean", "svc p99", "runs", "from",
];

/// Columns whose cells are text, left-aligned.
fn left(column: &str) -> bool {
    matches!(column, "drive" | "test" | "dir" | "from")
}

fn from(c: &GridCell) -> String {
    match (c.pick, c.best_run) {
        (RunPick::Best, Some(n)) => format!("best: run {n}"),
        (RunPick::Best, None) => "best".into(),
        (RunPick::Mean, _) => "mean of the runs".into(),
    }
}

/// The grid's lines (a title, a header, then the rows); none when no step picked a figure.
pub fn grid(cells: &[GridCell]) -> Vec<String> {
    let Some(first) = cells.first() else {
        return Vec::new();
    };
    let body = cells
        .iter()
        .map(|c| {
            let row = vec![
                c.test.clone(),
                c.dir.word().to_string(),
                format!("{:.2}", c.mbps),
                iops(c.iops),
                lat(c.mean_us),
                lat(c.p99_us),
                format!("{}/{}", c.runs, c.of),
                from(c),
            ];
            (c.drive.as_deref(), row)
        })
        .collect();
    let title = match first.pick {
        RunPick::Best => format!(
            "diskmark grid: best of {} runs per test (as CrystalDiskMark keeps it)",
            first.of
        ),
        RunPick::Mean => format!(
            "diskmark grid: mean of {} runs per test (as KDiskMark's default profile)",
            first.of
        ),
    };
    std::iter::once(title)
        .chain(super::steps::with_drives(&COLUMNS, body, left))
        .collect()
}

const SERIES: [&str; 8] = [
    "phase",
    "runs",
    "mean IOPS",
    "mean MB/s",
    "first IOPS",
    "last IOPS",
    "worst svc p99",
    "drive",
];

/// The lines of the phases whose steps ran several times, each run its own point (SNIA
/// HIR's bursts per wait state, XSR's access groups); none when there are none.
pub fn series(s: &[crate::session::RunSeries]) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let drives = s.iter().any(|x| x.drive.is_some());
    let cols = if drives { &SERIES[..] } else { &SERIES[..7] };
    let body: Vec<Vec<String>> = s
        .iter()
        .map(|x| {
            let mut row = vec![
                x.phase.clone(),
                format!("{}/{}", x.runs, x.of),
                iops(x.mean_iops),
                format!("{:.2}", x.mean_mbps),
                iops(x.first_iops),
                iops(x.last_iops),
                lat(x.worst_p99_us),
            ];
            if drives {
                row.push(shown(x.drive.as_deref().unwrap_or("")));
            }
            row
        })
        .collect();
    // The phase and the drive are text, left-aligned; the figures right-aligned.
    std::iter::once("runs (each run its own point):".to_string())
        .chain(aligned(cols, &body, &[0, 7]).lines().map(String::from))
        .collect()
}
