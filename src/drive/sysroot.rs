//! Where `/sys`, `/proc` and `/dev` are: the real ones, or a fake tree under a temp dir
//! so that discovery code is tested without the hardware.

use std::path::{Path, PathBuf};

/// The roots of the kernel's pseudo file systems.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    pub sys: PathBuf,
    pub proc: PathBuf,
    pub dev: PathBuf,
}

impl SysRoot {
    /// The running system's `/sys`, `/proc` and `/dev`.
    pub fn real() -> Self {
        SysRoot {
            sys: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
            dev: PathBuf::from("/dev"),
        }
    }

    /// `dir/sys`, `dir/proc`, `dir/dev`: a fake tree for tests.
    pub fn under(dir: &Path) -> Self {
        SysRoot {
            sys: dir.join("sys"),
            proc: dir.join("proc"),
            dev: dir.join("dev"),
        }
    }

    /// `/sys/block/NAME`.
    pub fn block(&self, name: &str) -> PathBuf {
        self.sys.join("block").join(name)
    }

    /// Reads a sysfs attribute, trimmed; `None` if it is absent, unreadable or empty.
    pub fn attr(path: &Path) -> Option<String> {
        let s = std::fs::read_to_string(path).ok()?;
        let t = s.trim();
        if t.is_empty() {
            None
        } else {
            Some(t.to_string())
        }
    }

    /// The names in directory `dir`, in the order it lists them; none if it is unreadable.
    pub fn names_in(dir: &Path) -> Vec<String> {
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        entries
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }

    /// Reads a sysfs attribute as an integer.
    pub fn attr_u64(path: &Path) -> Option<u64> {
        Self::attr(path)?.parse().ok()
    }
}
