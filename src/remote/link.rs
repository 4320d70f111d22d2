//! The controller's end of a remote target: the ssh child running `drivescope agent` on the
//! host, the handshake (both versions stated; the agent's clock measured against ours, so
//! its samples land on the run's time axis), requests and their answers, and the
//! [`RemoteEngine`] that runs a step there behind the engine seam. A reader thread sorts
//! the agent's records: telemetry to the drive's feed, the rest to whoever waits for an
//! answer. When the link breaks, every wait ends with the reason (ssh's exit and its last
//! words on stderr). The agent's lines are bounded ([`LINE_MAX`]); ssh runs in a
//! process group of its own, registered so that a second Ctrl-C ends it too, and a stop
//! asked for before the host is ready (the handshake, the prepare) ends the wait at once:
//! the headless run's signals, or the run's own stop flag (the dashboard's stop key) that
//! the link was opened with.

use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

pub use crate::host::RemoteError;

use super::host::{Host, SshCommand};
use super::proto::{
    FromAgent, PrepareRequest, PreparedReply, ToAgent, LINE_MAX, PROTOCOL, VERSION,
};
use crate::engine::{Control, Engine, EngineError, StepControl, StepObserver, StepTarget};
use crate::stats::StepSummary;
use crate::telemetry::TelemetrySample;
use crate::workload::{EngineKind, StepSpec};

/// What runs the agent on a host when no `--remote-drivescope` is given: the drivescope of
/// `~/.local/bin` when there is one (where `host install` puts it), else `drivescope` on the
/// remote PATH; a shell that finds neither exits 127 (no agent there).
pub const FIND_AGENT: &str =
    "f=\"$HOME/.local/bin/drivescope\"; [ -x \"$f\" ] || f=drivescope; exec \"$f\" \"$@\"";

/// How long the handshake may take (ssh's own connect timeout is shorter).
const HELLO_WAIT: Duration = Duration::from_secs(40);
/// Clock probes after the handshake; the one with the shortest round trip counts.
const CLOCK_PROBES: usize = 4;
/// Lines of ssh's stderr kept for the reason a link failed.
const STDERR_LINES: usize = 8;
/// The longest line of ssh's stderr read (its messages are a line of text).
const STDERR_LINE_MAX: usize = 64 << 10;
/// How often a wait for the host checks whether the run was asked to stop.
const STOP_POLL: Duration = Duration::from_millis(100);
/// How long ssh has to end after goodbye before it is told to (SIGTERM, then SIGKILL).
const BYE_WAIT: Duration = Duration::from_secs(5);

/// How a remote target is reached.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemoteOptions {
    pub ssh: SshCommand,
    /// The drivescope to run there; by default `~/.local/bin/drivescope` when there is one,
    /// else `drivescope` on the remote PATH ([`FIND_AGENT`]).
    pub program: Option<String>,
    /// `--host-metrics`: the agent serves its own `/metrics` at this address on its host.
    pub agent_metrics: Option<String>,
}

/// A target's host and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    pub host: Host,
    pub options: RemoteOptions,
}

/// The agent's clocks against ours, measured at the handshake.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Our instant at which the agent's monotonic clock read zero.
    pub agent_origin: Instant,
    /// The shortest round trip of the probes.
    pub rtt: Duration,
    /// The agent's wall clock minus ours, ns (what a log on that host is off by).
    pub wall_offset_ns: i64,
}

/// Where the reader thread sends telemetry: our run's clock origin and the feed.
type TelemetryTap = Arc<Mutex<Option<(Instant, Sender<TelemetrySample>)>>>;

/// A live link to one host's agent.
pub struct Link {
    host: Host,
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    replies: Mutex<Receiver<FromAgent>>,
    tap: TelemetryTap,
    stderr: Arc<Mutex<Vec<String>>>,
    dropped: Arc<AtomicU64>,
    /// ssh's process group in the registry a second Ctrl-C kills.
    group: Mutex<crate::children::Registered>,
    /// The agent sent a line past [`LINE_MAX`]: its records are read no further.
    too_long: Arc<AtomicBool>,
    /// The run's stop, when it has one of its own (the dashboard's): a wait for the host
    /// ends on it as on the headless run's signals.
    stop: Option<Arc<AtomicBool>>,
    /// The agent's version, as its handshake stated it.
    pub agent_version: String,
    pub clock: Clock,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("host", &self.host)
            .field("agent_version", &self.agent_version)
            .finish_non_exhaustive()
    }
}

