//! The fio engine (`--engine fio`): a step run by the installed fio as a child process, its
//! job written by [`crate::fiojob`] (the same text `presets fio` exports), with
//! `--output-format=json+ --status-interval=<the step's interval>`. fio's status dumps are
//! cumulative from the job's start: each pair of consecutive dumps becomes one interval
//! (I/O counts and bytes differenced; latency percentiles from the differenced json+
//! completion-latency bins, never from fio's cumulative percentiles). Stop ends fio with
//! SIGTERM (it prints its last dump), pause holds it with SIGSTOP.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde_json::Value;

use super::seam::{Control, Engine, StepControl, StepObserver};
use super::{EngineError, StepTarget};
use crate::outcome::{EndedBy, FaultKind};
use crate::stats::{new_histogram, DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::{Arrivals, EngineKind, RwMode, StepSpec};

/// Why fio could not run a step; fio's own words where it gave them.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("fio is not installed (or not on PATH): {0}")]
    Missing(String),
    #[error("fio {found} is too old: drivescope needs fio 3.0 or later (json+ status dumps)")]
    TooOld { found: String },
    #[error("fio refused the job: {0}")]
    Refused(String),
    #[error("fio's output is not what drivescope reads: {0}")]
    Output(String),
}

/// The oldest fio major version whose json+ status dumps carry what is read here.
const MIN_MAJOR: u32 = 3;

/// The installed fio's version (`fio-3.33`), or why there is none usable.
pub fn fio_version() -> Result<String, FioError> {
    let out = Command::new("fio")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| FioError::Missing(e.to_string()))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let major = v
        .strip_prefix("fio-")
        .and_then(|r| r.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if m >= MIN_MAJOR => Ok(v),
        _ => Err(FioError::TooOld { found: v }),
    }
}

/// fio reads `:` in a file name as a separator of several files.
fn fio_filename(path: &std::path::Path) -> String {
    path.display().to_string().replace(':', "\\:")
}

/// The job fio runs for `spec` on `target`, as a job file's text.
pub fn job_text(target: &StepTarget, spec: &StepSpec) -> String {
    let w = &spec.workload;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "[global]\nioengine=io_uring\ndirect={}\nfilename={}\ngroup_reporting=1\nrandrepeat=0\nrandseed={}",
        u8::from(w.direct),
        fio_filename(&target.path),
        w.seed
    );
    let _ = writeln!(out, "\n[drivescope]");
    crate::fiojob::shape_lines(&mut out, w);
    crate::fiojob::end_lines(&mut out, spec.ramp, &spec.end, w.jobs);
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
/// `[section]` is `--name=section`); comments are left out. Each is one argument: nothing
/// goes through a shell.
fn job_args(job: &str) -> Vec<String> {
    job.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && *l != "[global]")
        .map(
            |l| match l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                Some(name) => format!("--name={name}"),
                None => format!("--{l}"),
            },
        )
        .collect()
}

/// One direction's cumulative figures in a dump.
#[derive(Debug, Clone, Default)]
struct Dir {
    ios: u64,
    bytes: u64,
    /// Completion-latency bins: ns → count.
    bins: BTreeMap<u64, u64>,
}

/// One status dump, cumulative from the job's start.
#[derive(Debug, Clone, Default)]
struct Dump {
    /// Measured time per job, ms.
    runtime_ms: f64,
    read: Dir,
    write: Dir,
    /// fio's error code for the job (0: none); it stops a job at its first I/O error.
    error: i64,
}

fn dir_of(v: &Value) -> Dir {
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
    }
}

/// The dump's figures: every job added up (one job with `group_reporting`).
fn dump_of(v: &Value, jobs: u32) -> Result<Dump, FioError> {
    let list = v["jobs"]
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| FioError::Output("a status dump with no jobs".into()))?;
    let mut d = Dump::default();
    let mut runtime = 0.0;
    for j in list {
        runtime += j["job_runtime"].as_f64().unwrap_or(0.0);
        for (into, key) in [(&mut d.read, "read"), (&mut d.write, "write")] {
            let x = dir_of(&j[key]);
            into.ios += x.ios;
            into.bytes += x.bytes;
            for (k, c) in x.bins {
                *into.bins.entry(k).or_insert(0) += c;
            }
        }
        if d.error == 0 {
            d.error = j["error"].as_i64().unwrap_or(0);
        }
    }
    d.runtime_ms = runtime / f64::from(jobs.max(1));
    Ok(d)
}

