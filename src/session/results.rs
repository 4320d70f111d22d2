//! Steps as the unit of results: one [`StepResult`] per step and drive, computed once from
//! a session's step records ([`step_results`]) and shown by the headless run's table,
//! a report's `steps.csv` and `steps.json`, `drivescope export` and `compare`.

use serde::Serialize;

use super::model::{Session, StepRecord};
use crate::outcome::EndedBy;
use crate::stats::LatSummary;

/// Latency figures of one direction of a step, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatFigures {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
    /// Not known for a session of a release before it was recorded.
    #[serde(rename = "p99.999")]
    pub p99_999: Option<f64>,
    pub max: f64,
}

impl LatFigures {
    /// The figures of `l`; none when it measured no I/O.
    pub fn of(l: &LatSummary) -> Option<LatFigures> {
        (!l.is_empty()).then_some(LatFigures {
            mean: l.mean,
            p50: l.p50,
            p99: l.p99,
            p99_9: l.p99_9,
            p99_99: l.p99_99,
            p99_999: l.p99_999,
            max: l.max,
        })
    }
}

/// One direction (reads, writes or trims) of a step.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct DirResult {
    pub ios: u64,
    pub iops: f64,
    /// MB/s (10^6 bytes per second).
    pub mbps: f64,
    /// Response latency this way, from each I/O's scheduled time in a paced step; an
    /// unpaced step has no schedule, so there it is the service latency (from submission).
    /// None when the step did no I/O this way.
    #[serde(rename = "response_lat_us")]
    pub lat_us: Option<LatFigures>,
}

impl DirResult {
    /// `ios` I/Os at `iops` and `bw_bytes` a second, of latency `lat`.
    fn of(ios: u64, iops: f64, bw_bytes: f64, lat: &LatSummary) -> DirResult {
        DirResult {
            ios,
            iops,
            mbps: bw_bytes / 1e6,
            lat_us: LatFigures::of(lat),
        }
    }

    /// No I/O this way (a step's trims, in a step without any, are left out of its JSON).
    pub fn is_empty(&self) -> bool {
        self.ios == 0
    }
}

/// Which way an I/O went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    Trim,
}

impl Direction {
    /// Reads and writes: the directions of the steps CSV and the report's columns.
    pub const BOTH: [Direction; 2] = [Direction::Read, Direction::Write];
    /// Every direction, trims too.
    pub const ALL: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Trim];

    /// Its word in tables and CSV headers.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
        }
    }
}

/// A paced step that achieved under this share of its target rate missed it (marked in the
/// tables, the text output, the report's curve and the dashboard).
pub const MISSED_BELOW: f64 = 0.97;

/// Achieved IOPS over the target (none when there is no positive target, or either is not
/// a number).
pub fn share_of(iops: f64, target: Option<f64>) -> Option<f64> {
    target
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(|t| iops / t)
        .filter(|x| x.is_finite() && *x >= 0.0)
}

/// A share of a target in percent as a table shows it: whole percents, one decimal under
/// 10% (`0.2%`, `64%`), `<0.1%` below that.
pub fn percent_text(share: f64) -> String {
    let p = share * 100.0;
    if p < 0.1 {
        "<0.1%".to_string()
    } else if p < 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.0}%")
    }
}

/// Whether a step that achieved `iops` missed its `target` (under [`MISSED_BELOW`] of it).
pub fn missed(iops: f64, target: Option<f64>) -> bool {
    share_of(iops, target).is_some_and(|s| s < MISSED_BELOW)
}

/// One step of one drive once it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepResult {
    /// The drive's label, in a session of several drives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    /// Its number among the drive's steps, from 1 (as the run counts `step 1/13`).
    pub step: u32,
    pub label: String,
    /// The workload's shape (`randread 4KiB QD32×1`), or the label where none was recorded.
    pub workload: String,
    /// The rate it was paced at; none for a closed-loop step.
    pub target_iops: Option<f64>,
    /// A paced step: its achieved IOPS over its target (1.0: reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub achieved_share: Option<f64>,
    /// A paced step that achieved under [`MISSED_BELOW`] of its target.
    pub missed_target: bool,
    /// Service latency of all its I/Os (every direction), from each I/O's submission to its
    /// completion (the curve's latency); none when it did no I/O.
    pub service_lat_us: Option<LatFigures>,
    /// A paced step: the response latency of all its I/Os, from each I/O's scheduled time
    /// (its backlog counted); none for an unpaced step, whose response is its service.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_lat_us: Option<LatFigures>,
    pub read: DirResult,
    pub write: DirResult,
    /// Trims (a trim workload's, an fio job file's trim jobs).
    #[serde(skip_serializing_if = "DirResult::is_empty")]
    pub trim: DirResult,
    pub errors: u64,
    pub ended_by: EndedBy,
    /// Measured seconds (ramp excluded).
    pub measured_s: f64,
}