/// Reads the agent's records: telemetry to the tap, the rest to the replies; a line past
/// [`LINE_MAX`] ends the reading (and sets `too_long`).
fn read_records(
    out: impl Read,
    replies: Sender<FromAgent>,
    tap: TelemetryTap,
    dropped: Arc<AtomicU64>,
    origin: Arc<Mutex<Option<Instant>>>,
    too_long: Arc<AtomicBool>,
) {
    use crate::lines::{bounded_lines, LineError};
    for line in bounded_lines(BufReader::new(out), LINE_MAX) {
        let line = match line {
            Ok(l) => l,
            Err(LineError::TooLong { .. }) => {
                too_long.store(true, Ordering::Relaxed);
                break;
            }
            Err(LineError::Io(_)) => break,
        };
        // A login banner or a profile's echo is not the agent's: skipped.
        let Ok(rec) = serde_json::from_str::<FromAgent>(&line) else {
            continue;
        };
        match rec {
            FromAgent::Telemetry { mut sample } => {
                let Ok(guard) = tap.lock() else { continue };
                let (Some((t0, tx)), Ok(Some(agent_origin))) =
                    (guard.as_ref(), origin.lock().map(|o| *o))
                else {
                    continue;
                };
                // The agent's time, on our run's axis.
                let at = agent_origin + Duration::from_nanos(sample.t_ns);
                sample.t_ns = at.saturating_duration_since(*t0).as_nanos() as u64;
                let _ = tx.send(*sample);
            }
            FromAgent::Dropped { records } => {
                dropped.fetch_add(records, Ordering::Relaxed);
            }
            other => {
                if replies.send(other).is_err() {
                    break;
                }
            }
        }
    }
}

impl Link {
    /// Starts the agent on `host` over ssh and shakes hands: both versions stated, the
    /// agent's clock measured. A wait for the host ends when `stop` is set (as when the
    /// headless run is signalled).
    pub fn open(
        host: &Host,
        opts: &RemoteOptions,
        stop: Option<Arc<AtomicBool>>,
    ) -> Result<Link, RemoteError> {
        let mut words = match opts.program.as_deref() {
            Some(program) => vec![program, "agent"],
            None => vec!["sh", "-c", FIND_AGENT, "sh", "agent"],
        };
        if let Some(addr) = &opts.agent_metrics {
            words.extend(["--metrics", addr]);
        }
        let mut cmd = opts.ssh.command(host, &words);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // The terminal's ^C goes to drivescope, which stops the host's step cleanly;
            // it must not kill ssh under it.
            .process_group(0);
        let mut child = cmd.spawn().map_err(|source| RemoteError::Spawn {
            host: host.to_string(),
            program: opts.ssh.words()[0].clone(),
            source,
        })?;
        let stdin = child.stdin.take();
        let (rtx, rrx) = mpsc::channel();
        let tap: TelemetryTap = Arc::new(Mutex::new(None));
        let dropped = Arc::new(AtomicU64::new(0));
        let origin = Arc::new(Mutex::new(None));
        let too_long = Arc::new(AtomicBool::new(false));
        let group = crate::children::register(child.id());
        if let Some(out) = child.stdout.take() {
            let (tap, dropped, origin) = (tap.clone(), dropped.clone(), origin.clone());
            let too_long = too_long.clone();
            let _ = std::thread::Builder::new()
                .name("ds-remote-in".into())
                .spawn(move || read_records(out, rtx, tap, dropped, origin, too_long));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            let keep = stderr.clone();
            let _ = std::thread::Builder::new()
                .name("ds-remote-err".into())
                .spawn(move || {
                    let lines = crate::lines::bounded_lines(BufReader::new(err), STDERR_LINE_MAX);
                    for line in lines.map_while(Result::ok) {
                        if let Ok(mut k) = keep.lock() {
                            k.push(line);
                            let n = k.len();
                            if n > STDERR_LINES {
                                k.drain(..n - STDERR_LINES);
                            }
                        }
                    }
                });
        }
        let mut link = Link {
            host: host.clone(),
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            replies: Mutex::new(rrx),
            tap,
            stderr,
            dropped,
            group: Mutex::new(group),
            too_long,
            stop,
            agent_version: String::new(),
            clock: Clock {
                agent_origin: Instant::now(),
                rtt: Duration::ZERO,
                wall_offset_ns: 0,
            },
        };
        link.handshake(&origin)?;
        Ok(link)
    }

