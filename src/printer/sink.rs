//! Headless output, a sink of the run pipeline: one text line or JSON object per interval,
//! notes, I/O errors, and per step either the summary (a plain run) or one line per step
//! plus the run's events and a plan summary (a preset). JSON lines carry `"type"`: `start`,
//! `interval`, `note`, `io_error`, `summary`, `step`, `event`, `plan_summary`, `steps` (the
//! steps table, once the session is saved), `session`
//! (bandwidth in bytes per second, latency in µs), and `"format"` ([`super::JSON_FORMAT`]).

use serde::Serialize;
use serde_json::{json, Value};

use std::io::Write;

use super::drives::{Drives, IntervalFigures};
use super::text::{interval_header, interval_row, step_lines, summary_text};
use crate::outcome::RunOutcome;
use crate::output::{Output, StdWriter, Stream};
use crate::run::{FinishedStep, Happening, RunEvent, Sink};
use crate::run::{Tally, Timed};
use crate::stats::{IntervalReport, IoErrorRecord, StepSummary};
use crate::ui::format::{bw, iops, us};
use crate::units::count;

mod started;

/// Text or JSON lines on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// What a run through the page cache says of its figures (the session records it too).
pub const PAGE_CACHE_NOTE: &str = "results taken through the page cache (a step without \
     O_DIRECT, --direct 0): they measure the cache as much as the drive";

