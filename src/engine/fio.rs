//! The fio engine (`--engine fio`): a step run by the installed fio as a child process, its
//! job written by [`crate::fiojob`] (the same text `presets fio` exports), with
//! `--output-format=json+ --status-interval=<the step's interval>`. fio's status dumps are
//! cumulative from the job's start: each pair of consecutive dumps becomes one interval
//! (I/O counts and bytes differenced; latency percentiles from the differenced json+
//! completion-latency bins, never from fio's cumulative percentiles). Stop ends fio with
//! SIGTERM (it prints its last dump); one that has not ended
//! [`STOP_GRACE`](crate::children::STOP_GRACE) later is killed with its process group.
//! Pause holds it with SIGSTOP. Its output is read in bounded lines and documents.

use std::fmt::Write as _;
use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::fio_json::{delta_hist, series_of, step_summary, total_of, Dir, Series, Totals};
use super::seam::{Control, Engine, StepControl, StepObserver};
use super::{EngineError, StepTarget};
use crate::outcome::{EndedBy, FaultKind};
use crate::stats::{DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::{Arrivals, EngineKind, StepSpec};

/// Why fio could not run a step; fio's own words where it gave them.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("fio is not installed (or not on PATH): {0}")]
    Missing(String),
    #[error("fio {found} is too old: drivescope needs fio 3.0 or later (json+ status dumps)")]
    TooOld { found: String },
    #[error("fio refused the job: {0}")]
    Refused(String),
    #[error("fio refused the job file {}: {said}", .path.display())]
    RefusedFile {
        path: std::path::PathBuf,
        said: String,
    },
    #[error("{version}'s json+ output has no {field}, which drivescope reads; drivescope needs fio 3.0 or later")]
    Lacks { version: String, field: String },
    #[error("fio's output is not what drivescope reads: {0}")]
    Output(String),
    /// A line, or a JSON document, of fio's output past its bound ([`FIO_LINE_MAX`],
    /// [`FIO_DOC_MAX`]): fio was ended and read no further.
    #[error("fio's output is not what drivescope reads: {what} longer than {limit} bytes")]
    TooLong { what: FioText, limit: usize },
    #[error(transparent)]
    JobFile(#[from] crate::input::InputError),
    #[error("fio's cage: {0}")]
    Cage(#[from] super::fio_cage::CageError),
    #[error("fio could not be started in its cage: {0}")]
    Start(std::io::Error),
    /// fio ended the job on an error of its own (not the device's), or exited non-zero.
    #[error("fio failed: {said}{}", cage_hint_text(*.cage_hint))]
    Failed {
        /// fio's own words (its `fio: … error=…` line, or its first lines on stderr).
        said: String,
        /// The error is one the cage gives (read-only, not permitted, not there).
        cage_hint: bool,
    },
    /// drivescope's own refusal: where in the job file (a job and its section's line, a
    /// line, the file) and why.
    #[error("{}: {why}; refused before fio starts", super::fio_refusal::location(.job, .line))]
    Unsafe {
        job: Option<String>,
        line: Option<usize>,
        why: super::fio_refusal::Refusal,
    },
}

/// An fio command in its cage (see [`super::fio_cage`]): it may write the targets that
/// write and read the others, and nothing else. The scratch folder must outlive fio.
pub(super) fn caged(
    targets: &[crate::workload::FioTarget],
    log_dirs: &[std::path::PathBuf],
) -> Result<(Command, super::fio_cage::Scratch), FioError> {
    let mut cmd = Command::new("fio");
    let scratch = super::fio_cage::cage(&mut cmd, targets, log_dirs)?;
    Ok((cmd, scratch))
}

/// Runs a caged fio to its end, its output kept.
fn caged_output(args: &[&str]) -> Result<std::process::Output, FioError> {
    let (mut cmd, _scratch) = caged(&[], &[])?;
    cmd.args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(spawn_error)
}

/// Why fio did not start: not there, or its cage could not be built.
pub(super) fn spawn_error(e: std::io::Error) -> FioError {
    if e.kind() == std::io::ErrorKind::NotFound {
        FioError::Missing(e.to_string())
    } else {
        FioError::Start(e)
    }
}

/// What a failure the cage may have caused adds to fio's words.
fn cage_hint_text(hint: bool) -> &'static str {
    if hint {
        "; fio's cage lets a job write only the targets drivescope guarded, and read only the files the job names"
    } else {
        ""
    }
}

/// What of fio's output went past its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioText {
    Line,
    Document,
}

impl std::fmt::Display for FioText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FioText::Line => "a line",
            FioText::Document => "a JSON document",
        })
    }
}

