//! The intervals as CSV: one row per interval, a header row naming the units; and the one
//! writer of a CSV text cell ([`text_cell`]), which every CSV drivescope writes uses.

use std::fmt::Write;

use crate::session::IntervalRecord;

/// The header: the latency is each interval's response latency (from the schedule when
/// paced; from submission, the service latency, when not).
pub const HEADER: &str = "t_s,dt_s,step,ramp,read_iops,write_iops,read_mbps,write_mbps,response_lat_mean_us,response_lat_p50_us,response_lat_p90_us,response_lat_p99_us,response_lat_p99.9_us,response_lat_p99.99_us,response_lat_max_us,errors,trim_iops,trim_mbps";

/// The header before its latency said which (a file drivescope wrote then is still its own
/// to overwrite).
const HEADER_BEFORE_NAMED: &str = "t_s,dt_s,step,ramp,read_iops,write_iops,read_mbps,write_mbps,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p99.9_us,lat_p99.99_us,lat_max_us,errors,trim_iops,trim_mbps";

/// The header before the trim columns were added (a file drivescope wrote then is still its
/// own to overwrite).
const HEADER_BEFORE_TRIMS: &str = "t_s,dt_s,step,ramp,read_iops,write_iops,read_mbps,write_mbps,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p99.9_us,lat_p99.99_us,lat_max_us,errors";

/// The first column of a session of several drives: the drive's label.
pub const DRIVE_COLUMN: &str = "drive,";

/// `s` as a CSV text cell: quoted (a `"` doubled), its control characters written out
/// ([`crate::ostext::printable`]), and inert: text a spreadsheet would evaluate (starting
/// with `=`, `+`, `-`, `@`, tab or CR) gets a `'` first, as OWASP advises; a number
/// (`-1.5`, `+3`, `2e-3`) is left a number.
pub fn text_cell(s: &str) -> String {
    let s = crate::ostext::printable(s);
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(&s);
    let quote = if formula { "'" } else { "" };
    format!("\"{quote}{}\"", s.replace('"', "\"\""))
}

/// Whether `s` is a plain decimal number (sign, digits, a point, an exponent).
fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok() && s.chars().all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
}

/// Whether `head` (a file's first bytes) is the start of an intervals CSV drivescope wrote.
pub fn is_intervals(head: &[u8]) -> bool {
    has_header(head, &[HEADER, HEADER_BEFORE_NAMED, HEADER_BEFORE_TRIMS])
}

/// Whether the first line of `head` is one of `headers`, after a drive column or not.
pub fn has_header(head: &[u8], headers: &[&str]) -> bool {
    let head = head.strip_prefix(DRIVE_COLUMN.as_bytes()).unwrap_or(head);
    headers.iter().any(|h| {
        head.strip_prefix(h.as_bytes())
            .is_some_and(|rest| rest.first() == Some(&b'\n'))
    })
}

/// The CSV text of a session's intervals, its step column numbered from 1 as `steps.csv`
/// and the run count them (`step 1/13`): a session of several drives has a first column
/// naming each row's drive (its label, quoted), and its step column counts each drive's
/// steps on their own.
pub fn session_intervals(s: &crate::session::Session) -> String {
    // Each drive's steps counted on their own from 1 (the session numbers the steps of
    // every drive together, from 0); an interval of a step that did not finish (a
    // snapshot's running step) gets the number the step will have.
    let slot = |d: Option<u32>| {
        if s.drives.is_empty() {
            0
        } else {
            d.map_or(usize::MAX, |d| d as usize)
        }
    };
    let mut own = std::collections::HashMap::new();
    let mut done = vec![0u32; s.drives.len().max(1)];
    for st in &s.steps {
        if let Some(n) = done.get_mut(slot(st.drive)) {
            *n += 1;
            own.insert((st.drive, st.index), *n);
        }
    }
    let counted: Vec<IntervalRecord> = s
        .intervals
        .iter()
        .map(|r| IntervalRecord {
            step: own
                .get(&(r.drive, r.step))
                .copied()
                .unwrap_or_else(|| done.get(slot(r.drive)).map_or(r.step + 1, |n| n + 1)),
            ..*r
        })
        .collect();
    if s.drives.is_empty() {
        return intervals(&counted);
    }
    let labels = s.drive_labels();
    let one = intervals(&counted);
    let mut o = String::with_capacity(one.len() + s.intervals.len() * 16);
    o.push_str(DRIVE_COLUMN);
    for (line, r) in one
        .lines()
        .zip(std::iter::once(None).chain(s.intervals.iter().map(Some)))
    {
        if let Some(r) = r {
            let label = r
                .drive
                .and_then(|d| labels.get(d as usize))
                .map(String::as_str)
                .unwrap_or("");
            let _ = write!(o, "{},", text_cell(label));
        }
        o.push_str(line);
        o.push('\n');
    }
    o
}

/// The CSV text of `intervals`.
pub fn intervals(intervals: &[IntervalRecord]) -> String {
    let mut o = String::with_capacity(64 + intervals.len() * 120);
    o.push_str(HEADER);
    o.push('\n');
    for r in intervals {
        let l = &r.lat_us;
        let _ = writeln!(
            o,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.t,
            r.dt,
            r.step,
            u8::from(r.ramp),
            r.read_iops,
            r.write_iops,
            r.read_mbps,
            r.write_mbps,
            l.mean,
            l.p50,
            l.p90,
            l.p99,
            l.p99_9,
            l.p99_99,
            l.max,
            r.errors,
            r.trim_iops,
            r.trim_mbps
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_cell_is_never_a_formula_and_a_number_stays_one() {
        assert_eq!(text_cell("nvme0 \"a\""), "\"nvme0 \"\"a\"\"\"");
        for f in [
            "=1+1",
            "+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1)",
            "=HYPERLINK(\"x\")",
        ] {
            let cell = text_cell(f);
            assert!(cell.starts_with("\"'"), "{f}: {cell}");
        }
        assert_eq!(text_cell("\t=1"), "\"\\t=1\"", "a tab is written out");
        assert_eq!(text_cell("\r=1"), "\"\\r=1\"");
        assert_eq!(text_cell("a\x1b[2J"), "\"a\\e[2J\"");
        for n in ["-1.5", "+3", "-2e-3", "42"] {
            assert_eq!(text_cell(n), format!("\"{n}\""), "{n} stays a number");
        }
        assert!(text_cell("-inf").starts_with("\"'"));
        assert!(text_cell("-").starts_with("\"'"));
    }

    #[test]
    fn one_row_per_interval_with_every_column() {
        let rows = [IntervalRecord::default(), IntervalRecord::default()];
        let text = intervals(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let cols = HEADER.split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == cols));
    }

    #[test]
    fn trims_are_the_last_columns_and_an_older_file_is_still_ours() {
        let r = IntervalRecord {
            trim_iops: 250.0,
            trim_mbps: 1.024,
            ..IntervalRecord::default()
        };
        let text = intervals(&[r]);
        let row = text.lines().nth(1).unwrap_or_default();
        assert!(row.ends_with(",250,1.024"), "{row}");
        assert!(HEADER.ends_with(",errors,trim_iops,trim_mbps"));
        assert!(is_intervals(
            format!("{HEADER_BEFORE_TRIMS}\n0,").as_bytes()
        ));
        assert!(is_intervals(format!("{HEADER}\n").as_bytes()));
        assert!(!is_intervals(b"t_s,dt_s\n"));
    }
}