fn to_value<T: Serialize>(t: &T) -> Value {
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

/// Prints a run in one format on two writers: stdout's lines on `out`, and in text the
/// notes and I/O errors on `err`. The first write that fails ends the printer's output
/// (nothing more is written; the run goes on, its session saved); on the process's own
/// stdout and stderr ([`StdWriter`]) it ends the process's output too (exit 141).
pub struct Printer<W: Write = StdWriter> {
    pub format: Format,
    mode: PrintMode,
    /// The last line written was the intervals' header or one of their rows: the next row
    /// goes under it. Any other line (a step's, an event, a note) closes the rows, and the
    /// next row gets the header again, so no row stands without its columns' names.
    rows_open: bool,
    /// Known once the run starts: the target's path, the plan's name and step count.
    target: String,
    plan_name: String,
    /// How the text names the plan: `preset ID`, `fio job file PATH`.
    plan_title: String,
    steps: usize,
    /// A run of several drives: each drive's label, the drive now printed, and the
    /// intervals of each since the last "all" line.
    drives: Drives,
    /// Where the lines go (text lines with their control characters escaped).
    out: W,
    err: W,
    /// A write failed: nothing more is written.
    ended: bool,
}

impl Printer<StdWriter> {
    /// A printer on the process's stdout and stderr.
    pub fn new(format: Format, mode: PrintMode) -> Self {
        let o = Output::default();
        Printer::on(format, mode, o.writer(Stream::Out), o.writer(Stream::Err))
    }

    /// A closed stdout or stderr (EPIPE, EIO) ends the output and sets `stop`: the run
    /// stops as on a signal, its session saved.
    pub fn stop_on_closed_output(&mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        let o = Output::stopping(stop);
        self.out = o.writer(Stream::Out);
        self.err = o.writer(Stream::Err);
    }
}

impl<W: Write> Printer<W> {
    /// A printer writing stdout's lines to `out` and stderr's to `err`.
    pub fn on(format: Format, mode: PrintMode, out: W, err: W) -> Self {
        Printer {
            format,
            mode,
            rows_open: false,
            target: String::new(),
            plan_name: String::new(),
            plan_title: String::new(),
            steps: 0,
            drives: Drives::default(),
            out,
            err,
            ended: false,
        }
    }

    /// The writers, back (what a test reads).
    pub fn into_writers(self) -> (W, W) {
        (self.out, self.err)
    }

    /// Whether a write failed (the printer has written nothing since).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// `line` and a newline on `stream`; the first failed write ends the output.
    fn put(&mut self, stream: Stream, line: &str) {
        self.rows_open = false;
        if self.ended {
            return;
        }
        let w = match stream {
            Stream::Out => &mut self.out,
            Stream::Err => &mut self.err,
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if w.write_all(&bytes).and_then(|()| w.flush()).is_err() {
            self.ended = true;
        }
    }

    /// A line of text on `stream`, its control characters escaped (a label, a path, a
    /// model or fio's words may hold any: none reaches the terminal raw, and a newline
    /// in one cannot print a line of its own).
    fn say(&mut self, stream: Stream, line: &str) {
        self.put(stream, &crate::ostext::printable(line));
    }

    /// One JSON line on stdout (serde escapes what needs it), with its format version.
    fn json_line(&mut self, v: &Value) {
        let v = super::json::versioned(v.clone());
        self.put(Stream::Out, &v.to_string());
    }

    /// A run of several drives: their labels, in order, so every line says whose it is.
    pub fn set_drives(&mut self, labels: Vec<String>) {
        if labels.len() > 1 {
            self.drives.grow(labels.len());
            self.drives.labels = labels;
        }
    }

    /// The current drive's label, in a run of several ("all" for the run's own figures).
    fn label(&self) -> Option<&str> {
        if self.drives.all {
            return Some("all");
        }
        let d = self.drives.current?;
        self.drives.labels.get(d).map(String::as_str)
    }

    /// The "all" line: every running drive's last interval added up (the worst p99).
    fn all_line(&mut self) {
        let Some((f, n)) = self.drives.take_all() else {
            return;
        };
        self.drives.all = true;
        match self.format {
            Format::Text => {
                let row = interval_row(
                    f.end_s,
                    [f.read_iops, f.read_bw, f.write_iops, f.write_bw],
                    [String::new(), us(f.p99), String::new()],
                    f.errors,
                );
                self.row(&format!("{row}  ({}; p99: the worst)", count(n, "drive")));
            }
            Format::Json => self.json(json!({
                "type": "interval",
                "end_s": f.end_s,
                "drives": n,
                "read_iops": f.read_iops,
                "write_iops": f.write_iops,
                "read_bw_bytes": f.read_bw,
                "write_bw_bytes": f.write_bw,
                "worst_p99_us": f.p99,
                "errors": f.errors,
            })),
        }
        self.drives.all = false;
    }

    /// A plain run of several drives: every drive's summary added up.
    fn all_summary(&mut self) {
        let sums: Vec<StepSummary> = self.drives.summaries.iter().flatten().cloned().collect();
        if sums.len() < 2 {
            return;
        }
        let add = |f: fn(&StepSummary) -> f64| sums.iter().map(f).sum::<f64>();
        let (ri, wi, rb, wb) = (
            add(|s| s.read_iops),
            add(|s| s.write_iops),
            add(|s| s.read_bw_bytes),
            add(|s| s.write_bw_bytes),
        );
        let (ti, tb) = (add(|s| s.trim_iops), add(|s| s.trim_bw_bytes));
        let trims = if ti > 0.0 {
            format!(", {} trim", iops(ti))
        } else {
            String::new()
        };
        let ios: u64 = sums.iter().map(|s| s.ios).sum();
        let errors: u64 = sums.iter().map(|s| s.errors).sum();
        self.drives.all = true;
        match self.format {
            Format::Text => self.text(&format!(
                "summary of {}: {}, {} IOPS ({} read, {} write{trims}), {}, {}",
                count(sums.len(), "drive"),
                count(ios, "I/O"),
                iops(ri + wi + ti),
                iops(ri),
                iops(wi),
                bw(rb + wb + tb),
                count(errors, "error")
            )),
            Format::Json => {
                let mut v = json!({
                    "type": "summary",
                    "drives": sums.len(),
                    "ios": ios,
                    "iops": ri + wi + ti,
                    "read_iops": ri,
                    "write_iops": wi,
                    "read_bw_bytes": rb,
                    "write_bw_bytes": wb,
                    "errors": errors,
                });
                if let (true, Some(o)) = (ti > 0.0, v.as_object_mut()) {
                    o.insert("trim_iops".into(), json!(ti));
                    o.insert("trim_bw_bytes".into(), json!(tb));
                }
                self.json(v)
            }
        }
        self.drives.all = false;
    }

    /// A line of text on stdout, with the drive's label first in a run of several, padded
    /// to the longest label so that what follows lines up.
    fn text(&mut self, line: &str) {
        let line = match self.label() {
            Some(l) => {
                let l = crate::ostext::printable(l);
                let pad = self.label_width().saturating_sub(l.chars().count());
                format!("[{l}]{} {line}", " ".repeat(pad))
            }
            None => line.to_string(),
        };
        self.say(Stream::Out, &line)
    }

    /// The widest label as printed ("all" among them), in a run of several; 0 otherwise.
    fn label_width(&self) -> usize {
        if self.drives.labels.is_empty() {
            return 0;
        }
        let width = |l: &str| crate::ostext::printable(l).chars().count();
        self.drives
            .labels
            .iter()
            .map(|l| width(l))
            .chain([width("all")])
            .max()
            .unwrap_or(0)
    }

    /// An interval's row of text, under the header (written again when another line came
    /// between).
    fn row(&mut self, line: &str) {
        if !self.rows_open {
            let indent = match self.label_width() {
                0 => 0,
                w => w + 3,
            };
            let header = format!("{}{}", " ".repeat(indent), interval_header());
            self.put(Stream::Out, &header);
        }
        self.text(line);
        self.rows_open = true;
    }

    /// A JSON line, carrying `"target"` (the drive's label) in a run of several.
    fn json(&mut self, mut v: Value) {
        if let (Some(l), Some(o)) = (self.label(), v.as_object_mut()) {
            o.insert("target".into(), json!(l));
        }
        self.json_line(&v);
    }

    /// The run's description, once, before the first interval.
    pub fn start(&mut self, description: &str, extra: Value) {
        match self.format {
            Format::Text => self.text(description),
            Format::Json => {
                let mut v = json!({"type": "start", "description": description});
                if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
                    o.extend(e);
                }
                self.json(v);
            }
        }
    }

    pub fn note(&mut self, message: &str) {
        match self.format {
            Format::Text => {
                let line = match self.label() {
                    Some(l) => format!("note: [{l}] {message}"),
                    None => format!("note: {message}"),
                };
                self.say(Stream::Err, &line)
            }
            Format::Json => self.json(json!({"type": "note", "message": message})),
        }
    }

    /// The run's steps, once it is saved: an aligned table, or one `steps` JSON line.
    pub fn steps_table(&mut self, results: &[crate::session::StepResult]) {
        match self.format {
            Format::Text => {
                for line in super::steps::table(results) {
                    self.say(Stream::Out, &line);
                }
            }
            Format::Json => self.json_line(&json!({"type": "steps", "steps": results})),
        }
    }

    /// The phases whose steps ran several times, each run its own point (SNIA HIR, XSR):
    /// aligned lines, or one `runs` JSON line; nothing for other runs.
    pub fn run_series(&mut self, series: &[crate::session::RunSeries]) {
        if series.is_empty() {
            return;
        }
        match self.format {
            Format::Text => {
                for line in super::diskmark::series(series) {
                    self.say(Stream::Out, &line);
                }
            }
            Format::Json => self.json_line(&json!({"type": "runs", "phases": series})),
        }
    }

    /// The grid of a run whose steps picked a figure of several runs (the `diskmark`
    /// presets): aligned lines, or one `diskmark` JSON line; nothing for other runs.
    pub fn diskmark_grid(&mut self, cells: &[crate::session::GridCell]) {
        if cells.is_empty() {
            return;
        }
        match self.format {
            Format::Text => {
                for line in super::diskmark::grid(cells) {
                    self.say(Stream::Out, &line);
                }
            }
            Format::Json => self.json_line(&json!({"type": "diskmark", "cells": cells})),
        }
    }

    /// Where the session was saved (stderr in text mode).
    pub fn session(&mut self, path: &std::path::Path) {
        match self.format {
            Format::Text => self.say(
                Stream::Err,
                &format!("note: session saved to {}", path.display()),
            ),
            Format::Json => {
                self.json_line(&json!({"type": "session", "path": path.display().to_string()}))
            }
        }
    }

    pub fn io_error(&mut self, e: &IoErrorRecord) {
        match self.format {
            Format::Text => {
                let line = match self.label() {
                    Some(l) => format!("I/O error: [{l}] {}", e.message),
                    None => format!("I/O error: {}", e.message),
                };
                self.say(Stream::Err, &line)
            }
            Format::Json => {
                let mut v = to_value(e);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("io_error"));
                }
                self.json(v);
            }
        }
    }

    pub fn interval(&mut self, r: &IntervalReport) {
        for e in &r.error_records {
            self.io_error(e);
        }
        match self.format {
            Format::Text => {
                let ramp = if r.ramp {
                    " ramp".to_string()
                } else {
                    String::new()
                };
                let ramp = if r.suspended_s > 0.0 {
                    format!("{ramp} process suspended for {:.1}s", r.suspended_s)
                } else {
                    ramp
                };
                // Trims (a trim job's) after the columns, only in an interval that trims.
                let ramp = if r.trim.ios > 0 {
                    format!(
                        "  trim {} IOPS {}{ramp}",
                        iops(r.trim_iops),
                        bw(r.trim_bw_bytes)
                    )
                } else {
                    ramp
                };
                let l = &r.lat_us;
                let row = interval_row(
                    r.end_s,
                    [r.read_iops, r.read_bw_bytes, r.write_iops, r.write_bw_bytes],
                    [us(l.p50), us(l.p99), us(l.p99_9)],
                    r.errors,
                );
                self.row(&format!("{row}{ramp}"));
            }
            Format::Json => {
                let mut v = to_value(r);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("interval"));
                }
                self.json(v);
            }
        }
    }

    pub fn summary(&mut self, s: &StepSummary, extra: Value) {
        match self.format {
            Format::Text => {
                for line in summary_text(s) {
                    self.text(&line);
                }
            }
            Format::Json => {
                let mut v = to_value(s);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("summary"));
                    if let Value::Object(e) = extra {
                        o.extend(e);
                    }
                }
                self.json(v);
            }
        }
    }
}

