//! `drivescope agent`: the far end of a remote target. It reads [`ToAgent`] requests, one
//! JSON object per line, on stdin and answers with [`FromAgent`] records on stdout: the
//! handshake, the target prepared (the write guard runs here, on the host that owns the
//! device), the steps checked, telemetry streamed, the fill and each step run on this
//! host's engine. Records go out through a bounded queue: a slow link drops (and counts)
//! intervals and samples rather than stall the engine. When the controller goes away (its
//! stdin closes), the step in hand is stopped and the agent exits.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::proto::{FromAgent, PrepareRequest, PreparedReply, ToAgent, WireInterval, PROTOCOL};
use crate::dut::{self, PreparedTarget, TargetRequest};
use crate::engine::{Control, StepControl, StepObserver, StepTarget};
use crate::outcome::EndedBy;
use crate::stats::IntervalReport;
use crate::telemetry::{Poller, DEFAULT_PERIOD, MIN_PERIOD};
use crate::workload::StepSpec;

/// Records waiting to be written: about a minute of intervals and samples.
const OUT_CAP: usize = 256;

/// How long a step's interval waits for the controller's answer before it goes on.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// drivescope's own version, as the handshake states it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The agent's outgoing records: replies wait for room; streamed records are dropped
/// (and counted) when the link is behind.
#[derive(Clone)]
struct Outbox {
    tx: SyncSender<FromAgent>,
    dropped: Arc<AtomicU64>,
}

impl Outbox {
    /// A reply: waits for room (false when the writer is gone); the records dropped
    /// before it are counted first, so the controller knows them by the reply.
    fn must(&self, r: FromAgent) -> bool {
        let n = self.dropped.swap(0, Ordering::Relaxed);
        if n > 0 && self.tx.send(FromAgent::Dropped { records: n }).is_err() {
            return false;
        }
        self.tx.send(r).is_ok()
    }

    /// A streamed record: sent if there is room, else dropped and counted.
    fn may(&self, r: FromAgent) -> bool {
        let n = self.dropped.swap(0, Ordering::Relaxed);
        if n > 0 {
            if let Err(TrySendError::Full(_)) = self.tx.try_send(FromAgent::Dropped { records: n })
            {
                self.dropped.fetch_add(n + 1, Ordering::Relaxed);
                return false;
            }
        }
        match self.tx.try_send(r) {
            Ok(()) => true,
            Err(_) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    fn failed(&self, message: impl ToString, refused: bool) {
        self.must(failure(message, refused));
    }
}

/// A request's failure, in the agent's words.
fn failure(message: impl ToString, refused: bool) -> FromAgent {
    FromAgent::Failed {
        message: message.to_string(),
        refused,
    }
}

/// Writes records as JSON lines until the queue closes or the link breaks.
fn writer(rx: Receiver<FromAgent>, mut out: impl Write, broken: Arc<AtomicBool>) {
    for r in rx {
        let ok = serde_json::to_writer(&mut out, &r).is_ok()
            && out.write_all(b"\n").is_ok()
            && out.flush().is_ok();
        if !ok {
            broken.store(true, Ordering::Relaxed);
            break;
        }
    }
}

/// The step's observer on the agent: each interval goes to the controller, whose answer
/// (go on, or end and why) it waits for briefly. Once an answer is late (a slow or stalled
/// link), it waits no more in this step: a later answer that ends the step ends it at the
/// next interval, so the engine's reporting never falls behind waiting on the link.
struct Relay<'a> {
    out: &'a Outbox,
    answers: &'a Receiver<(u64, Option<EndedBy>)>,
    broken: &'a AtomicBool,
    /// An answer was late: answers are no longer waited for.
    late: bool,
}

impl Relay<'_> {
    /// An end the controller asked for that came after its interval.
    fn late_end(&mut self) -> Option<EndedBy> {
        self.answers.try_iter().find_map(|(_, end)| end)
    }
}

impl StepObserver for Relay<'_> {
    fn interval(&mut self, r: &IntervalReport) -> Control {
        if let Some(end) = self.late_end() {
            return Control::Stop(end);
        }
        if !self
            .out
            .may(FromAgent::Interval(Box::new(WireInterval::of(r))))
            || self.late
        {
            return Control::Continue;
        }
        let until = Instant::now() + ANSWER_WAIT;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self.answers.recv_timeout(left) {
                Ok((i, end)) if i == r.index => {
                    return end.map_or(Control::Continue, Control::Stop);
                }
                // An answer to an earlier interval that ends the step.
                Ok((_, Some(end))) => return Control::Stop(end),
                Ok(_) => {}
                Err(_) => break,
            }
            if self.broken.load(Ordering::Relaxed) {
                break;
            }
        }
        self.late = true;
        Control::Continue
    }

    fn note(&mut self, note: &str) {
        self.out.may(FromAgent::Note {
            text: note.to_string(),
        });
    }
}

