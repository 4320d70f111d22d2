//! The process's one writer of what it shows: every line a command, the headless run's
//! `Printer` or the dashboard prints on stdout or stderr goes through an [`Output`] (this
//! module sits below all of them and uses none). A write that fails (a pipe whose reader is gone: EPIPE, as with
//! `| head`; a terminal that has gone away: EIO) ends the output, on stdout and stderr
//! alike: nothing is printed after it, [`output_closed`] says so (the binary then exits
//! 141, as a process killed by SIGPIPE does), and an output made [`Output::stopping`] a
//! run also stops that run as a signal does: its session still gets its final save and
//! ends `stopped`. Rust ignores SIGPIPE, so a closed pipe is such an error, never a kill;
//! and since nothing here panics, it is never "failed printing to stdout" either.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once a write to stdout or stderr failed: the process's output has ended.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write to stdout or stderr failed (nothing has been printed since).
pub fn output_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Where a line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// Writes lines; its first failed write ends the output (and sets the run's stop flag,
/// when it has one).
#[derive(Debug, Clone, Default)]
pub struct Output {
    stop: Option<Arc<AtomicBool>>,
}

impl Output {
    /// An output whose failure stops the run that `stop` stops (the signal handlers' flag).
    pub fn stopping(stop: Arc<AtomicBool>) -> Output {
        Output { stop: Some(stop) }
    }

    /// `text` and a newline on `stream`, flushed; nothing once the output has ended.
    pub fn line(&self, stream: Stream, text: &str) {
        self.write(stream, &[text.as_bytes(), b"\n"]);
    }

    /// `text` as it is (its lines end with their own newlines), flushed; nothing once the
    /// output has ended.
    pub fn text(&self, stream: Stream, text: &str) {
        self.write(stream, &[text.as_bytes()]);
    }

    fn write(&self, stream: Stream, parts: &[&[u8]]) {
        if output_closed() {
            return;
        }
        let written = match stream {
            Stream::Out => write_all(&mut std::io::stdout().lock(), parts),
            Stream::Err => write_all(&mut std::io::stderr().lock(), parts),
        };
        if written.is_err() {
            self.closed();
        }
    }

    /// The output has ended: nothing more is printed, and the run it stops is stopped.
    fn closed(&self) {
        CLOSED.store(true, Ordering::Relaxed);
        if let Some(stop) = &self.stop {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

/// `stream` as a [`Write`] through `output`: each write goes out whole and flushed; the
/// first that fails ends the output as [`Output::line`]'s would (and is returned), and
/// once the output has ended every write fails with `BrokenPipe`.
#[derive(Debug, Clone)]
pub struct StdWriter {
    stream: Stream,
    output: Output,
}

impl Output {
    /// `stream` as a [`Write`] through this output.
    pub fn writer(&self, stream: Stream) -> StdWriter {
        StdWriter {
            stream,
            output: self.clone(),
        }
    }
}

impl Write for StdWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if output_closed() {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let written = match self.stream {
            Stream::Out => write_all(&mut std::io::stdout().lock(), &[buf]),
            Stream::Err => write_all(&mut std::io::stderr().lock(), &[buf]),
        };
        match written {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.output.closed();
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A line on stdout through a plain [`Output`].
pub fn out_line(text: &str) {
    Output::default().line(Stream::Out, text);
}

/// A line on stderr through a plain [`Output`].
pub fn err_line(text: &str) {
    Output::default().line(Stream::Err, text);
}

fn write_all(w: &mut impl Write, parts: &[&[u8]]) -> std::io::Result<()> {
    for p in parts {
        w.write_all(p)?;
    }
    w.flush()
}
