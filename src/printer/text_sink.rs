//! The headless run as text: its lines on stdout (intervals under their header, a step's
//! lines, events, the steps table) and notes, I/O errors and where the session went on
//! stderr; in a run of several drives each line after its drive's label, padded so that
//! the rows line up. Control characters are escaped: none reaches the terminal raw.

use std::io::Write;

use serde_json::Value;

use super::drives::{IntervalFigures, Sums};
use super::sink::{outcome_text, route, Core, FormatPrinter, PrintMode};
use super::text::{interval_header, interval_row, step_lines, summary_text};
use crate::outcome::RunOutcome;
use crate::output::{Output, StdWriter, Stream};
use crate::run::{FinishedStep, RunEvent, RunView, Sink, SinkFlow, Tally, Timed};
use crate::session::{GridCell, RunSeries, StepResult};
use crate::stats::{FailedBy, IntervalReport, IoErrorRecord};
use crate::telemetry::WearSpan;
use crate::thermal::SoakSummary;
use crate::ui::format::{bw, iops, us};
use crate::units::count;

/// Prints a run as text on two writers: stdout's lines on `out`, notes and I/O errors on
/// `err`. The first write that fails ends the output (nothing more is written) and the
/// run (its session saved); on the process's own stdout and stderr ([`StdWriter`]) it
/// ends the process's output too (exit 141).
pub struct TextPrinter<W: Write = StdWriter> {
    core: Core,
    out: W,
    err: W,
    /// A write failed: nothing more is written.
    ended: bool,
    /// The last line written was the intervals' header or one of their rows: the next row
    /// goes under it. Any other line (a step's, an event, a note) closes the rows, and the
    /// next row gets the header again, so no row stands without its columns' names.
    rows_open: bool,
}

impl TextPrinter<StdWriter> {
    /// A printer on the process's stdout and stderr.
    pub fn new(mode: PrintMode) -> Self {
        let o = Output::default();
        TextPrinter::on(mode, o.writer(Stream::Out), o.writer(Stream::Err))
    }
}

impl<W: Write> TextPrinter<W> {
    /// A printer writing stdout's lines to `out` and stderr's to `err`.
    pub fn on(mode: PrintMode, out: W, err: W) -> Self {
        TextPrinter {
            core: Core::new(mode),
            out,
            err,
            ended: false,
            rows_open: false,
        }
    }

    /// The writers, back (what a test reads).
    pub fn into_writers(self) -> (W, W) {
        (self.out, self.err)
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
        if !super::sink::write_line(w, line) {
            self.ended = true;
        }
    }

    /// A line of text on `stream`, its control characters escaped (a label, a path, a
    /// model or fio's words may hold any: none reaches the terminal raw, and a newline
    /// in one cannot print a line of its own).
    fn say(&mut self, stream: Stream, line: &str) {
        self.put(stream, &crate::ostext::printable(line));
    }

    /// A line of text on stdout, with the drive's label first in a run of several, padded
    /// to the longest label so that what follows lines up.
    fn text(&mut self, line: &str) {
        let line = match &self.core.label {
            Some(l) => {
                let l = crate::ostext::printable(l);
                let pad = self.core.label_width.saturating_sub(l.chars().count());
                format!("[{l}]{} {line}", " ".repeat(pad))
            }
            None => line.to_string(),
        };
        self.say(Stream::Out, &line)
    }

    /// A line on stderr, after `what` and the drive's label in a run of several.
    fn aside(&mut self, what: &str, message: &str) {
        let line = match &self.core.label {
            Some(l) => format!("{what}: [{l}] {message}"),
            None => format!("{what}: {message}"),
        };
        self.say(Stream::Err, &line)
    }

    /// An interval's row of text, under the header (written again when another line came
    /// between).
    fn row(&mut self, line: &str) {
        if !self.rows_open {
            let indent = match self.core.label_width {
                0 => 0,
                w => w + 3,
            };
            let header = format!("{}{}", " ".repeat(indent), interval_header());
            self.put(Stream::Out, &header);
        }
        self.text(line);
        self.rows_open = true;
    }

    /// Lines of a table, as they are.
    fn table(&mut self, lines: Vec<String>) {
        for line in lines {
            self.say(Stream::Out, &line);
        }
    }
}