    fn host_name(&self) -> String {
        self.host.to_string()
    }

    /// The run was asked to stop: by a signal of the headless run, or its own stop.
    fn stopping(&self) -> bool {
        crate::children::stop_requested()
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// One hello and its answer: (sent, answered, the answer).
    fn probe(&self, wait: Duration) -> Result<(Instant, Instant, FromAgent), RemoteError> {
        let sent = Instant::now();
        self.send(&ToAgent::Hello {
            protocol: PROTOCOL,
            version: VERSION.into(),
        })?;
        let reply = self.answer(Some(wait))?;
        Ok((sent, Instant::now(), reply))
    }

    fn handshake(&mut self, origin: &Mutex<Option<Instant>>) -> Result<(), RemoteError> {
        let mut best: Option<Clock> = None;
        for i in 0..=CLOCK_PROBES {
            let (sent, got, reply) = self.probe(HELLO_WAIT).map_err(|e| self.at_start(e))?;
            let FromAgent::Hello {
                protocol,
                version,
                mono_ns,
                wall_ns,
            } = reply
            else {
                return Err(RemoteError::Failed {
                    host: self.host_name(),
                    message: "the agent did not answer the handshake".into(),
                });
            };
            if i == 0 && protocol != PROTOCOL {
                return Err(RemoteError::Version {
                    host: self.host_name(),
                    ours: VERSION.into(),
                    our_protocol: PROTOCOL,
                    theirs: version,
                    their_protocol: protocol,
                });
            }
            self.agent_version = version;
            let rtt = got - sent;
            let mid = sent + rtt / 2;
            let wall_mid = SystemTime::now() - (Instant::now() - mid);
            let ours = wall_mid
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64);
            let c = Clock {
                agent_origin: mid
                    .checked_sub(Duration::from_nanos(mono_ns))
                    .unwrap_or(mid),
                rtt,
                wall_offset_ns: wall_ns as i64 - ours,
            };
            if best.is_none_or(|b| rtt < b.rtt) {
                best = Some(c);
            }
        }
        if let Some(c) = best {
            self.clock = c;
            if let Ok(mut o) = origin.lock() {
                *o = Some(c.agent_origin);
            }
        }
        Ok(())
    }

    /// A failure before the handshake completed, by what ssh said and how it ended: ssh's
    /// own failure (exit 255) is an unreachable host; a shell that found no such program
    /// (126, 127) is a host without the agent.
    fn at_start(&self, e: RemoteError) -> RemoteError {
        let RemoteError::Lost { host, why } = e else {
            return e;
        };
        match self.exit_code() {
            Some(255) => RemoteError::Unreachable { host, why },
            Some(126 | 127) => RemoteError::NoAgent { host, why },
            _ => RemoteError::Unreachable { host, why },
        }
    }

