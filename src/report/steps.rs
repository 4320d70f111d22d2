//! A session's step results ([`crate::session::step_results`]) as files: `steps.csv`, one
//! row per step (and drive), and `steps.json`, written into every report and snapshot
//! folder and by `drivescope export`.

use std::fmt::Write;

use serde::Serialize;

use super::csv::{has_header, text_cell, DRIVE_COLUMN};
use crate::session::results::LatFigures;
use crate::session::{round, Direction, StepResult};

pub const CSV_FILE: &str = "steps.csv";
pub const JSON_FILE: &str = "steps.json";

/// The columns of one direction before its latency, after its word and `_` (`read_iops`).
const DIR_COLUMNS: [&str; 3] = ["ios", "iops", "mbps"];

/// The latency figures, each a column after a latency's prefix and `_`, with `_us` after
/// (`read_response_lat_p99_us`, `service_lat_mean_us`).
const LAT_FIGURES: [&str; 7] = ["mean", "p50", "p99", "p99.9", "p99.99", "p99.999", "max"];

/// A direction's latency prefix in this release: response latency (from the schedule in a
/// paced step; the service latency in an unpaced one, which has no schedule).
const RESPONSE: &str = "response_lat";
/// The same columns' prefix before they said which latency they are (`read_lat_mean_us`).
const BEFORE_NAMED: &str = "lat";

/// The header's first columns, the step's own.
const FIRST: &str = "step,label,workload,target_iops";
/// The header's last columns.
const LAST: &str = "errors,ended_by,measured_s";
/// After the trims: a paced step's achieved share of its target and whether it missed it.
const TARGET_COLUMNS: &str = "achieved_share,missed_target";

/// The latency columns of `prefix` (`read_response_lat`), each after a comma.
fn lat_columns(h: &mut String, prefix: &str) {
    for f in LAT_FIGURES {
        let _ = write!(h, ",{prefix}_{f}_us");
    }
}

/// The columns of `d` with its latency named `lat`, each after a comma.
fn dir_columns(h: &mut String, d: Direction, lat: &str) {
    for c in DIR_COLUMNS {
        let _ = write!(h, ",{}_{c}", d.word());
    }
    lat_columns(h, &format!("{}_{lat}", d.word()));
}

/// The header of reads and writes (their latency named `lat`), before the trims.
fn header_of_both(lat: &str) -> String {
    let mut h = String::from(FIRST);
    for d in Direction::BOTH {
        dir_columns(&mut h, d, lat);
    }
    let _ = write!(h, ",{LAST}");
    h
}

/// The header before the trim columns were added (a file drivescope wrote then is still
/// its own to overwrite).
fn header_before_trims() -> String {
    header_of_both(BEFORE_NAMED)
}

/// The header before the latency columns said which latency they are.
fn header_before_named() -> String {
    let mut h = header_before_trims();
    dir_columns(&mut h, Direction::Trim, BEFORE_NAMED);
    h
}

/// The CSV's header (without the drive column): each direction's response latency; the
/// trims' columns, then the service and response latency of all I/Os and the target's
/// share come last, so a reader of the columns before them reads the file as before.
pub fn header() -> String {
    let mut h = header_of_both(RESPONSE);
    dir_columns(&mut h, Direction::Trim, RESPONSE);
    lat_columns(&mut h, "service_lat");
    lat_columns(&mut h, RESPONSE);
    let _ = write!(h, ",{TARGET_COLUMNS}");
    h
}

/// Whether `head` (a file's first bytes) is the start of a steps CSV drivescope wrote
/// (this release's or one from before the trim columns or the latency's names).
pub fn is_steps_csv(head: &[u8]) -> bool {
    let headers = [header(), header_before_named(), header_before_trims()];
    has_header(head, &headers.each_ref().map(String::as_str))
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
        lat_row(&mut o, r.service_lat_us);
        lat_row(&mut o, r.response_lat_us);
        let _ = write!(
            o,
            ",{},{}",
            r.achieved_share
                .map(|x| round(x, 4).to_string())
                .unwrap_or_default(),
            r.missed_target
        );
        o.push('\n');
    }
    o
}

