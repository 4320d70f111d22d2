//! Headless output, a sink of the run pipeline: one text line or JSON object per interval,
//! notes, I/O errors, and per step either the summary (a plain run) or one line per step
//! plus the run's events and a plan summary (a preset). JSON lines carry `"type"`: `start`,
//! `interval`, `note`, `io_error`, `summary`, `step`, `event`, `plan_summary`, `session`
//! (bandwidth in bytes per second, latency in µs).

use serde::Serialize;
use serde_json::{json, Value};

use super::event::{FinishedStep, Happening, RunEvent, Timed};
use super::pipeline::Sink;
use super::record::single_workload;
use super::request::{Prepared, RunKind};
use super::tally::Tally;
use crate::dut::TargetKind;
use crate::outcome::RunOutcome;
use crate::output::{Output, Stream};
use crate::stats::{IntervalReport, IoErrorRecord, LatSummary, StepSummary};
use crate::units::{format_duration, format_size};
use crate::workload::{EngineKind, EngineOptions};

/// Text or JSON lines on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// What a run through the page cache says of its figures (the session records it too).
pub const PAGE_CACHE_NOTE: &str = "results taken through the page cache (a step without \
     O_DIRECT, --direct 0): they measure the cache as much as the drive";

fn mb(bytes_per_s: f64) -> f64 {
    bytes_per_s / 1e6
}

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

/// Prints a run in one format.
pub struct Printer {
    pub format: Format,
    mode: PrintMode,
    header_done: bool,
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
    out: Output,
}

/// What the printer keeps of a run of several drives.
#[derive(Debug, Default)]
struct Drives {
    labels: Vec<String>,
    current: Option<usize>,
    /// Per drive: its last interval's figures since the last "all" line (None: none yet).
    pending: Vec<Option<IntervalFigures>>,
    /// Per drive: still running.
    live: Vec<bool>,
    /// Per drive: its last step's summary (a plain run's "all" summary adds them up).
    summaries: Vec<Option<StepSummary>>,
    /// Printing the run's own figures: labelled "all".
    all: bool,
}

impl Drives {
    fn grow(&mut self, n: usize) {
        if self.labels.len() < n {
            self.labels.resize(n, String::new());
            self.pending.resize(n, None);
            self.live.resize(n, true);
            self.summaries.resize(n, None);
        }
    }

    /// Every running drive has an interval since the last "all" line: the sum of every
    /// drive's that has one (a drive that just ended gives its last).
    fn take_all(&mut self) -> Option<(IntervalFigures, usize)> {
        let n = self.labels.len();
        let waiting = (0..n).any(|d| self.live[d] && self.pending[d].is_none());
        let with: Vec<usize> = (0..n).filter(|&d| self.pending[d].is_some()).collect();
        if n < 2 || waiting || with.is_empty() {
            return None;
        }
        let mut sum = IntervalFigures::default();
        for d in &with {
            if let Some(f) = self.pending[*d].take() {
                sum.end_s = sum.end_s.max(f.end_s);
                sum.read_iops += f.read_iops;
                sum.write_iops += f.write_iops;
                sum.read_bw += f.read_bw;
                sum.write_bw += f.write_bw;
                sum.p99 = sum.p99.max(f.p99);
                sum.errors += f.errors;
            }
        }
        Some((sum, with.len()))
    }
}

/// An interval's figures, for the "all" line.
#[derive(Debug, Clone, Copy, Default)]
struct IntervalFigures {
    end_s: f64,
    read_iops: f64,
    write_iops: f64,
    read_bw: f64,
    write_bw: f64,
    p99: f64,
    errors: u64,
}

impl Printer {
    pub fn new(format: Format, mode: PrintMode) -> Self {
        Printer {
            format,
            mode,
            header_done: false,
            target: String::new(),
            plan_name: String::new(),
            plan_title: String::new(),
            steps: 0,
            drives: Drives::default(),
            out: Output::default(),
        }
    }

    /// A closed stdout or stderr (EPIPE, EIO) ends the output and sets `stop`: the run
    /// stops as on a signal, its session saved.
    pub fn stop_on_closed_output(&mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.out = Output::stopping(stop);
    }

    /// A line of text on `stream`, its control characters escaped (a label, a path, a
    /// model or fio's words may hold any: none reaches the terminal raw, and a newline
    /// in one cannot print a line of its own).
    fn say(&self, stream: Stream, line: &str) {
        self.out.line(stream, &crate::ostext::printable(line));
    }

