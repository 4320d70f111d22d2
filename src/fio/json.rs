//! fio's json+ status dumps as drivescope reads them: each entry of a dump's `jobs` list (a
//! job, or a reporting group with `group_reporting`) as a [`Series`] of cumulative figures,
//! and the one builder of a step's summary from fio's totals, for both kinds of fio step.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::error::FioError;
use crate::outcome::EndedBy;
use crate::stats::{new_histogram, LatSummary, SeriesDir, SeriesSummary, StepSummary};
use crate::workload::EngineKind;

/// One direction's cumulative figures in a dump.
#[derive(Debug, Clone, Default)]
pub(super) struct Dir {
    pub(super) ios: u64,
    pub(super) bytes: u64,
    /// Completion-latency bins: ns → count.
    pub(super) bins: BTreeMap<u64, u64>,
    /// fio's own rates (cumulative).
    pub(super) iops: f64,
    pub(super) bw: f64,
    /// fio's measured time in this direction, ms.
    pub(super) runtime_ms: f64,
}

impl Dir {
    /// Adds another's counts and bins (fio's rates and times are not added here).
    fn add(&mut self, x: &Dir) {
        self.ios += x.ios;
        self.bytes += x.bytes;
        for (k, c) in &x.bins {
            *self.bins.entry(*k).or_insert(0) += c;
        }
    }

    /// Its completion latency, from its own bins.
    pub(super) fn lat(&self) -> LatSummary {
        LatSummary::from_hist(&delta_hist(&self.bins, &BTreeMap::new()))
    }
}

/// One entry of a dump's `jobs` list, cumulative.
#[derive(Debug, Clone, Default)]
pub(super) struct Series {
    pub(super) name: String,
    pub(super) read: Dir,
    pub(super) write: Dir,
    /// fio's `trim` section (a trim job's discards).
    pub(super) trim: Dir,
    /// fio's measured time (the longest of its directions, ms).
    pub(super) runtime_ms: f64,
    /// fio's `job_runtime` (ms): summed over a group's jobs.
    pub(super) job_runtime_ms: f64,
    /// fio's error code for the job (0: none); it stops a job at its first I/O error.
    pub(super) error: i64,
}

impl Series {
    /// Its figures as the step's summary keeps them.
    pub(super) fn summary(&self) -> SeriesSummary {
        let dir = |d: &Dir| SeriesDir {
            ios: d.ios,
            bytes: d.bytes,
            iops: d.iops,
            lat_us: d.lat(),
        };
        SeriesSummary {
            name: self.name.clone(),
            runtime_s: self.runtime_ms / 1000.0,
            read: dir(&self.read),
            write: dir(&self.write),
            trim: dir(&self.trim),
            ..Default::default()
        }
    }
}

pub(super) fn dir_of(v: &Value) -> Dir {
    let bins = v["clat_ns"]["bins"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, c)| Some((k.parse::<u64>().ok()?, c.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    Dir {
        ios: v["total_ios"].as_u64().unwrap_or(0),
        bytes: v["io_bytes"].as_u64().unwrap_or(0),
        bins,
        iops: v["iops"].as_f64().unwrap_or(0.0),
        bw: v["bw_bytes"].as_f64().unwrap_or(0.0),
        runtime_ms: v["runtime"].as_f64().unwrap_or(0.0),
    }
}

/// The name of the job that only takes thread numbers (series.rs `numbering_jobs`): not
/// one of the job file's, never a series.
pub(super) const NUMBERING_JOB: &str = "drivescope-thread-numbering";

/// Every entry of a dump's `jobs` list but the numbering job's; a dump without one is not
/// fio's.
pub(super) fn series_of(v: &Value) -> Result<Vec<Series>, FioError> {
    let list = v["jobs"]
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| FioError::Output("a status dump with no jobs".into()))?;
    Ok(list
        .iter()
        .filter(|j| j["jobname"].as_str() != Some(NUMBERING_JOB))
        .map(|j| {
            let (read, write, trim) = (dir_of(&j["read"]), dir_of(&j["write"]), dir_of(&j["trim"]));
            Series {
                name: j["jobname"].as_str().unwrap_or("?").to_string(),
                runtime_ms: read.runtime_ms.max(write.runtime_ms).max(trim.runtime_ms),
                read,
                write,
                trim,
                job_runtime_ms: j["job_runtime"].as_f64().unwrap_or(0.0),
                error: j["error"].as_i64().unwrap_or(0),
            }
        })
        .collect())
}

/// Every series added up: counts and bins summed, `job_runtime` summed, the first error.
pub(super) fn total_of(list: &[Series]) -> Series {
    let mut t = Series::default();
    for s in list {
        t.read.add(&s.read);
        t.write.add(&s.write);
        t.trim.add(&s.trim);
        t.job_runtime_ms += s.job_runtime_ms;
        if t.error == 0 {
            t.error = s.error;
        }
    }
    t
}

/// The latency of the I/Os between two dumps' bins.
pub(super) fn delta_hist(now: &BTreeMap<u64, u64>, before: &BTreeMap<u64, u64>) -> Histogram<u64> {
    let mut h = new_histogram();
    for (ns, c) in now {
        let d = c.saturating_sub(before.get(ns).copied().unwrap_or(0));
        if d > 0 {
            let _ = h.record_n((*ns).max(1), d);
        }
    }
    h
}

/// What a step's summary is made of: fio's totals in each direction (their bins merged),
/// the measured time, and the rates (`iops`, `bw` of each direction).
pub(super) struct Totals<'a> {
    pub(super) read: &'a Dir,
    pub(super) write: &'a Dir,
    pub(super) trim: &'a Dir,
    pub(super) runtime_s: f64,
    /// The step's rate, where it is not its directions' added (jobs one after another
    /// each keep their own direction's rate; the step's is its I/Os over its time).
    pub(super) iops: Option<f64>,
    pub(super) target_iops: Option<f64>,
    pub(super) engine_note: String,
    pub(super) ended_by: EndedBy,
    pub(super) series: Vec<SeriesSummary>,
}

