//! Lines read from another program (fio's output, a host's agent) have a bound: a line
//! that grows past it, without its end, is a typed error ([`LineError::TooLong`]) and the
//! stream is read no further, so no peer can make drivescope hold all it sends.

use std::io::BufRead;

/// Why no more lines are read.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("a line longer than {limit} bytes without its end")]
    TooLong { limit: usize },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The lines of `r`, each at most `limit` bytes (its `\n`, and a `\r` before it, taken
/// off; bytes that are not UTF-8 replaced); after an error, none.
pub struct BoundedLines<R> {
    r: R,
    limit: usize,
    done: bool,
}

/// [`BoundedLines`] of `r`.
pub fn bounded_lines<R: BufRead>(r: R, limit: usize) -> BoundedLines<R> {
    BoundedLines {
        r,
        limit,
        done: false,
    }
}

impl<R: BufRead> BoundedLines<R> {
    fn next_line(&mut self) -> Result<Option<String>, LineError> {
        let mut line = Vec::new();
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            };
            if buf.is_empty() {
                return Ok((!line.is_empty()).then(|| text(line)));
            }
            let (take, end) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            if line.len() + take > self.limit {
                return Err(LineError::TooLong { limit: self.limit });
            }
            line.extend_from_slice(&buf[..take]);
            self.r.consume(take + usize::from(end));
            if end {
                return Ok(Some(text(line)));
            }
        }
    }
}

fn text(mut line: Vec<u8>) -> String {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    match String::from_utf8(line) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = Result<String, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_line().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_the_bound_end_the_reading() {
        let got: Vec<_> = bounded_lines(&b"ab\r\ncd\nefghij\nk"[..], 4).collect();
        assert!(matches!(&got[0], Ok(l) if l == "ab"));
        assert!(matches!(&got[1], Ok(l) if l == "cd"));
        assert!(matches!(got[2], Err(LineError::TooLong { limit: 4 })));
        assert_eq!(got.len(), 3, "nothing after the error");
        let last: Vec<_> = bounded_lines(&b"a\nbc"[..], 4)
            .map(Result::unwrap)
            .collect();
        assert_eq!(last, ["a", "bc"], "a last line without its end");
    }
}