/// The longest line of fio's output read: fio pretty-prints its JSON, one field a line,
/// so its longest lines are its messages and a job's name (well under a KiB); 16 MiB is
/// a bound no fio reaches, which still keeps a runaway output from filling memory.
pub const FIO_LINE_MAX: usize = 16 << 20;
/// The largest json+ document read: one job's report with its completion-latency bins is
/// 100-300 KiB, so 64 MiB holds a job file of a few hundred jobs reported one by one.
pub const FIO_DOC_MAX: usize = 64 << 20;

/// The oldest fio major version whose json+ status dumps carry what is read here.
const MIN_MAJOR: u32 = 3;

/// The installed fio's version (`fio-3.33`), or why there is none usable.
pub fn fio_version() -> Result<String, FioError> {
    let out = caged_output(&["--version"])?;
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

/// fio's version as the run's check found it, or (not known: a step that lost it) as fio
/// says now.
pub(super) fn known_or_asked(known: Option<&str>) -> Result<String, FioError> {
    match known {
        Some(v) if !v.is_empty() => Ok(v.to_string()),
        _ => fio_version(),
    }
}

/// What drivescope reads in fio's json+ output, as JSON pointers into a dump.
const NEEDED: [&str; 9] = [
    "/timestamp_ms",
    "/jobs/0/jobname",
    "/jobs/0/job_runtime",
    "/jobs/0/read/total_ios",
    "/jobs/0/read/io_bytes",
    "/jobs/0/read/iops",
    "/jobs/0/read/bw_bytes",
    "/jobs/0/read/runtime",
    "/jobs/0/read/clat_ns/bins",
];

/// The first field drivescope needs that a json+ dump lacks.
fn lacks(v: &Value) -> Option<&'static str> {
    NEEDED.iter().copied().find(|p| v.pointer(p).is_none())
}

/// The installed fio's version, once fio has shown that its json+ output carries what
/// drivescope reads: a few I/Os of fio's `null` engine (no file is opened or written).
pub fn fio_check() -> Result<String, FioError> {
    let version = fio_version()?;
    let out = caged_output(&[
        "--name=drivescope-probe",
        "--ioengine=null",
        "--size=64k",
        "--bs=4k",
        "--rw=read",
        "--output-format=json+",
    ])?;
    let text = String::from_utf8_lossy(&out.stdout);
    let doc = text
        .find('{')
        .and_then(|i| {
            serde_json::Deserializer::from_str(&text[i..])
                .into_iter::<Value>()
                .next()
        })
        .and_then(Result::ok);
    match doc {
        Some(v) => match lacks(&v) {
            None => Ok(version),
            Some(field) => Err(FioError::Lacks {
                version,
                field: field.to_string(),
            }),
        },
        None => Err(FioError::Lacks {
            version,
            field: first_lines(&String::from_utf8_lossy(&out.stderr))
                .map(|w| format!("a JSON document (fio said: {w})"))
                .unwrap_or_else(|| "a JSON document".into()),
        }),
    }
}

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
    h
}

/// The interval between two dumps; `None` when fio reset its counters (after a ramp).
fn interval(index: u64, d: &Series, before: &Series, ramp: bool) -> Option<IntervalReport> {
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

/// What fio's stdout carries: its JSON documents (one per status dump, then the last),
/// and between them lines of its own (`fio: io_u error on file …`, `fio: terminating on
/// signal 15`), which are not JSON.
#[derive(Debug)]
enum Out {
    Doc(Value),
    Line(String),
    /// A document that does not parse.
    Bad(String),
    /// A line or a document past its bound: nothing more is read.
    TooLong(FioText, usize),
}

/// The depth of `{`/`}` nesting a line adds, strings and escapes skipped.
fn depth_change(line: &str, in_str: &mut bool) -> i64 {
    let mut d = 0i64;
    let mut escaped = false;
    for c in line.chars() {
        if *in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => *in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => *in_str = true,
            '{' => d += 1,
            '}' => d -= 1,
            _ => {}
        }
    }
    d
}

