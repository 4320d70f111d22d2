//! The headless run's printer as a command picks it by [`Format`]: the text sink or the
//! JSON-lines sink, on the process's stdout (and stderr).

use std::io::Write;

use super::json_sink::JsonPrinter;
use super::sink::{route, Format, PrintMode};
use super::text_sink::TextPrinter;
use crate::output::StdWriter;
use crate::run::{RunEvent, RunView, Sink, SinkFlow};

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
}

impl<W: Write> Sink for Printer<W> {
    fn event(&mut self, view: &RunView, ev: &RunEvent) -> SinkFlow {
        match self {
            Printer::Text(p) => route(p, view, ev),
            Printer::Json(p) => route(p, view, ev),
        }
    }
}