    /// One JSON line on stdout (serde escapes what needs it).
    fn json_line(&self, v: &Value) {
        self.out.line(Stream::Out, &v.to_string());
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
            Format::Text => self.text(&format!(
                "{:>7.1}s {:>10.0} {:>9.1} {:>10.0} {:>9.1} {:>9} {:>9.1} {:>9} {:>7}  ({n} drives; p99: the worst)",
                f.end_s,
                f.read_iops,
                mb(f.read_bw),
                f.write_iops,
                mb(f.write_bw),
                "",
                f.p99,
                "",
                f.errors
            )),
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
        let ios: u64 = sums.iter().map(|s| s.ios).sum();
        let errors: u64 = sums.iter().map(|s| s.errors).sum();
        self.drives.all = true;
        match self.format {
            Format::Text => self.text(&format!(
                "summary of {} drives: {ios} I/Os, {:.0} IOPS ({ri:.0} read, {wi:.0} write), \
                 {:.1} MB/s, {errors} errors",
                sums.len(),
                ri + wi,
                mb(rb + wb)
            )),
            Format::Json => self.json(json!({
                "type": "summary",
                "drives": sums.len(),
                "ios": ios,
                "iops": ri + wi,
                "read_iops": ri,
                "write_iops": wi,
                "read_bw_bytes": rb,
                "write_bw_bytes": wb,
                "errors": errors,
            })),
        }
        self.drives.all = false;
    }

    /// A line of text on stdout, with the drive's label first in a run of several.
    fn text(&self, line: &str) {
        match self.label() {
            Some(l) => self.say(Stream::Out, &format!("[{l}] {line}")),
            None => self.say(Stream::Out, line),
        }
    }

