//! An fio job file run by `--fio-job`: read once, checked by fio itself (`--parse-only`),
//! and read by drivescope to learn its steps (jobs separated by `stonewall` or
//! `wait_for_previous`) and every file or device its jobs touch, so the write guard can judge
//! each before fio starts. Its includes are put in place first, found where fio finds
//! them (`fio::include`). Every value is read as fio reads it, its `$` expansions done
//! from the environment fio gets (`fio::expand`), so the guard judges the names fio opens.
//! A job whose targets drivescope cannot tell for sure (no
//! `filename=`, `filename_format`, `opendir`, an
//! ioengine that is not plain file I/O, commands run around the job, an I/O log to replay)
//! is refused, never run; a job of an engine that opens no file (`null`, `cpuio`) has no
//! target at all, nor have `/dev/null` and `/dev/zero` (nothing made, filled or guarded); so is one that would overwrite a file beside its targets (a verify
//! state file) or whose reach into a file (offset and size) drivescope cannot read. Its
//! logs go to the run's own folder (`super::logs`). Each target's reach is the size the guard judges.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::error::FioError;
use super::parse::parse_steps;
pub use super::parse::FileStep;
use super::probe::fio_check;
use super::targets::{check_against_fio, named_only, on_disk, targets, JobTarget};
use crate::workload::FioLog;

/// A job file as drivescope read and checked it.
#[derive(Debug, Clone)]
pub struct JobFile {
    pub path: PathBuf,
    /// The text fio runs (on its stdin): the file as it was read, once, with the files it
    /// includes in place (`super::include`).
    pub text: String,
    /// `fio-3.33`.
    pub version: String,
    pub steps: Vec<FileStep>,
    pub targets: Vec<JobTarget>,
    /// The logs its jobs write (`write_*_log`, `write_iolog`), each under the name its
    /// option gives: fio makes them in the run's own log folder (`super::logs`).
    pub logs: Vec<FioLog>,
}

/// fio's own verdict on a job file's text (`fio --parse-only -`, the text on its stdin):
/// its words when it refuses it, else every file it added to a job as it named it (from
/// its `--debug=file` trace: `file 0x… "PATH" added at N`).
fn fio_parse_only(text: &str) -> Result<Vec<PathBuf>, FioError> {
    // Caged with no target: fio reading a job writes nothing.
    let (mut cmd, _scratch) = super::child::caged(&[], None)?;
    let mut child = cmd
        .args(["--parse-only", "--debug=file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(super::error::spawn_error)?;
    // fio traces while it reads: the text goes in from a thread of its own, so a full
    // stdout pipe never holds both sides.
    let feeder = child.stdin.take().map(|mut stdin| {
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        })
    });
    let out = child
        .wait_with_output()
        .map_err(|e| FioError::Missing(e.to_string()))?;
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        return Ok(stdout.lines().filter_map(added_file).collect());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let words: String = stdout
        .lines()
        .filter(|l| !l.starts_with("file ") && !l.starts_with("fio: set debug option"))
        .collect::<Vec<_>>()
        .join("\n");
    let said = super::child::first_lines(&err)
        .or_else(|| super::child::first_lines(&words))
        .unwrap_or_else(|| format!("fio --parse-only exited with {}", out.status));
    Err(FioError::Refused(said))
}

/// An engine drivescope does not guard that fio itself cannot load: fio's words, not
/// drivescope's refusal (the user learns what is missing on this host).
fn fio_cannot_load(e: FioError, path: &Path) -> FioError {
    match &e {
        FioError::Unsafe {
            why: super::refusal::Refusal::OtherEngine { engine },
            ..
        } => match super::probe::engine_not_loadable(engine) {
            Some(said) => FioError::RefusedFile {
                path: path.to_path_buf(),
                said,
            },
            None => e,
        },
        _ => e,
    }
}

/// The file of a trace line `file  PID file 0x… "PATH" added at N`.
fn added_file(line: &str) -> Option<PathBuf> {
    let rest = line.strip_prefix("file ")?;
    let start = rest.find(" \"")? + 2;
    let end = rest.rfind("\" added at ")?;
    (end >= start).then(|| PathBuf::from(&rest[start..end]))
}

/// Reads, checks and parses the job file at `path`: fio's version first, then fio's own
/// parse of the text, then drivescope's (steps and targets). Nothing is written.
pub fn read(path: &Path) -> Result<JobFile, FioError> {
    // A regular file of at most 1 MiB, as a preset: a FIFO or a device is never read.
    let raw = crate::user_file::read_text(path, crate::user_file::MIB, "fio job file")?;
    // Its includes in place: fio reads the text on its stdin, where it cannot follow one.
    let inlined = super::include::inline(&raw, path)?;
    let text = inlined.text.clone();
    let version = fio_check()?;
    let fio_files = fio_parse_only(&text).map_err(|e| match e {
        FioError::Refused(said) => FioError::RefusedFile {
            path: path.to_path_buf(),
            said,
        },
        e => e,
    })?;
    let at = |e| inlined.map_error(e);
    let steps = parse_steps(&text).map_err(at)?;
    let targets = targets(&steps).map_err(|e| at(fio_cannot_load(e, path)))?;
    check_against_fio(&fio_files, &targets, &named_only(&steps)).map_err(at)?;
    on_disk(&steps, &targets).map_err(at)?;
    let logs = super::logs::logs(&steps).map_err(at)?;
    Ok(JobFile {
        path: path.to_path_buf(),
        text,
        version,
        steps,
        targets,
        logs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::refusal::Refusal;

    #[test]
    fn fios_trace_names_its_files_and_one_drivescope_did_not_find_is_refused() {
        let trace = "fio: set debug option file\nfile     21459 add file a\n\
            file     21459 file 0x7fe2c20b40d0 \"/tmp/x \"y\" added at 0\" added at 0\n\
            file     21459 dup files: 1\n";
        let files: Vec<PathBuf> = trace.lines().filter_map(added_file).collect();
        assert_eq!(files, [PathBuf::from("/tmp/x \"y\" added at 0")]);
        let found = JobTarget {
            path: files[0].clone(),
            job: "a".into(),
            ..Default::default()
        };
        assert!(check_against_fio(&files, std::slice::from_ref(&found), &[]).is_ok());
        let other = JobTarget {
            path: "/tmp/other".into(),
            ..found
        };
        assert!(matches!(
            check_against_fio(&files, &[other], &[]),
            Err(FioError::Unsafe {
                job: None,
                why: Refusal::UnfoundFile { path },
                ..
            }) if path == files[0]
        ));
    }
}