impl<W: Write> Printer<W> {
    /// A step as it ends: one point of the curve.
    pub fn step(&mut self, r: &FinishedStep, steps: usize) {
        match self.format {
            Format::Text => {
                for line in step_lines(r, steps) {
                    self.text(&line);
                }
            }
            Format::Json => {
                let mut v = to_value(r);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("step"));
                    o.insert("count".into(), json!(steps));
                }
                self.json(v);
            }
        }
    }

    /// A run event: phase change, steady state, skip, errors, notes.
    pub fn happened(&mut self, e: &Timed) {
        let kind = e.what.kind();
        if let (Happening::VerifyFinding(x), Format::Json) = (&e.what, self.format) {
            let mut v = to_value(x.as_ref());
            if let Some(o) = v.as_object_mut() {
                o.insert("type".into(), json!("verify_finding"));
                o.insert("t_s".into(), json!(e.t_s));
            }
            return self.json(v);
        }
        match self.format {
            Format::Text => self.text(&format!("[{:>7.1}s] {kind}: {}", e.t_s, e.what)),
            Format::Json => {
                let mut line = json!({
                    "type": "event",
                    "t_s": e.t_s,
                    "kind": kind.as_str(),
                    "text": e.what.to_string(),
                });
                match (&e.what, line.as_object_mut()) {
                    (Happening::Thermal(t), Some(o)) => {
                        o.insert("thermal".into(), json!(t));
                    }
                    (Happening::DriveErrors(n), Some(o)) => {
                        o.insert("drive_errors".into(), json!(n));
                    }
                    (Happening::VerifyUnsaved { step, unsaved }, Some(o)) => {
                        o.insert("step".into(), json!(step));
                        o.insert("verify_unsaved".into(), json!(unsaved));
                    }
                    _ => {}
                }
                self.json(line)
            }
        }
    }

    /// What the run did to the drive (a step's is in the session only): one line of the
    /// fields the drive reports, or a `drive_wear` JSON object.
    fn wear(&mut self, w: &crate::telemetry::WearSpan) {
        if w.step.is_some() {
            return;
        }
        match self.format {
            Format::Text => {
                if let Some(l) = crate::telemetry::wear_text::line(w) {
                    self.text(&l);
                }
            }
            Format::Json => {
                let mut v = json!({"type": "drive_wear"});
                if let (Some(o), Ok(Value::Object(f))) =
                    (v.as_object_mut(), serde_json::to_value(w))
                {
                    o.extend(f);
                    o.insert("written_agrees".into(), json!(w.written_agrees()));
                    o.insert("read_agrees".into(), json!(w.read_agrees()));
                }
                self.json(v);
            }
        }
    }

    /// A thermal soak's figures: the report's rows as text, or one JSON object.
    fn soak(&mut self, sum: &crate::thermal::SoakSummary) {
        match self.format {
            Format::Text => {
                self.text("thermal soak:");
                for (k, v) in crate::report::soak::rows(sum) {
                    self.text(&format!("  {k}: {v}"));
                }
            }
            Format::Json => {
                let through = |t: Option<crate::thermal::Throughput>| {
                    t.map(|t| json!({"iops": t.iops, "mbps": t.mbps, "secs": t.secs}))
                };
                self.json(json!({
                    "type": "soak",
                    "start_c": sum.start_c,
                    "peak_c": sum.peak.map(|p| p.1),
                    "peak_t_s": sum.peak.map(|p| p.0),
                    "to_warning_s": sum.to_warning.map(|w| w.0),
                    "throttle_onset_s": sum.onset.map(|o| o.0),
                    "throttle_onset_c": sum.onset.and_then(|o| o.1),
                    "throttle_signal": sum.onset.map(|o| o.2),
                    "before_throttle": through(sum.before),
                    "while_throttled": through(sum.throttled),
                    "cliff_iops": sum.cliff().map(|c| c.0).filter(|x| x.is_finite()),
                    "cliff_mbps": sum.cliff().map(|c| c.1).filter(|x| x.is_finite()),
                    "cooled_s": sum.cooled_s,
                    "not_cooled": sum.not_cooled,
                }))
            }
        }
    }

    /// The plan's last line: how it ended, steps run, errors.
    fn plan_summary(&mut self, preset_id: &str, outcome: &RunOutcome, tally: &Tally) {
        let text = match outcome.failure() {
            Some(why) => format!("failed: {why}"),
            None => outcome.word().to_string(),
        };
        match self.format {
            Format::Text => self.text(&format!(
                "{}: {text}, {} of {} run, {}",
                self.plan_title,
                tally.steps_run,
                count(tally.steps, "step"),
                count(tally.errors, "I/O error")
            )),
            Format::Json => self.json(json!({
                "type": "plan_summary",
                "preset": preset_id,
                "outcome": text,
                "steps_run": tally.steps_run,
                "steps": tally.steps,
                "errors": tally.errors,
            })),
        }
    }
}

