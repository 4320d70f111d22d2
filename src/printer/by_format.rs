//! The headless run's printer as a command picks it by [`Format`]: the text sink or the
//! JSON-lines sink, on the process's stdout (and stderr).

use std::io::Write;

use super::json_sink::JsonPrinter;
use super::sink::{route, route_drive, Format, FormatPrinter, PrintMode};
use super::text_sink::TextPrinter;
use crate::output::StdWriter;
use crate::run::{RunEvent, Sink};

/// The headless run's printer, as a command picks it by [`Format`]: text lines on stdout
/// and stderr, or JSON lines on stdout.
pub enum Printer<W: Write = StdWriter> {
    Text(TextPrinter<W>),
    Json(JsonPrinter<W>),
}

impl Printer<StdWriter> {
    /// A printer on the process's stdout and stderr.
    pub fn new(format: Format, mode: PrintMode) -> Self {
        match format {
            Format::Text => Printer::Text(TextPrinter::new(mode)),
            Format::Json => Printer::Json(JsonPrinter::new(mode)),
        }
    }

    /// A closed stdout or stderr (EPIPE, EIO) ends the output and sets `stop`: the run
    /// stops as on a signal, its session saved.
    pub fn stop_on_closed_output(&mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        match self {
            Printer::Text(p) => p.stop_on_closed_output(stop),
            Printer::Json(p) => p.stop_on_closed_output(stop),
        }
    }
}

impl<W: Write> Printer<W> {
    /// A run of several drives: their labels, in order, so every line says whose it is.
    pub fn set_drives(&mut self, labels: Vec<String>) {
        match self {
            Printer::Text(p) => p.core().set_drives(labels),
            Printer::Json(p) => p.core().set_drives(labels),
        }
    }
}

impl<W: Write> Sink for Printer<W> {
    fn event(&mut self, ev: &RunEvent) {
        match self {
            Printer::Text(p) => route(p, ev),
            Printer::Json(p) => route(p, ev),
        }
    }

    fn drive_event(&mut self, drive: usize, ev: &RunEvent) {
        match self {
            Printer::Text(p) => route_drive(p, drive, ev),
            Printer::Json(p) => route_drive(p, drive, ev),
        }
    }
}