/// Reads fio's stdout line by line: a line starting with `{` opens a document, which
/// runs until its braces close; other lines are fio's messages.
fn reader(out: impl Read + Send + 'static) -> mpsc::Receiver<Out> {
    use crate::lines::{bounded_lines, LineError};
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut doc = String::new();
        let (mut depth, mut in_str) = (0i64, false);
        for line in bounded_lines(BufReader::new(out), FIO_LINE_MAX) {
            let line = match line {
                Ok(l) => l,
                Err(LineError::TooLong { limit }) => {
                    let _ = tx.send(Out::TooLong(FioText::Line, limit));
                    return;
                }
                Err(LineError::Io(_)) => break,
            };
            if depth == 0 && !line.starts_with('{') {
                if !line.trim().is_empty() && tx.send(Out::Line(line)).is_err() {
                    return;
                }
                continue;
            }
            depth += depth_change(&line, &mut in_str);
            if doc.len() + line.len() >= FIO_DOC_MAX {
                let _ = tx.send(Out::TooLong(FioText::Document, FIO_DOC_MAX));
                return;
            }
            doc.push_str(&line);
            doc.push('\n');
            if depth <= 0 {
                let text = std::mem::take(&mut doc);
                depth = 0;
                in_str = false;
                let msg = match serde_json::from_str(&text) {
                    Ok(v) => Out::Doc(v),
                    Err(e) => Out::Bad(e.to_string()),
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        }
        // fio ended (or was ended) in the middle of a dump: its last figures are lost.
        if !doc.trim().is_empty() {
            let _ = tx.send(Out::Bad("fio's output ended inside a status dump".into()));
        }
    });
    rx
}

/// fio's process group (it was started in a group of its own): signals reach every
/// thread; registered while it runs (a second Ctrl-C kills it); dropped, it ends fio and
/// reaps it, whatever way the step left.
struct FioChild {
    child: Child,
    reaped: bool,
    group: crate::children::Registered,
}

impl FioChild {
    fn signal(&self, sig: libc::c_int) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill(2) on the process group our own child leads (it was spawned
            // with process_group(0)); the child is not reaped before `reaped` is set, so
            // the group id cannot name another process group.
            unsafe {
                libc::kill(-pid, sig);
            }
        }
    }

    fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        let r = crate::children::end_group(
            &mut self.child,
            &mut self.group,
            crate::children::STOP_GRACE,
        );
        self.reaped = true;
        r
    }
}

impl Drop for FioChild {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(libc::SIGCONT);
            self.signal(libc::SIGKILL);
            let _ = self.wait();
        }
    }
}

/// What is done with each status dump: the reason to end the step, when the observer
/// asked for it.
/// Its second argument is how long fio stood suspended (stopped by a signal drivescope
/// did not send) since the dump before, in seconds.
pub(super) type OnDump<'a> =
    dyn FnMut(&Value, f64, &mut dyn StepObserver) -> Result<Option<EndedBy>, FioError> + 'a;

/// The process is stopped (`T`, or `t` under a tracer), as /proc/PID/stat says.
fn process_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rfind(')')
            .and_then(|i| s[i + 1..].trim_start().chars().next())
            .is_some_and(|c| c == 'T' || c == 't')
    })
}

/// How fio's run ended, as [`supervise`] saw it.
pub(super) struct Supervised {
    /// Why the step ended early, where its observer or the user ended it.
    pub ended_by: Option<EndedBy>,
    /// fio exited non-zero on its own (not stopped by drivescope): its words.
    pub failed: Option<String>,
}

/// The errors fio reports that come from the device (an I/O error, the device gone,
/// a timeout, data that did not verify); any other is the job's own.
fn from_device(errno: i32) -> bool {
    matches!(
        errno,
        libc::EIO
            | libc::ENXIO
            | libc::ENODEV
            | libc::ETIMEDOUT
            | libc::EREMOTEIO
            | libc::ENOLINK
            | libc::EILSEQ
            | libc::EBADMSG
    )
}

/// How a step fio ran ended, from its last dump's error (`error`, fio's errno) and its
/// exit: a device's error is the device's fault (the step's end); any other error, or a
/// non-zero exit, is fio's failure with its words; else the step's natural end.
pub(super) fn outcome(run: Supervised, error: i64, spec: &StepSpec) -> Result<EndedBy, FioError> {
    if let Some(why) = run.ended_by {
        return Ok(why);
    }
    let errno = i32::try_from(error).unwrap_or(0);
    if errno != 0 && !from_device(errno) {
        return Err(FioError::Failed {
            said: run
                .failed
                .unwrap_or_else(|| format!("error {}", std::io::Error::from_raw_os_error(errno))),
            cage_hint: matches!(
                errno,
                libc::EROFS | libc::EACCES | libc::EPERM | libc::ENOENT
            ),
        });
    }
    if errno == 0 {
        if let Some(said) = run.failed {
            return Err(FioError::Failed {
                said,
                cage_hint: false,
            });
        }
    }
    Ok(natural_end(error, spec))
}

