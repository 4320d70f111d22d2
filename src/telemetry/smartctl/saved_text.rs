//! A saved smartctl output as text: at most [`MAX_OUTPUT_BYTES`], refused before it fills
//! memory; UTF-8 with or without a byte-order mark, or UTF-16 (what PowerShell's `>`
//! writes) decoded; UTF-32 and bytes that are not text refused, naming what they are.
//!
//! The size cap is checked here, in the smartctl reader: the crate has no shared capped
//! input reader yet.

use std::fmt;
use std::io::Read;
use std::path::Path;

use super::SmartctlError;

/// The largest smartctl output read: `smartctl -x -j` of a drive with full logs is a few
/// hundred KB.
pub const MAX_OUTPUT_BYTES: u64 = 4 << 20;

/// A text encoding a file can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf16Le => "UTF-16LE",
            Encoding::Utf16Be => "UTF-16BE",
            Encoding::Utf32Le => "UTF-32LE",
            Encoding::Utf32Be => "UTF-32BE",
        })
    }
}

/// Why bytes are not text drivescope reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TextProblem {
    #[error("the file is {0} text, which drivescope does not read: save it as UTF-8")]
    Unsupported(Encoding),
    #[error("the file is not valid {encoding} text (at byte {at})")]
    Invalid { encoding: Encoding, at: usize },
}

/// The encoding of `b` and the length of its byte-order mark: by the mark, else by where
/// the NUL bytes of a JSON text's first ASCII character fall (RFC 4627, section 3).
fn sniff(b: &[u8]) -> (Encoding, usize) {
    match b {
        [0xFF, 0xFE, 0, 0, ..] => (Encoding::Utf32Le, 4),
        [0, 0, 0xFE, 0xFF, ..] => (Encoding::Utf32Be, 4),
        [0xEF, 0xBB, 0xBF, ..] => (Encoding::Utf8, 3),
        [0xFF, 0xFE, ..] => (Encoding::Utf16Le, 2),
        [0xFE, 0xFF, ..] => (Encoding::Utf16Be, 2),
        [0, 0, 0, x, ..] if *x != 0 => (Encoding::Utf32Be, 0),
        [x, 0, 0, 0, ..] if *x != 0 => (Encoding::Utf32Le, 0),
        [0, x, ..] if *x != 0 => (Encoding::Utf16Be, 0),
        [x, 0, ..] if *x != 0 => (Encoding::Utf16Le, 0),
        _ => (Encoding::Utf8, 0),
    }
}

fn utf16(b: &[u8], big_endian: bool, encoding: Encoding) -> Result<String, TextProblem> {
    let units = b.chunks(2).map(|c| match (c, big_endian) {
        ([hi, lo], true) | ([lo, hi], false) => u16::from_le_bytes([*lo, *hi]),
        // An odd last byte: not a code unit, and so not valid.
        _ => 0xDC00,
    });
    let mut s = String::with_capacity(b.len() / 2);
    for (i, c) in char::decode_utf16(units).enumerate() {
        s.push(c.map_err(|_| TextProblem::Invalid {
            encoding,
            at: 2 * i,
        })?);
    }
    Ok(s)
}

/// The text of `b`, whatever of the encodings drivescope reads it is in.
pub fn decode_text(b: &[u8]) -> Result<String, TextProblem> {
    let (encoding, bom) = sniff(b);
    let body = &b[bom..];
    let offset = |at: usize| at + bom;
    match encoding {
        Encoding::Utf8 => {
            std::str::from_utf8(body)
                .map(str::to_string)
                .map_err(|e| TextProblem::Invalid {
                    encoding,
                    at: offset(e.valid_up_to()),
                })
        }
        Encoding::Utf16Le | Encoding::Utf16Be => {
            utf16(body, encoding == Encoding::Utf16Be, encoding).map_err(|e| match e {
                TextProblem::Invalid { encoding, at } => TextProblem::Invalid {
                    encoding,
                    at: offset(at),
                },
                other => other,
            })
        }
        Encoding::Utf32Le | Encoding::Utf32Be => Err(TextProblem::Unsupported(encoding)),
    }
}

/// Reads `r` to its end, or `None` as soon as it gives more than `cap` bytes.
pub fn read_capped(r: impl Read, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut out = Vec::new();
    r.take(cap.saturating_add(1)).read_to_end(&mut out)?;
    Ok((out.len() as u64 <= cap).then_some(out))
}

/// The text of a saved smartctl output (`-` for standard input): read through the one
/// capped input reader ([`crate::user_file`]: a regular file, never a FIFO or a device, at
/// most the cap), then decoded from whatever encoding it is in.
pub fn read_file(path: &Path) -> Result<String, SmartctlError> {
    let bytes = crate::user_file::read_input_or_stdin(path, MAX_OUTPUT_BYTES, "smartctl JSON")?;
    decode_text(&bytes).map_err(|problem| SmartctlError::Text {
        path: path.to_path_buf(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16le(s: &str, bom: bool) -> Vec<u8> {
        let mut b = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
        b.extend(s.encode_utf16().flat_map(u16::to_le_bytes));
        b
    }

    #[test]
    fn boms_and_utf16_are_read() {
        assert_eq!(
            decode_text(b"\xEF\xBB\xBF{\"a\": 1}").unwrap(),
            "{\"a\": 1}"
        );
        assert_eq!(
            decode_text(&utf16le("{\"t\": \"°\"}", true)).unwrap(),
            "{\"t\": \"°\"}"
        );
        assert_eq!(decode_text(&utf16le("{}", false)).unwrap(), "{}");
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("{}".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode_text(&be).unwrap(), "{}");
        assert_eq!(decode_text(b"").unwrap(), "");
    }

    #[test]
    fn what_is_not_read_is_named() {
        let e = decode_text(b"\xFF\xFE\0\0{\0\0\0").unwrap_err();
        assert_eq!(e, TextProblem::Unsupported(Encoding::Utf32Le));
        assert!(e.to_string().contains("UTF-32LE"), "{e}");
        let e = decode_text(b"{\"a\": \"\xFF\"}").unwrap_err();
        assert_eq!(
            e,
            TextProblem::Invalid {
                encoding: Encoding::Utf8,
                at: 7
            }
        );
        let mut odd = utf16le("{}", true);
        odd.push(b'x');
        assert!(matches!(
            decode_text(&odd),
            Err(TextProblem::Invalid {
                encoding: Encoding::Utf16Le,
                ..
            })
        ));
    }

    #[test]
    fn the_cap_stops_reading() {
        let big = [b' '; 100];
        assert_eq!(
            read_capped(&big[..], 100).unwrap().map(|v| v.len()),
            Some(100)
        );
        assert_eq!(read_capped(&big[..], 99).unwrap(), None);
        let endless = std::io::repeat(b' ');
        assert_eq!(
            read_capped(endless, 1 << 16).unwrap(),
            None,
            "stops, never fills memory"
        );
    }
}
