//! The fio engine (`--engine fio`): a step run by the installed fio as a child process, its
//! job written by [`super::job`] (the same text `presets fio` exports), with
//! `--output-format=json+ --status-interval=<the step's interval>`. fio's status dumps are
//! cumulative from the job's start: each pair of consecutive dumps becomes one interval
//! (I/O counts and bytes differenced; latency percentiles from the differenced json+
//! completion-latency bins, never from fio's cumulative percentiles). Stop ends fio with
//! SIGTERM (it prints its last dump); one that has not ended
//! [`STOP_GRACE`](crate::children::STOP_GRACE) later is killed with its process group.
//! Pause holds it with SIGSTOP. Its output is read in bounded lines and documents.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::child::{caged, dump_every, outcome, status_interval, supervise};
use super::error::FioError;
use super::json::{delta_hist, series_of, step_summary, total_of, Dir, Series, Totals};
use super::probe::known_or_asked;
use crate::engine::{Control, Engine, EngineError, StepControl, StepObserver, StepTarget};
use crate::outcome::EndedBy;
use crate::stats::{DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::{Arrivals, EngineKind, StepSpec};

/// fio reads `:` in a file name as a separator of several files.
fn fio_filename(path: &std::path::Path) -> String {
    path.display().to_string().replace(':', "\\:")
}

/// [`fio_filename`], byte for byte (a name that is not UTF-8 stays as it is).
fn fio_filename_os(name: &std::ffi::OsStr) -> std::ffi::OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let mut out = Vec::with_capacity(name.len());
    for b in name.as_bytes() {
        if *b == b':' {
            out.push(b'\\');
        }
        out.push(*b);
    }
    std::ffi::OsString::from_vec(out)
}

/// The job fio runs for `spec` on `target`, as a job file's text.
pub fn job_text(target: &StepTarget, spec: &StepSpec) -> String {
    let w = &spec.workload;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "[global]\nioengine=io_uring\nthread=1\ndirect={}\nfilename={}\ngroup_reporting=1\nrandrepeat=0\nrandseed={}",
        u8::from(w.direct),
        fio_filename(&target.path),
        w.seed
    );
    let _ = writeln!(out, "\n[drivescope]");
    super::job::shape_lines(&mut out, w);
    super::job::end_lines(&mut out, spec.ramp, &spec.end, w.jobs);
    if let Some(rate) = w.rate_iops {
        let per_job = (rate / f64::from(w.jobs.max(1))).ceil() as u64;
        let _ = writeln!(out, "rate_iops={}", per_job.max(1));
        if w.arrivals == Arrivals::Poisson {
            let _ = writeln!(out, "rate_process=poisson");
        }
    }
    out
}

/// A job file's `key=value` lines as fio's command-line options (`--key=value`; a
/// `[section]` is `--name=section`); comments and the file name (given to fio as its own
/// argument, byte for byte) are left out. Each is one argument: nothing goes through a shell.
fn job_args(job: &str) -> Vec<String> {
    job.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with('#') && *l != "[global]" && !l.starts_with("filename=")
        })
        .map(
            |l| match l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                Some(name) => format!("--name={name}"),
                None => format!("--{l}"),
            },
        )
        .collect()
}

/// The dump's figures: every job added up (one job with `group_reporting`), its measured
/// time that of one job.
fn dump_of(v: &Value, jobs: u32) -> Result<Series, FioError> {
    let mut d = total_of(&series_of(v)?);
    d.runtime_ms = d.job_runtime_ms / f64::from(jobs.max(1));
    Ok(d)
}

fn all_hist(d: &Series, before: &Series) -> Histogram<u64> {
    let mut h = delta_hist(&d.read.bins, &before.read.bins);
    let _ = h.add(delta_hist(&d.write.bins, &before.write.bins));
    let _ = h.add(delta_hist(&d.trim.bins, &before.trim.bins));
    h
}

/// The interval between two dumps; `None` when fio reset its counters (after a ramp).
fn interval(index: u64, d: &Series, before: &Series, ramp: bool) -> Option<IntervalReport> {
    if d.read.ios < before.read.ios
        || d.write.ios < before.write.ios
        || d.trim.ios < before.trim.ios
    {
        return None;
    }
    let start_s = before.runtime_ms / 1000.0;
    let end_s = d.runtime_ms / 1000.0;
    let dt = (end_s - start_s).max(1e-9);
    let diff = |now: &Dir, was: &Dir| DirCounts {
        ios: now.ios - was.ios,
        bytes: now.bytes.saturating_sub(was.bytes),
    };
    let dirs = [
        diff(&d.read, &before.read),
        diff(&d.write, &before.write),
        diff(&d.trim, &before.trim),
    ];
    let lat = LatSummary::from_hist(&all_hist(d, before));
    Some(IntervalReport {
        ramp,
        ..IntervalReport::of_counts(index, (start_s, end_s), dirs, dt, lat)
    })
}

/// The engine of `--engine fio`.
pub struct Fio;

impl Engine for Fio {
    fn kind(&self) -> EngineKind {
        EngineKind::Fio
    }

