//! The headless run's output, two sinks of the run pipeline over a [`std::io::Write`]:
//! text lines ([`TextPrinter`]) or JSON lines ([`JsonPrinter`]), one per interval, step
//! and event, as a plain run or a preset shows them ([`PrintMode`]); a command picks one
//! by [`Format`] ([`Printer`]). A write that fails ends the printer's output, never the
//! run.

mod by_format;
mod diskmark;
mod drives;
mod json;
mod json_sink;
mod sink;
mod steps;
mod text;
mod text_sink;

pub use by_format::Printer;
pub use json::{versioned, JSON_FORMAT};
pub use json_sink::JsonPrinter;
pub use sink::{Format, PrintMode, PAGE_CACHE_NOTE};
pub use text_sink::TextPrinter;

#[cfg(test)]
mod tests;
