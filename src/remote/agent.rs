//! `drivescope agent`: the far end of a remote target. It reads [`ToAgent`] requests, one
//! JSON object per line, on stdin and answers with [`FromAgent`] records on stdout, each
//! request served on this machine's [`LocalHost`]: the handshake, the target prepared (the
//! write guard runs here, on the host that owns the device), the steps checked, telemetry
//! streamed, the fill and each step run on this host's engine. Records go out through a
//! bounded queue ([`Outbox`]): a slow link drops (and counts) intervals and samples rather
//! than stall the engine. When the controller goes away (its stdin closes), the step in
//! hand is stopped and the agent exits; a test file it made for a run that never started
//! (refused after the prepare: `started` never came) is removed as it exits, as a refusal
//! on this machine removes its own ([`MadeFile`]).

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::inbox::requests;
use super::job::Job;
pub use super::outbox::AgentWatch;
use super::outbox::{failure, Outbox, Relay};
use super::proto::{FromAgent, ToAgent, VERSION};
use crate::engine::{StepControl, StepTarget};
use crate::engine_list::TargetLock;
use crate::host::{LocalHost, PrepareRequest, TargetHost};
use crate::outcome::EndedBy;
use crate::telemetry::Poller;
use crate::test_target::{MadeFile, PreparedTarget};
use crate::workload::StepSpec;

/// Records waiting to be written: about a minute of intervals and samples.
const OUT_CAP: usize = 256;

/// The agent's state between requests.
struct Agent {
    host: LocalHost,
    origin: Instant,
    out: Outbox,
    broken: Arc<AtomicBool>,
    ctl: StepControl,
    target: Option<PreparedTarget>,
    drive: Option<crate::drive::DriveInfo>,
    poller: Option<(Poller, JoinHandle<()>)>,
    job: Job,
    answers: Option<Sender<(u64, Option<EndedBy>)>>,
    /// fio's version as this host's check found it, for its steps on fio.
    fio_version: Option<String>,
    /// The test files this agent made: removed when it ends unless the run started.
    made: Vec<Arc<MadeFile>>,
    /// The run's lock on the target, held until the agent ends.
    lock: Option<TargetLock>,
}

impl Agent {
    fn prepare(&mut self, p: PrepareRequest) {
        if self.job.busy() {
            return self.out.failed("a fill or step is still running", true);
        }
        match self.host.prepare(p) {
            Ok(r) => {
                if r.target.created {
                    self.made.extend(MadeFile::of(&r.target.path));
                }
                self.drive = r.drive.clone();
                self.target = Some(r.target.clone());
                self.out.must(FromAgent::Prepared(Box::new(r)));
            }
            Err(e) => self.out.failed(e, true),
        }
    }

    fn step_target(&self) -> Option<StepTarget> {
        self.target.as_ref().map(|t| t.step_target(None))
    }

    fn check(&mut self, steps: &[StepSpec]) {
        let Some(t) = self.step_target() else {
            return self.out.failed("no target is prepared", true);
        };
        match self.host.check(&t, steps) {
            Ok(fio) => {
                self.fio_version = fio;
                self.out.must(FromAgent::Checked);
            }
            Err(e) => self.out.failed(e, true),
        }
    }

    fn lock(&mut self, exclusive: bool) {
        if self.job.busy() {
            return self.out.failed("a fill or step is still running", true);
        }
        let Some(t) = &self.target else {
            return self.out.failed("no target is prepared", true);
        };
        // A lock taken again (a second request) replaces the first.
        self.lock = None;
        match self.host.lock(t, exclusive) {
            Ok(l) => {
                self.lock = l;
                self.out.must(FromAgent::Locked);
            }
            Err(e) => self.out.failed(e, true),
        }
    }

    fn telemetry(&mut self, period_ms: Option<u64>) {
        let (Some(drive), None) = (&self.drive, &self.poller) else {
            return;
        };
        let period = period_ms.map(Duration::from_millis);
        let (poller, rx) = self.host.poller(drive, period, self.origin);
        match self.out.forward_telemetry(rx) {
            Ok(h) => self.poller = Some((poller, h)),
            Err(e) => self
                .out
                .failed(format!("cannot start telemetry: {e}"), false),
        }
    }