impl<W: Write> Sink for Printer<W> {
    fn drive_event(&mut self, drive: usize, ev: &RunEvent<'_>) {
        self.drives.grow(drive + 1);
        if let RunEvent::Started { run, .. } = ev {
            if self.drives.labels[drive].is_empty() {
                self.drives.labels[drive] = run.label.clone();
            }
        }
        self.drives.current = Some(drive);
        match ev {
            RunEvent::StepFinished(r) => self.drives.summaries[drive] = Some(r.summary.clone()),
            RunEvent::Ended { .. } => self.drives.live[drive] = false,
            _ => {}
        }
        self.event(ev);
        if let RunEvent::Interval { report: r, .. } = ev {
            self.drives.pending[drive] = Some(IntervalFigures {
                end_s: r.end_s,
                read_iops: r.read_iops,
                write_iops: r.write_iops,
                read_bw: r.read_bw_bytes,
                write_bw: r.write_bw_bytes,
                p99: r.lat_us.p99,
                errors: r.errors,
            });
        }
        self.drives.current = None;
        self.all_line();
    }

    fn event(&mut self, ev: &RunEvent<'_>) {
        // The run's own end, in a run of several: its figures, labelled "all".
        if let (RunEvent::Ended { .. }, None, false) =
            (ev, self.drives.current, self.drives.labels.is_empty())
        {
            if self.mode == PrintMode::Single {
                return self.all_summary();
            }
            self.drives.all = true;
        }
        match (ev, self.mode) {
            (RunEvent::Started { run, session }, _) => self.started(run, session),
            (RunEvent::Interval { report, .. }, _) => self.interval(report),
            (RunEvent::StepFinished(r), PrintMode::Single) => {
                let mut extra = json!({"target": self.target});
                if let (Some(t), Some(o)) = (&r.verify, extra.as_object_mut()) {
                    o.insert("verify".into(), to_value(t));
                }
                self.summary(&r.summary, extra)
            }
            (RunEvent::StepFinished(r), PrintMode::Plan) => self.step(r, self.steps),
            (RunEvent::Happened(e), PrintMode::Plan) => self.happened(e),
            (RunEvent::Happened(e), PrintMode::Single) => match &e.what {
                Happening::Note(n) => self.note(n),
                Happening::Health(_)
                | Happening::DriveErrors(_)
                | Happening::Thermal(_)
                | Happening::VerifyFinding(_)
                | Happening::VerifyUnsaved { .. } => self.happened(e),
                Happening::Verified(_) if self.format == Format::Text => self.happened(e),
                _ => {}
            },
            (RunEvent::Note(n) | RunEvent::SessionNotice(n), _) => self.note(n),
            (RunEvent::Telemetry(s), _) => {
                for n in &s.notes {
                    self.note(n);
                }
            }
            (RunEvent::Soak(sum), _) => self.soak(sum),
            (RunEvent::Wear(w), _) => self.wear(w),
            (RunEvent::Ended { .. }, PrintMode::Single) => {}
            (RunEvent::Ended { outcome, tally }, PrintMode::Plan) => {
                let name = self.plan_name.clone();
                self.plan_summary(&name, outcome, tally);
                self.drives.all = false;
            }
            (RunEvent::Saved { path, session }, _) => {
                self.steps_table(&crate::session::step_results(session));
                self.diskmark_grid(&crate::session::grid(session));
                self.run_series(&crate::session::run_series(session));
                self.session(path)
            }
            (RunEvent::Verify(_), _) => {}
            (RunEvent::StepStarted { .. } | RunEvent::Snapshot(_), _) => {}
        }
    }
}