/// The agent's state between requests.
struct Agent {
    origin: Instant,
    out: Outbox,
    broken: Arc<AtomicBool>,
    ctl: StepControl,
    target: Option<PreparedTarget>,
    drive: Option<crate::drive::DriveInfo>,
    poller: Option<(Poller, JoinHandle<()>)>,
    /// The fill or step running, and whether it has its answer (then it is ending: the
    /// controller may already have sent the next request).
    job: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
    answers: Option<Sender<(u64, Option<EndedBy>)>>,
    /// fio's version as this host's check found it, for its steps on fio.
    fio_version: Option<String>,
}

impl Agent {
    fn busy(&mut self) -> bool {
        match &self.job {
            Some((j, answered)) if !j.is_finished() && !answered.load(Ordering::Acquire) => true,
            _ => {
                if let Some((j, _)) = self.job.take() {
                    let _ = j.join();
                }
                false
            }
        }
    }

    fn hello(&self) {
        let wall_ns = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        self.out.must(FromAgent::Hello {
            protocol: PROTOCOL,
            version: VERSION.into(),
            mono_ns: self.origin.elapsed().as_nanos() as u64,
            wall_ns,
        });
    }

    fn prepare(&mut self, p: PrepareRequest) {
        let engine = crate::engines::engine_for_target(p.engine, p.path.as_deref());
        let path = p.path.clone().unwrap_or_else(dut::default_target_path);
        let req = TargetRequest {
            size: p.size,
            writes: p.writes,
            random_writes: p.random_writes,
            destroy_data: p.destroy_data,
            create_default: p.path.is_none() || p.create_missing,
        };
        match dut::prepare(&path, &req) {
            Ok(t) => {
                let (drive, notes) = match crate::drive::resolve(&t.path) {
                    Ok(d) => (Some(d), Vec::new()),
                    Err(e) => (None, vec![format!("no drive telemetry: {e}")]),
                };
                self.drive = drive.clone();
                self.target = Some(t.clone());
                self.out.must(FromAgent::Prepared(Box::new(PreparedReply {
                    file: dut::file_id(&t.path),
                    target: t,
                    engine,
                    drive,
                    notes,
                })));
            }
            Err(e) => self.out.failed(e, true),
        }
    }

    fn step_target(&self) -> Option<StepTarget> {
        self.target.as_ref().map(|t| StepTarget {
            path: t.path.clone(),
            size: t.size,
            align: t.align,
            verify: None,
        })
    }

    fn check(&mut self, steps: &[StepSpec]) {
        let Some(t) = self.step_target() else {
            return self.out.failed("no target is prepared", true);
        };
        match crate::engines::check_steps(&t, steps) {
            Ok(fio) => {
                self.fio_version = fio;
                self.out.must(FromAgent::Checked);
            }
            Err(e) => self.out.failed(e, true),
        }
    }