/// Runs fio (`cmd`; `stdin`, when given, is the job text it reads from its stdin), hands
/// each status dump to `on_dump` (which returns why the step should end, when its observer
/// says so), ends fio on the user's stop (SIGTERM: it prints its last dump; SIGKILL to its
/// group after [`STOP_GRACE`](crate::children::STOP_GRACE)) and holds it on
/// pause (SIGSTOP). What ended the step early, if anything; fio's own words when it gave
/// no dump at all (it refused the job).
pub(super) fn supervise(
    mut cmd: Command,
    stdin: Option<&str>,
    ctl: &StepControl,
    obs: &mut dyn StepObserver,
    on_dump: &mut OnDump<'_>,
) -> Result<Supervised, EngineError> {
    cmd.arg("--output-format=json+")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = cmd.spawn().map_err(spawn_error)?;
    let mut fio = FioChild {
        group: crate::children::register(child.id()),
        child,
        reaped: false,
    };
    if let (Some(text), Some(mut pipe)) = (stdin, fio.child.stdin.take()) {
        use std::io::Write as _;
        // From a thread of its own, so that fio's output is read meanwhile whatever the
        // text's length; the pipe closes when it is written (or fio has gone).
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = pipe.write_all(text.as_bytes());
        });
    }
    let stdout = fio
        .child
        .stdout
        .take()
        .ok_or_else(|| FioError::Output("no stdout".into()))?;
    let mut stderr = fio.child.stderr.take();
    let err_text = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let out = reader(stdout);
    let mut ended_by: Option<EndedBy> = None;
    let mut paused = false;
    let mut stopping = false;
    let mut said_pause = false;
    let mut messages: Vec<String> = Vec::new();
    let mut seen = false;
    // When the stop was sent, and whether fio's group was killed for outliving its grace.
    let mut stop_sent: Option<std::time::Instant> = None;
    let mut killed = false;
    let stop = |fio: &FioChild, paused: bool| {
        if paused {
            fio.signal(libc::SIGCONT);
        }
        fio.signal(libc::SIGTERM);
    };
    // fio held by a signal drivescope did not send (`kill -STOP`, a debugger): since
    // when, and for how long since the last dump. Its I/O stood still, and the latency of
    // what was in flight is the process's, not the drive's: the interval is marked.
    let mut stopped_since: Option<std::time::Instant> = None;
    let mut suspended = Duration::ZERO;
    let mut said_suspended = false;
    let mut looked = std::time::Instant::now();
    loop {
        if !paused && looked.elapsed() >= Duration::from_millis(50) {
            looked = std::time::Instant::now();
            match (process_stopped(fio.child.id()), stopped_since) {
                (true, None) => stopped_since = Some(looked),
                (false, Some(t)) => {
                    suspended += t.elapsed();
                    stopped_since = None;
                }
                _ => {}
            }
            if stopped_since.is_some() && !said_suspended {
                said_suspended = true;
                obs.note("fio was suspended by a signal drivescope did not send: the intervals it spans are marked and left out");
            }
        }
        if ctl.stop.load(Ordering::Relaxed) && !stopping {
            stopping = true;
            ended_by.get_or_insert(EndedBy::Stopped);
            stop(&fio, paused);
            paused = false;
        }
        if stopping && !killed {
            let sent = *stop_sent.get_or_insert_with(std::time::Instant::now);
            if sent.elapsed() >= crate::children::STOP_GRACE {
                // A fio that ignores SIGTERM (hung in the kernel, or not fio at all).
                killed = true;
                fio.signal(libc::SIGKILL);
                obs.note(&format!(
                    "fio had not ended {}s after it was told to stop: it was killed with its process group",
                    crate::children::STOP_GRACE.as_secs()
                ));
            }
        }
        let want_pause = ctl.pause.load(Ordering::Relaxed) && !stopping;
        if want_pause != paused {
            fio.signal(if want_pause {
                libc::SIGSTOP
            } else {
                libc::SIGCONT
            });
            paused = want_pause;
            if want_pause && !said_pause {
                said_pause = true;
                obs.note(
                    "a pause holds fio's I/O but not its clock: a timed step's runtime runs on while paused",
                );
            }
        }
        let v = match out.recv_timeout(Duration::from_millis(20)) {
            Ok(Out::Doc(v)) => v,
            Ok(Out::Line(l)) => {
                if messages.len() < 20 {
                    messages.push(l);
                }
                continue;
            }
            // A step being stopped keeps the figures fio gave before its last words.
            Ok(Out::Bad(_)) if stopping && seen => break,
            Ok(Out::Bad(e)) => {
                stop(&fio, paused);
                return Err(FioError::Output(e).into());
            }
            Ok(Out::TooLong(what, limit)) => {
                stop(&fio, paused);
                return Err(FioError::TooLong { what, limit }.into());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
        };
        seen = true;
        let held = suspended + stopped_since.map_or(Duration::ZERO, |t| t.elapsed());
        suspended = Duration::ZERO;
        if stopped_since.is_some() {
            stopped_since = Some(std::time::Instant::now());
        }
        match on_dump(&v, held.as_secs_f64(), obs) {
            Ok(Some(why)) if !stopping => {
                stopping = true;
                ended_by = Some(why);
                stop(&fio, paused);
                paused = false;
            }
            Ok(_) => {}
            Err(e) => {
                stop(&fio, paused);
                return Err(e.into());
            }
        }
    }
    let status = fio.wait().map_err(EngineError::Spawn)?;
    let words = err_text.join().unwrap_or_default();
    for m in messages.iter().filter(|m| m.starts_with("fio:")) {
        obs.note(m);
    }
    // A fio stopped before its first dump (one that would not end, killed) ran no figures.
    if !seen && !stopping {
        let why = first_lines(&words)
            .or_else(|| first_lines(&messages.join("\n")))
            .unwrap_or_else(|| format!("fio exited with {status} and no output"));
        return Err(FioError::Refused(why).into());
    }
    // fio's own account of a failed job (`fio: pid=…, err=30/file:…, error=…`) first.
    let failed = (!status.success() && !stopping).then(|| {
        messages
            .iter()
            .find(|m| m.starts_with("fio:") && m.contains("err="))
            .cloned()
            .or_else(|| first_lines(&words))
            .or_else(|| first_lines(&messages.join("\n")))
            .unwrap_or_else(|| format!("fio exited with {status}"))
    });
    Ok(Supervised { ended_by, failed })
}

