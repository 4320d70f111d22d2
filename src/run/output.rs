//! Headless output's one writer: every line the [`Printer`](super::Printer) shows goes
//! through an [`Output`]. A write that fails (a pipe whose reader is gone: EPIPE, as with
//! `| head`; a terminal that has gone away: EIO) ends the output, on stdout and stderr
//! alike, and stops the run as a signal does: its session still gets its final save and
//! ends `stopped`. Rust ignores SIGPIPE, so a closed pipe is such an error, never a kill.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Set once a write to stdout or stderr failed: the process's output has ended.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write of the headless output failed (nothing has been printed since).
pub fn output_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Where a line goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

/// Writes lines; its first failed write ends the output and sets the run's stop flag.
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
        if output_closed() {
            return;
        }
        let written = match stream {
            Stream::Out => write_line(&mut std::io::stdout().lock(), text),
            Stream::Err => write_line(&mut std::io::stderr().lock(), text),
        };
        if written.is_err() {
            CLOSED.store(true, Ordering::Relaxed);
            if let Some(stop) = &self.stop {
                stop.store(true, Ordering::Relaxed);
            }
        }
    }
}

fn write_line(w: &mut impl Write, text: &str) -> std::io::Result<()> {
    w.write_all(text.as_bytes())?;
    w.write_all(b"\n")?;
    w.flush()
}
