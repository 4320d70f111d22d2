//! Paths and arguments are bytes, not text. Where drivescope records one (a session's
//! target, the command line), it keeps every byte: valid UTF-8 as is, a backslash as `\\`,
//! any other byte as `\xNN`. Where it only shows one, `Path::display` is readable enough,
//! but text mode's lines pass through [`printable`]: a label, a path, a model or a serial
//! may hold control characters, and none reaches the terminal raw. Whatever leaves the
//! process on stdout or stderr passes through [`outbound`] (or [`outbound_bytes`]) last,
//! so that no control character reaches a terminal even from text no field filter saw.

use std::borrow::Cow;
use std::ffi::OsStr;

/// `s` with its control characters written out: `\n`, `\r`, `\t`, `\e` (ESC), `\xNN`
/// for the other C0 and C1 controls and DEL, `\u{NNNN}` for the bidirectional overrides
/// and isolates (which reorder what follows them on a terminal). Everything else is kept.
pub fn printable(s: &str) -> Cow<'_, str> {
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

/// Whether `c` may not reach a terminal raw: a control character (C0, DEL, C1) or a
/// bidirectional override or isolate.
fn odd(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `text` as it may leave the process on stdout or stderr: tabs and newlines kept, every
/// other control character and bidirectional override as `\uNNNN`: an escape that JSON
/// and YAML's double-quoted strings read back as the character (so a JSON or YAML document
/// stays one), and that plain text shows as it is. The last filter of the one writer of
/// stdout and stderr (`output`).
pub fn outbound(text: &str) -> Cow<'_, str> {
    let odd = |c: char| odd(c) && c != '\n' && c != '\t';
    if !text.chars().any(odd) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if odd(c) => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `bytes` as [`outbound`] writes text, a byte that is not UTF-8 as `\xNN`; the length of
/// the incomplete character they end with, which is left out (the start of a character
/// whose other bytes the next write brings).
pub fn outbound_bytes(bytes: &[u8], out: &mut Vec<u8>) -> usize {
    let mut chunks = bytes.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        out.extend_from_slice(outbound(chunk.valid()).as_bytes());
        let bad = chunk.invalid();
        let incomplete = std::str::from_utf8(bad).is_err_and(|e| e.error_len().is_none());
        if chunks.peek().is_none() && incomplete {
            return bad.len();
        }
        for b in bad {
            out.extend_from_slice(format!("\\x{b:02X}").as_bytes());
        }
    }
    0
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

    #[test]
    fn what_leaves_the_process_keeps_its_lines_and_nothing_else() {
        assert_eq!(outbound("a\tb\nc é"), "a\tb\nc é");
        let hostile = "x\x1b[2J\x1b]52;c;aGk=\x07\r\u{7f}\u{9b}\u{85}\u{202e}\u{2066}y\n";
        let shown = outbound(hostile);
        assert_eq!(
            shown,
            "x\\u001B[2J\\u001B]52;c;aGk=\\u0007\\u000D\\u007F\\u009B\\u0085\\u202E\\u2066y\n"
        );
        // JSON and YAML read the escapes back as the characters.
        let json = serde_json::to_string(hostile).expect("json");
        let back: String = serde_json::from_str(&outbound(&json)).expect("still JSON");
        assert_eq!(back, hostile);
        let yaml = serde_yaml::to_string(&vec![hostile, "a\u{202e}b"]).expect("yaml");
        let back: Vec<String> = serde_yaml::from_str(&outbound(&yaml)).expect("still YAML");
        assert_eq!(back[0], hostile);
        assert_eq!(
            back[1], "a\\u202Eb",
            "a plain scalar shows the escape as it is"
        );
    }

    #[test]
    fn bytes_out_are_escaped_and_a_split_character_waits_for_its_end() {
        let mut out = Vec::new();
        let bidi = "\u{202e}".as_bytes();
        let left = outbound_bytes(&[b"a\xff\x1b".as_slice(), &bidi[..2]].concat(), &mut out);
        assert_eq!(left, 2);
        assert_eq!(out, b"a\\xFF\\u001B");
        out.clear();
        assert_eq!(outbound_bytes(bidi, &mut out), 0);
        assert_eq!(out, b"\\u202E");
        out.clear();
        assert_eq!(outbound_bytes(b"\xc2\x9b", &mut out), 0, "C1 CSI as UTF-8");
        assert_eq!(out, b"\\u009B");
        out.clear();
        assert_eq!(outbound_bytes(b"\x9b[2J", &mut out), 0, "a raw C1 byte");
        assert_eq!(out, b"\\x9B[2J");
    }
}
