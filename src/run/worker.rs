//! One drive's part of a run, on its own thread: it fills the test file, runs the plan
//! through the runner, reads the drive's telemetry (and judges its health and thermal
//! rules on it), and sends the pipeline each run event as it was made ([`WorkerMessage::Event`],
//! the owned [`RunEvent`]) with the few messages that are not events ([`WorkerMessage`]); the
//! pipeline records the events in the one session and shows them.

use std::sync::mpsc::Sender;
use std::sync::Arc;

use super::control::RunControl;
use super::error::RunError;
use super::event::{RunEvent, SessionEvent, Timed};
use super::request::{Prepared, RunWhat};
use super::runner::{run_plan_on, RunObserver};
use super::tally::Tally;
use super::telemetry::Feed;
use super::wear::WearWatch;
use crate::outcome::{RunOutcome, StopBy};
use crate::session::EventKind;
use crate::telemetry::reading::SmartReading;
use crate::telemetry::{ErrorWatch, HealthWatch, NewDriveErrors, TelemetrySample};

/// What a drive's worker tells the pipeline: its run's events, and what is not one.
#[derive(Debug)]
pub(super) enum WorkerMessage {
    /// A run event of the drive: recorded in the session and shown.
    Event(RunEvent),
    /// Shown only (the fill's progress: the session records the fill as one event).
    Show(String),
    /// Recorded only: an event with its data.
    Record {
        kind: EventKind,
        message: String,
        data: serde_yaml::Value,
    },
    /// The user asked for a snapshot (the pipeline writes it).
    Snapshot,
    Done(Result<(RunOutcome, Tally), RunError>),
}

/// A drive's worker: the runner's observer.
pub(super) struct Worker {
    drive: usize,
    tx: Sender<(usize, WorkerMessage)>,
    feed: Feed,
    /// The drive's health so far: a change is an event.
    health: HealthWatch,
    /// Readings not yet handed to the runner's thermal rules.
    readings: Vec<(f64, SmartReading)>,
    /// When the last reading handed on was taken (a sample repeats the poller's latest
    /// reading until a new one comes: the thermal rules judge each reading once).
    last_read_at: Option<f64>,
    /// The drive's counters at the run's and the step's start.
    wear: WearWatch,
    /// New media errors and error log entries: each is an event as it appears.
    errors: ErrorWatch,
}

impl Worker {
    pub(super) fn new(drive: usize, tx: Sender<(usize, WorkerMessage)>, feed: Feed) -> Self {
        let wear = WearWatch::new(feed.local_disk().cloned());
        Worker {
            drive,
            tx,
            feed,
            wear,
            errors: ErrorWatch::default(),
            health: HealthWatch::default(),
            readings: Vec::new(),
            last_read_at: None,
        }
    }

    fn say(&self, s: WorkerMessage) {
        let _ = self.tx.send((self.drive, s));
    }

    /// An event recorded only, with no data.
    fn record(&self, kind: EventKind, message: String) {
        let data = serde_yaml::Value::Null;
        self.say(WorkerMessage::Record {
            kind,
            message,
            data,
        });
    }

    /// A run event of the drive.
    fn tell(&self, ev: RunEvent) {
        self.say(WorkerMessage::Event(ev));
    }

    /// A telemetry sample, and the drive's health change it brings.
    pub(super) fn telemetry(&mut self, sample: TelemetrySample) {
        let change = sample
            .smart
            .as_ref()
            .and_then(|r| self.health.observe(&r.health));
        let mut new_errors: Option<NewDriveErrors> = None;
        if let Some(r) = &sample.smart {
            self.wear.saw(r);
            let read_at = sample.t_ns as f64 / 1e9 - sample.smart_age_ms.unwrap_or(0) as f64 / 1e3;
            // A new reading, or the same one again (within the clock's rounding).
            if self.last_read_at.is_none_or(|last| read_at > last + 0.05) {
                self.last_read_at = Some(read_at);
                self.readings.push((read_at, r.clone()));
                new_errors = self.errors.observe(r);
            }
        }
        let t_s = sample.t_ns as f64 / 1e9;
        self.tell(RunEvent::Telemetry(Arc::new(sample)));
        if let Some(c) = change {
            self.tell(RunEvent::Happened(Timed {
                t_s,
                what: SessionEvent::Health(c),
            }));
        }
        if let Some(n) = new_errors {
            self.tell(RunEvent::Happened(Timed {
                t_s,
                what: SessionEvent::DriveErrors(n),
            }));
        }
    }

    /// Says, once, that the drive's counters stopped answering at the edges.
    fn wear_note(&mut self) {
        if let Some(n) = self.wear.take_note() {
            self.tell(RunEvent::Note(n));
        }
    }

    /// The telemetry that arrived.
    pub(super) fn drain(&mut self) {
        for sample in self.feed.drain() {
            self.telemetry(sample);
        }
    }

    /// Fills a never-written test file before reads (on the target's host), saying so.
    fn fill(&mut self, run: &Prepared, ctl: &RunControl) -> Result<(), RunError> {
        let t = &run.target;
        let tx = self.tx.clone();
        let drive = self.drive;
        let mut show = |n: &str| {
            let _ = tx.send((drive, WorkerMessage::Show(n.to_string())));
        };
        // A job file's other targets are this host's: each new one is filled as well, so
        // that no job reads unwritten extents (no device I/O, and numbers no drive gives).
        let also: &[crate::test_target::PreparedTarget] = match &run.kind {
            RunWhat::FioJob(f) => &f.also,
            _ => &[],
        };
        let mut done = Vec::new();
        for t in std::iter::once(t).chain(also) {
            let filled = run
                .host
                .fill(t, !run.page_cache(), ctl.flags(), &mut show)?;
            done.push((t, filled));
        }
        for (t, (filled, notes)) in done {
            match filled {
                Some(s) => self.say(WorkerMessage::Record {
                    kind: EventKind::Fill,
                    message: if crate::test_target::fill::interrupted(&s) {
                        format!("fill of {} interrupted", t.path.display())
                    } else {
                        format!("filled {}", t.path.display())
                    },
                    data: serde_yaml::to_value(s).unwrap_or_default(),
                }),
                None => notes
                    .into_iter()
                    .for_each(|n| self.record(EventKind::Note, n)),
            }
        }
        Ok(())
    }