impl StepResult {
    /// The result of `r`, the `step`-th (from 1) of drive `drive`.
    pub fn of(r: &StepRecord, step: u32, drive: Option<String>) -> StepResult {
        StepResult::from_summary(&r.summary, r.label.clone(), r.series(), step, drive)
    }

    /// The result of a step labelled `label` on workload `workload` (its shape) that ended
    /// with summary `s`: what a running dashboard has when a step finishes.
    pub fn from_summary(
        s: &crate::stats::StepSummary,
        label: String,
        workload: String,
        step: u32,
        drive: Option<String>,
    ) -> StepResult {
        StepResult {
            drive,
            step,
            label,
            workload,
            target_iops: s.target_iops,
            achieved_share: share_of(s.iops, s.target_iops),
            missed_target: missed(s.iops, s.target_iops),
            service_lat_us: LatFigures::of(s.service_lat()),
            response_lat_us: s.response_from_schedule().and_then(LatFigures::of),
            read: DirResult::of(s.read_ios, s.read_iops, s.read_bw_bytes, &s.read_lat_us),
            write: DirResult::of(s.write_ios, s.write_iops, s.write_bw_bytes, &s.write_lat_us),
            trim: DirResult::of(s.trim_ios, s.trim_iops, s.trim_bw_bytes, &s.trim_lat_us),
            errors: s.errors,
            ended_by: s.ended_by.clone(),
            measured_s: s.runtime_s,
        }
    }

    pub fn dir(&self, d: Direction) -> &DirResult {
        match d {
            Direction::Read => &self.read,
            Direction::Write => &self.write,
            Direction::Trim => &self.trim,
        }
    }

    /// Reads, writes and trims together.
    pub fn iops(&self) -> f64 {
        self.read.iops + self.write.iops + self.trim.iops
    }

    pub fn mbps(&self) -> f64 {
        self.read.mbps + self.write.mbps + self.trim.mbps
    }

    /// The mean latency of all its I/Os (the directions' means weighted by their I/Os), µs;
    /// none when it did no I/O.
    pub fn mean_us(&self) -> Option<f64> {
        let (sum, n) = Direction::ALL
            .iter()
            .map(|d| self.dir(*d))
            .filter_map(|x| Some((x.lat_us?.mean * x.ios as f64, x.ios as f64)))
            .fold((0.0, 0.0), |(s, n), (a, b)| (s + a, n + b));
        (n > 0.0).then(|| sum / n)
    }

    /// The worse p99 of its directions (none when it did no I/O).
    pub fn p99_us(&self) -> Option<f64> {
        Direction::ALL
            .iter()
            .filter_map(|d| self.dir(*d).lat_us.map(|l| l.p99))
            .reduce(f64::max)
    }

    /// Its achieved share of its target in a table's cell: `98%`, or `64% MISSED` under
    /// [`MISSED_BELOW`]; empty for an unpaced step.
    pub fn reached(&self) -> String {
        match self.achieved_share {
            Some(x) if self.missed_target => format!("{} MISSED", percent_text(x)),
            Some(x) => percent_text(x),
            None => String::new(),
        }
    }

    /// What matches it with a step of another session: its drive, label and workload.
    pub fn key(&self) -> (Option<&str>, &str, &str) {
        (self.drive.as_deref(), &self.label, &self.workload)
    }
}

/// Every step of `s` that ran, drive by drive (a session of several: each drive's steps
/// numbered from 1, with its label).
pub fn step_results(s: &Session) -> Vec<StepResult> {
    if s.drives.is_empty() {
        return numbered(s.steps.iter(), None);
    }
    s.drives
        .iter()
        .enumerate()
        .flat_map(|(i, d)| {
            let mine = s
                .steps
                .iter()
                .filter(move |r| r.drive.is_some_and(|x| x as usize == i));
            numbered(mine, Some(&d.label))
        })
        .collect()
}

