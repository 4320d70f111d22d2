//! The report's diskmark grid: for a session whose steps ran several times to make one
//! figure (the `diskmark` presets), a row per test (and drive) and, per direction, MB/s,
//! IOPS, mean and p99 latency of the run the figure came from, laid out as CrystalDiskMark
//! shows its tests (reads beside writes).

use std::fmt::Write;

use super::page::{aligned, grid};
use super::svg::esc;
use crate::session::{GridCell, GridDir, Session};
use crate::ui::format::lat;
use crate::workload::RunPick;

/// The grid's rows: a row per drive and test, four cells per direction that ran.
fn rows(cells: &[GridCell], dirs: &[GridDir], drives: bool) -> Vec<Vec<String>> {
    let mut keys: Vec<(Option<&str>, &str)> = Vec::new();
    for c in cells {
        let k = (c.drive.as_deref(), c.test.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(drive, test)| {
            let mut row = Vec::new();
            if drives {
                row.push(drive.unwrap_or("").to_string());
            }
            row.push(test.to_string());
            for d in dirs {
                let c = cells
                    .iter()
                    .find(|c| c.drive.as_deref() == drive && c.test == test && c.dir == *d);
                match c {
                    Some(c) => row.extend([
                        format!("{:.2}", c.mbps),
                        format!("{:.0}", c.iops),
                        lat(c.mean_us),
                        lat(c.p99_us),
                    ]),
                    None => row.extend(std::iter::repeat_n("-".to_string(), 4)),
                }
            }
            row
        })
        .collect()
}

/// Writes the section, if the session has a grid.
pub fn section(o: &mut String, s: &Session) {
    let cells = crate::session::grid(s);
    let Some(first) = cells.first() else {
        return;
    };
    o.push_str("<h2>Diskmark grid</h2>\n");
    let how = match first.pick {
        RunPick::Best => format!(
            "Each test ran {} times; the run of the highest MB/s gives its figures, as CrystalDiskMark keeps its best score.",
            first.of
        ),
        RunPick::Mean => format!(
            "Each test ran {} times; its figures are the mean of the runs, as KDiskMark's default profile averages them.",
            first.of
        ),
    };
    let _ = writeln!(o, "<p>{}</p>", esc(&how));
    let dirs: Vec<GridDir> = GridDir::ALL
        .into_iter()
        .filter(|d| cells.iter().any(|c| c.dir == *d))
        .collect();
    let drives = cells.iter().any(|c| c.drive.is_some());
    let mut head: Vec<String> = Vec::new();
    if drives {
        head.push("drive".into());
    }
    head.push("test".into());
    for d in &dirs {
        for f in ["MB/s", "IOPS", "service mean", "service p99"] {
            head.push(format!("{} {f}", d.word()));
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    grid(o, "steps diskmark", &head, &rows(&cells, &dirs, drives));
}

/// The grid of `new` beside the same cells (drive, test, direction) of `base`, as aligned
/// text under a line naming both: MB/s of each and the change, p99 of each; `None` when
/// the two share no cell (either has no grid).
pub fn compare_text(base: &str, new: &str, b: &[GridCell], n: &[GridCell]) -> Option<String> {
    let rows: Vec<Vec<String>> = n
        .iter()
        .filter_map(|c| {
            let was = b
                .iter()
                .find(|x| x.drive == c.drive && x.test == c.test && x.dir == c.dir)?;
            let change = if was.mbps > 0.0 {
                format!("{:+.1}%", (c.mbps / was.mbps - 1.0) * 100.0)
            } else {
                "-".into()
            };
            let p99 = |x: &GridCell| lat(x.p99_us);
            let mut test = c.test.clone();
            if let Some(d) = &c.drive {
                test = format!("{d} {test}");
            }
            Some(vec![
                test,
                c.dir.word().to_string(),
                format!("{:.2}", was.mbps),
                format!("{:.2}", c.mbps),
                change,
                p99(was),
                p99(c),
            ])
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let head = [
        "test",
        "dir",
        "base MB/s",
        "MB/s",
        "change",
        "base svc p99",
        "svc p99",
    ];
    Some(format!(
        "diskmark grid of {new} against {base}:\n{}",
        aligned(&head, &rows, &[0, 1])
    ))
}
