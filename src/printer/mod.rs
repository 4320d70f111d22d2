//! The headless run's output, a sink of the run pipeline over a [`std::io::Write`]: text
//! lines or JSON lines ([`Format`]), one per interval, step and event, as a plain run or a
//! preset shows them ([`PrintMode`]). A write that fails ends the printer's output, never
//! the run.

mod diskmark;
mod drives;
mod json;
mod sink;
mod steps;
mod text;

pub use json::{versioned, JSON_FORMAT};
pub use sink::{Format, PrintMode, Printer, PAGE_CACHE_NOTE};

#[cfg(test)]
mod tests;
