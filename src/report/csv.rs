//! The intervals as CSV: one row per interval, a header row naming the units.

use std::fmt::Write;

use crate::session::IntervalRecord;

pub const HEADER: &str = "t_s,dt_s,step,ramp,read_iops,write_iops,read_mbps,write_mbps,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p99.9_us,lat_p99.99_us,lat_max_us,errors,trim_iops,trim_mbps";

/// The header before the trim columns were added (a file drivescope wrote then is still its
/// own to overwrite).
const HEADER_BEFORE_TRIMS: &str = "t_s,dt_s,step,ramp,read_iops,write_iops,read_mbps,write_mbps,lat_mean_us,lat_p50_us,lat_p90_us,lat_p99_us,lat_p99.9_us,lat_p99.99_us,lat_max_us,errors";

/// The first column of a session of several drives: the drive's label.
pub const DRIVE_COLUMN: &str = "drive,";

/// Whether `head` (a file's first bytes) is the start of an intervals CSV drivescope wrote.
pub fn is_intervals(head: &[u8]) -> bool {
    let head = head.strip_prefix(DRIVE_COLUMN.as_bytes()).unwrap_or(head);
    [HEADER, HEADER_BEFORE_TRIMS].iter().any(|h| {
        head.strip_prefix(h.as_bytes())
            .is_some_and(|rest| rest.first() == Some(&b'\n'))
    })
}

/// The CSV text of a session's intervals: a session of several drives has a first column
/// naming each row's drive (its label, quoted), and its step column counts each drive's
/// steps on their own.
pub fn session_intervals(s: &crate::session::Session) -> String {
    if s.drives.is_empty() {
        return intervals(&s.intervals);
    }
    let labels = s.drive_labels();
    // Each drive's steps counted on their own, as a session of one drive counts them (the
    // session numbers the steps of every drive together).
    let mut own = std::collections::HashMap::new();
    let mut next = vec![0u32; s.drives.len()];
    for st in &s.steps {
        if let Some(n) = st.drive.and_then(|d| next.get_mut(d as usize)) {
            own.insert((st.drive, st.index), *n);
            *n += 1;
        }
    }
    let counted: Vec<IntervalRecord> = s
        .intervals
        .iter()
        .map(|r| IntervalRecord {
            step: own.get(&(r.drive, r.step)).copied().unwrap_or(r.step),
            ..*r
        })
        .collect();
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
            let _ = write!(o, "\"{}\",", label.replace('"', "\"\""));
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
