//! A step of an fio job file (`--fio-job`): fio runs the step's jobs (`--section`) from the
//! job text on its stdin. Each entry of fio's `jobs` list (a job, or a reporting group with
//! `group_reporting`) is a series: it is differenced dump by dump on its own (its counters
//! start again after its ramp), and the step's interval is every series of the step merged,
//! as drivescope's own jobs are. The step's summary is fio's totals, and each series' own
//! totals and percentiles (`StepSummary::fio_series`).

use std::time::SystemTime;

use super::child::{caged, outcome, status_interval, supervise};
use super::error::FioError;
use super::json::{
    delta_hist, series_of, step_summary, total_of, Dir, Series, Totals, NUMBERING_JOB,
};
use super::probe::known_or_asked;
use crate::engine::{Control, EngineError, StepControl, StepObserver};
use crate::stats::{new_histogram, DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::{FioFileStep, StepSpec};

/// Merges what each series did since its last dump; a series whose counters went back
/// (fio started them again at its ramp's end) is counted from zero, and marked `reset`.
struct Merge {
    read: DirCounts,
    write: DirCounts,
    trim: DirCounts,
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
        trim: DirCounts::default(),
        hist: new_histogram(),
        since_reset_ms: None,
    };
    for (i, s) in now.iter().enumerate() {
        let mut b = before.get(i).unwrap_or(&zero);
        if s.read.ios < b.read.ios
            || s.write.ios < b.write.ios
            || s.trim.ios < b.trim.ios
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
            (&mut m.trim, &s.trim, &b.trim),
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

/// The job that takes the thread numbers of the steps before this one (`threads`
/// copies of a null job that reads one byte, in a group of their own: a step's first
/// job is a stonewall), so fio numbers the step's jobs as in a run of the whole file:
/// their random numbers (seeded by the thread number) and their logs' names are those.
/// Given on the command line, it comes before the job file's jobs.
fn numbering_jobs(threads: u32) -> Vec<String> {
    if threads == 0 {
        return Vec::new();
    }
    vec![
        format!("--name={NUMBERING_JOB}"),
        "--ioengine=null".into(),
        "--rw=read".into(),
        "--size=1".into(),
        "--bs=1".into(),
        format!("--numjobs={threads}"),
    ]
}

/// Runs one step of a job file: its jobs, merged into the step's intervals.
pub(super) fn run_file_step(
    file: &FioFileStep,
    spec: &StepSpec,
    ctl: &StepControl,
    obs: &mut dyn StepObserver,
) -> Result<StepSummary, EngineError> {
    // Known since the job file was read; asked of fio only for a step that lost it.
    let version = known_or_asked(Some(&file.version))?;
    // The cage lets fio write the targets a job writes and read the others, nothing else:
    // a step that only reads cannot write, nor lay out a file anew.
    let (mut cmd, scratch) = caged(&file.targets, &file.log_dirs)?;
    cmd.args(numbering_jobs(file.threads_before))
        .args(file.sections.iter().map(|s| format!("--section={s}")))
        .arg(status_interval(spec));
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
    let run = supervise(
        cmd,
        super::child::dump_every(spec),
        Some(&file.text),
        ctl,
        obs,
        &mut |v, suspended_s, obs| {
            let now = series_of(v)?;
            let at_ms = v["timestamp_ms"].as_f64().ok_or_else(|| {
                FioError::Output(
                    "a status dump without timestamp_ms (fio 3.0 or later has it)".into(),
                )
            })?;
            let origin = *origin_ms.get_or_insert_with(|| {
                let measured = now.iter().map(|s| s.runtime_ms).fold(0.0, f64::max);
                (at_ms - measured).max(started_ms)
            });
            reset.resize(now.len(), false);
            let m = merge(&now, &last, &mut reset);
            last = now;
            // The wall clock from the I/O's start: every series of the step on one time axis.
            let some = m.read.ios + m.write.ios + m.trim.ios > 0;
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
            let ramp =
                ramp_s > 0.0 && !reset.iter().all(|r| *r) && end_s < ramp_s + 1.5 * interval_s;
            let r = IntervalReport {
                index,
                start_s,
                end_s,
                ramp,
                suspended_s,
                read_iops: m.read.ios as f64 / dt,
                write_iops: m.write.ios as f64 / dt,
                read_bw_bytes: m.read.bytes as f64 / dt,
                write_bw_bytes: m.write.bytes as f64 / dt,
                trim_iops: m.trim.ios as f64 / dt,
                trim_bw_bytes: m.trim.bytes as f64 / dt,
                read: m.read,
                write: m.write,
                trim: m.trim,
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
        },
    )?;
    let error = last.iter().map(|s| s.error).find(|e| *e != 0).unwrap_or(0);
    // fio's new logs, copied to where the job asked for them (never over a file).
    for h in scratch.harvest() {
        obs.note(&h.to_string());
    }
    let ran_ms = last.iter().map(|s| s.runtime_ms).fold(0.0, f64::max);
    let ended_by = outcome(run, error, spec, ran_ms)?;
    Ok(file_summary(&last, spec, ended_by, &version, file))
}

/// The step's summary: fio's own totals and rates over every series, and each series'.
fn file_summary(
    last: &[Series],
    spec: &StepSpec,
    ended_by: crate::outcome::EndedBy,
    version: &str,
    file: &FioFileStep,
) -> StepSummary {
    let mut total = total_of(last);
    for (into, of) in [
        (&mut total.read, (|s| &s.read) as fn(&Series) -> &Dir),
        (&mut total.write, |s| &s.write),
        (&mut total.trim, |s| &s.trim),
    ] {
        into.iops = last.iter().map(|s| of(s).iops).sum();
        into.bw = last.iter().map(|s| of(s).bw).sum();
    }
    step_summary(Totals {
        read: &total.read,
        write: &total.write,
        trim: &total.trim,
        runtime_s: last.iter().map(|s| s.runtime_ms).fold(0.0, f64::max) / 1000.0,
        target_iops: spec.workload.rate_iops,
        engine_note: format!("{version}, job file jobs: {}", file.sections.join(", ")),
        ended_by,
        series: last.iter().map(Series::summary).collect(),
    })
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
                ..Dir::default()
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
