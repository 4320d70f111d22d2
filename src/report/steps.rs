//! A session's step results ([`crate::session::step_results`]) as files: `steps.csv`, one
//! row per step (and drive), and `steps.json`, written into every report and snapshot
//! folder and by `drivescope export`.

use std::fmt::Write;

use serde::Serialize;

use super::csv::text_cell;
use crate::session::{round, Direction, StepResult};

pub const CSV_FILE: &str = "steps.csv";
pub const JSON_FILE: &str = "steps.json";

/// The columns of one direction, after its word and `_` (`read_iops`, `write_lat_p99_us`).
const DIR_COLUMNS: [&str; 10] = [
    "ios",
    "iops",
    "mbps",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p99_us",
    "lat_p99.9_us",
    "lat_p99.99_us",
    "lat_p99.999_us",
    "lat_max_us",
];

/// The header's first columns, the step's own.
const FIRST: &str = "step,label,workload,target_iops";
/// The header's last columns.
const LAST: &str = "errors,ended_by,measured_s";
/// The first column when a session has several drives.
const DRIVE_COLUMN: &str = "drive,";

/// The columns of `d`, each after a comma.
fn dir_columns(h: &mut String, d: Direction) {
    for c in DIR_COLUMNS {
        let _ = write!(h, ",{}_{c}", d.word());
    }
}

/// The header before the trim columns were added (a file drivescope wrote then is still
/// its own to overwrite).
fn header_before_trims() -> String {
    let mut h = String::from(FIRST);
    for d in Direction::BOTH {
        dir_columns(&mut h, d);
    }
    let _ = write!(h, ",{LAST}");
    h
}

/// The CSV's header (without the drive column): the trims' columns come last, so a reader
/// of the columns before them reads the file as before.
pub fn header() -> String {
    let mut h = header_before_trims();
    dir_columns(&mut h, Direction::Trim);
    h
}

/// Whether `head` (a file's first bytes) is the start of a steps CSV drivescope wrote
/// (this release's or one from before the trim columns).
pub fn is_steps_csv(head: &[u8]) -> bool {
    let head = head.strip_prefix(DRIVE_COLUMN.as_bytes()).unwrap_or(head);
    [header(), header_before_trims()].iter().any(|h| {
        head.strip_prefix(h.as_bytes())
            .is_some_and(|rest| rest.first() == Some(&b'\n'))
    })
}

/// The words a steps JSON file starts with.
const JSON_START: &str = "{\"type\":\"steps\"";

/// Whether `head` is the start of a steps JSON file drivescope wrote.
pub fn is_steps_json(head: &[u8]) -> bool {
    head.starts_with(JSON_START.as_bytes())
}

fn num(x: f64) -> String {
    round(x, 3).to_string()
}

fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// The CSV text: a header naming the units, one row per step; a first `drive` column
/// when any step names its drive.
pub fn csv(results: &[StepResult]) -> String {
    let drives = results.iter().any(|r| r.drive.is_some());
    let mut o = String::new();
    if drives {
        o.push_str(DRIVE_COLUMN);
    }
    o.push_str(&header());
    o.push('\n');
    for r in results {
        if drives {
            let _ = write!(o, "{},", text_cell(r.drive.as_deref().unwrap_or("")));
        }
        let _ = write!(
            o,
            "{},{},{},{}",
            r.step,
            text_cell(&r.label),
            text_cell(&r.workload),
            opt(r.target_iops)
        );
        for d in Direction::BOTH {
            dir_row(&mut o, r, d);
        }
        let _ = write!(
            o,
            ",{},{},{}",
            r.errors,
            text_cell(&r.ended_by.to_string()),
            num(r.measured_s)
        );
        dir_row(&mut o, r, Direction::Trim);
        o.push('\n');
    }
    o
}