/// The latency of the I/Os between two dumps' bins.
fn delta_hist(now: &BTreeMap<u64, u64>, before: &BTreeMap<u64, u64>) -> Histogram<u64> {
    let mut h = new_histogram();
    for (ns, c) in now {
        let d = c.saturating_sub(before.get(ns).copied().unwrap_or(0));
        if d > 0 {
            let _ = h.record_n((*ns).max(1), d);
        }
    }
    h
}

fn all_hist(d: &Dump, before: &Dump) -> Histogram<u64> {
    let mut h = delta_hist(&d.read.bins, &before.read.bins);
    let _ = h.add(delta_hist(&d.write.bins, &before.write.bins));
    h
}

/// The interval between two dumps; `None` when fio reset its counters (after a ramp).
fn interval(index: u64, d: &Dump, before: &Dump, ramp: bool) -> Option<IntervalReport> {
    if d.read.ios < before.read.ios || d.write.ios < before.write.ios {
        return None;
    }
    let start_s = before.runtime_ms / 1000.0;
    let end_s = d.runtime_ms / 1000.0;
    let dt = (end_s - start_s).max(1e-9);
    let read = DirCounts {
        ios: d.read.ios - before.read.ios,
        bytes: d.read.bytes.saturating_sub(before.read.bytes),
    };
    let write = DirCounts {
        ios: d.write.ios - before.write.ios,
        bytes: d.write.bytes.saturating_sub(before.write.bytes),
    };
    Some(IntervalReport {
        index,
        start_s,
        end_s,
        ramp,
        suspended_s: 0.0,
        read_iops: read.ios as f64 / dt,
        write_iops: write.ios as f64 / dt,
        read_bw_bytes: read.bytes as f64 / dt,
        write_bw_bytes: write.bytes as f64 / dt,
        read,
        write,
        errors: 0,
        lat_us: LatSummary::from_hist(&all_hist(d, before)),
        service_lat_us: None,
        error_records: Vec::new(),
        hists: None,
    })
}

/// Reads fio's stdout: a stream of JSON documents, one per status dump, then the last.
fn reader(out: impl Read + Send + 'static) -> mpsc::Receiver<Result<Value, String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stream = serde_json::Deserializer::from_reader(BufReader::new(out)).into_iter();
        for v in stream {
            let stop = v.is_err();
            if tx.send(v.map_err(|e| e.to_string())).is_err() || stop {
                break;
            }
        }
    });
    rx
}

fn signal(child: &Child, sig: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on our own child's pid, which has not been reaped yet (we wait
        // for it only after this), so the pid cannot name another process.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// The engine of `--engine fio`.
pub(super) struct Fio;

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
        let version = fio_version()?;
        let job = job_text(target, spec);
        let interval_ms = spec.interval.as_millis().max(100);
        let mut cmd = Command::new("fio");
        cmd.args(job_args(&job))
            .arg("--output-format=json+")
            .arg(format!("--status-interval={interval_ms}ms"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| FioError::Missing(e.to_string()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| FioError::Output("no stdout".into()))?;
        let mut stderr = child.stderr.take();
        let err_text = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(e) = stderr.as_mut() {
                let _ = e.read_to_string(&mut s);
            }
            s
        });
        let dumps = reader(stdout);
        let started = Instant::now();
        let jobs = spec.workload.jobs;
        let mut last = Dump::default();
        let mut index = 0u64;
        let mut ended_by: Option<EndedBy> = None;
        let mut paused = false;
        let mut stopping = false;
        loop {
            if ctl.stop.load(Ordering::Relaxed) && !stopping {
                stopping = true;
                ended_by.get_or_insert(EndedBy::Stopped);
                if paused {
                    signal(&child, libc::SIGCONT);
                }
                signal(&child, libc::SIGTERM);
            }
            let want_pause = ctl.pause.load(Ordering::Relaxed) && !stopping;
            if want_pause != paused {
                signal(
                    &child,
                    if want_pause {
                        libc::SIGSTOP
                    } else {
                        libc::SIGCONT
                    },
                );
                paused = want_pause;
            }
            let v = match dumps.recv_timeout(Duration::from_millis(20)) {
                Ok(Ok(v)) => v,
                Ok(Err(e)) if last.runtime_ms == 0.0 => {
                    // Not JSON at all: fio printed its refusal instead.
                    let _ = child.kill();
                    let _ = child.wait();
                    let words = err_text.join().unwrap_or_default();
                    return Err(FioError::Refused(first_lines(&words).unwrap_or(e)).into());
                }
                Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
            };
            let d = dump_of(&v, jobs)?;
            let ramp = started.elapsed() < spec.ramp;
            match interval(index, &d, &last, ramp) {
                Some(r) if r.end_s > r.start_s => {
                    index += 1;
                    if let (Control::Stop(why), false) = (obs.interval(&r), stopping) {
                        stopping = true;
                        ended_by = Some(why);
                        if paused {
                            signal(&child, libc::SIGCONT);
                        }
                        signal(&child, libc::SIGTERM);
                    }
                }
                _ => {}
            }
            last = d;
        }
        let status = child.wait().map_err(EngineError::Spawn)?;
        let words = err_text.join().unwrap_or_default();
        if last.runtime_ms == 0.0 && !stopping {
            let why = first_lines(&words)
                .unwrap_or_else(|| format!("fio exited with {status} and no output"));
            return Err(FioError::Refused(why).into());
        }
        let ended_by = ended_by.unwrap_or(if last.error != 0 {
            EndedBy::device(
                FaultKind::AllFailed,
                format!(
                    "fio stopped on an I/O error: {}",
                    std::io::Error::from_raw_os_error(last.error as i32)
                ),
            )
        } else if spec.end.bytes.is_some() && spec.end.duration.is_none() {
            EndedBy::Bytes
        } else {
            EndedBy::Duration
        });
        Ok(summary(spec, &last, ended_by, &version, &job))
    }
}

