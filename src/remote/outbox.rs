//! The agent's way out: a bounded queue of records ([`Outbox`]: replies wait for room,
//! streamed records are dropped and counted), its writer of JSON lines, and the step's
//! observer ([`Relay`]) that sends each interval and briefly waits for the controller's
//! answer.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::proto::{FromAgent, ToAgent, WireInterval};
use crate::engine::{Control, StepObserver};
use crate::outcome::EndedBy;
use crate::stats::IntervalReport;
use crate::telemetry::TelemetrySample;

/// Something that watches the agent serve (the `--metrics` exporter on its host): each
/// request as it arrives and each record as it leaves, before a slow link can drop it.
/// Called on the agent's threads (an engine's among them): it must only copy what it keeps.
pub trait AgentWatch: Send + Sync {
    fn request(&self, _r: &ToAgent) {}
    fn record(&self, r: &FromAgent);
}

/// How long a step's interval waits for the controller's answer before it goes on.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

/// The agent's outgoing records: replies wait for room; streamed records are dropped
/// (and counted) when the link is behind.
#[derive(Clone)]
pub(super) struct Outbox {
    tx: SyncSender<FromAgent>,
    dropped: Arc<AtomicU64>,
    /// Sees every record as it leaves, before the link can drop it (`agent --metrics`).
    watch: Option<Arc<dyn AgentWatch>>,
}

impl Outbox {
    pub(super) fn new(tx: SyncSender<FromAgent>, watch: Option<Arc<dyn AgentWatch>>) -> Outbox {
        Outbox {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
            watch,
        }
    }

    /// An outbox holding at most `queue` records, written to `output` as JSON lines on a
    /// thread of its own; with the flag that thread sets once a write failed, and the
    /// thread (it ends once every clone of the outbox is dropped).
    pub(super) fn open(
        output: impl Write + Send + 'static,
        queue: usize,
        watch: Option<Arc<dyn AgentWatch>>,
    ) -> (Outbox, Arc<AtomicBool>, std::io::Result<JoinHandle<()>>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(queue.max(1));
        let broken = Arc::new(AtomicBool::new(false));
        let w = {
            let broken = broken.clone();
            std::thread::Builder::new()
                .name("ds-agent-out".into())
                .spawn(move || writer(rx, output, broken))
        };
        (Outbox::new(tx, watch), broken, w)
    }

    /// Forwards the telemetry samples of `rx` as they come (dropped, as any streamed
    /// record, when the link is behind), on a thread of its own.
    pub(super) fn forward_telemetry(
        &self,
        rx: Receiver<TelemetrySample>,
    ) -> std::io::Result<JoinHandle<()>> {
        let out = self.clone();
        std::thread::Builder::new()
            .name("ds-agent-telemetry".into())
            .spawn(move || {
                for sample in rx {
                    let sample = Box::new(sample);
                    out.may(FromAgent::Telemetry { sample });
                }
            })
    }

    fn seen(&self, r: &FromAgent) {
        if let Some(w) = &self.watch {
            w.record(r);
        }
    }

    /// A reply: waits for room (false when the writer is gone); the records dropped
    /// before it are counted first, so the controller knows them by the reply.
    pub(super) fn must(&self, r: FromAgent) -> bool {
        self.seen(&r);
        let n = self.dropped.swap(0, Ordering::Relaxed);
        if n > 0 && self.tx.send(FromAgent::Dropped { records: n }).is_err() {
            return false;
        }
        self.tx.send(r).is_ok()
    }

    /// A streamed record: sent if there is room, else dropped and counted.
    pub(super) fn may(&self, r: FromAgent) -> bool {
        self.seen(&r);
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

    pub(super) fn failed(&self, message: impl ToString, refused: bool) {
        self.must(failure(message, refused));
    }
}

/// A request's failure, in the agent's words.
pub(super) fn failure(message: impl ToString, refused: bool) -> FromAgent {
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
pub(super) struct Relay<'a> {
    out: &'a Outbox,
    answers: &'a Receiver<(u64, Option<EndedBy>)>,
    broken: &'a AtomicBool,
    /// An answer was late: answers are no longer waited for.
    late: bool,
}

impl<'a> Relay<'a> {
    pub(super) fn new(
        out: &'a Outbox,
        answers: &'a Receiver<(u64, Option<EndedBy>)>,
        broken: &'a AtomicBool,
    ) -> Relay<'a> {
        Relay {
            out,
            answers,
            broken,
            late: false,
        }
    }

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
