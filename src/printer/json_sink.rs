//! The headless run as JSON lines on stdout, one object per line with `"type"`: `start`,
//! `interval`, `note`, `io_error`, `summary`, `step`, `event`, `verify_finding`,
//! `drive_wear`, `soak`, `plan_summary`, `steps` (the steps table, once the session is
//! saved), `diskmark`, `runs`, `session` (bandwidth in bytes per second, latency in µs),
//! `"format"` ([`super::JSON_FORMAT`]) and, in a run of several drives, `"target"` (the
//! drive's label).

use std::io::Write;

use serde_json::{json, Value};

use super::drives::{IntervalFigures, Sums};
use super::sink::{outcome_text, route, to_value, write_line, Core, FormatPrinter, PrintMode};
use crate::outcome::RunOutcome;
use crate::output::{Output, StdWriter, Stream};
use crate::run::{FinishedStep, RunEvent, RunView, SessionEvent, Sink, SinkFlow, Tally, Timed};
use crate::session::results::MISSED_BELOW;
use crate::session::{GridCell, RunSeries, StepResult};
use crate::stats::{IntervalReport, IoErrorRecord};
use crate::telemetry::WearSpan;
use crate::thermal::SoakSummary;

/// Prints a run as JSON lines on `out`. The first write that fails ends the output
/// (nothing more is written) and the run (its session saved); on the process's own stdout
/// ([`StdWriter`]) it ends the process's output too (exit 141).
pub struct JsonPrinter<W: Write = StdWriter> {
    core: Core,
    out: W,
    /// A write failed: nothing more is written.
    ended: bool,
}

impl JsonPrinter<StdWriter> {
    /// A printer on the process's stdout.
    pub fn new(mode: PrintMode) -> Self {
        JsonPrinter::on(mode, Output::default().writer(Stream::Out))
    }
}

impl<W: Write> JsonPrinter<W> {
    /// A printer writing its lines to `out`.
    pub fn on(mode: PrintMode, out: W) -> Self {
        JsonPrinter {
            core: Core::new(mode),
            out,
            ended: false,
        }
    }

    /// The writer, back (what a test reads).
    pub fn into_writer(self) -> W {
        self.out
    }

    /// One JSON line (serde escapes what needs it), with its format version; the first
    /// failed write ends the output.
    fn line(&mut self, v: Value) {
        if self.ended {
            return;
        }
        let v = super::json::versioned(v);
        if !write_line(&mut self.out, &v.to_string()) {
            self.ended = true;
        }
    }

    /// A JSON line carrying `"target"` (the drive's label) in a run of several.
    fn json(&mut self, mut v: Value) {
        if let (Some(l), Some(o)) = (&self.core.label, v.as_object_mut()) {
            o.insert("target".into(), json!(l));
        }
        self.line(v);
    }

    /// `t` as an object of `type`, with `extra`'s fields.
    fn typed<T: serde::Serialize>(&mut self, kind: &str, t: &T, extra: Value) {
        let mut v = to_value(t);
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!(kind));
            if let Value::Object(e) = extra {
                o.extend(e);
            }
        }
        self.json(v);
    }
}

impl<W: Write> FormatPrinter for JsonPrinter<W> {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn ended(&self) -> bool {
        self.ended
    }

    fn start(&mut self, description: &str, extra: Value) {
        self.typed("start", &json!({"description": description}), extra)
    }

    fn note(&mut self, message: &str) {
        self.json(json!({"type": "note", "message": message}))
    }

    fn io_error(&mut self, e: &IoErrorRecord) {
        self.typed("io_error", e, json!({"by": e.by()}))
    }

    fn interval(&mut self, r: &IntervalReport) {
        self.typed("interval", r, Value::Null)
    }

    fn all_interval(&mut self, f: &IntervalFigures, drives: usize) {
        self.json(json!({
            "type": "interval",
            "end_s": f.end_s,
            "drives": drives,
            "read_iops": f.read_iops,
            "write_iops": f.write_iops,
            "read_bw_bytes": f.read_bw,
            "write_bw_bytes": f.write_bw,
            "worst_response_p99_us": f.p99,
            "errors": f.errors,
        }))
    }

    fn all_summary(&mut self, s: &Sums) {
        let mut v = json!({
            "type": "summary",
            "drives": s.drives,
            "ios": s.ios,
            "iops": s.read_iops + s.write_iops + s.trim_iops,
            "read_iops": s.read_iops,
            "write_iops": s.write_iops,
            "read_bw_bytes": s.read_bw,
            "write_bw_bytes": s.write_bw,
            "errors": s.errors,
        });
        if let (true, Some(o)) = (s.trim_iops > 0.0, v.as_object_mut()) {
            o.insert("trim_iops".into(), json!(s.trim_iops));
            o.insert("trim_bw_bytes".into(), json!(s.trim_bw));
        }
        self.json(v)
    }

    fn summary(&mut self, r: &FinishedStep) {
        let mut extra = json!({"target": self.core.target});
        if let (Some(t), Some(o)) = (&r.verify, extra.as_object_mut()) {
            o.insert("verify".into(), to_value(t));
        }
        self.typed("summary", &r.summary, extra)
    }

    fn step(&mut self, r: &FinishedStep, steps: usize) {
        let mut extra = json!({"count": steps});
        // A paced step's share of its target, and whether it missed it.
        if let (Some(share), Some(o)) = (r.achieved_share(), extra.as_object_mut()) {
            o.insert("achieved_share".into(), json!(share));
            o.insert("missed_target".into(), json!(share < MISSED_BELOW));
        }
        self.typed("step", r, extra)
    }

    fn happened(&mut self, e: &Timed) {
        if let SessionEvent::VerifyFinding(x) = &e.what {
            return self.typed("verify_finding", x.as_ref(), json!({"t_s": e.t_s}));
        }
        let extra = match &e.what {
            SessionEvent::Thermal(t) => json!({ "thermal": t }),
            SessionEvent::DriveErrors(n) => json!({ "drive_errors": n }),
            SessionEvent::VerifyUnsaved { step, unsaved } => {
                json!({"step": step, "verify_unsaved": unsaved})
            }
            _ => Value::Null,
        };
        let text = e.what.to_string();
        let event = json!({"t_s": e.t_s, "kind": e.what.kind().as_str(), "text": text});
        self.typed("event", &event, extra)
    }

    fn verified(&mut self, _e: &Timed) {}

    fn wear(&mut self, w: &WearSpan) {
        let agree = json!({"written_agrees": w.written_agrees(), "read_agrees": w.read_agrees()});
        self.typed("drive_wear", w, agree)
    }

    fn soak(&mut self, sum: &SoakSummary) {
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

    fn plan_summary(&mut self, preset_id: &str, outcome: &RunOutcome, tally: &Tally) {
        self.json(json!({
            "type": "plan_summary",
            "preset": preset_id,
            "outcome": outcome_text(outcome),
            "steps_run": tally.steps_run,
            "steps": tally.steps,
            "errors": tally.errors,
        }))
    }

    fn steps_table(&mut self, results: &[StepResult]) {
        self.line(json!({"type": "steps", "steps": results}))
    }

    fn run_series(&mut self, series: &[RunSeries]) {
        self.line(json!({"type": "runs", "phases": series}))
    }

    fn diskmark_grid(&mut self, cells: &[GridCell]) {
        self.line(json!({"type": "diskmark", "cells": cells}))
    }

    fn session(&mut self, path: &std::path::Path) {
        self.line(json!({"type": "session", "path": path.display().to_string()}))
    }
}

impl<W: Write> Sink for JsonPrinter<W> {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        route(self, view, ev)
    }
}
