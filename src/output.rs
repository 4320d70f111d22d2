//! The process's one writer of what it shows: every line a command, the headless run's
//! `Printer` or the dashboard prints on stdout or stderr goes through an [`Output`] (this
//! module sits below all of them and uses only `ostext`). A write that fails (a pipe whose
//! reader is gone: EPIPE, as with `| head`; a terminal that has gone away: EIO) ends the
//! output, on stdout and stderr alike: nothing is printed after it, [`output_closed`] says
//! so (the binary then exits 141, as a process killed by SIGPIPE does), and a headless
//! run's printer whose output ended stops its run as a signal does (its answer to the
//! hub): the session still gets its final save and ends `stopped`. Rust ignores SIGPIPE, so a closed pipe is such an error, never a kill;
//! and since nothing here panics, it is never "failed printing to stdout" either.
//! Every byte written here passes through [`crate::ostext::outbound`] first: a control
//! character (other than tab and newline) or a bidirectional override in any text,
//! whoever made it (a session, a drive, a host, an agent), is written out as `\uNNNN`,
//! never handed to the terminal; JSON and YAML stay valid documents.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::ostext::{outbound, outbound_bytes};

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

/// Writes lines; its first failed write ends the output.
#[derive(Debug, Clone, Default)]
pub struct Output {}

impl Output {
    /// `text` and a newline on `stream`, flushed; nothing once the output has ended.
    pub fn line(&self, stream: Stream, text: &str) {
        self.write(stream, &[outbound(text).as_bytes(), b"\n"]);
    }

    /// `text` (its lines end with their own newlines), flushed; nothing once the output
    /// has ended.
    pub fn text(&self, stream: Stream, text: &str) {
        self.write(stream, &[outbound(text).as_bytes()]);
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
            CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// `stream` as a [`Write`] through `output`: each write goes out whole (filtered as
/// [`Output::line`]'s text is) and flushed; the first that fails ends the output as
/// [`Output::line`]'s would (and is returned), and once the output has ended every write
/// fails with `BrokenPipe`. A character whose bytes two writes split goes out with the
/// second.
#[derive(Debug, Clone)]
pub struct StdWriter {
    stream: Stream,
    /// The start of a character the last write ended with.
    pending: Vec<u8>,
}

impl Output {
    /// `stream` as a [`Write`] through this output.
    pub fn writer(&self, stream: Stream) -> StdWriter {
        StdWriter {
            stream,
            pending: Vec::new(),
        }
    }
}

impl Write for StdWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if output_closed() {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let mut shown = Vec::with_capacity(bytes.len() + 8);
        let left = outbound_bytes(&bytes, &mut shown);
        self.pending = bytes.split_off(bytes.len() - left);
        let written = match self.stream {
            Stream::Out => write_all(&mut std::io::stdout().lock(), &[&shown]),
            Stream::Err => write_all(&mut std::io::stderr().lock(), &[&shown]),
        };
        match written {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                CLOSED.store(true, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `--color`: whether what drivescope shows on a terminal is coloured (the dashboard's
/// theme, clap's help and errors). The text and JSON lines of a run carry no colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set (and not empty).
    #[default]
    Auto,
    /// Colour always, `NO_COLOR` or not.
    Always,
    /// No colour.
    Never,
}

/// The environment variable that turns colour off (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";

impl ColorChoice {
    /// Whether to colour an output that is a terminal (`terminal`) or not.
    pub fn colour(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                terminal && std::env::var_os(NO_COLOR).is_none_or(|v| v.is_empty())
            }
        }
    }

    /// The choice a command line states (`--color WHEN` or `--color=WHEN`, the last one
    /// before `--`), read before clap parses it so that clap's own help and errors follow it.
    pub fn stated(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<ColorChoice> {
        use clap::ValueEnum;
        let mut args = args.into_iter();
        let mut found = None;
        while let Some(a) = args.next() {
            let value = match a.to_str() {
                Some("--") => break,
                Some("--color") => args.next(),
                Some(s) => s.strip_prefix("--color=").map(Into::into),
                None => None,
            };
            if let Some(v) = value.as_ref().and_then(|v| v.to_str()) {
                found = ColorChoice::from_str(v, false).ok().or(found);
            }
        }
        found
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_colour_choice_is_found_before_parsing() {
        let args = |s: &str| {
            s.split(' ')
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ColorChoice::stated(args("ds run --color never")),
            Some(ColorChoice::Never)
        );
        assert_eq!(
            ColorChoice::stated(args("ds --color=always run")),
            Some(ColorChoice::Always)
        );
        assert_eq!(ColorChoice::stated(args("ds run -- --color never")), None);
        assert_eq!(ColorChoice::stated(args("ds run")), None);
        assert!(!ColorChoice::Never.colour(true));
        assert!(ColorChoice::Always.colour(false));
        assert!(!ColorChoice::Auto.colour(false));
    }
}
