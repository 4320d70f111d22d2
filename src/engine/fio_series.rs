//! A step of an fio job file (`--fio-job`): fio runs the step's jobs (`--section`) from the
//! job text on its stdin. Each entry of fio's `jobs` list (a job, or a reporting group with
//! `group_reporting`) is a series: it is differenced dump by dump on its own (its counters
//! start again after its ramp), and the step's interval is every series of the step merged,
//! as drivescope's own jobs are. Each series' own totals and percentiles are said as notes
//! at the step's end; the step's summary is fio's totals.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::SystemTime;

use serde_json::Value;

use super::fio::FioError;
use super::fio::{delta_hist, dir_of, fio_version, natural_end, status_interval, supervise, Dir};
use super::seam::{Control, StepControl, StepObserver};
use super::EngineError;
use crate::stats::{new_histogram, DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::units::format_size;
use crate::workload::{EngineKind, FioFileStep, StepSpec};

/// One entry of a dump's `jobs` list, cumulative.
#[derive(Debug, Clone, Default)]
struct Series {
    name: String,
    read: Dir,
    write: Dir,
    /// fio's own rates and measured time (the longest of its directions, ms).
    read_iops: f64,
    write_iops: f64,
    read_bw: f64,
    write_bw: f64,
    runtime_ms: f64,
    job_runtime_ms: f64,
    error: i64,
}

fn series_of(v: &Value) -> Result<Vec<Series>, FioError> {
    let list = v["jobs"]
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| FioError::Output("a status dump with no jobs".into()))?;
    Ok(list
        .iter()
        .map(|j| Series {
            name: j["jobname"].as_str().unwrap_or("?").to_string(),
            read: dir_of(&j["read"]),
            write: dir_of(&j["write"]),
            read_iops: j["read"]["iops"].as_f64().unwrap_or(0.0),
            write_iops: j["write"]["iops"].as_f64().unwrap_or(0.0),
            read_bw: j["read"]["bw_bytes"].as_f64().unwrap_or(0.0),
            write_bw: j["write"]["bw_bytes"].as_f64().unwrap_or(0.0),
            runtime_ms: j["read"]["runtime"]
                .as_f64()
                .unwrap_or(0.0)
                .max(j["write"]["runtime"].as_f64().unwrap_or(0.0)),
            job_runtime_ms: j["job_runtime"].as_f64().unwrap_or(0.0),
            error: j["error"].as_i64().unwrap_or(0),
        })
        .collect())
}

/// Merges what each series did since its last dump; a series whose counters went back
/// (fio started them again at its ramp's end) is counted from zero, and marked `reset`.
struct Merge {
    read: DirCounts,
    write: DirCounts,
    hist: hdrhistogram::Histogram<u64>,
    /// The longest time measured by a series that started its counters again in this
    /// dump (ms): the interval's I/Os are those since then.
    since_reset_ms: Option<f64>,
}

fn merge(now: &[Series], before: &[Series], reset: &mut [bool]) -> Merge {
    let zero = Series::default();
    let mut m = Merge {
        read: DirCounts::default(),
        write: DirCounts::default(),
        hist: new_histogram(),
        since_reset_ms: None,
    };
    for (i, s) in now.iter().enumerate() {
        let mut b = before.get(i).unwrap_or(&zero);
        if s.read.ios < b.read.ios
            || s.write.ios < b.write.ios
            || s.job_runtime_ms < b.job_runtime_ms
        {
            if let Some(r) = reset.get_mut(i) {
                *r = true;
            }
            m.since_reset_ms = Some(m.since_reset_ms.unwrap_or(0.0).max(s.runtime_ms));
            b = &zero;
        }
        for (into, x, y) in [
            (&mut m.read, &s.read, &b.read),
            (&mut m.write, &s.write, &b.write),
        ] {
            into.ios += x.ios.saturating_sub(y.ios);
            into.bytes += x.bytes.saturating_sub(y.bytes);
            let _ = m.hist.add(delta_hist(&x.bins, &y.bins));
        }
    }
    m
}