    fn telemetry(&mut self, period_ms: Option<u64>) {
        let Some(drive) = &self.drive else {
            return;
        };
        if self.poller.is_some() {
            return;
        }
        let period = period_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_PERIOD)
            .max(MIN_PERIOD);
        let (poller, rx) = Poller::spawn(drive, period, self.origin);
        let out = self.out.clone();
        let fwd = std::thread::Builder::new()
            .name("ds-agent-telemetry".into())
            .spawn(move || {
                for sample in rx {
                    out.may(FromAgent::Telemetry {
                        sample: Box::new(sample),
                    });
                }
            });
        match fwd {
            Ok(h) => self.poller = Some((poller, h)),
            Err(e) => self
                .out
                .failed(format!("cannot start telemetry: {e}"), false),
        }
    }

    /// Runs `work` on a thread of its own (the request loop stays free for stop and
    /// pause); its result is the request's answer.
    fn spawn(&mut self, work: impl FnOnce(&Outbox, &StepControl) -> FromAgent + Send + 'static) {
        if self.busy() {
            return self.out.failed("a fill or step is still running", true);
        }
        self.ctl.stop.store(false, Ordering::Relaxed);
        self.ctl.pause.store(false, Ordering::Relaxed);
        let (out, ctl) = (self.out.clone(), self.ctl.clone());
        let answered = Arc::new(AtomicBool::new(false));
        let done = answered.clone();
        match std::thread::Builder::new()
            .name("ds-agent-job".into())
            .spawn(move || {
                let reply = work(&out, &ctl);
                done.store(true, Ordering::Release);
                out.must(reply);
            }) {
            Ok(h) => self.job = Some((h, answered)),
            Err(e) => self
                .out
                .failed(format!("cannot start a thread: {e}"), false),
        }
    }

    fn fill(&mut self, direct: bool) {
        let Some(t) = self.target.clone() else {
            return self.out.failed("no target is prepared", true);
        };
        self.spawn(move |out, ctl| {
            let mut notes = Vec::new();
            let r = dut::fill::fill_if_unwritten(&t, direct, ctl, &mut |n: &str| {
                out.may(FromAgent::Show { text: n.into() });
                notes.push(n.to_string());
            });
            match r {
                Ok(summary) => FromAgent::Filled {
                    summary: summary.map(Box::new),
                    notes,
                },
                Err(e) => failure(e, false),
            }
        });
    }

    fn step(&mut self, mut spec: StepSpec) {
        let Some(t) = self.step_target() else {
            return self.out.failed("no target is prepared", true);
        };
        if spec.fio_version.is_none() {
            spec.fio_version = self.fio_version.clone();
        }
        let (tx, rx) = mpsc::channel();
        self.answers = Some(tx);
        let broken = self.broken.clone();
        self.spawn(move |out, ctl| {
            let mut relay = Relay {
                out,
                answers: &rx,
                broken: &broken,
                late: false,
            };
            match crate::engines::engine_for(spec.engine).run_step(&t, &spec, ctl, &mut relay) {
                Ok(summary) => FromAgent::StepDone {
                    summary: Box::new(summary),
                },
                Err(e) => failure(e, false),
            }
        });
    }

    /// Ends what runs: the step is stopped, the poller ended.
    fn finish(mut self) {
        self.ctl.stop.store(true, Ordering::Relaxed);
        self.ctl.pause.store(false, Ordering::Relaxed);
        if let Some((j, _)) = self.job.take() {
            let _ = j.join();
        }
        if let Some((p, h)) = self.poller.take() {
            p.stop();
            let _ = h.join();
        }
    }
}

/// Serves one controller: requests from `input`, records to `output`, until `bye` or the
/// end of `input`.
pub fn serve(input: impl BufRead, output: impl Write + Send + 'static) {
    serve_with(input, output, OUT_CAP);
}

/// [`serve`], holding at most `queue` records for a slow link before it drops them.
pub fn serve_with(input: impl BufRead, output: impl Write + Send + 'static, queue: usize) {
    let (tx, rx) = mpsc::sync_channel(queue.max(1));
    let broken = Arc::new(AtomicBool::new(false));
    let w = {
        let broken = broken.clone();
        std::thread::Builder::new()
            .name("ds-agent-out".into())
            .spawn(move || writer(rx, output, broken))
    };
    let mut agent = Agent {
        origin: Instant::now(),
        out: Outbox {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        },
        broken,
        ctl: StepControl::default(),
        target: None,
        drive: None,
        poller: None,
        job: None,
        answers: None,
        fio_version: None,
    };
    for line in crate::lines::bounded_lines(input, super::proto::LINE_MAX) {
        let line = match line {
            Ok(l) => l,
            Err(e @ crate::lines::LineError::TooLong { .. }) => {
                agent
                    .out
                    .failed(format!("a request: {e}; the agent ends"), false);
                break;
            }
            Err(crate::lines::LineError::Io(_)) => break,
        };
        if line.trim().is_empty() {
            continue;
        }
        let req: ToAgent = match serde_json::from_str(&line) {
            Ok(r) => r,
            Err(e) => {
                agent.out.failed(format!("not a request: {e}"), true);
                continue;
            }
        };
        match req {
            ToAgent::Hello { .. } => agent.hello(),
            ToAgent::Prepare(p) => {
                if agent.busy() {
                    agent.out.failed("a fill or step is still running", true);
                } else {
                    agent.prepare(p);
                }
            }
            ToAgent::Check { steps } => agent.check(&steps),
            ToAgent::Telemetry { period_ms } => agent.telemetry(period_ms),
            ToAgent::Fill { direct } => agent.fill(direct),
            ToAgent::Step { spec } => agent.step(*spec),
            ToAgent::Answer { index, end } => {
                if let Some(a) = &agent.answers {
                    let _ = a.send((index, end));
                }
            }
            ToAgent::Pause => agent.ctl.pause.store(true, Ordering::Relaxed),
            ToAgent::Resume => agent.ctl.pause.store(false, Ordering::Relaxed),
            ToAgent::Stop => agent.ctl.stop.store(true, Ordering::Relaxed),
            ToAgent::Bye => break,
        }
    }
    let out = agent.out.clone();
    agent.finish();
    drop(out);
    if let Ok(w) = w {
        let _ = w.join();
    }
}
