//! Why drivescope refuses an fio job file before fio starts (`FioError::Unsafe`): one
//! variant per kind of refusal, its text made only where it is shown (`Display`).

use std::path::PathBuf;

/// The ioengines whose `filename` is a file or block device read and written as such.
pub(super) const FILE_ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "io_uring",
    "io_uring_cmd",
    "posixaio",
    "mmap",
];

/// The engines of [`FILE_ENGINES`] whose I/O is synchronous (fio's `FIO_SYNCIO`): fio caps
/// a job's queue depth on them at 1 (backend.c), whatever its `iodepth`.
pub(super) const SYNC_ENGINES: &[&str] = &["sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"];

/// The ioengines that open no file (fio's `FIO_DISKLESSIO`): a job on one touches nothing
/// the guard judges, whatever its `filename=` or `size=` say.
pub(super) const FILELESS_ENGINES: &[&str] = &["null", "cpuio"];

/// Options whose value drivescope cannot follow to what the job touches: a job giving one
/// is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfollowed {
    FilenameFormat,
    Opendir,
    ExecPrerun,
    ExecPostrun,
    IoScheduler,
    ReadIolog,
    ReplayRedirect,
    VerifyStateLoad,
}

impl Unfollowed {
    /// Those refused wherever they are (a `filename_format` only with `$clientuid`).
    pub const ALL: [Unfollowed; 7] = [
        Unfollowed::Opendir,
        Unfollowed::ExecPrerun,
        Unfollowed::ExecPostrun,
        Unfollowed::IoScheduler,
        Unfollowed::ReadIolog,
        Unfollowed::ReplayRedirect,
        Unfollowed::VerifyStateLoad,
    ];

    /// fio's option.
    pub fn key(self) -> &'static str {
        match self {
            Unfollowed::FilenameFormat => "filename_format",
            Unfollowed::Opendir => "opendir",
            Unfollowed::ExecPrerun => "exec_prerun",
            Unfollowed::ExecPostrun => "exec_postrun",
            Unfollowed::IoScheduler => "ioscheduler",
            Unfollowed::ReadIolog => "read_iolog",
            Unfollowed::ReplayRedirect => "replay_redirect",
            Unfollowed::VerifyStateLoad => "verify_state_load",
        }
    }

    /// What the option makes fio touch.
    fn what(self) -> &'static str {
        match self {
            Unfollowed::FilenameFormat => {
                "files named by filename_format's $clientuid (fio's client/server mode) or \
                 after a job name holding $"
            }
            Unfollowed::Opendir => "every file under opendir",
            Unfollowed::ExecPrerun => "a command run before the job (exec_prerun)",
            Unfollowed::ExecPostrun => "a command run after the job (exec_postrun)",
            Unfollowed::IoScheduler => "a change of the device's I/O scheduler",
            Unfollowed::ReadIolog => "the files named inside an I/O log (read_iolog)",
            Unfollowed::ReplayRedirect => "the device an I/O log is replayed on (replay_redirect)",
            Unfollowed::VerifyStateLoad => "a saved verify state (verify_state_load)",
        }
    }
}

/// A shape of job on which fio before 3.42 deadlocks while it gives the status dumps
/// drivescope's live figures need (`--status-interval`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Hang {
    /// `io_submit_mode=offload`: its submit workers stall (fio commit 736c2015,
    /// "workqueue: fix threads stall ... io_submit_mode offload").
    #[error(
        "io_submit_mode=offload (run it with fio 3.42 or later, or without io_submit_mode=offload)"
    )]
    Offload,
    /// `exitall` (or `exit_what`) with a byte `rate` under which one block takes longer
    /// than a status interval: the stats and a job being ended wait on each other (fio
    /// commit 00084f95, "Fix stat_sem/rusage_sem deadlock during stats collection").
    #[error("exitall with rate={rate}, at which one block takes {:.1} s, longer than the {interval_ms} ms status interval (run it with fio 3.42 or later, or without exitall and exit_what, or with a rate that moves a block within an interval)", *.block_ms as f64 / 1000.0)]
    ExitallSlowRate {
        rate: String,
        /// One block's wait, ms.
        block_ms: u64,
        interval_ms: u64,
    },
}

impl Hang {
    /// The fio commit that fixed it.
    fn fixed_by(&self) -> &'static str {
        match self {
            Hang::Offload => "736c2015",
            Hang::ExitallSlowRate { .. } => "00084f95",
        }
    }
}

