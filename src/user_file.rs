//! Reading the files a user names (a preset, a session, its histogram log, a saved
//! smartctl output, a keymap or theme): only a regular file (or `-`, standard input, where
//! a command takes it), at most a stated size, so that a FIFO never blocks and a device is
//! never read until memory runs out. [`FileKind`] names what a path is, for these messages
//! and for the checks of the files drivescope writes; [`flow_depth_over`] bounds YAML's
//! nesting before a parser, slow on deep nesting, sees the text.

use std::fmt;
use std::fs::{FileType, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::units::format_size;

/// What a path is, as `lstat` or `stat` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl FileKind {
    pub fn of(t: FileType) -> FileKind {
        type Is = fn(&FileType) -> bool;
        let kinds: [(Is, FileKind); 7] = [
            (FileType::is_file, FileKind::Regular),
            (FileType::is_dir, FileKind::Directory),
            (FileType::is_symlink, FileKind::Symlink),
            (FileType::is_fifo, FileKind::Fifo),
            (FileType::is_socket, FileKind::Socket),
            (FileType::is_char_device, FileKind::CharDevice),
            (FileType::is_block_device, FileKind::BlockDevice),
        ];
        let found = kinds.into_iter().find(|(is, _)| is(&t));
        found.map_or(FileKind::Other, |(_, kind)| kind)
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "neither a file nor a directory",
        })
    }
}

/// One mebibyte, the unit of the caps below.
pub const MIB: u64 = 1 << 20;

/// Why a file the user named could not be read.
#[derive(Debug, Error)]
pub enum InputError {
    #[error("{}: cannot read the {what}: {source}", path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{}: is {kind}; the {what} is read only from a regular file (of at most {})",
        path.display(), format_size(*cap)
    )]
    NotAFile {
        path: PathBuf,
        what: &'static str,
        kind: FileKind,
        cap: u64,
    },
    #[error(
        "{}: the {what} is larger than the {} drivescope reads{}",
        path.display(), format_size(*cap),
        size.map(|s| format!(" ({})", format_size(s))).unwrap_or_default()
    )]
    TooLarge {
        path: PathBuf,
        what: &'static str,
        cap: u64,
        /// The size `stat` gave, when it gave one over the cap.
        size: Option<u64>,
    },
}

fn refuse_non_file(
    path: &Path,
    meta: &Metadata,
    cap: u64,
    what: &'static str,
) -> Result<(), InputError> {
    let kind = FileKind::of(meta.file_type());
    if kind != FileKind::Regular {
        return Err(InputError::NotAFile {
            path: path.to_path_buf(),
            what,
            kind,
            cap,
        });
    }
    if meta.len() > cap {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            what,
            cap,
            size: Some(meta.len()),
        });
    }
    Ok(())
}

/// Reads at most `cap` bytes of `from`; more is an error.
fn read_capped(
    from: impl Read,
    path: &Path,
    cap: u64,
    what: &'static str,
    hint: u64,
) -> Result<Vec<u8>, InputError> {
    let mut bytes = Vec::with_capacity(hint.min(cap) as usize);
    from.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            what,
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            what,
            cap,
            size: None,
        });
    }
    Ok(bytes)
}

/// Reads the regular file at `path` (a symbolic link to one is followed), at most `cap`
/// bytes; `what` names it in errors ("session", "preset file"). Anything else there is
/// refused by its kind without being read, and a FIFO is not even opened for long: the
/// open does not wait for a writer.
pub fn read_input(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io {
        path: path.to_path_buf(),
        what,
        source,
    };
    // Look before opening: opening some devices does something (a tape rewinds).
    refuse_non_file(path, &std::fs::metadata(path).map_err(io)?, cap, what)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    // What was opened, which may not be what was looked at.
    let meta = file.metadata().map_err(io)?;
    refuse_non_file(path, &meta, cap, what)?;
    read_capped(file, path, cap, what, meta.len())
}

/// [`read_input`], with `-` meaning standard input (read to its end, at most `cap`).
pub fn read_input_or_stdin(
    path: &Path,
    cap: u64,
    what: &'static str,
) -> Result<Vec<u8>, InputError> {
    if path == Path::new("-") {
        return read_capped(std::io::stdin().lock(), path, cap, what, 0);
    }
    read_input(path, cap, what)
}

/// [`read_input`] as text; bytes that are not UTF-8 are an error naming where.
pub fn read_text(path: &Path, cap: u64, what: &'static str) -> Result<String, InputError> {
    utf8(path, what, read_input(path, cap, what)?)
}

/// [`read_input_or_stdin`] as text; bytes that are not UTF-8 are an error naming where.
pub fn read_text_or_stdin(path: &Path, cap: u64, what: &'static str) -> Result<String, InputError> {
    utf8(path, what, read_input_or_stdin(path, cap, what)?)
}

