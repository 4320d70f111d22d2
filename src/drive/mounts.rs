//! `/proc/self/mountinfo`: what is mounted from which device, for resolving file systems
//! without a device number and for "in use" (see [`super::in_use`]).

use std::path::{Path, PathBuf};

use super::SysRoot;

/// One line of mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
pub(crate) fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if let Some(v) = s
                .get(i + 1..i + 4)
                .and_then(|o| u8::from_str_radix(o, 8).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses mountinfo text; malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            let (maj, min) = l.get(2)?.split_once(':')?;
            Some(Mount {
                major: maj.parse().ok()?,
                minor: min.parse().ok()?,
                mount_point: PathBuf::from(unescape(l.get(4)?)),
                fstype: r.first()?.to_string(),
                source: unescape(r.get(1).copied().unwrap_or("")),
            })
        })
        .collect()
}

/// The mounts of this process's namespace (empty if unreadable).
pub fn mounts(root: &SysRoot) -> Vec<Mount> {
    std::fs::read_to_string(root.proc.join("self/mountinfo"))
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// The mount holding `path` (an absolute, canonical path): the longest mount point that
/// is a prefix of it; the last one mounted wins among equals.
pub fn mount_of<'a>(mounts: &'a [Mount], path: &Path) -> Option<&'a Mount> {
    mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.mount_point))
        .max_by_key(|(i, m)| (m.mount_point.components().count(), *i))
        .map(|(_, m)| m)
}
