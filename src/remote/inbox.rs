//! The agent's way in: the controller's requests, one JSON object per line, each line read
//! bounded ([`LINE_MAX`]); a line that is not a request is answered as refused and skipped,
//! a line too long ends the requests.

use std::io::BufRead;

use super::outbox::Outbox;
use super::proto::{ToAgent, LINE_MAX};
use crate::lines::{bounded_lines, LineError};

/// The requests read from `input`, until its end, an error reading it, or a line too long
/// (said on `out`).
pub(super) fn requests<'a>(
    input: impl BufRead + 'a,
    out: &'a Outbox,
) -> impl Iterator<Item = ToAgent> + 'a {
    let mut lines = bounded_lines(input, LINE_MAX);
    std::iter::from_fn(move || loop {
        let line = match lines.next()? {
            Ok(l) => l,
            Err(e @ LineError::TooLong { .. }) => {
                out.failed(format!("a request: {e}; the agent ends"), false);
                return None;
            }
            Err(LineError::Io(_)) => return None,
        };
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(r) => return Some(r),
            Err(e) => out.failed(format!("not a request: {e}"), true),
        }
    })
}