fn ms_since_epoch(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// A series' own figures, as a note: its totals and its percentiles from its own bins.
fn series_note(s: &Series) -> String {
    let mut parts = Vec::new();
    for (what, d, iops) in [
        ("read", &s.read, s.read_iops),
        ("write", &s.write, s.write_iops),
    ] {
        if d.ios > 0 {
            let lat = LatSummary::from_hist(&delta_hist(&d.bins, &BTreeMap::new()));
            parts.push(format!(
                "{what} {} I/Os, {}, {iops:.0} IOPS, clat p50 {:.1} µs p99 {:.1} µs p99.9 {:.1} µs",
                d.ios,
                format_size(d.bytes),
                lat.p50,
                lat.p99,
                lat.p99_9
            ));
        }
    }
    if parts.is_empty() {
        parts.push("no I/O".into());
    }
    format!(
        "fio job {} ({:.2} s): {}",
        s.name,
        s.runtime_ms / 1000.0,
        parts.join("; ")
    )
}

/// Runs one step of a job file: its jobs, merged into the step's intervals.
pub(super) fn run_file_step(
    file: &FioFileStep,
    spec: &StepSpec,
    ctl: &StepControl,
    obs: &mut dyn StepObserver,
) -> Result<StepSummary, EngineError> {
    let version = fio_version()?;
    let mut cmd = Command::new("fio");
    cmd.args(file.sections.iter().map(|s| format!("--section={s}")))
        .arg(status_interval(spec));
    // A step no job of which writes cannot write, nor lay out a file anew (fio rewrites a
    // file shorter than a job's reach, even to read it): fio refuses both when read-only.
    if file.readonly {
        cmd.arg("--readonly");
    }
    // The job text goes in on stdin (`-`): fio runs what drivescope read and guarded.
    cmd.arg("-");
    let started_ms = ms_since_epoch(SystemTime::now());
    // The step's clock starts when fio's I/O did: the first dump's time less the longest
    // time a series has measured (fio first sets up its files, which is no I/O time).
    let mut origin_ms: Option<f64> = None;
    let ramp_s = spec.ramp.as_secs_f64();
    let interval_s = spec.interval.as_secs_f64();
    let mut last: Vec<Series> = Vec::new();
    let mut reset: Vec<bool> = Vec::new();
    let mut last_s = 0.0;
    let mut index = 0u64;
    let ended_by = supervise(cmd, Some(&file.text), ctl, obs, &mut |v, obs| {
        let now = series_of(v)?;
        let at_ms = v["timestamp_ms"].as_f64().ok_or_else(|| {
            FioError::Output("a status dump without timestamp_ms (fio 3.0 or later has it)".into())
        })?;
        let origin = *origin_ms.get_or_insert_with(|| {
            let measured = now.iter().map(|s| s.runtime_ms).fold(0.0, f64::max);
            (at_ms - measured).max(started_ms)
        });
        reset.resize(now.len(), false);
        let m = merge(&now, &last, &mut reset);
        last = now;
        // The wall clock from the I/O's start: every series of the step on one time axis.
        let some = m.read.ios + m.write.ios > 0;
        let mut end_s = ((at_ms - origin) / 1000.0).max(last_s);
        if some && end_s <= last_s {
            // Two dumps in one millisecond (the last right after a periodic one): its
            // I/Os still count, in an interval of that millisecond.
            end_s = last_s + 0.001;
        }
        // After a ramp, the interval starts where the series' counters started again.
        let start_s = match m.since_reset_ms {
            Some(ms) => (end_s - ms / 1000.0).clamp(last_s, end_s),
            None => last_s,
        };
        let dt = end_s - start_s;
        if dt <= 0.0 || (!some && dt * 10.0 < interval_s) {
            return Ok(None);
        }
        last_s = end_s;
        // Before every series has started its counters again, the step is in its ramp
        // (bounded by the ramp's length, should a reset go unseen).
        let ramp = ramp_s > 0.0 && !reset.iter().all(|r| *r) && end_s < ramp_s + 1.5 * interval_s;
        let r = IntervalReport {
            index,
            start_s,
            end_s,
            ramp,
            suspended_s: 0.0,
            read_iops: m.read.ios as f64 / dt,
            write_iops: m.write.ios as f64 / dt,
            read_bw_bytes: m.read.bytes as f64 / dt,
            write_bw_bytes: m.write.bytes as f64 / dt,
            read: m.read,
            write: m.write,
            errors: 0,
            lat_us: LatSummary::from_hist(&m.hist),
            service_lat_us: None,
            error_records: Vec::new(),
            hists: None,
        };
        index += 1;
        Ok(match obs.interval(&r) {
            Control::Stop(why) => Some(why),
            Control::Continue => None,
        })
    })?;
    for s in &last {
        obs.note(&series_note(s));
    }
    let error = last.iter().map(|s| s.error).find(|e| *e != 0).unwrap_or(0);
    let ended_by = ended_by.unwrap_or_else(|| natural_end(error, spec));
    Ok(file_summary(&last, spec, ended_by, &version, file))
}

/// The step's summary: fio's own totals and rates over every series.
fn file_summary(
    last: &[Series],
    spec: &StepSpec,
    ended_by: crate::outcome::EndedBy,
    version: &str,
    file: &FioFileStep,
) -> StepSummary {
    let sum = |f: &dyn Fn(&Series) -> f64| last.iter().map(f).sum::<f64>();
    let count = |f: &dyn Fn(&Series) -> u64| last.iter().map(f).sum::<u64>();
    let hist_of = |f: &dyn Fn(&Series) -> &Dir| {
        let mut h = new_histogram();
        for s in last {
            let _ = h.add(delta_hist(&f(s).bins, &BTreeMap::new()));
        }
        h
    };
    let read_h = hist_of(&|s| &s.read);
    let write_h = hist_of(&|s| &s.write);
    let mut all = read_h.clone();
    let _ = all.add(&write_h);
    let (read_ios, write_ios) = (count(&|s| s.read.ios), count(&|s| s.write.ios));
    let (read_iops, write_iops) = (sum(&|s| s.read_iops), sum(&|s| s.write_iops));
    StepSummary {
        engine: EngineKind::Fio,
        engine_options: Default::default(),
        engine_note: Some(format!(
            "{version}, job file jobs: {}{}",
            file.sections.join(", "),
            if file.readonly { " (--readonly)" } else { "" }
        )),
        runtime_s: last.iter().map(|s| s.runtime_ms).fold(0.0, f64::max) / 1000.0,
        ios: read_ios + write_ios,
        read_ios,
        write_ios,
        read_bytes: count(&|s| s.read.bytes),
        write_bytes: count(&|s| s.write.bytes),
        iops: read_iops + write_iops,
        read_iops,
        write_iops,
        read_bw_bytes: sum(&|s| s.read_bw),
        write_bw_bytes: sum(&|s| s.write_bw),
        errors: 0,
        target_iops: spec.workload.rate_iops,
        lat_us: LatSummary::from_hist(&all),
        read_lat_us: LatSummary::from_hist(&read_h),
        write_lat_us: LatSummary::from_hist(&write_h),
        service_lat_us: None,
        ended_by,
        arrival_cv: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(ios: u64, runtime: f64, bins: &[(u64, u64)]) -> Series {
        Series {
            read: Dir {
                ios,
                bytes: ios * 4096,
                bins: bins.iter().copied().collect(),
            },
            job_runtime_ms: runtime,
            runtime_ms: runtime,
            ..Series::default()
        }
    }

    #[test]
    fn each_series_is_differenced_on_its_own_then_merged() {
        let before = [
            series(100, 1000.0, &[(1000, 100)]),
            series(50, 1000.0, &[(2000, 50)]),
        ];
        // The second series started its counters again (its ramp ended).
        let now = [
            series(300, 2000.0, &[(1000, 300)]),
            series(20, 500.0, &[(2000, 20)]),
        ];
        let mut reset = vec![false, false];
        let m = merge(&now, &before, &mut reset);
        assert_eq!(reset, [false, true]);
        assert_eq!(m.read.ios, 200 + 20);
        assert_eq!(m.hist.len(), 220);
        // The interval's I/Os of that series are those of its last half second.
        assert_eq!(m.since_reset_ms, Some(500.0));
    }
}
