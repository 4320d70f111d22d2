//! Headless output: one text line or JSON object per interval, notes, I/O errors, and the
//! step summary. JSON lines carry `"type"`: `start`, `interval`, `note`, `io_error`,
//! `summary`, `session` (bandwidth in bytes per second, latency in µs).

use std::io::Write;

use serde::Serialize;
use serde_json::{json, Value};

use crate::runner::{RunEventRecord, StepRecord};
use crate::stats::{IntervalReport, IoErrorRecord, LatSummary, StepSummary};

/// Text or JSON lines on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

fn mb(bytes_per_s: f64) -> f64 {
    bytes_per_s / 1e6
}

/// Writes one JSON line; a closed stdout (e.g. `| head`) is ignored.
pub fn json_line(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// Prints intervals and summaries in one format.
pub struct Printer {
    pub format: Format,
    header_done: bool,
}

impl Printer {
    pub fn new(format: Format) -> Self {
        Printer {
            format,
            header_done: false,
        }
    }

    /// The run's description, once, before the first interval.
    pub fn start(&mut self, description: &str, extra: Value) {
        match self.format {
            Format::Text => println!("{description}"),
            Format::Json => {
                let mut v = json!({"type": "start", "description": description});
                if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
                    o.extend(e);
                }
                json_line(&v);
            }
        }
    }

    pub fn note(&mut self, message: &str) {
        match self.format {
            Format::Text => eprintln!("note: {message}"),
            Format::Json => json_line(&json!({"type": "note", "message": message})),
        }
    }

    /// Where the session was saved (stderr in text mode).
    pub fn session(&mut self, path: &std::path::Path) {
        match self.format {
            Format::Text => eprintln!("note: session saved to {}", path.display()),
            Format::Json => {
                json_line(&json!({"type": "session", "path": path.display().to_string()}))
            }
        }
    }

    pub fn io_error(&mut self, e: &IoErrorRecord) {
        match self.format {
            Format::Text => eprintln!("I/O error: {}", e.message),
            Format::Json => {
                let mut v = to_value(e);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("io_error"));
                }
                json_line(&v);
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
                    println!(
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
                    self.header_done = true;
                }
                let ramp = if r.ramp { " ramp" } else { "" };
                println!(
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
                );
            }
            Format::Json => {
                let mut v = to_value(r);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("interval"));
                }
                json_line(&v);
            }
        }
    }

    pub fn summary(&mut self, s: &StepSummary, extra: Value) {
        match self.format {
            Format::Text => print_summary_text(s),
            Format::Json => {
                let mut v = to_value(s);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("summary"));
                    if let Value::Object(e) = extra {
                        o.extend(e);
                    }
                }
                json_line(&v);
            }
        }
    }
}

impl Printer {
    /// A step as it ends: one point of the curve.
    pub fn step(&mut self, r: &StepRecord, count: usize) {
        match self.format {
            Format::Text => {
                let s = &r.summary;
                let target = r
                    .target_iops
                    .map(|t| format!("target {t:.0} IOPS, "))
                    .unwrap_or_default();
                let svc = s
                    .service_lat_us
                    .map(|l| format!("; service mean {:.1} µs", l.mean))
                    .unwrap_or_default();
                println!(
                    "step {}/{count} {}: {target}achieved {:.0} IOPS, {:.1} MB/s, mean {:.1} µs, \
                     p99 {:.1} µs, p99.9 {:.1} µs{svc}, {} errors ({:.1}s, ended by {})",
                    r.index + 1,
                    r.name,
                    s.iops,
                    mb(s.read_bw_bytes + s.write_bw_bytes),
                    s.lat_us.mean,
                    s.lat_us.p99,
                    s.lat_us.p99_9,
                    s.errors,
                    s.runtime_s,
                    s.ended_by
                );
            }
            Format::Json => {
                let mut v = to_value(r);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("step"));
                    o.insert("count".into(), json!(count));
                }
                json_line(&v);
            }
        }
    }

    /// A run event: phase change, steady state, skip, errors.
    pub fn event(&mut self, e: &RunEventRecord) {
        match self.format {
            Format::Text => println!("[{:>7.1}s] {}: {}", e.t_s, e.kind, e.text),
            Format::Json => {
                let mut v = to_value(e);
                if let Some(o) = v.as_object_mut() {
                    o.insert("type".into(), json!("event"));
                }
                json_line(&v);
            }
        }
    }
}

fn lat_line(name: &str, l: &LatSummary) -> String {
    format!(
        "  {name:<9} mean {:.1}  min {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  p99.99 {:.1}  max {:.1}",
        l.mean, l.min, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max
    )
}

fn print_summary_text(s: &StepSummary) {
    let engine = match &s.engine_note {
        Some(n) => format!("{} ({n})", s.engine),
        None => s.engine.clone(),
    };
    println!(
        "summary: {:.2}s measured, engine {engine}, ended by {}",
        s.runtime_s, s.ended_by
    );
    if s.read_ios > 0 || s.write_ios == 0 {
        println!(
            "  read      {} I/Os, {:.0} IOPS, {:.1} MB/s ({:.1} MiB/s)",
            s.read_ios,
            s.read_iops,
            mb(s.read_bw_bytes),
            s.read_bw_bytes / 1048576.0
        );
    }
    if s.write_ios > 0 {
        println!(
            "  write     {} I/Os, {:.0} IOPS, {:.1} MB/s ({:.1} MiB/s)",
            s.write_ios,
            s.write_iops,
            mb(s.write_bw_bytes),
            s.write_bw_bytes / 1048576.0
        );
    }
    if let Some(t) = s.target_iops {
        println!(
            "  target    {t:.0} IOPS, achieved {:.0} ({:+.2}%)",
            s.iops,
            (s.iops / t - 1.0) * 100.0
        );
    }
    let name = if s.service_lat_us.is_some() {
        "response"
    } else {
        "latency"
    };
    println!("  latency in µs:");
    println!("{}", lat_line(name, &s.lat_us));
    if let Some(svc) = &s.service_lat_us {
        println!("{}", lat_line("service", svc));
    }
    if s.read_ios > 0 && s.write_ios > 0 {
        println!("{}", lat_line("read", &s.read_lat_us));
        println!("{}", lat_line("write", &s.write_lat_us));
    }
    println!("  errors    {}", s.errors);
}
