//! fio as a child process: caged, its output read in bounded lines and documents, supervised through stop, pause and suspension, and how its run ended.

use std::io::{BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::{spawn_error, FioError, FioText, FIO_DOC_MAX, FIO_LINE_MAX};
use super::job_end::ran_all;
use crate::engine::{EngineError, StepControl, StepObserver};
use crate::outcome::{EndedBy, FaultKind};
use crate::workload::StepSpec;

/// An fio command in its cage (see [`super::cage`]): it may write the targets that
/// write and read the others, and nothing else. The scratch folder must outlive fio.
pub(super) fn caged(
    targets: &[crate::workload::FioTarget],
    logs: Option<&std::path::Path>,
) -> Result<(Command, super::cage::Scratch), FioError> {
    let mut cmd = Command::new("fio");
    let scratch = super::cage::cage(&mut cmd, targets, logs)?;
    Ok((cmd, scratch))
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
    /// Sends `sig` to fio's process group: its keeper, fio and every job process (the
    /// cage refuses `setsid`, so none has left it).
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

/// fio's main process: the one child of its keeper ([`super::pidns`]), the process a user
/// (or a debugger) stops by its pid; the keeper itself while it has not forked yet.
fn fio_main(keeper: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{keeper}/task/{keeper}/children"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(keeper)
}

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
pub(super) fn outcome(
    run: Supervised,
    error: i64,
    spec: &StepSpec,
    ran_ms: f64,
) -> Result<EndedBy, FioError> {
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
    Ok(natural_end(error, spec, ran_ms))
}

/// fio started: the child, its stdout's documents and lines, its stderr's reader.
type Spawned = (FioChild, mpsc::Receiver<Out>, JoinHandle<String>);

/// Starts fio (`cmd`; `stdin`, when given, is the job text it reads from its stdin) in a
/// process group of its own: the child, its stdout's documents and lines, and a thread
/// reading its stderr to its end.
fn spawn(mut cmd: Command, stdin: Option<&str>) -> Result<Spawned, EngineError> {
    cmd.arg("--output-format=json+")
        .stdin(stdin.map_or_else(Stdio::null, |_| Stdio::piped()))
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
    Ok((fio, reader(stdout), err_text))
}

impl FioChild {
    /// Tells fio to stop (SIGTERM: it prints its last dump), woken first when `paused`.
    fn stop(&self, paused: bool) {
        if paused {
            self.signal(libc::SIGCONT);
        }
        self.signal(libc::SIGTERM);
    }
}

/// What [`supervise`] knows of fio between its dumps.
struct Watch {
    /// Why the step ends early, once known.
    ended_by: Option<EndedBy>,
    paused: bool,
    stopping: bool,
    said_pause: bool,
    /// fio's lines that are not dumps (its first 20).
    messages: Vec<String>,
    /// A dump came.
    seen: bool,
    /// When the stop was sent, and whether fio's group was killed for outliving its grace.
    stop_sent: Option<Instant>,
    killed: bool,
    /// fio held by a signal drivescope did not send (`kill -STOP`, a debugger): since
    /// when, and for how long since the last dump. Its I/O stood still, and the latency of
    /// what was in flight is the process's, not the drive's: the interval is marked.
    stopped_since: Option<Instant>,
    suspended: Duration,
    said_suspended: bool,
    looked: Instant,
    /// fio's status dumps come every `every`, even while it lays out its files: one that
    /// has given none for `silence` (its own I/O or a pause aside) is stuck.
    /// (A job process cannot outlive fio's main process and hold its output open: fio is
    /// the first process of its own PID namespace, whose end the kernel makes theirs.)
    every: Duration,
    silence: Duration,
    last_dump: Instant,
}

impl Watch {
    fn new(every: Duration) -> Self {
        Watch {
            ended_by: None,
            paused: false,
            stopping: false,
            said_pause: false,
            messages: Vec::new(),
            seen: false,
            stop_sent: None,
            killed: false,
            stopped_since: None,
            suspended: Duration::ZERO,
            said_suspended: false,
            looked: Instant::now(),
            every,
            silence: (every * 30).max(Duration::from_secs(60)),
            last_dump: Instant::now(),
        }
    }

    /// Between dumps: notes a suspension by someone else's signal, follows the user's stop
    /// (killing a fio that outlives its grace) and pause, and fails on a stuck fio.
    fn tick(
        &mut self,
        fio: &FioChild,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<(), EngineError> {
        self.look_for_suspension(fio, obs);
        if ctl.stop.load(Ordering::Relaxed) && !self.stopping {
            self.stopping = true;
            self.ended_by.get_or_insert(EndedBy::Stopped);
            fio.stop(self.paused);
            self.paused = false;
        }
        if self.stopping && !self.killed {
            let sent = *self.stop_sent.get_or_insert_with(Instant::now);
            if sent.elapsed() >= crate::children::STOP_GRACE {
                // A fio that ignores SIGTERM (hung in the kernel, or not fio at all).
                self.killed = true;
                fio.signal(libc::SIGKILL);
                obs.note(&format!(
                    "fio had not ended {}s after it was told to stop: it was killed with its process group",
                    crate::children::STOP_GRACE.as_secs()
                ));
            }
        }
        if self.paused || self.stopped_since.is_some() {
            self.last_dump = Instant::now();
        } else if !self.stopping && self.last_dump.elapsed() >= self.silence {
            return Err(FioError::Silent {
                silent: self.silence,
                every: self.every,
            }
            .into());
        }
        self.follow_pause(fio, ctl, obs);
        Ok(())
    }

    /// Every 50 ms while not paused: whether fio's main process stands stopped.
    fn look_for_suspension(&mut self, fio: &FioChild, obs: &mut dyn StepObserver) {
        if self.paused || self.looked.elapsed() < Duration::from_millis(50) {
            return;
        }
        self.looked = Instant::now();
        match (
            process_stopped(fio_main(fio.child.id())),
            self.stopped_since,
        ) {
            (true, None) => self.stopped_since = Some(self.looked),
            (false, Some(t)) => {
                self.suspended += t.elapsed();
                self.stopped_since = None;
            }
            _ => {}
        }
        if self.stopped_since.is_some() && !self.said_suspended {
            self.said_suspended = true;
            obs.note("fio was suspended by a signal drivescope did not send: the intervals it spans are marked and left out");
        }
    }

    /// Holds fio (SIGSTOP) while the user pauses, and lets it go on (SIGCONT).
    fn follow_pause(&mut self, fio: &FioChild, ctl: &StepControl, obs: &mut dyn StepObserver) {
        let want_pause = ctl.pause.load(Ordering::Relaxed) && !self.stopping;
        if want_pause == self.paused {
            return;
        }
        fio.signal(if want_pause {
            libc::SIGSTOP
        } else {
            libc::SIGCONT
        });
        self.paused = want_pause;
        if want_pause && !self.said_pause {
            self.said_pause = true;
            obs.note(
                "a pause holds fio's I/O but not its clock: a timed step's runtime runs on while paused",
            );
        }
    }

    /// A dump came: how long fio stood suspended since the one before.
    fn dumped(&mut self) -> Duration {
        self.seen = true;
        self.last_dump = Instant::now();
        let held = self.suspended + self.stopped_since.map_or(Duration::ZERO, |t| t.elapsed());
        self.suspended = Duration::ZERO;
        if self.stopped_since.is_some() {
            self.stopped_since = Some(Instant::now());
        }
        held
    }

    /// fio's output ended: reaps it and says how its run ended (its own words when it
    /// gave no dump at all: it refused the job).
    fn finish(
        self,
        mut fio: FioChild,
        err_text: JoinHandle<String>,
        obs: &mut dyn StepObserver,
    ) -> Result<Supervised, EngineError> {
        let Watch {
            ended_by,
            stopping,
            messages,
            seen,
            ..
        } = self;
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
}

/// Runs fio (`cmd`; `stdin`, when given, is the job text it reads from its stdin), hands
/// each status dump to `on_dump` (which returns why the step should end, when its observer
/// says so), ends fio on the user's stop (SIGTERM: it prints its last dump; SIGKILL to its
/// group after [`STOP_GRACE`](crate::children::STOP_GRACE)) and holds it on
/// pause (SIGSTOP). What ended the step early, if anything; fio's own words when it gave
/// no dump at all (it refused the job).
pub(super) fn supervise(
    cmd: Command,
    every: Duration,
    stdin: Option<&str>,
    ctl: &StepControl,
    obs: &mut dyn StepObserver,
    on_dump: &mut OnDump<'_>,
) -> Result<Supervised, EngineError> {
    let (fio, out, err_text) = spawn(cmd, stdin)?;
    let mut w = Watch::new(every);
    loop {
        w.tick(&fio, ctl, obs)?;
        let v = match out.recv_timeout(Duration::from_millis(20)) {
            Ok(Out::Doc(v)) => v,
            Ok(Out::Line(l)) => {
                if w.messages.len() < 20 {
                    w.messages.push(l);
                }
                continue;
            }
            // A step being stopped keeps the figures fio gave before its last words.
            Ok(Out::Bad(_)) if w.stopping && w.seen => break,
            Ok(Out::Bad(e)) => {
                fio.stop(w.paused);
                return Err(FioError::Output(e).into());
            }
            Ok(Out::TooLong(what, limit)) => {
                fio.stop(w.paused);
                return Err(FioError::TooLong { what, limit }.into());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
        };
        let held = w.dumped();
        match on_dump(&v, held.as_secs_f64(), obs) {
            Ok(Some(why)) if !w.stopping => {
                w.stopping = true;
                w.ended_by = Some(why);
                fio.stop(w.paused);
                w.paused = false;
            }
            Ok(_) => {}
            Err(e) => {
                fio.stop(w.paused);
                return Err(e.into());
            }
        }
    }
    w.finish(fio, err_text, obs)
}

/// How a step fio ran to its end ended: on an I/O error (fio stops a job at its first), by
/// its amount of data, or by its time. A step bound by both ended by its time when its
/// longest job (`ran_ms`, fio's own measure) ran all of it, less fio's clock's slack (a
/// tick of its 1 ms timer or 1%, the larger); by its data before that.
pub(super) fn natural_end(error: i64, spec: &StepSpec, ran_ms: f64) -> EndedBy {
    if error != 0 {
        EndedBy::device(
            FaultKind::AllFailed,
            format!(
                "fio stopped on an I/O error: {}",
                std::io::Error::from_raw_os_error(error as i32)
            ),
        )
    } else if spec.end.bytes.is_some() && spec.end.duration.is_none_or(|d| !ran_all(ran_ms, d)) {
        EndedBy::Bytes
    } else {
        EndedBy::Duration
    }
}

/// How often fio gives a status dump for a reporting interval: 100 ms at least.
pub(super) fn dump_every(interval: Duration) -> Duration {
    interval.max(Duration::from_millis(100))
}

/// fio's `--status-interval` for the step's reporting interval ([`dump_every`]).
pub(super) fn status_interval(spec: &StepSpec) -> String {
    format!(
        "--status-interval={}ms",
        dump_every(spec.interval).as_millis()
    )
}

/// fio's first lines on stderr, where it says why it refused a job.
pub(super) fn first_lines(s: &str) -> Option<String> {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(3).collect();
    (!lines.is_empty()).then(|| lines.join("; "))
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
}