/// Why an fio job file is refused before fio starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("drivescope does not follow include")]
    Include,
    /// An `include` whose file is in none of the places fio looks (the current folder,
    /// then beside the including file).
    #[error(
        "include {name}: no such file (fio looks for it from the current folder, then beside \
         the file that includes it: {})",
        .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    IncludeMissing { name: String, tried: Vec<PathBuf> },
    #[error("include with no file name")]
    IncludeNoName,
    /// fio: "No new sections in included files".
    #[error("the included file {} holds a [section]; fio takes only options from an included file", .path.display())]
    IncludeSection { path: PathBuf },
    #[error("includes nest more than {max} deep (does a file include itself?)")]
    IncludeDepth { max: usize },
    #[error("an option outside of any [section]")]
    OutsideSection,
    #[error("the file has no job to run")]
    NoJob,
    #[error("two jobs have this name; drivescope runs each step's jobs by name")]
    SameName,
    /// `${TMPDIR}`: fio's scratch folder under drivescope, a new one for each fio.
    #[error(
        "${{TMPDIR}} is fio's private scratch folder under drivescope (a new one for each \
         fio, removed after it): name a folder of your own"
    )]
    ScratchVar,
    /// An environment variable fio would expand whose value is not text.
    #[error("${{{name}}} holds bytes that are not UTF-8 text")]
    EnvNotText { name: String },
    /// A value fio hands to bc that is not whole-number arithmetic (names, decimals).
    #[error(
        "fio works out {value} with bc; drivescope reads only whole numbers with + - * / % ^ \
         and parentheses there, and will not guess what bc makes of the rest"
    )]
    Arithmetic { value: String },
    #[error("filename=- (stdin or stdout)")]
    StdinStdout,
    #[error("drivescope cannot tell what {} touches", .0.what())]
    Unfollowed(Unfollowed),
    #[error(
        "ioengine={engine}: drivescope guards only file and block device I/O ({}; and {}, \
         which touch no file)",
        FILE_ENGINES.join(", "),
        FILELESS_ENGINES.join(", ")
    )]
    OtherEngine { engine: String },
    /// A value of an option that sets the job's reach into its files that drivescope cannot
    /// read (`0x100000`, `50%`, a range).
    #[error(
        "{key}={value}: drivescope cannot read this size (give it in bytes or with k, m, g; \
         zones as Nz with zonesize=; a share of the file only as size=N%), so it cannot tell \
         how far the job reaches into its files"
    )]
    UnreadableExtent { key: &'static str, value: String },
    /// A time drivescope cannot read as fio does (`2sec`, `1m30s`, `1.5s`): the step's
    /// ramp or end would be misread.
    #[error(
        "{key}={value}: give the time as a whole number with us, ms, s, m, h or d (or none, \
         for seconds); fio reads this form differently from how it looks"
    )]
    UnreadableTime { key: &'static str, value: String },
    /// A zone unit with `zonemode=zbd`: the zones are the device's own.
    #[error(
        "{key}={value} with zonemode=zbd counts in the device's own zones, which drivescope \
         does not read: give it in bytes"
    )]
    DeviceZones { key: &'static str, value: String },
    #[error(
        "numjobs={value} with offset_increment: drivescope cannot tell how far the job reaches"
    )]
    UnreadableNumjobs { value: String },
    #[error("its offset and size overflow")]
    ReachOverflows,
    /// `fill_device` (`fill_fs`) without a size: fio writes until the filesystem is full.
    #[error(
        "fill_device without size= writes until the filesystem (or the quota) is full, a \
         reach the guard cannot judge: give size="
    )]
    FillsFilesystem,
    #[error("unlink would delete {}, which is not a regular file", .path.display())]
    UnlinkNotRegular { path: PathBuf },
    /// A log option whose value names no file drivescope can put in the run's log folder
    /// (fio's logs go there, under the name the option gives, never where it points).
    #[error(
        "{key}={value}: {why}; fio's logs go to the run's own log folder under the name the \
         option gives (its last component), so give a plain name"
    )]
    LogName {
        key: &'static str,
        value: String,
        why: &'static str,
    },
    /// Two log options naming folders of their own for one name: in the run's log folder
    /// their files would be one.
    #[error(
        "{key}={value} and {other} name one log in two folders; fio's logs all go to the \
         run's own log folder, where they would be one file: give them different names"
    )]
    LogsCollide {
        key: &'static str,
        value: String,
        other: String,
    },
    #[error(
        "verify= saves a verify state file (local-<job>-<n>-verify.state) in the current \
         directory, which could overwrite one there; add verify_state_save=0"
    )]
    VerifyStateSave,
    /// A job fio `version` deadlocks on while it gives its status dumps.
    #[error(
        "{version} deadlocks on {hang} while it gives the status dumps drivescope's live \
         figures need (fixed in fio 3.42, commit {})",
        hang.fixed_by()
    )]
    FioHangs { version: String, hang: Hang },
    #[error(
        "fio names the file {}, which drivescope did not find reading the job file",
        .path.display()
    )]
    UnfoundFile { path: PathBuf },
}

/// Where in the job file a refusal is: a job (or `(global)`) and its section's line, or a
/// line of the file, or the file as a whole.
pub(super) fn location(job: &Option<String>, line: &Option<usize>) -> String {
    match (job, line) {
        (Some(j), Some(l)) => format!("fio job {j} (line {l})"),
        (Some(j), None) => format!("fio job {j}"),
        (None, Some(l)) => format!("fio job file, line {l}"),
        (None, None) => "fio job file".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_says_what_it_said_as_text() {
        assert_eq!(
            Refusal::Unfollowed(Unfollowed::ReadIolog).to_string(),
            "drivescope cannot tell what the files named inside an I/O log (read_iolog) touches"
        );
        assert_eq!(
            Refusal::LogName {
                key: "write_bw_log",
                value: "/tmp/".into(),
                why: "it names a folder, not a file",
            }
            .to_string(),
            "write_bw_log=/tmp/: it names a folder, not a file; fio's logs go to the run's own \
             log folder under the name the option gives (its last component), so give a plain \
             name"
        );
        assert!(Refusal::OtherEngine {
            engine: "net".into()
        }
        .to_string()
        .starts_with("ioengine=net: drivescope guards only file and block device I/O (sync, "));
        let keys: Vec<&str> = Unfollowed::ALL.iter().map(|u| u.key()).collect();
        assert!(keys.contains(&"opendir") && keys.len() == 7);
    }
}