    /// ssh's exit code once it has ended (waits briefly for it).
    fn exit_code(&self) -> Option<i32> {
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            if let Ok(mut c) = self.child.lock() {
                if let Ok(Some(st)) = c.try_wait() {
                    self.reaped();
                    return st.code();
                }
            }
            if Instant::now() > until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Why the link ended: how ssh ended, and its last words.
    fn lost_why(&self) -> String {
        let status = self
            .child
            .lock()
            .ok()
            .and_then(|mut c| c.try_wait().ok().flatten());
        if status.is_some() {
            self.reaped();
        }
        let how = match status {
            Some(st) => match (
                st.code(),
                std::os::unix::process::ExitStatusExt::signal(&st),
            ) {
                (Some(c), _) => format!("ssh ended with exit status {c}"),
                (None, Some(s)) => format!("ssh was killed by signal {s}"),
                _ => "ssh ended".to_string(),
            },
            None => "the agent's output ended".to_string(),
        };
        // Give ssh's stderr a moment to be read.
        std::thread::sleep(Duration::from_millis(50));
        let said = self
            .stderr
            .lock()
            .map(|l| l.iter().rev().find(|s| !s.trim().is_empty()).cloned())
            .ok()
            .flatten();
        match said {
            Some(s) => format!("{how}: {}", s.trim()),
            None => how,
        }
    }

    /// ssh was reaped: its group id is ours no longer.
    fn reaped(&self) {
        if let Ok(mut g) = self.group.lock() {
            g.release();
        }
    }

    fn lost(&self) -> RemoteError {
        if self.too_long.load(Ordering::Relaxed) {
            return RemoteError::LineTooLong {
                host: self.host_name(),
                limit: LINE_MAX,
            };
        }
        RemoteError::Lost {
            host: self.host_name(),
            why: self.lost_why(),
        }
    }

    /// Sends one request.
    pub fn send(&self, req: &ToAgent) -> Result<(), RemoteError> {
        let mut line = serde_json::to_vec(req).map_err(|e| RemoteError::Failed {
            host: self.host_name(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let mut g = self.stdin.lock().map_err(|_| self.lost())?;
        let ok = match g.as_mut() {
            Some(w) => w.write_all(&line).and_then(|_| w.flush()).is_ok(),
            None => false,
        };
        if !ok {
            *g = None;
            drop(g);
            return Err(self.lost());
        }
        Ok(())
    }

    /// The next record that is not telemetry; `None` after `wait` without one.
    fn next(&self, wait: Duration) -> Result<Option<FromAgent>, RemoteError> {
        let rx = self.replies.lock().map_err(|_| self.lost())?;
        match rx.recv_timeout(wait) {
            Ok(r) => Ok(Some(r)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => {
                drop(rx);
                Err(self.lost())
            }
        }
    }

    /// The answer to a request (a failure as an error); waits at most `wait`, and not at
    /// all once the headless run was asked to stop (the host is not ready yet).
    fn answer(&self, wait: Option<Duration>) -> Result<FromAgent, RemoteError> {
        let until = wait.map(|w| Instant::now() + w);
        loop {
            if self.stopping() {
                return Err(RemoteError::Stopped {
                    host: self.host_name(),
                });
            }
            let left = match until {
                Some(u) => match u.checked_duration_since(Instant::now()) {
                    Some(l) => l,
                    None => {
                        return Err(RemoteError::Lost {
                            host: self.host_name(),
                            why: format!("no answer in {}s", wait.unwrap_or_default().as_secs()),
                        })
                    }
                },
                None => STOP_POLL,
            };
            match self.next(left.min(STOP_POLL))? {
                Some(FromAgent::Failed { message, refused }) => {
                    let host = self.host_name();
                    return Err(if refused {
                        RemoteError::Refused { host, message }
                    } else {
                        RemoteError::Failed { host, message }
                    });
                }
                // What a step streams is not an answer (a step that ended early).
                Some(FromAgent::Interval(_) | FromAgent::Note { .. } | FromAgent::Show { .. }) => {}
                Some(r) => return Ok(r),
                None => {}
            }
        }
    }

    /// Makes the target ready on the host (its write guard decides).
    pub fn prepare(&self, req: PrepareRequest) -> Result<PreparedReply, RemoteError> {
        self.send(&ToAgent::Prepare(req))?;
        match self.answer(None)? {
            FromAgent::Prepared(p) => Ok(*p),
            _ => Err(self.unexpected("prepare")),
        }
    }

    /// Checks the steps against the prepared target, on the host.
    pub fn check(&self, steps: &[StepSpec]) -> Result<(), RemoteError> {
        self.send(&ToAgent::Check {
            steps: steps.to_vec(),
        })?;
        match self.answer(None)? {
            FromAgent::Checked => Ok(()),
            _ => Err(self.unexpected("check")),
        }
    }

    /// Locks the prepared target on the host for the run: the agent holds the lock until
    /// it ends.
    pub fn lock(&self, exclusive: bool) -> Result<(), RemoteError> {
        self.send(&ToAgent::Lock { exclusive })?;
        match self.answer(None)? {
            FromAgent::Locked => Ok(()),
            _ => Err(self.unexpected("lock")),
        }
    }

    fn unexpected(&self, what: &str) -> RemoteError {
        RemoteError::Failed {
            host: self.host_name(),
            message: format!("the agent answered '{what}' with something else"),
        }
    }

    /// Starts the host's telemetry: samples on our run's clock (origin `t0`).
    pub fn telemetry(&self, t0: Instant) -> Receiver<TelemetrySample> {
        let (tx, rx) = mpsc::channel();
        if let Ok(mut t) = self.tap.lock() {
            *t = Some((t0, tx));
        }
        let _ = self.send(&ToAgent::Telemetry { period_ms: None });
        rx
    }

    /// Fills a never-written test file on the host before reads; `show` hears its
    /// progress. A stop (`ctl.stop`) is passed on.
    pub fn fill(
        &self,
        direct: bool,
        ctl: &StepControl,
        show: &mut dyn FnMut(&str),
    ) -> Result<(Option<StepSummary>, Vec<String>), RemoteError> {
        self.send(&ToAgent::Fill { direct })?;
        let mut stop_sent = false;
        loop {
            if !stop_sent && ctl.stop.load(Ordering::Relaxed) {
                stop_sent = true;
                self.send(&ToAgent::Stop)?;
            }
            match self.next(Duration::from_millis(100))? {
                Some(FromAgent::Show { text }) => show(&text),
                Some(FromAgent::Filled { summary, notes }) => {
                    return Ok((summary.map(|s| *s), notes))
                }
                Some(FromAgent::Failed { message, .. }) => {
                    return Err(RemoteError::Failed {
                        host: self.host_name(),
                        message,
                    })
                }
                _ => {}
            }
        }
    }

    /// Records the agent dropped on a slow link, so far.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The host, as the user named it.
    pub fn host(&self) -> &Host {
        &self.host
    }
}

impl Drop for Link {
    /// Says goodbye, lets the agent end its work and ssh exit; ends ssh's group if it
    /// lingers (at once when the run was stopped or the agent's output was refused).
    fn drop(&mut self) {
        let _ = self.send(&ToAgent::Bye);
        if let Ok(mut g) = self.stdin.lock() {
            *g = None;
        }
        let patience = if self.stopping() || self.too_long.load(Ordering::Relaxed) {
            Duration::ZERO
        } else {
            BYE_WAIT
        };
        if let (Ok(mut c), Ok(mut group)) = (self.child.lock(), self.group.lock()) {
            let _ = crate::children::end_group(&mut c, &mut group, patience);
        }
    }
}

/// A step run by the agent on the target's host, behind the engine seam.
pub struct RemoteEngine {
    pub link: Arc<Link>,
    pub kind: EngineKind,
}

impl Engine for RemoteEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    fn run_step(
        &mut self,
        _target: &StepTarget,
        spec: &StepSpec,
        ctl: &StepControl,
        obs: &mut dyn StepObserver,
    ) -> Result<StepSummary, EngineError> {
        let link = &self.link;
        link.send(&ToAgent::Step {
            spec: Box::new(spec.clone()),
        })?;
        let mut stop_sent = false;
        let mut paused = false;
        let dropped_before = link.dropped();
        loop {
            if !stop_sent && ctl.stop.load(Ordering::Relaxed) {
                stop_sent = true;
                link.send(&ToAgent::Stop)?;
            }
            let pause = ctl.pause.load(Ordering::Relaxed);
            if pause != paused {
                paused = pause;
                link.send(if pause {
                    &ToAgent::Pause
                } else {
                    &ToAgent::Resume
                })?;
            }
            match link.next(Duration::from_millis(50))? {
                Some(FromAgent::Interval(w)) => {
                    let index = w.report.index;
                    let end = match obs.interval(&w.into_report()) {
                        Control::Continue => None,
                        Control::Stop(why) => Some(why),
                    };
                    link.send(&ToAgent::Answer { index, end })?;
                }
                Some(FromAgent::Note { text }) => obs.note(&text),
                Some(FromAgent::StepDone { summary }) => {
                    let n = link.dropped() - dropped_before;
                    if n > 0 {
                        obs.note(&format!(
                            "host {}: {n} intervals or samples were dropped on a slow link rather than hold up its engine (the step's summary is whole)",
                            link.host()
                        ));
                    }
                    return Ok(*summary);
                }
                Some(FromAgent::Failed { message, .. }) => {
                    return Err(EngineError::Remote {
                        host: link.host_name(),
                        message,
                    })
                }
                _ => {}
            }
        }
    }
}