    /// A JSON line, carrying `"target"` (the drive's label) in a run of several.
    fn json(&self, mut v: Value) {
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
            Format::Text => match self.label() {
                Some(l) => self.say(Stream::Err, &format!("note: [{l}] {message}")),
                None => self.say(Stream::Err, &format!("note: {message}")),
            },
            Format::Json => self.json(json!({"type": "note", "message": message})),
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
            Format::Text => match self.label() {
                Some(l) => self.say(Stream::Err, &format!("I/O error: [{l}] {}", e.message)),
                None => self.say(Stream::Err, &format!("I/O error: {}", e.message)),
            },
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
                if !self.header_done {
                    let header = format!(
                        "{:>8} {:>10} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}",
                        "time",
                        "read IOPS",
                        "read MB/s",
                        "write IOPS",
                        "write MB/s",
                        "p50 µs",
                        "p99 µs",
                        "p99.9 µs",
                        "errors"
                    );
                    self.out.line(Stream::Out, &header);
                    self.header_done = true;
                }
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
                self.text(&format!(
                    "{:>7.1}s {:>10.0} {:>9.1} {:>10.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>7}{ramp}",
                    r.end_s,
                    r.read_iops,
                    mb(r.read_bw_bytes),
                    r.write_iops,
                    mb(r.write_bw_bytes),
                    r.lat_us.p50,
                    r.lat_us.p99,
                    r.lat_us.p99_9,
                    r.errors
                ));
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

impl Printer {
    /// A step as it ends: one point of the curve.
    pub fn step(&mut self, r: &FinishedStep, count: usize) {
        match self.format {
            Format::Text => {
                let s = &r.summary;
                let target = match (r.target_iops, r.closed_loop) {
                    (Some(t), false) => format!("target {t:.0} IOPS, "),
                    (Some(t), true) => format!("target {t:.0} IOPS (run closed-loop), "),
                    (None, _) => String::new(),
                };
                let resp = r
                    .response_from_schedule_lat_us
                    .map(|l| format!("; response from schedule mean {:.1} µs", l.mean))
                    .unwrap_or_default();
                let l = &r.service_lat_us;
                self.text(&format!(
                    "step {}/{count} {}: {target}achieved {:.0} IOPS, {:.1} MB/s, mean {:.1} µs, \
                     p99 {:.1} µs, p99.9 {:.1} µs{resp}, {} errors ({:.1}s, ended by {})",
                    r.index + 1,
                    r.name,
                    s.iops,
                    mb(s.read_bw_bytes + s.write_bw_bytes),
                    l.mean,
                    l.p99,
                    l.p99_9,
                    s.errors,
                    s.runtime_s,
                    s.ended_by
                ));
                for series in &s.fio_series {
                    self.text(&format!("  {series}"));
                }
            }
            Format::Json => {
                let mut v = to_value(r);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("step"));
                    o.insert("count".into(), json!(count));
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

    /// The run's first line.
    fn started(&mut self, run: &Prepared, session: &std::path::Path) {
        let t = &run.target;
        self.target = t.path.display().to_string();
        self.plan_name = run.name().to_string();
        self.plan_title = match &run.kind {
            RunKind::FioJob(f) => format!("fio job file {}", f.file.display()),
            RunKind::Preset(_) | RunKind::Single { .. } => format!("preset {}", run.name()),
        };
        self.steps = run.plan.steps.len();
        let session = session.display().to_string();
        match &run.kind {
            RunKind::Single { ramp, duration } => {
                let Some(step) = run.plan.steps.first() else {
                    return;
                };
                let w = single_workload(step);
                let kind = match t.kind {
                    TargetKind::File => "file",
                    TargetKind::BlockDevice => "block device",
                    TargetKind::NvmeGeneric => "NVMe generic device",
                    TargetKind::None => "no target",
                };
                let mix = if w.rw.is_mixed() {
                    format!(" {}% read", w.rwmixread)
                } else {
                    String::new()
                };
                let rate = w
                    .rate_iops
                    .map(|r| format!(" at {r:.0} IOPS"))
                    .unwrap_or_default();
                let ramp_text = if ramp.is_zero() {
                    String::new()
                } else {
                    format!(" after a {} ramp", format_duration(*ramp))
                };
                let on = match t.kind {
                    TargetKind::None => kind.to_string(),
                    _ => format!(
                        "{}{} ({kind}, {}, region {}+{})",
                        host_prefix(run),
                        t.path.display(),
                        format_size(t.size),
                        format_size(w.region.offset),
                        format_size(w.region.len),
                    ),
                };
                // A verify pass ends by its bytes: the region read once.
                let length = match (step.end.duration, step.end.bytes) {
                    (None, Some(b)) => format!("{} once", format_size(b)),
                    _ => format_duration(*duration),
                };
                let description = format!(
                    "{}{mix} {} QD{} × {} job{} on {on}{}{rate}, {}{ramp_text}",
                    w.rw,
                    w.bs,
                    w.iodepth,
                    w.jobs,
                    if w.jobs == 1 { "" } else { "s" },
                    engine_text(step.engine, &step.engine_options),
                    length,
                );
                self.start(
                    &description,
                    with_host(
                        run,
                        json!({
                            "target": t.path.display().to_string(),
                            "target_kind": t.kind,
                            "target_size": t.size,
                            "workload": w,
                            "engine": step.engine,
                            "engine_options": step.engine_options,
                            "duration_s": duration.as_secs_f64(),
                            "ramp_s": ramp.as_secs_f64(),
                            "interval_s": step.interval.as_secs_f64(),
                            "session": session,
                            "page_cache": run.page_cache(),
                        }),
                    ),
                );
            }
            RunKind::FioJob(f) => {
                let plan = &run.plan;
                self.start(
                    &format!(
                        "fio job file {} ({}) on {} ({}): {} steps",
                        f.file.display(),
                        f.version,
                        t.path.display(),
                        format_size(t.size),
                        plan.steps.len(),
                    ),
                    json!({
                        "fio_job": f.file.display().to_string(),
                        "fio": f.version,
                        "target": t.path.display().to_string(),
                        "target_size": t.size,
                        "steps": plan.steps.len(),
                        "session": session,
                            "page_cache": run.page_cache(),
                    }),
                );
            }
            RunKind::Preset(preset) => {
                let plan = &run.plan;
                self.start(
                    &format!(
                        "preset {} ({}) on {}{} ({}): {} steps in {} phases",
                        preset.id,
                        preset.name,
                        host_prefix(run),
                        t.path.display(),
                        format_size(t.size),
                        plan.steps.len(),
                        plan.phases.len()
                    ),
                    with_host(
                        run,
                        json!({
                            "preset": preset.id,
                            "target": t.path.display().to_string(),
                            "target_size": t.size,
                            "steps": plan.steps.len(),
                            "time_scale": run.options.time_scale,
                            "session": session,
                            "page_cache": run.page_cache(),
                        }),
                    ),
                );
            }
        }
        if run.page_cache() {
            self.note(PAGE_CACHE_NOTE);
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
                "{}: {text}, {} of {} steps run, {} I/O errors",
                self.plan_title, tally.steps_run, tally.steps, tally.errors
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

impl Sink for Printer {
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
            (RunEvent::Ended { .. }, PrintMode::Single) => {}
            (RunEvent::Ended { outcome, tally }, PrintMode::Plan) => {
                let name = self.plan_name.clone();
                self.plan_summary(&name, outcome, tally);
                self.drives.all = false;
            }
            (RunEvent::Saved(p), _) => self.session(p),
            (RunEvent::Verify(_), _) => {}
            (RunEvent::StepStarted { .. } | RunEvent::Snapshot(_), _) => {}
        }
    }
}

/// The engine and its ring options in a run's first line (nothing for plain io_uring):
/// ` with the nop engine`, ` with io_uring (hipri, sqpoll (idle 1000ms))`.
fn engine_text(engine: EngineKind, o: &EngineOptions) -> String {
    match (engine, o.is_default()) {
        (EngineKind::IoUring, true) => String::new(),
        (e, true) => format!(" with the {e} engine"),
        (e, false) => format!(" with the {e} engine ({o})"),
    }
}

fn lat_line(name: &str, l: &LatSummary) -> String {
    format!(
        "  {name:<9} mean {:.1}  min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  p99.99 {:.1}  max {:.1}",
        l.mean, l.min, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max
    )
}

fn summary_text(s: &StepSummary) -> Vec<String> {
    let mut out = Vec::new();
    let engine = match &s.engine_note {
        Some(n) => format!("{} ({n})", s.engine),
        None => s.engine.to_string(),
    };
    out.push(format!(
        "summary: {:.2}s measured, engine {engine}, ended by {}",
        s.runtime_s, s.ended_by
    ));
    if s.read_ios > 0 || s.write_ios == 0 {
        out.push(format!(
            "  read      {} I/Os, {:.0} IOPS, {:.1} MB/s ({:.1} MiB/s)",
            s.read_ios,
            s.read_iops,
            mb(s.read_bw_bytes),
            s.read_bw_bytes / 1048576.0
        ));
    }
    if s.write_ios > 0 {
        out.push(format!(
            "  write     {} I/Os, {:.0} IOPS, {:.1} MB/s ({:.1} MiB/s)",
            s.write_ios,
            s.write_iops,
            mb(s.write_bw_bytes),
            s.write_bw_bytes / 1048576.0
        ));
    }
    if let Some(t) = s.target_iops {
        out.push(format!(
            "  target    {t:.0} IOPS, achieved {:.0} ({:+.2}%)",
            s.iops,
            (s.iops / t - 1.0) * 100.0
        ));
        if let Some(cv) = s.arrival_cv {
            out.push(format!(
                "  arrivals  gaps' coefficient of variation {cv:.3} (poisson ~1, uniform ~0)"
            ));
        }
        if let Some(p) = &s.pacing {
            out.push(format!("  pacing    {}", pacing_text(p)));
        }
    }
    let name = if s.service_lat_us.is_some() {
        "response"
    } else {
        "latency"
    };
    out.push("  latency in µs:".to_string());
    out.push(lat_line(name, &s.lat_us));
    if let Some(svc) = &s.service_lat_us {
        out.push(lat_line("service", svc));
    }
    if s.read_ios > 0 && s.write_ios > 0 {
        out.push(lat_line("read", &s.read_lat_us));
        out.push(lat_line("write", &s.write_lat_us));
    }
    out.push(format!("  errors    {}", s.errors));
    out.extend(s.fio_series.iter().map(|x| format!("  {x}")));
    out
}

/// `HOST:` before a remote target's path; nothing for a target here.
fn host_prefix(run: &Prepared) -> String {
    run.host.name().map(|h| format!("{h}:")).unwrap_or_default()
}

/// A start object with the target's host, when it is another one (a target here gets no
/// key, as before there were hosts).
fn with_host(run: &Prepared, mut v: serde_json::Value) -> serde_json::Value {
    if let (Some(h), Some(m)) = (run.host.name(), v.as_object_mut()) {
        m.insert("host".into(), h.into());
    }
    v
}

/// How a paced step's workers kept to their schedule, in words.
fn pacing_text(p: &crate::outcome::Pacing) -> String {
    use crate::outcome::Pacing;
    match *p {
        Pacing::OnTime { lead_us } => {
            format!("each I/O on time (asleep until {lead_us:.0} µs before it, spinning the rest)")
        }
        Pacing::NoSpareCpu { workers, cpus } => format!(
            "each worker sleeps to its I/O's due time ({workers} paced workers on {cpus} CPUs, \
             none to spare for spinning): a sleep's lateness shows in response time"
        ),
        Pacing::LeadOverHalfPeriod { lead_us, period_us } => format!(
            "each worker sleeps to its I/O's due time (a sleep ends up to {lead_us:.0} µs late \
             here, over half the {period_us:.1} µs between I/Os): the lateness shows in \
             response time"
        ),
    }
}
