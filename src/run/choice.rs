//! Which target a run is asked for ([`TargetChoice`]) and where it is ([`Where`]): on this
//! machine, or on another host reached over ssh.

use std::path::PathBuf;

use crate::remote::{Host, RemoteTarget};

/// Where a target is.
#[derive(Debug, Clone, Default)]
pub enum Where {
    /// On this machine.
    #[default]
    Here,
    /// On another host, reached over ssh (its own guard decides).
    Remote(RemoteTarget),
}

impl Where {
    /// On `host`, with the run's options (the ssh command and remote program).
    pub fn on(host: &Host) -> Where {
        Where::Remote(RemoteTarget {
            host: host.clone(),
            options: Default::default(),
        })
    }

    /// The target is on another host.
    pub fn is_remote(&self) -> bool {
        matches!(self, Where::Remote(_))
    }
}

/// Which target, and how it may be made ready.
#[derive(Debug, Clone, Default)]
pub struct TargetChoice {
    /// The file or block device; `None` is the built-in test file.
    pub path: Option<PathBuf>,
    /// Size of the region (a new test file is created this large).
    pub size: Option<u64>,
    /// The path the user named to confirm that writes may destroy its data.
    pub destroy_data: Option<PathBuf>,
    /// Create a missing file (1 GiB) even without a size, as the built-in one is.
    pub create_missing: bool,
    /// What the drive is called in a run of several (tables, legends, `--json`'s
    /// `target`); its path when none (`HOST:PATH` on a remote host).
    pub label: Option<String>,
    /// The host the target is on.
    pub at: Where,
}

/// The label of a target: the one asked for, else its path (`HOST:PATH` on a remote host).
pub(super) fn label_of(c: &TargetChoice, path: &std::path::Path) -> String {
    c.label.clone().unwrap_or_else(|| {
        let p = crate::ostext::escaped(path.as_os_str());
        match &c.at {
            Where::Remote(h) => format!("{}:{p}", h.host),
            Where::Here => p,
        }
    })
}