impl<W: Write> FormatPrinter for TextPrinter<W> {
    fn core(&mut self) -> &mut Core {
        &mut self.core
    }

    fn ended(&self) -> bool {
        self.ended
    }

    fn start(&mut self, description: &str, _extra: Value) {
        self.text(description)
    }

    fn note(&mut self, message: &str) {
        self.aside("note", message)
    }

    fn io_error(&mut self, e: &IoErrorRecord) {
        let what = match e.by() {
            FailedBy::Drive => "I/O error",
            FailedBy::Request => "refused",
        };
        self.aside(what, &e.message)
    }

    fn interval(&mut self, r: &IntervalReport) {
        let mut tail = String::new();
        // Trims (a trim job's) after the columns, only in an interval that trims.
        if r.trim.ios > 0 {
            tail = format!("  trim {} IOPS {}", iops(r.trim_iops), bw(r.trim_bw_bytes));
        }
        if r.ramp {
            tail.push_str(" ramp");
        }
        if r.suspended_s > 0.0 {
            tail.push_str(&format!(" process suspended for {:.1}s", r.suspended_s));
        }
        let l = &r.lat_us;
        let row = interval_row(
            r.end_s,
            [r.read_iops, r.read_bw_bytes, r.write_iops, r.write_bw_bytes],
            [us(l.p50), us(l.p99), us(l.p99_9)],
            r.errors,
        );
        self.row(&format!("{row}{tail}"));
    }

    fn all_interval(&mut self, f: &IntervalFigures, drives: usize) {
        let row = interval_row(
            f.end_s,
            [f.read_iops, f.read_bw, f.write_iops, f.write_bw],
            [String::new(), us(f.p99), String::new()],
            f.errors,
        );
        self.row(&format!(
            "{row}  ({}; resp p99: the worst)",
            count(drives, "drive")
        ));
    }

    fn all_summary(&mut self, s: &Sums) {
        let trims = if s.trim_iops > 0.0 {
            format!(", {} trim", iops(s.trim_iops))
        } else {
            String::new()
        };
        self.text(&format!(
            "summary of {}: {}, {} IOPS ({} read, {} write{trims}), {}, {}",
            count(s.drives, "drive"),
            count(s.ios, "I/O"),
            iops(s.read_iops + s.write_iops + s.trim_iops),
            iops(s.read_iops),
            iops(s.write_iops),
            bw(s.read_bw + s.write_bw + s.trim_bw),
            count(s.errors, "error")
        ))
    }

    fn summary(&mut self, r: &FinishedStep) {
        for line in summary_text(&r.summary) {
            self.text(&line);
        }
    }

    fn step(&mut self, r: &FinishedStep, steps: usize) {
        for line in step_lines(r, steps) {
            self.text(&line);
        }
    }

    fn happened(&mut self, e: &Timed) {
        self.text(&format!("[{:>7.1}s] {}: {}", e.t_s, e.what.kind(), e.what))
    }

    fn verified(&mut self, e: &Timed) {
        self.happened(e)
    }

    fn wear(&mut self, w: &WearSpan) {
        if let Some(l) = crate::telemetry::wear_text::line(w) {
            self.text(&l);
        }
    }

    fn soak(&mut self, sum: &SoakSummary) {
        self.text("thermal soak:");
        for (k, v) in crate::report::soak::rows(sum) {
            self.text(&format!("  {k}: {v}"));
        }
    }

    fn plan_summary(&mut self, _preset_id: &str, outcome: &RunOutcome, tally: &Tally) {
        let title = self.core.plan_title.clone();
        self.text(&format!(
            "{title}: {}, {} of {} run, {}",
            outcome_text(outcome),
            tally.steps_run,
            count(tally.steps, "step"),
            count(tally.errors, "I/O error")
        ))
    }

    fn steps_table(&mut self, results: &[StepResult]) {
        self.table(super::steps::table(results))
    }

    fn run_series(&mut self, series: &[RunSeries]) {
        self.table(super::diskmark::series(series))
    }

    fn diskmark_grid(&mut self, cells: &[GridCell]) {
        self.table(super::diskmark::grid(cells))
    }

    fn session(&mut self, path: &std::path::Path) {
        self.say(
            Stream::Err,
            &format!("note: session saved to {}", path.display()),
        )
    }
}

impl<W: Write> Sink for TextPrinter<W> {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        route(self, view, ev)
    }
}
