//! What the two headless sinks (the text sink, `TextPrinter`, and the JSON-lines sink,
//! `JsonPrinter`) share: which run event is shown how in each mode ([`PrintMode`]) and
//! what they keep of the run beyond the hub's view (its target and title, the drives'
//! intervals since the last "all" line). Each shows the same things ([`FormatPrinter`]) in
//! its own words; a write that fails ends that sink's output, and its answer stops the run.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::drives::{sums, take_all, IntervalFigures, Sums};
use crate::outcome::RunOutcome;
use crate::run::{FinishedStep, RunEvent, RunView, SessionEvent, SinkFlow, Tally, Timed};
use crate::session::{GridCell, RunSeries, StepResult};
use crate::stats::{IntervalReport, IoErrorRecord};
use crate::telemetry::WearSpan;
use crate::thermal::SoakSummary;

mod started;

pub(super) use started::Started;

/// Text or JSON lines on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// What a run through the page cache says of its figures (the session records it too).
pub const PAGE_CACHE_NOTE: &str = "results taken through the page cache (a step without \
     O_DIRECT, --direct 0): they measure the cache as much as the drive";

pub(super) fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// What the printer shows of each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrintMode {
    /// A plain run: the step's full summary; engine notes as notes.
    #[default]
    Single,
    /// A preset: one line per step, the run's events, and a plan summary.
    Plan,
}

/// What both sinks keep of the run: how they show it, what it runs on, the label of the
/// line at hand, and each drive's interval since the last "all" line.
#[derive(Debug, Default)]
pub(super) struct Core {
    pub(super) mode: PrintMode,
    /// Known once the run starts: the target's path, the plan's name.
    pub(super) target: String,
    pub(super) plan_name: String,
    /// How the text names the plan: `preset ID`, `fio job file PATH`.
    pub(super) plan_title: String,
    /// A run of several drives: the drive of the line at hand ("all" for the run's own
    /// figures), and the widest label as printed ("all" among them; 0 in a run of one).
    pub(super) label: Option<String>,
    pub(super) label_width: usize,
    /// Per drive of several: its last interval's figures since the last "all" line.
    pub(super) pending: Vec<Option<IntervalFigures>>,
}

impl Core {
    pub(super) fn new(mode: PrintMode) -> Self {
        Core {
            mode,
            ..Core::default()
        }
    }
}

/// How a run ended, in a word or, for a failed one, why.
pub(super) fn outcome_text(outcome: &RunOutcome) -> String {
    match outcome.failure() {
        Some(why) => format!("failed: {why}"),
        None => outcome.word().to_string(),
    }
}

/// `line` and a newline on `w`, flushed; false when the write failed.
pub(super) fn write_line<W: Write>(w: &mut W, line: &str) -> bool {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    w.write_all(&bytes).and_then(|()| w.flush()).is_ok()
}

/// What a headless sink shows, in its own format. [`route`] and [`route_drive`] decide
/// which run event shows as what.
pub(super) trait FormatPrinter {
    fn core(&mut self) -> &mut Core;
    /// A write failed: nothing more is written.
    fn ended(&self) -> bool;
    /// The run's description, once, before the first interval.
    fn start(&mut self, description: &str, extra: Value);
    fn note(&mut self, message: &str);
    fn io_error(&mut self, e: &IoErrorRecord);
    fn interval(&mut self, r: &IntervalReport);
    /// The "all" line: every running drive's last interval added up (the worst p99), of
    /// `drives` drives.
    fn all_interval(&mut self, f: &IntervalFigures, drives: usize);
    /// A plain run of several drives: every drive's summary added up.
    fn all_summary(&mut self, s: &Sums);
    /// A plain run's step: its full summary.
    fn summary(&mut self, r: &FinishedStep);
    /// A preset's step as it ends (of `steps`): one point of the curve.
    fn step(&mut self, r: &FinishedStep, steps: usize);
    /// A run event: phase change, steady state, skip, errors, notes.
    fn happened(&mut self, e: &Timed);
    /// A plain run's verification: shown in text only (JSON has its summary's `verify`).
    fn verified(&mut self, e: &Timed);
    /// What the run did to the drive (a step's is in the session only).
    fn wear(&mut self, w: &WearSpan);
    /// A thermal soak's figures.
    fn soak(&mut self, sum: &SoakSummary);
    /// The plan's last line: how it ended, steps run, errors.
    fn plan_summary(&mut self, preset_id: &str, outcome: &RunOutcome, tally: &Tally);
    /// The run's steps, once it is saved.
    fn steps_table(&mut self, results: &[StepResult]);
    /// The phases whose steps ran several times, each run its own point (SNIA HIR, XSR);
    /// nothing for other runs.
    fn run_series(&mut self, series: &[RunSeries]);
    /// The grid of a run whose steps picked a figure of several runs (the `diskmark`
    /// presets); nothing for other runs.
    fn diskmark_grid(&mut self, cells: &[GridCell]);
    /// Where the session was saved.
    fn session(&mut self, path: &std::path::Path);
}