/// fio's first lines on stderr, where it says why it refused a job.
fn first_lines(s: &str) -> Option<String> {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

fn summary(spec: &StepSpec, d: &Dump, ended_by: EndedBy, version: &str, job: &str) -> StepSummary {
    let zero = Dump::default();
    let runtime_s = d.runtime_ms / 1000.0;
    let per_s = |x: f64| if runtime_s > 0.0 { x / runtime_s } else { 0.0 };
    let read_lat = LatSummary::from_hist(&delta_hist(&d.read.bins, &zero.read.bins));
    let write_lat = LatSummary::from_hist(&delta_hist(&d.write.bins, &zero.write.bins));
    let w = &spec.workload;
    let options: Vec<&str> = job
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with('['))
        .collect();
    StepSummary {
        engine: EngineKind::Fio,
        engine_note: Some(format!("{version}, job: {}", options.join(" "))),
        runtime_s,
        ios: d.read.ios + d.write.ios,
        read_ios: d.read.ios,
        write_ios: d.write.ios,
        read_bytes: d.read.bytes,
        write_bytes: d.write.bytes,
        iops: per_s((d.read.ios + d.write.ios) as f64),
        read_iops: per_s(d.read.ios as f64),
        write_iops: per_s(d.write.ios as f64),
        read_bw_bytes: per_s(d.read.bytes as f64),
        write_bw_bytes: per_s(d.write.bytes as f64),
        errors: 0,
        target_iops: w.rate_iops,
        lat_us: LatSummary::from_hist(&all_hist(d, &zero)),
        read_lat_us: if w.rw == RwMode::Write || w.rw == RwMode::RandWrite {
            LatSummary::default()
        } else {
            read_lat
        },
        write_lat_us: write_lat,
        service_lat_us: None,
        ended_by,
        arrival_cv: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_dumps_become_an_interval_from_their_differences() {
        let mk = |ms: f64, ios: u64, bins: &[(u64, u64)]| Dump {
            runtime_ms: ms,
            read: Dir {
                ios,
                bytes: ios * 4096,
                bins: bins.iter().copied().collect(),
            },
            ..Dump::default()
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
        let args =
            job_args("[global]\nfilename=/tmp/a b;rm -rf x\n# note\n\n[drivescope]\nrw=randread\n");
        assert_eq!(
            args,
            [
                "--filename=/tmp/a b;rm -rf x",
                "--name=drivescope",
                "--rw=randread"
            ]
        );
        assert_eq!(
            fio_filename(std::path::Path::new("/dev/disk/by-id/a:b")),
            "/dev/disk/by-id/a\\:b"
        );
    }
}
