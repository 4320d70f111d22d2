//! One series of an fio job file's step (a job, or a reporting group with
//! `group_reporting`): its own totals and completion-latency percentiles, kept in the
//! step's summary and said where a step's figures are shown.

use serde::{Deserialize, Serialize};

use super::LatSummary;
use crate::units::format_size;

/// One direction of a series: fio's totals and its rate, latency from the series' own bins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesDir {
    pub ios: u64,
    pub bytes: u64,
    /// fio's own rate.
    pub iops: f64,
    /// Completion latency.
    pub lat_us: LatSummary,
}

/// Why an fio job (a series) ended, read from fio's figures and the job's options: its
/// `size` was done, its `runtime` ran out, its `io_size` (`io_limit`, `number_ios`) was
/// done, fio stopped it on an error, or the user stopped the step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum JobEnd {
    #[error("size")]
    Size,
    #[error("runtime")]
    Runtime,
    #[error("io_size")]
    IoSize,
    #[error("error")]
    Error,
    #[error("stopped")]
    Stopped,
    /// A reason a later release stored that this one does not know.
    #[error("unknown")]
    #[serde(other)]
    Unknown,
}

/// A series' figures at the step's end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// fio's `jobname` (a group's first job).
    pub name: String,
    /// fio's measured time (the longer of its directions).
    pub runtime_s: f64,
    pub read: SeriesDir,
    pub write: SeriesDir,
    /// Trims (a trim job's): absent from the file when none.
    #[serde(default, skip_serializing_if = "SeriesDir::is_empty")]
    pub trim: SeriesDir,
    /// Why it ended (a job file's step; absent in sessions of earlier releases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<JobEnd>,
    /// Its job's shape as it ran (a group's jobs', under `group_reporting`); none in
    /// sessions of earlier releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<super::JobShape>,
}

impl SeriesDir {
    /// No I/O in this direction.
    pub fn is_empty(&self) -> bool {
        self.ios == 0
    }
}

impl std::fmt::Display for SeriesSummary {
    /// `fio job NAME (2.00 s, ended by size): read 12 I/Os, 48.0 KiB, 6 IOPS, clat p50 … µs
    /// p99 … µs p99.9 … µs`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fio job {}", self.name)?;
        if !self.jobs.is_empty() {
            let shapes: Vec<String> = self.jobs.iter().map(ToString::to_string).collect();
            write!(f, ": {}", shapes.join(", "))?;
        }
        write!(f, " ({:.2} s", self.runtime_s)?;
        if let Some(end) = self.ended_by {
            write!(f, ", ended by {end}")?;
        }
        f.write_str("): ")?;
        let mut any = false;
        for (what, d) in [
            ("read", &self.read),
            ("write", &self.write),
            ("trim", &self.trim),
        ] {
            if d.ios == 0 {
                continue;
            }
            if any {
                f.write_str("; ")?;
            }
            any = true;
            write!(
                f,
                "{what} {} I/Os, {}, {:.0} IOPS, clat p50 {:.1} µs p99 {:.1} µs p99.9 {:.1} µs",
                d.ios,
                format_size(d.bytes),
                d.iops,
                d.lat_us.p50,
                d.lat_us.p99,
                d.lat_us.p99_9
            )?;
        }
        if !any {
            f.write_str("no I/O")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_said_as_the_step_note_said_it() {
        let mut s = SeriesSummary {
            name: "randr".into(),
            runtime_s: 2.0,
            ..SeriesSummary::default()
        };
        assert_eq!(s.to_string(), "fio job randr (2.00 s): no I/O");
        s.ended_by = Some(JobEnd::IoSize);
        assert_eq!(
            s.to_string(),
            "fio job randr (2.00 s, ended by io_size): no I/O"
        );
        let back: SeriesSummary =
            serde_json::from_value(serde_json::json!({"name": "x", "runtime_s": 1.0,
                "read": {"ios": 0, "bytes": 0, "iops": 0.0, "lat_us": LatSummary::default()},
                "write": {"ios": 0, "bytes": 0, "iops": 0.0, "lat_us": LatSummary::default()},
                "ended_by": "a later reason"}))
            .unwrap();
        assert_eq!(back.ended_by, Some(JobEnd::Unknown));
        s.ended_by = None;
        s.write = SeriesDir {
            ios: 10,
            bytes: 40960,
            iops: 5.0,
            lat_us: LatSummary {
                p50: 1.0,
                p99: 2.0,
                p99_9: 3.0,
                ..LatSummary::default()
            },
        };
        s.read = SeriesDir {
            ios: 1,
            ..s.write.clone()
        };
        let text = s.to_string();
        assert!(
            text.starts_with("fio job randr (2.00 s): read 1 I/Os, ")
                && text.contains("; write 10 I/Os, ")
                && text.ends_with("5 IOPS, clat p50 1.0 µs p99 2.0 µs p99.9 3.0 µs"),
            "{text}"
        );
    }
}