/// The figures of `r`'s direction `d`, each after a comma.
fn dir_row(o: &mut String, r: &StepResult, d: Direction) {
    let x = r.dir(d);
    let _ = write!(o, ",{},{},{}", x.ios, num(x.iops), num(x.mbps));
    lat_row(o, x.lat_us);
}

/// The figures of latency `l` (empty cells when none), each after a comma.
fn lat_row(o: &mut String, l: Option<LatFigures>) {
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
    use crate::session::results::DirResult;

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
            service_lat_us: Some(lat),
            read: DirResult {
                ios: 10,
                iops: 1234.56789,
                mbps: 5.0,
                lat_us: Some(lat),
            },
            measured_s: 2.0,
            ..Default::default()
        }
    }

    #[test]
    fn one_row_per_step_with_every_column() {
        let text = csv(&[result(None, 1), result(None, 2)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(is_steps_csv(text.as_bytes()));
        let cols = header().split(',').count();
        assert_eq!(cols, 4 + 3 * (3 + 7) + 3 + 2 * 7 + 2);
        assert_eq!(
            lines[1],
            "1,\"50% of \"\"max\"\"\",\"randread 4KiB QD32×1\",,10,1234.568,5,1,2,3,4,5,,7,0,0,0,,,,,,,,0,\"duration\",2,0,0,0,,,,,,,,1,2,3,4,5,,7,,,,,,,,,false"
        );
        assert!(header().contains(",read_mbps,read_response_lat_mean_us,read_response_lat_p50_us,read_response_lat_p99_us,"), "{}", header());
        assert!(header().ends_with(",measured_s,trim_ios,trim_iops,trim_mbps,trim_response_lat_mean_us,trim_response_lat_p50_us,trim_response_lat_p99_us,trim_response_lat_p99.9_us,trim_response_lat_p99.99_us,trim_response_lat_p99.999_us,trim_response_lat_max_us,service_lat_mean_us,service_lat_p50_us,service_lat_p99_us,service_lat_p99.9_us,service_lat_p99.99_us,service_lat_p99.999_us,service_lat_max_us,response_lat_mean_us,response_lat_p50_us,response_lat_p99_us,response_lat_p99.9_us,response_lat_p99.99_us,response_lat_p99.999_us,response_lat_max_us,achieved_share,missed_target"), "{}", header());
        // No latency column without its kind.
        for c in header().split(',').filter(|c| c.ends_with("_us")) {
            assert!(
                c.contains("response_lat_") || c.starts_with("service_lat_"),
                "{c}"
            );
        }
    }

    #[test]
    fn a_paced_step_has_both_latencies_and_its_share_of_the_target() {
        let mut r = result(None, 1);
        r.target_iops = Some(2000.0);
        r.achieved_share = Some(1234.56789 / 2000.0);
        r.missed_target = true;
        r.response_lat_us = r.read.lat_us.map(|l| LatFigures { mean: 9.0, ..l });
        let text = csv(&[r]);
        let row: Vec<&str> = text.lines().nth(1).expect("a row").rsplit(',').collect();
        assert_eq!(&row[..3], ["true", "0.6173", "7"], "{text}");
        assert_eq!(row[2 + 6], "9", "the response mean: {text}");
        assert_eq!(row[2 + 13], "1", "the service mean: {text}");
    }

    #[test]
    fn a_steps_csv_from_before_the_latency_names_is_still_ours() {
        let old = format!("{}\n1,\"a\"", header_before_named());
        assert!(is_steps_csv(old.as_bytes()));
        assert!(header_before_named().contains(",read_lat_mean_us,"));
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
        assert_eq!(v["steps"][0]["read"]["response_lat_us"]["p99"], 3.0);
        assert_eq!(v["steps"][0]["service_lat_us"]["mean"], 1.0);
        assert_eq!(v["steps"][0]["missed_target"], false);
    }
}
