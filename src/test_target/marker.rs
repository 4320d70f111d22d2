//! Remembers which test files drivescope created, by the kernel's identity of each
//! ([`Identity::lasting`]: device, inode and file handle, whose generation tells a file
//! apart from a later one that reuses its inode number, or the birth time where there is
//! no handle): an extended attribute
//! `user.drivescope` on the file holding that identity (a copy of the file has another, so
//! a copy is not ours), or, on filesystems without user xattrs, a line `IDENTITY PATH` in
//! `$XDG_STATE_HOME/drivescope/created-files`, pruned of files that are gone or renamed
//! whenever a line is added. A file whose filesystem gives neither is never
//! remembered past the process that made it: it is the user's from then on.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::owned::{Folder, Identity};

const XATTR: &str = "user.drivescope";
const RECORD: &str = "created-files";

fn state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("drivescope"))
}

/// A line of the record: the identity, then the path's bytes in hexadecimal (any byte a
/// path may hold, a newline among them, kept apart from the record's own).
fn record_line(id: &str, path: &Path) -> String {
    let hex: String = path
        .as_os_str()
        .as_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{id} {hex}")
}

/// The path of a record line's hexadecimal.
fn path_of(hex: &str) -> Option<PathBuf> {
    let bytes = hex.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    let raw: Option<Vec<u8>> = bytes
        .chunks(2)
        .map(|c| u8::from_str_radix(std::str::from_utf8(c).ok()?, 16).ok())
        .collect();
    Some(PathBuf::from(OsStr::from_bytes(&raw?)))
}

/// Whether a line of the record still names a file of ours: its path holds a file whose
/// lasting identity is the line's.
fn still_there(line: &str) -> bool {
    let Some((id, path)) = line.split_once(' ') else {
        return false;
    };
    let Some(path) = path_of(path) else {
        return false;
    };
    let Ok((folder, name)) = Folder::of_file(&path) else {
        return false;
    };
    folder
        .identity_at(&name)
        .ok()
        .flatten()
        .is_some_and(|now| now.is_lasting(id))
}

/// Whether `text` reads as the record (empty, or lines of an identity and a path).
fn is_record(text: &[u8]) -> bool {
    std::str::from_utf8(text).is_ok_and(|t| {
        t.lines().all(|l| {
            l.split_once(' ')
                .is_some_and(|(id, _)| id.split(':').count() == 4)
        })
    })
}

/// The record's lines, read through `folder` (none when it is not there or not ours).
fn read_record(folder: &Folder) -> Vec<String> {
    let mut text = Vec::new();
    let adopted = folder.adopt(OsStr::new(RECORD), |f| {
        let _ = f.take(16 << 20).read_to_end(&mut text);
        is_record(&text)
    });
    match adopted {
        Ok(Some(_)) => String::from_utf8_lossy(&text)
            .lines()
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Adds `line` to the record, dropping the lines of files gone or renamed; the record is
/// replaced whole, only while it is the record of ours that was read.
fn add_to_record(line: String) {
    let Some(dir) = state_dir() else { return };
    let Ok(folder) = Folder::open_or_make(&dir) else {
        return;
    };
    let mut lines: Vec<String> = read_record(&folder)
        .into_iter()
        .filter(|l| still_there(l))
        .collect();
    lines.push(line);
    let text = lines.join("\n") + "\n";
    let fill = |w: &mut dyn Write| w.write_all(text.as_bytes());
    let adopted = folder.adopt(OsStr::new(RECORD), |f| {
        let mut head = Vec::new();
        let _ = f.take(16 << 20).read_to_end(&mut head);
        is_record(&head)
    });
    let _ = match adopted {
        Ok(Some((_, mut mine))) => folder.replace(&mut mine, fill).map(drop),
        Ok(None) => folder.create(OsStr::new(RECORD), fill).map(drop),
        Err(e) => Err(e),
    };
}

/// The files this process made, by identity: known as ours for the rest of the process
/// even where the filesystem gives no lasting identity (ramfs). Each is held open, so its
/// inode number cannot be reused while it is listed.
static MADE_HERE: std::sync::Mutex<Vec<(Identity, File)>> = std::sync::Mutex::new(Vec::new());

fn made_here(id: &Identity) -> bool {
    MADE_HERE
        .lock()
        .is_ok_and(|made| made.iter().any(|(m, _)| m.same(id)))
}

/// Marks a file as created by drivescope (best effort: a file left unmarked is only
/// protected more, never less).
pub fn mark_created(f: &File, path: &Path) {
    if let (Ok(id), Ok(held), Ok(mut made)) = (Identity::of(f), f.try_clone(), MADE_HERE.lock()) {
        made.push((id, held));
    }
    let Some(id) = Identity::of(f).ok().and_then(|id| id.lasting()) else {
        return;
    };
    if rustix::fs::fsetxattr(f, XATTR, id.as_bytes(), rustix::fs::XattrFlags::empty()).is_ok() {
        return;
    }
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    add_to_record(record_line(&id, &path));
}

/// True when drivescope created this file: its xattr or a line of the record holds its
/// lasting identity.
pub fn is_created(f: &File, _path: &Path) -> bool {
    let Ok(id) = Identity::of(f) else {
        return false;
    };
    if made_here(&id) {
        return true;
    }
    let Some(lasting) = id.lasting() else {
        return false;
    };
    let mut buf = [0u8; 512];
    if let Ok(n) = rustix::fs::fgetxattr(f, XATTR, &mut buf) {
        if buf[..n] == *lasting.as_bytes() {
            return true;
        }
    }
    let Some(dir) = state_dir() else { return false };
    let Ok(folder) = Folder::open(&dir) else {
        return false;
    };
    read_record(&folder)
        .iter()
        .any(|l| l.split_once(' ').is_some_and(|(i, _)| i == lasting))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_file_marked_is_ours_not_a_copy_nor_a_later_file() {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: test-only, single-threaded use of the environment of this test binary's
        // state folder (every test that reads it sets the same value).
        unsafe { std::env::set_var("XDG_STATE_HOME", dir.path().join("state")) };
        let p = dir.path().join("t.bin");
        let f = File::create(&p).unwrap();
        mark_created(&f, &p);
        assert!(is_created(&f, &p));
        let copy = dir.path().join("copy.bin");
        std::fs::copy(&p, &copy).unwrap();
        assert!(!is_created(&File::open(&copy).unwrap(), &copy));
        // The same name, a new file: not ours.
        std::fs::remove_file(&p).unwrap();
        let again = File::create(&p).unwrap();
        assert!(!is_created(&again, &p));
        let odd = Path::new(OsStr::from_bytes(b"/a b/\n\xffx"));
        assert_eq!(path_of(&record_line("1:2:3:ab", odd)[9..]).unwrap(), odd);
    }

    #[test]
    fn the_record_keeps_only_files_still_there() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let f = File::create(&a).unwrap();
        let id = Identity::of(&f).unwrap().lasting().unwrap();
        let line = record_line(&id, &a);
        assert!(still_there(&line));
        assert!(is_record(line.as_bytes()));
        assert!(!is_record(b"1234 5678\n"), "an older release's line");
        std::fs::remove_file(&a).unwrap();
        assert!(!still_there(&line));
        File::create(&a).unwrap();
        assert!(!still_there(&line), "a new file at the path is not ours");
    }
}
