//! Paths and arguments are bytes, not text. Where drivescope records one (a session's
//! target, the command line), it keeps every byte: valid UTF-8 as is, a backslash as `\\`,
//! any other byte as `\xNN`. Where it only shows one, `Path::display` is readable enough,
//! but text mode's lines pass through [`printable`]: a label, a path, a model or a serial
//! may hold control characters, and none reaches the terminal raw.

use std::borrow::Cow;
use std::ffi::OsStr;

/// `s` with its control characters written out: `\n`, `\r`, `\t`, `\e` (ESC), `\xNN`
/// for the other C0 and C1 controls and DEL, `\u{NNNN}` for the bidirectional overrides
/// and isolates (which reorder what follows them on a terminal). Everything else is kept.
pub fn printable(s: &str) -> Cow<'_, str> {
    let odd =
        |c: char| c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(odd) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_control() => out.push_str(&format!("\\x{:02X}", u32::from(c))),
            c if odd(c) => out.push_str(&format!("\\u{{{:04X}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `s` as text that loses nothing: `\xNN` for bytes that are not UTF-8, `\\` for `\`.
pub fn escaped(s: &OsStr) -> String {
    let mut out = String::new();
    for chunk in s.as_encoded_bytes().utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// The command line as typed, quoted where a shell would need it; every byte kept
/// ([`escaped`]).
pub fn command_line() -> String {
    std::env::args_os()
        .map(|a| {
            let text = escaped(&a);
            if !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                text
            } else {
                format!("'{}'", text.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn every_byte_is_kept() {
        assert_eq!(escaped(OsStr::new("/dev/nvme0n1")), "/dev/nvme0n1");
        assert_eq!(
            escaped(OsStr::from_bytes(b"/tmp/x\xff.bin")),
            "/tmp/x\\xFF.bin"
        );
        assert_eq!(
            escaped(OsStr::new("a\\xFF")),
            "a\\\\xFF",
            "a literal backslash stays apart"
        );
        assert_eq!(escaped(OsStr::new("é")), "é");
    }

    #[test]
    fn control_characters_are_written_out() {
        assert_eq!(printable("lab é/dev/sda"), "lab é/dev/sda");
        assert_eq!(
            printable("a\nsummary: x\x1b[2J\r\t\u{7f}\u{85}\u{202e}"),
            "a\\nsummary: x\\e[2J\\r\\t\\x7F\\x85\\u{202E}"
        );
    }
}