fn utf8(path: &Path, what: &'static str, bytes: Vec<u8>) -> Result<String, InputError> {
    String::from_utf8(bytes).map_err(|e| InputError::Io {
        path: path.to_path_buf(),
        what,
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "bytes that are not UTF-8 at byte {}",
                e.utf8_error().valid_up_to()
            ),
        ),
    })
}

/// The first `n` bytes of the regular file at `path`, without following a symbolic link
/// and without waiting on anything that is not a regular file (an error then).
pub fn head(path: &Path, n: usize) -> std::io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_NOFOLLOW)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    }
    let mut bytes = Vec::with_capacity(n.min(1 << 16));
    file.take(n as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Where YAML `text` nests flow collections (`[`, `{`) deeper than `cap`: the line and
/// column (1-based) of the bracket past the cap, or `None`. A cheap scan of the text
/// (quoted scalars, plain scalars and comments skipped), so that a hostile file is turned
/// down before the parser, whose time grows with the square of the depth, sees it.
pub fn flow_depth_over(text: &str, cap: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    // Whether a node may begin here (after indentation, `- `, `: `, `? `, `[`, `{`, `,`).
    let mut node_start = true;
    let mut i = 0usize;
    let space_after = |i: usize| matches!(b.get(i + 1), None | Some(b' ' | b'\t' | b'\n' | b'\r'));
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => node_start = true,
            b' ' | b'\t' | b'\r' => {}
            b'#' if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'[' | b'{' if node_start => {
                depth += 1;
                if depth > cap {
                    let line = b[..i].iter().filter(|&&x| x == b'\n').count() + 1;
                    let col = i - b[..i]
                        .iter()
                        .rposition(|&x| x == b'\n')
                        .map_or(0, |p| p + 1);
                    return Some((line, col + 1));
                }
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                node_start = false;
            }
            b',' if depth > 0 => node_start = true,
            // In a flow collection `:` is an indicator even before a value with no space
            // (`{"a":[1]}`).
            b':' if depth > 0 || space_after(i) => node_start = true,
            b'-' | b'?' if space_after(i) => node_start = true,
            b'\'' | b'"' if node_start => {
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'\\' if c == b'"' => i += 1,
                        b'\'' if c == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 1,
                        x if x == c => break,
                        _ => {}
                    }
                    i += 1;
                }
                node_start = false;
            }
            _ => {
                // A plain scalar (or a stray character, taken as one): its first
                // character, then to the end of the line, `: `, ` #` or (in a flow
                // collection) the next indicator.
                i += 1;
                while i < b.len() {
                    match b[i] {
                        b'\n' => break,
                        b':' if space_after(i) => break,
                        b'#' if matches!(b[i - 1], b' ' | b'\t') => break,
                        b',' | b'[' | b']' | b'{' | b'}' if depth > 0 => break,
                        _ => i += 1,
                    }
                }
                node_start = false;
                continue;
            }
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "hello").unwrap();
        assert_eq!(read_input(&p, 5, "test").unwrap(), b"hello");
        let e = read_input(&p, 4, "test").unwrap_err();
        assert!(
            matches!(e, InputError::TooLarge { size: Some(5), .. }),
            "{e}"
        );
        let e = read_input(dir.path(), 4, "test").unwrap_err();
        assert!(
            matches!(
                e,
                InputError::NotAFile {
                    kind: FileKind::Directory,
                    ..
                }
            ),
            "{e}"
        );
        let e = read_input(Path::new("/dev/zero"), MIB, "preset file").unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("/dev/zero") && m.contains("a character device") && m.contains("1MiB"),
            "{m}"
        );
    }

    #[test]
    fn nesting_is_measured_on_flow_collections_only() {
        assert_eq!(flow_depth_over("a: [[[1]]]\n", 3), None);
        assert_eq!(flow_depth_over("a: [[[[1]]]]\n", 3), Some((1, 7)));
        assert_eq!(flow_depth_over("a: {b: [c, {d: [e]}]}\n", 4), None);
        assert_eq!(flow_depth_over("a: {b: [c, {d: [e]}]}\n", 3), Some((1, 16)));
        // Brackets in plain and quoted scalars and comments are text, not nesting.
        let text = "m: range [0, 5)\nn: \"[[[[\"\no: '[[''[['\n# [[[[\np: [\"]]]\", '[[']\n";
        assert_eq!(flow_depth_over(text, 1), None);
        let deep = format!("x:\n- {}{}\n", "[".repeat(100), "]".repeat(100));
        assert_eq!(flow_depth_over(&deep, 64), Some((2, 67)));
        let json = format!("x: {}1{}\n", "{\"a\":".repeat(10), "}".repeat(10));
        assert_eq!(flow_depth_over(&json, 10), None);
        assert!(flow_depth_over(&json, 9).is_some());
        // Stray indicators (a mangled file) end the scan too.
        for t in ["a: [b[c]\n", "{a}b{\n", "]]: [x\n", "'", "\"a", "[x: 'y"] {
            let _ = flow_depth_over(t, 2);
        }
    }
}
