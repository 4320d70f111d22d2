//! A step of an fio job file (`--fio-job`): fio runs the step's jobs (`--section`) from the
//! job text on its stdin. Each entry of fio's `jobs` list (a job, or a reporting group with
//! `group_reporting`) is a series: it is differenced dump by dump on its own (its counters
//! start again after its ramp), and the step's interval is every series of the step merged,
//! as drivescope's own jobs are. The step's summary is fio's totals, and each series' own
//! totals and percentiles (`StepSummary::fio_series`).

use std::time::SystemTime;

use super::child::{caged, outcome, status_interval, supervise};
use super::error::FioError;
use super::io_bytes::{bounds_of, Sizes};
use super::job_end::{job_ends, step_end};
use super::json::{delta_hist, series_of, step_summary, total_of, Series, Totals, NUMBERING_JOB};
use super::probe::known_or_asked;
use super::shape::{job_shape, series_jobs};
use crate::engine::{Control, EngineError, StepControl, StepObserver};
use crate::stats::{new_histogram, DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::{FioFileStep, StepSpec};

/// Merges what each series did since its last dump; a series whose counters fio started
/// again (its ramp ended) is counted from zero, and marked `reset`.
struct Merge {
    read: DirCounts,
    write: DirCounts,
    trim: DirCounts,
    hist: hdrhistogram::Histogram<u64>,
    /// The longest time measured by a series that started its counters again in this
    /// dump (ms): the interval's I/Os are those since then.
    since_reset_ms: Option<f64>,
    /// Each series: it started its counters again in this dump.
    fresh: Vec<bool>,
    /// Each series: it did I/O since the dump before.
    grew: Vec<bool>,
}

/// Where a step is when a dump comes: whether it has a ramp, and whether the dump is
/// still inside it (the ramp's length and a dump and a half after it).
#[derive(Clone, Copy)]
struct Ramp {
    some: bool,
    inside: bool,
}

fn ios(s: &Series) -> u64 {
    s.read.ios + s.write.ios + s.trim.ios
}

/// Whether fio started a series' counters again between two dumps. fio does it once per
/// job, where its `ramp_time` ends (libfio.c `reset_all_stats`, from `ramp_time_over`):
/// the counts go back, or (more I/O since than in the ramp) only `job_runtime` does. A
/// `job_runtime` that goes back is also a job starting (fio sets its epoch then: a
/// delayed job, or a group's `wait_for` or `startdelay` job, whose `job_runtime` is summed
/// into its group's), which starts no counter again: it is a reset only with a ramp, once,
/// in a series that had counted I/O. A reporting group's later member (`done`: the series
/// was reset before) that ends its own ramp takes its ramp's I/Os out of the group's sum,
/// which cannot be told apart from the others': counted from zero inside the step's ramp
/// (the group's jobs ramped together), by the counts' growth after it.
fn restarted(now: &Series, before: &Series, ramp: Ramp, done: bool) -> bool {
    let went_back = now.read.ios < before.read.ios
        || now.write.ios < before.write.ios
        || now.trim.ios < before.trim.ios;
    if done {
        return went_back && ramp.inside;
    }
    went_back || (ramp.some && ios(before) > 0 && now.job_runtime_ms < before.job_runtime_ms)
}

fn merge(
    now: &[Series],
    before: &[Series],
    reset: &mut [bool],
    ramp: Ramp,
    sizes: &mut Sizes,
) -> Merge {
    let zero = Series::default();
    let mut m = Merge {
        read: DirCounts::default(),
        write: DirCounts::default(),
        trim: DirCounts::default(),
        hist: new_histogram(),
        since_reset_ms: None,
        fresh: vec![false; now.len()],
        grew: vec![false; now.len()],
    };
    for (i, s) in now.iter().enumerate() {
        let mut b = before.get(i).unwrap_or(&zero);
        let done = reset.get(i).copied().unwrap_or(false);
        if restarted(s, b, ramp, done) {
            if let Some(r) = reset.get_mut(i) {
                *r = true;
            }
            m.fresh[i] = true;
            m.since_reset_ms = Some(m.since_reset_ms.unwrap_or(0.0).max(s.runtime_ms));
            b = &zero;
        }
        let before_ios = m.read.ios + m.write.ios + m.trim.ios;
        for (dir, (into, x, y)) in [
            (&mut m.read, &s.read, &b.read),
            (&mut m.write, &s.write, &b.write),
            (&mut m.trim, &s.trim, &b.trim),
        ]
        .into_iter()
        .enumerate()
        {
            let ios = x.ios.saturating_sub(y.ios);
            into.ios += ios;
            // fio's bytes lag its counts within a dump: given to the I/Os they are of.
            into.bytes += sizes.give(i, dir, m.fresh[i], ios, x.bytes.saturating_sub(y.bytes));
            let _ = m.hist.add(delta_hist(&x.bins, &y.bins));
        }
        m.grew[i] = m.read.ios + m.write.ios + m.trim.ios > before_ios;
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
    // The cage lets fio write the targets a job writes and read the others, and make its
    // logs in the run's log folder, nothing else: a step that only reads cannot write, nor
    // lay out a file anew. The text fio runs names that folder in each log option.
    if !file.logs.is_empty() && file.log_dir.is_none() {
        return Err(FioError::Cage(super::cage::CageError::NoLogDir).into());
    }
    let (mut cmd, _scratch) = caged(&file.targets, file.log_dir.as_deref())?;
    let text = super::logs::redirected(&file.text, &file.logs);
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
    // The step's jobs as the file was read: each series' block sizes bound its bytes.
    let jobs: Vec<super::parse::FileJob> = super::parse::parse_steps(&file.text)
        .map(|steps| steps.into_iter().flat_map(|s| s.jobs))
        .into_iter()
        .flatten()
        .filter(|j| file.sections.contains(&j.name))
        .collect();
    let mut sizes = Sizes::default();
    let mut last_s = 0.0;
    let mut spans = Spans::default();
    let mut index = 0u64;
    let run = supervise(
        cmd,
        super::child::dump_every(spec.interval),
        Some(&text),
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
            sizes.bounds = now.iter().map(|s| bounds_of(&jobs, &s.name)).collect();
            // The wall clock from the I/O's start: every series of the step on one time axis.
            let at_s = (at_ms - origin) / 1000.0;
            let ramp = Ramp {
                some: ramp_s > 0.0,
                inside: ramp_s > 0.0 && at_s < ramp_s + 1.5 * interval_s,
            };
            let m = merge(&now, &last, &mut reset, ramp, &mut sizes);
            spans.saw(&now, &m, at_s.max(last_s), last_s);
            last = now;
            let some = m.read.ios + m.write.ios + m.trim.ios > 0;
            let mut end_s = at_s.max(last_s);
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
            let ramp = ramp.some && !reset.iter().all(|r| *r) && end_s < ramp_s + 1.5 * interval_s;
            let dirs = [m.read, m.write, m.trim];
            let lat = LatSummary::from_hist(&m.hist);
            let r = IntervalReport {
                ramp,
                suspended_s,
                ..IntervalReport::of_counts(index, (start_s, end_s), dirs, dt, lat)
            };
            index += 1;
            Ok(match obs.interval(&r) {
                Control::Stop(why) => Some(why),
                Control::Continue => None,
            })
        },
    )?;
    let error = last.iter().map(|s| s.error).find(|e| *e != 0).unwrap_or(0);
    let ran_ms = last.iter().map(|s| s.runtime_ms).fold(0.0, f64::max);
    let ended_by = outcome(run, error, spec, ran_ms)?;
    let ends = job_ends(&jobs, &last, &ended_by);
    let ended_by = step_end(ended_by, &ends);
    let mut summary = file_summary(&last, &spans, spec, ended_by, &version, file);
    for ((s, end), series) in summary.fio_series.iter_mut().zip(ends).zip(&last) {
        s.ended_by = end;
        s.jobs = series_jobs(&jobs, &series.name)
            .into_iter()
            .map(job_shape)
            .collect();
    }
    Ok(summary)
}

/// When each series did its I/O, on the step's time axis (s from the I/O's start): a
/// step's rate is its I/Os over the time from its first series' start to its last one's
/// end, not the sum of its series' rates (jobs that run one after another, `wait_for` or
/// `startdelay`, are not at work together).
#[derive(Default)]
struct Spans {
    /// Each series: where its measured I/O started (the dump's time less fio's measured
    /// time, again when its counters started again).
    first_s: Vec<Option<f64>>,
    /// Each series: where the last interval in which it did I/O started (a group's jobs
    /// that ran one after another: its measured time is its longest job's, not theirs).
    grew_s: Vec<f64>,
}

impl Spans {
    /// A dump at `at_s`, the one before at `before_s`, as `m` merged it.
    fn saw(&mut self, now: &[Series], m: &Merge, at_s: f64, before_s: f64) {
        self.first_s.resize(now.len(), None);
        self.grew_s.resize(now.len(), 0.0);
        for (i, s) in now.iter().enumerate() {
            if m.fresh[i] || (self.first_s[i].is_none() && ios(s) > 0) {
                self.first_s[i] = Some((at_s - s.runtime_ms / 1000.0).max(0.0));
            }
            if m.grew[i] {
                self.grew_s[i] = before_s;
            }
        }
    }

    /// The time from the first series' start to the last one's end (s); for one job, fio's
    /// own measured time. The longest series' time when none did I/O.
    fn span_s(&self, last: &[Series]) -> f64 {
        let mut first = f64::INFINITY;
        let mut end = 0.0f64;
        for (i, s) in last.iter().enumerate() {
            let Some(start) = self.first_s.get(i).copied().flatten() else {
                continue;
            };
            first = first.min(start);
            end = end.max(start + s.runtime_ms / 1000.0).max(self.grew_s[i]);
        }
        let longest = last.iter().map(|s| s.runtime_ms).fold(0.0, f64::max) / 1000.0;
        if first.is_finite() && end > first {
            (end - first).max(longest)
        } else {
            longest
        }
    }
}

impl Spans {
    /// The time the series that `did` I/O were at work (s): the union of their spans, so
    /// jobs one after another count each its own time, and jobs together their common
    /// one; at least the longest one's measured time. None when no series did.
    fn busy_s(&self, last: &[Series], did: impl Fn(&Series) -> bool) -> Option<f64> {
        let mut spans: Vec<(f64, f64)> = last
            .iter()
            .enumerate()
            .filter(|(_, s)| did(s))
            .filter_map(|(i, s)| {
                let start = self.first_s.get(i).copied().flatten()?;
                let end = (start + s.runtime_ms / 1000.0).max(self.grew_s[i]);
                Some((start, end))
            })
            .collect();
        let longest = last
            .iter()
            .filter(|s| did(s))
            .map(|s| s.runtime_ms)
            .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))?
            / 1000.0;
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut busy = 0.0;
        let mut open: Option<(f64, f64)> = None;
        for (a, b) in spans {
            open = match open {
                Some((s, e)) if a <= e => Some((s, e.max(b))),
                Some((s, e)) => {
                    busy += e - s;
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        if let Some((s, e)) = open {
            busy += e - s;
        }
        Some(f64::max(busy, longest))
    }
}

/// The step's summary: fio's own totals over every series and each series' own figures.
/// The step's rate is its I/Os over its time (`span_s`, [`Spans::span_s`]); each
/// direction's, its I/Os over the time the jobs that did it were at work
/// ([`Spans::busy_s`]): a job's I/Os are never divided by another's time (a write job,
/// then a read job waiting for it, each keep their own rate).
fn file_summary(
    last: &[Series],
    spans: &Spans,
    spec: &StepSpec,
    ended_by: crate::outcome::EndedBy,
    version: &str,
    file: &FioFileStep,
) -> StepSummary {
    let span_s = spans.span_s(last);
    let mut total = total_of(last);
    let all = total.read.ios + total.write.ios + total.trim.ios;
    for (dir, d) in [&mut total.read, &mut total.write, &mut total.trim]
        .into_iter()
        .enumerate()
    {
        let busy = spans.busy_s(last, |s| [&s.read, &s.write, &s.trim][dir].ios > 0);
        (d.iops, d.bw) = match busy {
            Some(t) if t > 0.0 => (d.ios as f64 / t, d.bytes as f64 / t),
            _ => (0.0, 0.0),
        };
    }
    step_summary(Totals {
        read: &total.read,
        write: &total.write,
        trim: &total.trim,
        runtime_s: span_s,
        iops: (span_s > 0.0).then(|| all as f64 / span_s),
        target_iops: spec.workload.rate_iops,
        engine_note: format!("{version}, job file jobs: {}", file.sections.join(", ")),
        ended_by,
        series: last.iter().map(Series::summary).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::json::Dir;

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

    fn merged(now: &[Series], before: &[Series], reset: &mut [bool], ramp: Ramp) -> Merge {
        merge(now, before, reset, ramp, &mut Sizes::default())
    }

    const RAMP: Ramp = Ramp {
        some: true,
        inside: true,
    };
    const NO_RAMP: Ramp = Ramp {
        some: false,
        inside: false,
    };

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
        let m = merged(&now, &before, &mut reset, RAMP);
        assert_eq!(reset, [false, true]);
        assert_eq!((m.fresh, m.grew), (vec![false, true], vec![true, true]));
        assert_eq!(m.read.ios, 200 + 20);
        assert_eq!(m.hist.len(), 220);
        // The interval's I/Os of that series are those of its last half second.
        assert_eq!(m.since_reset_ms, Some(500.0));
    }

    #[test]
    fn a_job_starting_is_no_reset_and_a_ramp_ends_once() {
        // A group whose second job starts (`wait_for`): fio's summed job_runtime goes back
        // (1098 -> 587 in fio 3.33's dumps), its counts do not.
        let before = [series(200, 1098.0, &[(1000, 200)])];
        let now = [series(237, 587.0, &[(1000, 237)])];
        let mut reset = vec![false];
        let m = merged(&now, &before, &mut reset, NO_RAMP);
        assert_eq!((m.read.ios, reset[0], m.since_reset_ms), (37, false, None));
        // With a ramp, the first such drop after I/O is its end; a later one is a job
        // starting.
        let m = merged(&now, &before, &mut reset, RAMP);
        assert_eq!((m.read.ios, reset[0]), (237, true));
        let later = [series(300, 100.0, &[(1000, 300)])];
        let m = merged(&later, &now, &mut reset, RAMP);
        assert_eq!((m.read.ios, m.fresh[0]), (63, false));
        // A job that has not started (no I/O) starting under a ramp is no reset either.
        let (idle, started) = ([series(0, 900.0, &[])], [series(5, 10.0, &[(1000, 5)])]);
        let mut reset = vec![false];
        let m = merged(&started, &idle, &mut reset, RAMP);
        assert_eq!((m.read.ios, reset[0]), (5, false));
        // A group's member ending its own ramp after the step's: counted by growth.
        let mut reset = vec![true];
        let outside = Ramp {
            some: true,
            inside: false,
        };
        let m = merged(&[series(250, 900.0, &[])], &later, &mut reset, outside);
        assert_eq!((m.read.ios, m.fresh[0]), (0, false));
    }

    #[test]
    fn jobs_one_after_another_span_from_the_first_start_to_the_last_end() {
        let mut spans = Spans::default();
        let (a, b) = (series(100, 500.0, &[]), series(0, 0.0, &[]));
        let m = merged(&[a.clone(), b.clone()], &[], &mut [false, false], NO_RAMP);
        spans.saw(&[a.clone(), b], &m, 0.5, 0.0);
        let b = series(100, 400.0, &[]);
        let m = merged(
            &[a.clone(), b.clone()],
            &[a.clone(), series(0, 0.0, &[])],
            &mut [false, false],
            NO_RAMP,
        );
        spans.saw(&[a.clone(), b.clone()], &m, 1.0, 0.5);
        // a ran 0-0.5 s, b 0.6-1.0 s: one second, not the longer job's half.
        assert!((spans.span_s(&[a.clone(), b]) - 1.0).abs() < 1e-9);
        // One job: fio's own time.
        let mut one = Spans::default();
        let m = merged(std::slice::from_ref(&a), &[], &mut [false], NO_RAMP);
        one.saw(std::slice::from_ref(&a), &m, 0.5, 0.0);
        assert_eq!(one.span_s(&[a]), 0.5);
    }
}
