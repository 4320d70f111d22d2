//! Paths and arguments are bytes, not text. Where drivescope records one (a session's
//! target, the command line), it keeps every byte: valid UTF-8 as is, a backslash as `\\`,
//! any other byte as `\xNN`. Where it only shows one, `Path::display` is readable enough.

use std::ffi::OsStr;

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
}