/// The one builder of an fio step's summary.
pub(super) fn step_summary(t: Totals<'_>) -> StepSummary {
    let mut all = delta_hist(&t.read.bins, &BTreeMap::new());
    let _ = all.add(delta_hist(&t.write.bins, &BTreeMap::new()));
    let _ = all.add(delta_hist(&t.trim.bins, &BTreeMap::new()));
    StepSummary {
        engine: EngineKind::Fio,
        engine_note: Some(t.engine_note),
        runtime_s: t.runtime_s,
        ios: t.read.ios + t.write.ios + t.trim.ios,
        read_ios: t.read.ios,
        write_ios: t.write.ios,
        read_bytes: t.read.bytes,
        write_bytes: t.write.bytes,
        iops: t.iops.unwrap_or(t.read.iops + t.write.iops + t.trim.iops),
        read_iops: t.read.iops,
        write_iops: t.write.iops,
        read_bw_bytes: t.read.bw,
        write_bw_bytes: t.write.bw,
        trim_ios: t.trim.ios,
        trim_bytes: t.trim.bytes,
        trim_iops: t.trim.iops,
        trim_bw_bytes: t.trim.bw,
        trim_lat_us: t.trim.lat(),
        target_iops: t.target_iops,
        lat_us: LatSummary::from_hist(&all),
        read_lat_us: t.read.lat(),
        write_lat_us: t.write.lat(),
        ended_by: t.ended_by,
        fio_series: t.series,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dumps_jobs_are_series_and_their_total_adds_them_up() {
        let v = serde_json::json!({"jobs": [
            {"jobname": "a", "job_runtime": 1000, "error": 0,
             "read": {"total_ios": 10, "io_bytes": 40960, "iops": 10.0, "bw_bytes": 40960,
                      "runtime": 1000, "clat_ns": {"bins": {"1000": 10}}},
             "write": {"total_ios": 0, "io_bytes": 0, "runtime": 0}},
            {"jobname": "b", "job_runtime": 800, "error": 5,
             "read": {"total_ios": 2, "io_bytes": 8192, "runtime": 0,
                      "clat_ns": {"bins": {"1000": 1, "2000": 1}}},
             "write": {"total_ios": 4, "io_bytes": 16384, "iops": 5.0, "runtime": 800},
             "trim": {"total_ios": 7, "io_bytes": 28672, "iops": 7.0, "runtime": 900,
                      "clat_ns": {"bins": {"3000": 7}}}}
        ]});
        let s = series_of(&v).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[1].name.as_str(), s[1].runtime_ms), ("b", 900.0));
        let t = total_of(&s);
        assert_eq!((t.read.ios, t.read.bytes, t.write.ios), (12, 49152, 4));
        assert_eq!(t.read.bins.get(&1000), Some(&11));
        assert_eq!((t.job_runtime_ms, t.error), (1800.0, 5));
        assert_eq!((t.trim.ios, t.trim.bytes), (7, 28672));
        assert_eq!(s[1].summary().trim.lat_us.samples, 7);
        let a = s[0].summary();
        assert_eq!((a.read.ios, a.read.iops, a.write.ios), (10, 10.0, 0));
        assert_eq!(a.read.lat_us.samples, 10);
        assert!(series_of(&serde_json::json!({"jobs": []})).is_err());
    }
}