/// A run event (with the run's view after it), shown as the mode says; in a run of several
/// drives each line with its drive's label, then the "all" line when every running drive
/// has an interval. A sink whose output is gone stops the run.
pub(super) fn route<S: FormatPrinter>(s: &mut S, view: &RunView, ev: &RunEvent) -> SinkFlow {
    let core = s.core();
    let mode = core.mode;
    core.label = view.drive.map(|d| view.drives[d].label.clone());
    core.label_width = if view.many() {
        let width = |l: &str| crate::ostext::printable(l).chars().count();
        let labels = view.drives.iter().map(|d| width(&d.label));
        labels.chain([width("all")]).max().unwrap_or(0)
    } else {
        0
    };
    // The run's own end, in a run of several: its figures, labelled "all".
    if let (RunEvent::Ended { .. }, None, true) = (ev, view.drive, view.many()) {
        core.label = Some("all".into());
        if mode == PrintMode::Single {
            if let Some(sums) = sums(view) {
                s.all_summary(&sums);
            }
            return flow(s);
        }
    }
    match (ev, mode) {
        (RunEvent::Started { run, session, .. }, _) => s.started(run, session),
        (RunEvent::Interval { report, .. }, _) => {
            for e in &report.error_records {
                s.io_error(e);
            }
            s.interval(report)
        }
        (RunEvent::StepFinished(r), PrintMode::Single) => s.summary(r),
        (RunEvent::StepFinished(r), PrintMode::Plan) => {
            s.step(r, view.of(view.drive).map_or(0, |d| d.steps()))
        }
        (RunEvent::Happened(e), PrintMode::Plan) => s.happened(e),
        (RunEvent::Happened(e), PrintMode::Single) => match &e.what {
            SessionEvent::Note(n) => s.note(n),
            SessionEvent::Health(_)
            | SessionEvent::DriveErrors(_)
            | SessionEvent::Thermal(_)
            | SessionEvent::VerifyFinding(_)
            | SessionEvent::VerifyUnsaved { .. } => s.happened(e),
            SessionEvent::Verified(_) => s.verified(e),
            _ => {}
        },
        (RunEvent::Note(n) | RunEvent::SessionNotice(n), _) => s.note(n),
        (RunEvent::Telemetry(t), _) => {
            for n in &t.notes {
                s.note(n);
            }
        }
        (RunEvent::Soak(sum), _) => s.soak(sum),
        (RunEvent::Wear(w), _) => {
            if w.step.is_none() {
                s.wear(w)
            }
        }
        (RunEvent::Ended { .. }, PrintMode::Single) => {}
        (RunEvent::Ended { outcome, tally }, PrintMode::Plan) => {
            let name = s.core().plan_name.clone();
            s.plan_summary(&name, outcome, tally);
        }
        (RunEvent::Saved { path, session }, _) => {
            s.steps_table(&crate::session::step_results(session));
            let cells = crate::session::grid(session);
            if !cells.is_empty() {
                s.diskmark_grid(&cells);
            }
            let series = crate::session::run_series(session);
            if !series.is_empty() {
                s.run_series(&series);
            }
            s.session(path)
        }
        (RunEvent::Verify(_), _) => {}
        (RunEvent::StepStarted { .. } | RunEvent::Snapshot(_), _) => {}
    }
    if let Some(d) = view.drive {
        let core = s.core();
        core.pending.resize(view.drives.len(), None);
        if let RunEvent::Interval { report, .. } = ev {
            core.pending[d] = Some(IntervalFigures::of(report));
        }
        if let Some((f, n)) = take_all(&mut core.pending, view) {
            core.label = Some("all".into());
            s.all_interval(&f, n);
        }
    }
    flow(s)
}

fn flow<S: FormatPrinter>(s: &S) -> SinkFlow {
    match s.ended() {
        true => SinkFlow::Stop,
        false => SinkFlow::Continue,
    }
}