    /// The drive's run: the fill, the plan, and how it ended.
    pub(super) fn go(
        &mut self,
        run: &Prepared,
        ctl: &RunControl,
        session: &std::path::Path,
    ) -> Result<(RunOutcome, Tally), RunError> {
        // A job file's logs go to a folder of drivescope's, made now (the session exists).
        let asked = match &run.kind {
            RunWhat::FioJob(f) => f.logs.as_deref(),
            _ => None,
        };
        let (plan, log_dir) = super::fio_logs::ready(&run.plan, asked, session)?;
        if let Some(dir) = log_dir {
            let dir = crate::ostext::escaped(dir.as_os_str());
            self.tell(RunEvent::Note(format!("fio's logs go to {dir}")));
        }
        let (reads, _) = run.io();
        // A fill would overwrite what a verify state recorded: only a state made by this
        // run (nothing written under it yet) lets it fill.
        let keeps_state = run.verify.as_ref().is_some_and(|v| !v.made());
        if reads && keeps_state && run.target.unwritten {
            let note = format!(
                "{} is not filled: a fill would overwrite what its verify state recorded; \
                 reads of its unwritten blocks return zeros without reaching the drive",
                run.target.path.display()
            );
            self.record(EventKind::Note, note);
        } else if reads {
            self.fill(run, ctl)?;
        }
        if ctl.stop_requested() {
            let why = stopped_by(ctl.stopped_by());
            self.record(EventKind::Stopped, format!("{why} before the run started"));
            return Ok((RunOutcome::Stopped(ctl.stopped_by()), Tally::default()));
        }
        // The hub, which keeps the session's clock, says when.
        self.tell(RunEvent::Started {
            run: Arc::new(run.clone()),
            session: session.to_path_buf(),
            at_s: 0.0,
        });
        self.wear.run_started();
        let target = run.step_target();
        // Each step runs on the target's host.
        let host = run.host.clone();
        let ran = run_plan_on(&plan, &target, ctl, self, &mut |kind| host.engine(kind));
        if let Some(w) = self.wear.run_finished() {
            self.tell(RunEvent::Wear(Box::new(w)));
        }
        self.wear_note();
        let (outcome, tally) = ran?;
        let outcome = match (outcome, &run.kind) {
            // A plain run's failure is its one step's.
            (RunOutcome::Failed { ended_by, .. }, RunWhat::Single(_)) => RunOutcome::Failed {
                step: None,
                ended_by,
            },
            (o, _) => o,
        };
        if let RunOutcome::Stopped(by) = outcome {
            self.record(EventKind::Stopped, stopped_by(by).into());
        }
        Ok((outcome, tally))
    }

    /// Runs the drive to its end and says how it ended.
    pub(super) fn run(
        mut self,
        run: &Prepared,
        ctl: &RunControl,
        session: &std::path::Path,
        early: Vec<TelemetrySample>,
    ) {
        for s in early {
            self.telemetry(s);
        }
        let result = self.go(run, ctl, session);
        self.drain();
        self.say(WorkerMessage::Done(result));
    }
}

/// What a stop by `by` is recorded as.
fn stopped_by(by: StopBy) -> &'static str {
    match by {
        StopBy::Signal => "stopped by a signal",
        StopBy::User => "stopped by the user",
    }
}

impl RunObserver for Worker {
    /// The runner's event, handed on as it is, with what the worker keeps of it (the
    /// drive's wear at a step's edges, the bytes moved).
    fn event(&mut self, ev: RunEvent) {
        match &ev {
            RunEvent::StepStarted { index, .. } => {
                self.wear.step_started(*index);
                self.wear_note();
                self.tell(ev);
            }
            RunEvent::Interval { report, .. } => {
                self.wear.moved(report.write.bytes, report.read.bytes);
                self.tell(ev);
                self.drain();
            }
            RunEvent::StepFinished(_) => {
                self.tell(ev);
                if let Some(w) = self.wear.step_finished() {
                    self.tell(RunEvent::Wear(Box::new(w)));
                }
                self.wear_note();
            }
            RunEvent::Happened(_) | RunEvent::Note(_) | RunEvent::Verify(_) => self.tell(ev),
            // The runner says none of these: they are the pipeline's own (the run's start,
            // end and soak, the session's notices and snapshots, the drive's telemetry and
            // wear, which this worker reads itself). Named one by one, so that an event
            // the runner comes to say is not dropped here unseen.
            RunEvent::Started { .. }
            | RunEvent::Telemetry(_)
            | RunEvent::SessionNotice(_)
            | RunEvent::Snapshot(_)
            | RunEvent::Wear(_)
            | RunEvent::Soak(_)
            | RunEvent::Ended { .. }
            | RunEvent::Saved { .. } => {}
        }
    }

    fn readings(&mut self) -> Vec<(f64, SmartReading)> {
        std::mem::take(&mut self.readings)
    }

    fn snapshot(&mut self) {
        self.say(WorkerMessage::Snapshot);
    }
}