/// The figures of `r`'s direction `d`, each after a comma.
fn dir_row(o: &mut String, r: &StepResult, d: Direction) {
    let x = r.dir(d);
    let l = x.lat_us;
    let _ = write!(o, ",{},{},{}", x.ios, num(x.iops), num(x.mbps));
    for f in [
        l.map(|l| l.mean),
        l.map(|l| l.p50),
        l.map(|l| l.p99),
        l.map(|l| l.p99_9),
        l.map(|l| l.p99_99),
        l.and_then(|l| l.p99_999),
        l.map(|l| l.max),
    ] {
        let _ = write!(o, ",{}", opt(f));
    }
}

#[derive(Serialize)]
struct Doc<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    steps: &'a [StepResult],
}

/// The JSON text: `{"type":"steps","steps":[…]}` and a newline (latency in µs, MB/s
/// decimal).
pub fn json(results: &[StepResult]) -> String {
    let doc = Doc {
        kind: "steps",
        steps: results,
    };
    let mut o = serde_json::to_string(&doc).unwrap_or_default();
    o.push('\n');
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::EndedBy;
    use crate::session::results::{DirResult, LatFigures};

    fn result(drive: Option<&str>, step: u32) -> StepResult {
        let lat = LatFigures {
            mean: 1.0,
            p50: 2.0,
            p99: 3.0,
            p99_9: 4.0,
            p99_99: 5.0,
            p99_999: None,
            max: 7.0,
        };
        StepResult {
            drive: drive.map(str::to_string),
            step,
            label: "50% of \"max\"".into(),
            workload: "randread 4KiB QD32×1".into(),
            target_iops: None,
            read: DirResult {
                ios: 10,
                iops: 1234.56789,
                mbps: 5.0,
                lat_us: Some(lat),
            },
            write: DirResult {
                ios: 0,
                iops: 0.0,
                mbps: 0.0,
                lat_us: None,
            },
            trim: DirResult::default(),
            errors: 0,
            ended_by: EndedBy::Duration,
            measured_s: 2.0,
        }
    }

    #[test]
    fn one_row_per_step_with_every_column() {
        let text = csv(&[result(None, 1), result(None, 2)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(is_steps_csv(text.as_bytes()));
        let cols = header().split(',').count();
        assert_eq!(cols, 4 + 3 * DIR_COLUMNS.len() + 3);
        assert_eq!(
            lines[1],
            "1,\"50% of \"\"max\"\"\",\"randread 4KiB QD32×1\",,10,1234.568,5,1,2,3,4,5,,7,0,0,0,,,,,,,,0,\"duration\",2,0,0,0,,,,,,,"
        );
        assert!(header().ends_with(",measured_s,trim_ios,trim_iops,trim_mbps,trim_lat_mean_us,trim_lat_p50_us,trim_lat_p99_us,trim_lat_p99.9_us,trim_lat_p99.99_us,trim_lat_p99.999_us,trim_lat_max_us"), "{}", header());
    }

    #[test]
    fn a_steps_csv_from_before_the_trim_columns_is_still_ours() {
        let old = format!("{}\n1,\"a\"", header_before_trims());
        assert!(is_steps_csv(old.as_bytes()));
        assert!(is_steps_csv(format!("{DRIVE_COLUMN}{old}").as_bytes()));
        assert!(!is_steps_csv(
            format!("{},more\n", header_before_trims()).as_bytes()
        ));
    }

    #[test]
    fn several_drives_have_a_drive_column() {
        let text = csv(&[result(Some("a"), 1), result(Some("b"), 1)]);
        assert!(text.starts_with("drive,step,"), "{text}");
        assert!(text
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("\"b\",1,")));
        assert!(is_steps_csv(text.as_bytes()));
    }

    #[test]
    fn json_is_known_as_ours() {
        let text = json(&[result(None, 1)]);
        assert!(is_steps_json(text.as_bytes()), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["steps"][0]["read"]["iops"], 1234.56789);
    }
}