    fn run_step(
        &mut self,
        target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        if let Some(file) = &spec.fio_file {
            return super::series::run_file_step(file, spec, ctl, obs);
        }
        let version = known_or_asked(spec.fio_version.as_deref())?;
        let name = target.path.as_os_str();
        if name
            .as_encoded_bytes()
            .iter()
            .any(|b| *b == b'\n' || *b == b'\r')
        {
            return Err(FioError::Refused(format!(
                "{}: fio reads a file name with a line break in it as two options",
                target.path.display()
            ))
            .into());
        }
        let job = job_text(target, spec);
        let mut filename = std::ffi::OsString::from("--filename=");
        filename.push(fio_filename_os(name));
        let writes = spec.workload.rw.read_percent(spec.workload.rwmixread) < 100;
        let (mut cmd, _scratch) = caged(
            &[crate::workload::FioTarget {
                path: target.path.clone(),
                writes,
            }],
            None,
        )?;
        cmd.args(job_args(&job))
            .arg(filename)
            .arg(status_interval(spec));
        let jobs = spec.workload.jobs;
        let ramping = !spec.ramp.is_zero();
        let mut ramp_over = !ramping;
        let mut offset_s = 0.0;
        let mut last = Series::default();
        let mut index = 0u64;
        let run = supervise(
            cmd,
            dump_every(spec.interval),
            None,
            ctl,
            obs,
            &mut |v, suspended_s, obs| {
                let d = dump_of(v, jobs)?;
                // fio counts during its ramp, then starts its counters again: the intervals
                // before that are the ramp, those after it are measured from the ramp's end.
                let reset = d.runtime_ms < last.runtime_ms
                    || d.read.ios < last.read.ios
                    || d.write.ios < last.write.ios;
                if reset && ramping && !ramp_over {
                    ramp_over = true;
                    offset_s = spec.ramp.as_secs_f64();
                    last = Series::default();
                }
                let mut why = None;
                if let Some(mut r) = interval(index, &d, &last, !ramp_over) {
                    r.suspended_s = suspended_s;
                    r.start_s += offset_s;
                    r.end_s += offset_s;
                    let tiny = r.read.ios + r.write.ios + r.trim.ios == 0
                        && (r.end_s - r.start_s) * 10.0 < spec.interval.as_secs_f64();
                    if r.end_s > r.start_s && !tiny {
                        index += 1;
                        if let Control::Stop(w) = obs.interval(&r) {
                            why = Some(w);
                        }
                    }
                }
                last = d;
                Ok(why)
            },
        )?;
        let ended_by = outcome(run, last.error, spec, last.runtime_ms)?;
        Ok(summary(spec, &last, ended_by, &version, &job))
    }
}

/// The step's summary: fio's totals, its rates over the measured time.
fn summary(
    spec: &StepSpec,
    d: &Series,
    ended_by: EndedBy,
    version: &str,
    job: &str,
) -> StepSummary {
    let runtime_s = d.runtime_ms / 1000.0;
    let per_s = |x: u64| {
        if runtime_s > 0.0 {
            x as f64 / runtime_s
        } else {
            0.0
        }
    };
    let rated = |x: &Dir| Dir {
        iops: per_s(x.ios),
        bw: per_s(x.bytes),
        ..x.clone()
    };
    let options: Vec<&str> = job
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with('['))
        .collect();
    step_summary(Totals {
        read: &rated(&d.read),
        write: &rated(&d.write),
        trim: &rated(&d.trim),
        runtime_s,
        iops: None,
        target_iops: spec.workload.rate_iops,
        engine_note: format!("{version}, job: {}", options.join(" ")),
        ended_by,
        series: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_dumps_become_an_interval_from_their_differences() {
        let mk = |ms: f64, ios: u64, bins: &[(u64, u64)]| Series {
            runtime_ms: ms,
            read: Dir {
                ios,
                bytes: ios * 4096,
                bins: bins.iter().copied().collect(),
                ..Dir::default()
            },
            ..Series::default()
        };
        let a = mk(1000.0, 1000, &[(100_000, 990), (1_000_000, 10)]);
        let b = mk(2000.0, 3000, &[(100_000, 990), (1_000_000, 2010)]);
        let r = interval(1, &b, &a, false).unwrap();
        assert_eq!((r.start_s, r.end_s), (1.0, 2.0));
        assert_eq!(r.read.ios, 2000);
        assert_eq!(r.read_iops, 2000.0);
        // Every I/O of the interval took 1 ms: the cumulative bins would say p50 = 0.1 ms.
        assert!((r.lat_us.p50 - 1000.0).abs() < 1.0, "{:?}", r.lat_us);
        assert_eq!(r.lat_us.samples, 2000);
        // fio reset its counters (the end of a ramp): no interval from that pair.
        assert!(interval(2, &a, &b, false).is_none());
    }

    #[test]
    fn a_job_becomes_one_argument_per_option_and_no_shell() {
        // The file name is not among the job's options: it goes to fio as its own argument.
        let args =
            job_args("[global]\nthread=1\nfilename=/tmp/a\n# note\n\n[drivescope]\nrw=randread\n");
        assert_eq!(args, ["--thread=1", "--name=drivescope", "--rw=randread"]);
        assert_eq!(
            fio_filename_os(std::ffi::OsStr::new("/tmp/a b;rm -rf x:y")),
            "/tmp/a b;rm -rf x\\:y"
        );
        assert_eq!(
            fio_filename(std::path::Path::new("/dev/disk/by-id/a:b")),
            "/dev/disk/by-id/a\\:b"
        );
    }
}