    /// Runs `work` on this host's prepared target ([`Job`]).
    fn spawn(
        &mut self,
        work: impl FnOnce(&Outbox, &StepControl, StepTarget, PreparedTarget) -> FromAgent
            + Send
            + 'static,
    ) {
        let (Some(st), Some(t)) = (self.step_target(), self.target.clone()) else {
            return self.out.failed("no target is prepared", true);
        };
        let work = move |out: &Outbox, ctl: &StepControl| work(out, ctl, st, t);
        self.job.start(&self.out, &self.ctl, work);
    }

    fn fill(&mut self, direct: bool) {
        let host = self.host;
        self.spawn(move |out, ctl, _, t| {
            let show = &mut |n: &str| _ = out.may(FromAgent::Show { text: n.into() });
            match host.fill(&t, direct, ctl, show) {
                Ok((summary, notes)) => FromAgent::Filled {
                    summary: summary.map(Box::new),
                    notes,
                },
                Err(e) => failure(e, false),
            }
        });
    }

    fn step(&mut self, mut spec: StepSpec) {
        if spec.fio_version.is_none() {
            spec.fio_version = self.fio_version.clone();
        }
        let (tx, rx) = mpsc::channel();
        if self.target.is_some() {
            self.answers = Some(tx);
        }
        let (host, broken) = (self.host, self.broken.clone());
        self.spawn(move |out, ctl, st, _| {
            let mut relay = Relay::new(out, &rx, &broken);
            match host
                .engine(spec.engine)
                .run_step(&st, &spec, ctl, &mut relay)
            {
                Ok(summary) => FromAgent::StepDone {
                    summary: Box::new(summary),
                },
                Err(e) => failure(e, false),
            }
        });
    }

    /// The run started: the files made for it stay.
    fn started(&self) {
        for m in &self.made {
            m.keep();
        }
    }

    /// Ends what runs: the step is stopped, the poller ended (a file made for a run that
    /// never started is removed as the agent drops).
    fn finish(mut self) {
        self.ctl.stop.store(true, Ordering::Relaxed);
        self.ctl.pause.store(false, Ordering::Relaxed);
        self.job.join();
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

/// [`serve`], with `watch` shown every request and record.
pub fn serve_watched(
    input: impl BufRead,
    output: impl Write + Send + 'static,
    watch: Option<Arc<dyn AgentWatch>>,
) {
    serve_inner(input, output, OUT_CAP, watch);
}

/// [`serve`], holding at most `queue` records for a slow link before it drops them.
pub fn serve_with(input: impl BufRead, output: impl Write + Send + 'static, queue: usize) {
    serve_inner(input, output, queue, None);
}

fn serve_inner(
    input: impl BufRead,
    output: impl Write + Send + 'static,
    queue: usize,
    watch: Option<Arc<dyn AgentWatch>>,
) {
    let (out, broken, w) = Outbox::open(output, queue, watch.clone());
    let mut agent = Agent {
        host: LocalHost,
        origin: Instant::now(),
        out,
        broken,
        ctl: StepControl::default(),
        target: None,
        drive: None,
        poller: None,
        job: Job::default(),
        answers: None,
        fio_version: None,
        made: Vec::new(),
        lock: None,
    };
    let inbox = agent.out.clone();
    for req in requests(input, &inbox) {
        if let Some(w) = &watch {
            w.request(&req);
        }
        match req {
            ToAgent::Hello { .. } => _ = agent.out.must(FromAgent::hello(VERSION, agent.origin)),
            ToAgent::Prepare(p) => agent.prepare(p),
            ToAgent::Check { steps } => agent.check(&steps),
            ToAgent::Lock { exclusive } => agent.lock(exclusive),
            ToAgent::Telemetry { period_ms } => agent.telemetry(period_ms),
            ToAgent::Started => agent.started(),
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
    drop(inbox);
    let out = agent.out.clone();
    agent.finish();
    drop(out);
    if let Ok(w) = w {
        let _ = w.join();
    }
}
