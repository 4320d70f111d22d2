//! What the two headless sinks (the text sink, `TextPrinter`, and the JSON-lines sink,
//! `JsonPrinter`) share: which run event is shown how in each mode ([`PrintMode`]) and
//! what they keep of the run (its target, plan and drives). Each shows the same things
//! ([`FormatPrinter`]) in its own words; a write that fails ends that sink's output, never the run.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use super::drives::{Drives, IntervalFigures, Sums};
use crate::outcome::RunOutcome;
use crate::run::{FinishedStep, RunEvent, SessionEvent, Tally, Timed};
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintMode {
    /// A plain run: the step's full summary; engine notes as notes.
    Single,
    /// A preset: one line per step, the run's events, and a plan summary.
    Plan,
}

/// What both sinks keep of the run: how they show it, what it runs on and its drives.
#[derive(Debug)]
pub(super) struct Core {
    pub(super) mode: PrintMode,
    /// Known once the run starts: the target's path, the plan's name and step count.
    pub(super) target: String,
    pub(super) plan_name: String,
    /// How the text names the plan: `preset ID`, `fio job file PATH`.
    pub(super) plan_title: String,
    pub(super) steps: usize,
    /// A run of several drives: each drive's label, the drive now printed, and the
    /// intervals of each since the last "all" line.
    pub(super) drives: Drives,
}

impl Core {
    pub(super) fn new(mode: PrintMode) -> Self {
        Core {
            mode,
            target: String::new(),
            plan_name: String::new(),
            plan_title: String::new(),
            steps: 0,
            drives: Drives::default(),
        }
    }

    /// A run of several drives: their labels, in order, so every line says whose it is.
    pub(super) fn set_drives(&mut self, labels: Vec<String>) {
        if labels.len() > 1 {
            self.drives.grow(labels.len());
            self.drives.labels = labels;
        }
    }

    /// The current drive's label, in a run of several ("all" for the run's own figures).
    pub(super) fn label(&self) -> Option<&str> {
        if self.drives.all {
            return Some("all");
        }
        let d = self.drives.current?;
        self.drives.labels.get(d).map(String::as_str)
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

/// An event of drive `drive` of a run of several: kept for the "all" lines, shown with
/// the drive's label, then the "all" line when every running drive has an interval.
pub(super) fn route_drive<S: FormatPrinter>(s: &mut S, drive: usize, ev: &RunEvent) {
    let d = &mut s.core().drives;
    d.grow(drive + 1);
    if let RunEvent::Started { run, .. } = ev {
        if d.labels[drive].is_empty() {
            d.labels[drive] = run.label.clone();
        }
    }
    d.current = Some(drive);
    match ev {
        RunEvent::StepFinished(r) => d.summaries[drive] = Some(r.summary.clone()),
        RunEvent::Ended { .. } => d.live[drive] = false,
        _ => {}
    }
    route(s, ev);
    let d = &mut s.core().drives;
    if let RunEvent::Interval { report: r, .. } = ev {
        d.pending[drive] = Some(IntervalFigures::of(r));
    }
    d.current = None;
    if let Some((f, n)) = d.take_all() {
        d.all = true;
        s.all_interval(&f, n);
        s.core().drives.all = false;
    }
}

/// A run event, shown as the mode says.
pub(super) fn route<S: FormatPrinter>(s: &mut S, ev: &RunEvent) {
    // The run's own end, in a run of several: its figures, labelled "all".
    let core = s.core();
    let mode = core.mode;
    if let (RunEvent::Ended { .. }, None, false) =
        (ev, core.drives.current, core.drives.labels.is_empty())
    {
        if mode == PrintMode::Single {
            if let Some(sums) = core.drives.sums() {
                core.drives.all = true;
                s.all_summary(&sums);
                s.core().drives.all = false;
            }
            return;
        }
        core.drives.all = true;
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
            let steps = s.core().steps;
            s.step(r, steps)
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
            s.core().drives.all = false;
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
}