fn numbered<'a>(
    steps: impl Iterator<Item = &'a StepRecord>,
    drive: Option<&String>,
) -> Vec<StepResult> {
    steps
        .enumerate()
        .map(|(n, r)| StepResult::of(r, n as u32 + 1, drive.cloned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::DriveEntry;
    use crate::stats::StepSummary;

    fn lat(p99: f64) -> LatSummary {
        LatSummary {
            samples: 10,
            mean: p99 / 2.0,
            p50: p99 / 3.0,
            p99,
            p99_9: p99 * 2.0,
            p99_99: p99 * 3.0,
            p99_999: Some(p99 * 4.0),
            max: p99 * 5.0,
            ..LatSummary::default()
        }
    }

    fn step(index: u32, read_iops: f64, drive: Option<u32>) -> StepRecord {
        StepRecord {
            index,
            label: format!("point {index}"),
            end_s: 1.0,
            summary: StepSummary {
                runtime_s: 2.5,
                ios: 25,
                read_ios: 25,
                iops: read_iops,
                read_iops,
                read_bw_bytes: read_iops * 4096.0,
                errors: 3,
                target_iops: Some(1000.0),
                lat_us: lat(100.0),
                read_lat_us: lat(100.0),
                ended_by: EndedBy::Duration,
                ..Default::default()
            },
            drive,
            ..StepRecord::default()
        }
    }

    #[test]
    fn a_record_per_step_numbered_from_one() {
        let s = Session {
            steps: vec![step(0, 900.0, None), step(1, 400.0, None)],
            ..Session::default()
        };
        let r = step_results(&s);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].step, r[1].step), (1, 2));
        assert_eq!(r[0].label, "point 0");
        assert_eq!(r[0].workload, "point 0", "no workload: its label");
        assert_eq!(r[0].target_iops, Some(1000.0));
        assert_eq!(r[0].achieved_share, Some(0.9));
        assert!(r[0].missed_target, "900 of 1000 IOPS: under 97%");
        assert_eq!(r[1].achieved_share, Some(0.4));
        assert_eq!(
            r[0].service_lat_us.map(|l| l.p99),
            Some(100.0),
            "unpaced: lat_us"
        );
        assert_eq!(r[0].response_lat_us, None, "no schedule");
        assert_eq!(r[0].read.iops, 900.0);
        assert!((r[0].read.mbps - 900.0 * 4096.0 / 1e6).abs() < 1e-9);
        let l = r[0].read.lat_us.expect("reads measured");
        assert_eq!((l.p99, l.p99_999, l.max), (100.0, Some(400.0), 500.0));
        assert_eq!(r[0].write.lat_us, None, "no writes: no latency");
        assert_eq!((r[0].errors, r[0].measured_s), (3, 2.5));
        assert_eq!(r[0].ended_by, EndedBy::Duration);
        assert_eq!(r[0].drive, None);
    }

    #[test]
    fn several_drives_count_their_own_steps() {
        let drive = |label: &str| DriveEntry {
            label: label.into(),
            ..DriveEntry::default()
        };
        let s = Session {
            drives: vec![drive("a"), drive("b")],
            steps: vec![
                step(0, 1.0, Some(0)),
                step(1, 2.0, Some(1)),
                step(2, 3.0, Some(0)),
                step(3, 4.0, Some(1)),
            ],
            ..Session::default()
        };
        let r = step_results(&s);
        let seen: Vec<_> = r
            .iter()
            .map(|x| (x.drive.as_deref(), x.step, x.read.iops))
            .collect();
        assert_eq!(
            seen,
            [
                (Some("a"), 1, 1.0),
                (Some("a"), 2, 3.0),
                (Some("b"), 1, 2.0),
                (Some("b"), 2, 4.0)
            ]
        );
    }

    #[test]
    fn p99_is_the_worse_direction_and_json_names_the_nines() {
        let mut r = StepResult::of(&step(0, 10.0, None), 1, None);
        assert_eq!(r.p99_us(), Some(100.0));
        r.write.lat_us = LatFigures::of(&lat(300.0));
        assert_eq!(r.p99_us(), Some(300.0));
        let v = serde_json::to_value(&r).expect("json");
        assert_eq!(v["read"]["response_lat_us"]["p99.999"], 400.0);
        assert_eq!(v["ended_by"], "duration");
        assert!(v.get("drive").is_none());
    }
}