/// How a step fio ran to its end ended: on an I/O error (fio stops a job at its first), by
/// its amount of data, or by its time.
pub(super) fn natural_end(error: i64, spec: &StepSpec) -> EndedBy {
    if error != 0 {
        EndedBy::device(
            FaultKind::AllFailed,
            format!(
                "fio stopped on an I/O error: {}",
                std::io::Error::from_raw_os_error(error as i32)
            ),
        )
    } else if spec.end.bytes.is_some() && spec.end.duration.is_none() {
        EndedBy::Bytes
    } else {
        EndedBy::Duration
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
        if let Some(file) = &spec.fio_file {
            return super::fio_series::run_file_step(file, spec, ctl, obs);
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
            &[],
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
        let run = supervise(cmd, None, ctl, obs, &mut |v, suspended_s, obs| {
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
                let tiny = r.read.ios + r.write.ios == 0
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
        })?;
        let ended_by = outcome(run, last.error, spec)?;
        Ok(summary(spec, &last, ended_by, &version, &job))
    }
}

/// fio's `--status-interval` for the step's reporting interval (100 ms at least).
pub(super) fn status_interval(spec: &StepSpec) -> String {
    format!("--status-interval={}ms", spec.interval.as_millis().max(100))
}

/// fio's first lines on stderr, where it says why it refused a job.
pub(super) fn first_lines(s: &str) -> Option<String> {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    (!lines.is_empty()).then(|| lines.join("; "))
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
        runtime_s,
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
    fn output_ending_inside_a_dump_is_said_not_dropped() {
        let text = "fio: a line\n{\n  \"jobs\": [1]\n}\n{\n  \"jobs\": [\n";
        let got: Vec<Out> = reader(std::io::Cursor::new(text.as_bytes().to_vec()))
            .iter()
            .collect();
        assert!(matches!(&got[0], Out::Line(l) if l == "fio: a line"));
        assert!(matches!(&got[1], Out::Doc(_)));
        assert!(matches!(&got[2], Out::Bad(_)), "{:?}", got.len());
        assert_eq!(got.len(), 3);
    }

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
    fn a_dump_without_the_latency_bins_is_named() {
        let mut v: Value = serde_json::json!({
            "timestamp_ms": 1,
            "jobs": [{"jobname": "a", "job_runtime": 1, "read": {
                "total_ios": 1, "io_bytes": 1, "iops": 1.0, "bw_bytes": 1, "runtime": 1,
                "clat_ns": {"bins": {}}}}]
        });
        assert_eq!(lacks(&v), None);
        v["jobs"][0]["read"]["clat_ns"] = serde_json::json!({"percentile": {}});
        assert_eq!(lacks(&v), Some("/jobs/0/read/clat_ns/bins"));
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
