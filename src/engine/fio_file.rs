//! An fio job file run by `--fio-job`: read once, checked by fio itself (`--parse-only`),
//! and read by drivescope to learn its steps (jobs separated by `stonewall` or
//! `wait_for_previous`) and every file or device its jobs touch, so the write guard can judge
//! each before fio starts. A job whose targets drivescope cannot tell for sure (no
//! `filename=`, `filename_format`, `opendir`, an `include`, a `$` expansion in a target, an
//! ioengine that is not plain file I/O, commands run around the job, an I/O log to replay)
//! is refused, never run; so is one that would overwrite a file beside its targets (a log
//! over one that is there, a verify state file) or whose reach into a file (offset and
//! size) drivescope cannot read. Each target's reach is the size the guard judges.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::fio::{fio_check, FioError};
use super::fio_refusal::{LogClash, Refusal, Unfollowed};

/// One job (a `[section]` other than `[global]`) with its options as fio applies them: the
/// `[global]` options above it, then its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileJob {
    pub name: String,
    /// Its section's line in the file (1-based), where a refusal of it points.
    pub line: usize,
    pub options: BTreeMap<String, String>,
    /// Its files, as fio names them: those of the `[global]` sections above it, then its
    /// own (fio adds each `filename=` to the job's files; it never replaces them).
    pub files: Vec<PathBuf>,
}

impl FileJob {
    fn get(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// A boolean option: given bare, or with a value other than 0/false/no/off.
    fn flag(&self, key: &str) -> bool {
        self.get(key)
            .is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no" | "off"))
    }

    /// fio's `rw` without its `:N` offset suffix (`read` by default).
    pub fn rw(&self) -> &str {
        let v = self.get("rw").unwrap_or("read");
        v.split(':').next().unwrap_or(v).trim()
    }

    pub fn reads(&self) -> bool {
        matches!(
            self.rw(),
            "read" | "randread" | "rw" | "readwrite" | "randrw"
        )
    }

    /// Writes (or trims, or deletes) the data of its files.
    pub fn writes(&self) -> bool {
        self.rw().contains("write")
            || self.rw().contains("trim")
            || matches!(self.rw(), "rw" | "randrw")
            || self.unlinks()
    }

    /// Deletes its files when it ends.
    fn unlinks(&self) -> bool {
        self.flag("unlink") || self.flag("unlink_each_loop")
    }

    /// Starts a new step: it waits for the jobs before it.
    fn stonewall(&self) -> bool {
        self.flag("stonewall")
    }

    /// fio's `ramp_time`; none when absent or 0 (`parse_steps` refused a value
    /// [`fio_time`] cannot read).
    pub fn ramp(&self) -> Option<std::time::Duration> {
        fio_time(self.get("ramp_time")?).ok().flatten()
    }

    /// fio's `runtime`; none when absent or 0 (fio's "no limit").
    pub fn runtime(&self) -> Option<std::time::Duration> {
        fio_time(self.get("runtime")?).ok().flatten()
    }

    pub fn bs(&self) -> Option<u64> {
        let v = self.get("bs")?;
        crate::units::parse_size(v.split([',', ':']).next().unwrap_or(v)).ok()
    }

    pub fn number(&self, key: &str) -> Option<u32> {
        self.get(key)?.trim().parse().ok()
    }
}

/// The options holding a time that drivescope reads (the step's ramp and end).
const TIME_KEYS: &[&str] = &["ramp_time", "runtime"];

/// A time as fio reads it (parse.c `get_mult_time`: a whole number, then a suffix compared
/// in lower case; a bare number is seconds), for the forms where fio's reading is plain:
/// no suffix, `us`/`usec`, `ms`/`msec`, `s`, `m`, `h`, `d`. fio reads other forms oddly
/// (`2sec` and `1m30s` as microseconds, `1.5s` as 1 s), so they are refused, not guessed.
/// 0 is none: fio's "no limit". The value goes to drivescope's one duration parser.
fn fio_time(raw: &str) -> Result<Option<std::time::Duration>, ()> {
    let v = raw.trim();
    let digits = v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, suffix) = v.split_at(digits);
    let lower = suffix.to_ascii_lowercase();
    let unit = match lower.as_str() {
        "" => "s",
        "us" | "usec" => "us",
        "ms" | "msec" => "ms",
        u @ ("s" | "m" | "h" | "d") => u,
        _ => return Err(()),
    };
    if number.is_empty() {
        return Err(());
    }
    let d = crate::units::parse_duration(&format!("{number}{unit}")).map_err(|_| ())?;
    Ok((!d.is_zero()).then_some(d))
}

/// A step: jobs fio runs together (the first waits for the jobs before it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStep {
    pub jobs: Vec<FileJob>,
}

impl FileStep {
    /// The step's label: its jobs' names.
    pub fn label(&self) -> String {
        let names: Vec<&str> = self.jobs.iter().map(|j| j.name.as_str()).collect();
        names.join(" + ")
    }
}

/// A file or device a job opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobTarget {
    pub path: PathBuf,
    /// Some job writes (or trims, or deletes) it.
    pub writes: bool,
    /// How far a job reaches into it (offset and size, see [`extent`]): the size a file
    /// that does not exist yet is made, and one that exists must have.
    pub size: Option<u64>,
    /// The options that set `size` (`offset=4k size=8k`), to say where it comes from.
    pub reach: String,
    /// The first job that names it.
    pub job: String,
    /// Some job deletes it at its end (`unlink`, `unlink_each_loop`).
    pub unlinked: bool,
}

/// A job file as drivescope read and checked it.
#[derive(Debug, Clone)]
pub struct JobFile {
    pub path: PathBuf,
    /// The text fio runs (on its stdin): the file as it was read, once.
    pub text: String,
    /// `fio-3.33`.
    pub version: String,
    pub steps: Vec<FileStep>,
    pub targets: Vec<JobTarget>,
    /// The folders fio writes its logs in (`write_*_log`, `write_iolog`): fio's cage lets
    /// it make new files there, never change one that is there.
    pub log_dirs: Vec<PathBuf>,
}

/// Option names fio takes for the same option, as read here.
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "timeout" => "runtime",
        "wait_for_previous" => "stonewall",
        "fileoffset" => "offset",
        k => k,
    }
}

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
    "null",
];

/// Options that name or shape a target: a `$` expansion in them is refused.
const TARGET_KEYS: &[&str] = &[
    "directory",
    "ioengine",
    "rw",
    "size",
    "filesize",
    "offset",
    "offset_increment",
    "unlink",
];

/// Options in bytes that set how far into its files a job reaches (fio lays out anew, even
/// for a read, a file shorter than that).
const EXTENT_KEYS: &[&str] = &["size", "filesize", "offset", "offset_increment"];

/// fio's per-job logs whose value is a file name prefix (`<prefix>_<kind>[.N].log`).
const LOG_KEYS: &[&str] = &[
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
];

/// A job refused, at its section's line.
fn refuse(job: &FileJob, why: Refusal) -> FioError {
    FioError::Unsafe {
        job: Some(job.name.clone()),
        line: Some(job.line),
        why,
    }
}

/// The file refused, at a line of it or as a whole.
fn refuse_file(line: Option<usize>, why: Refusal) -> FioError {
    FioError::Unsafe {
        job: None,
        line,
        why,
    }
}

/// The steps of a job file's text: its jobs with their options, split where a job waits
/// for the ones before it. Pure: no file is touched.
pub fn parse_steps(text: &str) -> Result<Vec<FileStep>, FioError> {
    let mut global: BTreeMap<String, String> = BTreeMap::new();
    let mut global_files: Vec<PathBuf> = Vec::new();
    let mut jobs: Vec<FileJob> = Vec::new();
    // The section being read: a global one (`None`) or the last job, and its line, with
    // its `filename=` values, named once the section is read (fio applies `directory` first).
    let mut section: Option<(Option<usize>, usize)> = None;
    let mut names: Vec<String> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        // As fio reads a line (init.c, parse.c strip_blank_end): everything from the first
        // `;` or `#` is a comment, wherever it is; blanks around are dropped.
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        // fio takes any option line that starts so as an include.
        if line.starts_with("include") {
            return Err(refuse_file(Some(n + 1), Refusal::Include));
        }
        if let Some(rest) = line.strip_prefix('[') {
            if let Some(sec) = section {
                end_section(sec, &mut names, &global, &mut global_files, &mut jobs)?;
            }
            // fio's section name: what follows `[`, less its last character (the `]`);
            // every section whose name starts with `global` is a global one.
            let mut name = rest.to_string();
            name.pop();
            let job = if name.starts_with("global") {
                None
            } else {
                jobs.push(FileJob {
                    name,
                    line: n + 1,
                    options: global.clone(),
                    files: global_files.clone(),
                });
                Some(jobs.len() - 1)
            };
            section = Some((job, n + 1));
            continue;
        }
        let Some((sec, _)) = section else {
            // fio refuses this itself (`--parse-only` ran first); never guess.
            return Err(refuse_file(Some(n + 1), Refusal::OutsideSection));
        };
        // The name up to the first `=` (fio matches it case and all), the value after it.
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim_end(), v.trim()),
            None => (line, ""),
        };
        let key = canonical(key);
        if key == "filename" {
            names.push(value.to_string());
            continue;
        }
        let into = match sec.and_then(|i| jobs.get_mut(i)) {
            Some(j) => &mut j.options,
            None => &mut global,
        };
        into.insert(key.to_string(), value.to_string());
    }
    if let Some(sec) = section {
        end_section(sec, &mut names, &global, &mut global_files, &mut jobs)?;
    }
    let mut steps: Vec<FileStep> = Vec::new();
    for job in jobs {
        match steps.last_mut() {
            Some(s) if !job.stonewall() => s.jobs.push(job),
            _ => steps.push(FileStep { jobs: vec![job] }),
        }
    }
    if steps.is_empty() {
        return Err(refuse_file(None, Refusal::NoJob));
    }
    let mut names: Vec<&str> = Vec::new();
    for j in steps.iter().flat_map(|s| &s.jobs) {
        if names.contains(&j.name.as_str()) {
            return Err(refuse(j, Refusal::SameName));
        }
        names.push(&j.name);
        for &key in TIME_KEYS {
            if let Some(raw) = j.get(key).filter(|v| fio_time(v).is_err()) {
                let value = raw.to_string();
                return Err(refuse(j, Refusal::UnreadableTime { key, value }));
            }
        }
    }
    Ok(steps)
}

/// The end of a section (a job's index, or `None` for a global one, and its line): its
/// `filename=` values become files (in the directory in effect in the section, as fio's
/// add_file names them), the global sections' for every job below.
fn end_section(
    (section, line): (Option<usize>, usize),
    names: &mut Vec<String>,
    global: &BTreeMap<String, String>,
    global_files: &mut Vec<PathBuf>,
    jobs: &mut [FileJob],
) -> Result<(), FioError> {
    let (who, options, files) = match section.and_then(|i| jobs.get_mut(i)) {
        Some(j) => (j.name.clone(), &j.options, &mut j.files),
        None => ("(global)".to_string(), global, global_files),
    };
    let refused = |why| FioError::Unsafe {
        job: Some(who.clone()),
        line: Some(line),
        why,
    };
    let dir = match options.get("directory").map(|d| split_files(d)) {
        Some(d) if d.len() > 1 => return Err(refused(Refusal::SeveralDirectories)),
        Some(d) => d.into_iter().next(),
        None => None,
    };
    for value in names.drain(..) {
        if value.contains('$') {
            return Err(refused(Refusal::Expansion { key: "filename" }));
        }
        for name in split_files(&value) {
            if name == "-" {
                return Err(refused(Refusal::StdinStdout));
            }
            // As fio names it (filesetup.c add_file): the directory, a `/`, the name, even
            // an absolute one (`/srv` and `/dev/x` are `/srv//dev/x`).
            files.push(match &dir {
                Some(d) => PathBuf::from(format!("{d}/{name}")),
                None => PathBuf::from(&name),
            });
        }
    }
    Ok(())
}

/// Splits fio's `a:b` list (`\:` is a colon in a name).
fn split_files(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(last) = out.last_mut() {
                    last.push(':');
                }
            }
            ':' => out.push(String::new()),
            c => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Every file or device the jobs touch, and whether any job writes it; refused where
/// drivescope cannot tell.
pub fn targets(steps: &[FileStep]) -> Result<Vec<JobTarget>, FioError> {
    let mut out: Vec<JobTarget> = Vec::new();
    for job in steps.iter().flat_map(|s| &s.jobs) {
        if let Some(u) = Unfollowed::ALL
            .into_iter()
            .find(|u| job.options.contains_key(u.key()))
        {
            return Err(refuse(job, Refusal::Unfollowed(u)));
        }
        for key in TARGET_KEYS {
            if job.get(key).is_some_and(|v| v.contains('$')) {
                return Err(refuse(job, Refusal::Expansion { key }));
            }
        }
        let engine = job.get("ioengine").unwrap_or("psync").trim();
        if !FILE_ENGINES.contains(&engine) {
            return Err(refuse(
                job,
                Refusal::OtherEngine {
                    engine: engine.to_string(),
                },
            ));
        }
        if job.files.is_empty() {
            return Err(refuse(job, Refusal::NoFilename));
        }
        // With fewer names than nrfiles, fio would name the other files itself.
        if let Some(n) = job.number("nrfiles").or(job.number("nr_files")) {
            if n as usize > job.files.len() {
                return Err(refuse(
                    job,
                    Refusal::TooFewNames {
                        nrfiles: n,
                        named: job.files.len(),
                    },
                ));
            }
        }
        let size = extent(job)?;
        let reach: Vec<String> = EXTENT_KEYS
            .iter()
            .filter_map(|k| job.get(k).map(|v| format!("{k}={v}")))
            .collect();
        let reach = reach.join(" ");
        for path in job.files.iter().cloned() {
            match out.iter_mut().find(|t| t.path == path) {
                Some(t) => {
                    t.writes |= job.writes();
                    if size > t.size {
                        t.size = size;
                        t.reach = reach.clone();
                    }
                    t.unlinked |= job.unlinks();
                }
                None => out.push(JobTarget {
                    path,
                    writes: job.writes(),
                    size,
                    reach: reach.clone(),
                    job: job.name.clone(),
                    unlinked: job.unlinks(),
                }),
            }
        }
    }
    Ok(out)
}

/// How far into each of its files a job reaches, in bytes: its offset (plus
/// `offset_increment` for each of its `numjobs`) and the larger of `size` and `filesize`;
/// `None` when it gives neither (fio then takes the file as it is). A value drivescope
/// cannot read (`0x100000`, `50%`, a range) is refused: the guard could not judge it.
fn extent(job: &FileJob) -> Result<Option<u64>, FioError> {
    let mut v = [0u64; 4];
    for (slot, key) in v.iter_mut().zip(EXTENT_KEYS) {
        if let Some(raw) = job.get(key) {
            *slot = crate::units::parse_size(raw).map_err(|_| {
                refuse(
                    job,
                    Refusal::UnreadableExtent {
                        key,
                        value: raw.to_string(),
                    },
                )
            })?;
        }
    }
    let [size, filesize, offset, increment] = v;
    if job.get("size").is_none() && job.get("filesize").is_none() {
        return Ok(None);
    }
    let numjobs = match (job.get("numjobs"), job.number("numjobs")) {
        (_, Some(n)) => u64::from(n),
        (None, None) => 1,
        (Some(raw), None) if increment > 0 => {
            return Err(refuse(
                job,
                Refusal::UnreadableNumjobs {
                    value: raw.to_string(),
                },
            ))
        }
        (Some(_), None) => 1,
    };
    let reach = increment
        .checked_mul(numjobs)
        .and_then(|i| i.checked_add(offset))
        .and_then(|o| o.checked_add(size.max(filesize)));
    match reach {
        Some(r) => Ok(Some(r)),
        None => Err(refuse(job, Refusal::ReachOverflows)),
    }
}

/// A job's log prefix would overwrite a file that is there: a `$` in it, or an entry of its
/// directory named `<prefix>_….log…` (fio writes `<prefix>_<kind>[.N].log`).
fn log_clash(prefix: &Path) -> Option<LogClash> {
    let text = prefix.to_string_lossy();
    if text.contains('$') {
        return Some(LogClash::Expansion);
    }
    let base = format!("{}_", prefix.file_name()?.to_string_lossy());
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir).ok()?;
    entries.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        (name.starts_with(&base) && name.contains(".log")).then(|| LogClash::Exists(dir.join(name)))
    })
}

/// What only the file system can tell: a job that would delete a device node (`unlink`
/// on anything but a regular file) or overwrite an existing file with its I/O log
/// (`write_iolog`) is refused.
fn on_disk(steps: &[FileStep], targets: &[JobTarget]) -> Result<(), FioError> {
    for t in targets.iter().filter(|t| t.unlinked) {
        if std::fs::metadata(&t.path).is_ok_and(|m| !m.is_file()) {
            let why = Refusal::UnlinkNotRegular {
                path: t.path.clone(),
            };
            return Err(
                match steps.iter().flat_map(|s| &s.jobs).find(|j| j.name == t.job) {
                    Some(job) => refuse(job, why),
                    None => refuse_file(None, why),
                },
            );
        }
    }
    for job in steps.iter().flat_map(|s| &s.jobs) {
        if let Some(log) = job.get("write_iolog") {
            if log.contains('$') || Path::new(log).symlink_metadata().is_ok() {
                return Err(refuse(
                    job,
                    Refusal::IologOverwrites {
                        value: log.to_string(),
                    },
                ));
            }
        }
        for key in LOG_KEYS {
            let Some(v) = job.get(key) else { continue };
            // A bare option logs under the job's name, in the current directory.
            let prefix = if v.is_empty() { job.name.as_str() } else { v };
            if let Some(clash) = log_clash(Path::new(prefix)) {
                return Err(refuse(
                    job,
                    Refusal::LogOverwrites {
                        key,
                        value: v.to_string(),
                        clash,
                    },
                ));
            }
        }
        let verifies = job
            .get("verify")
            .is_some_and(|v| !matches!(v.trim(), "" | "0" | "none"));
        if verifies && job.get("verify_state_save").map(str::trim) != Some("0") {
            return Err(refuse(job, Refusal::VerifyStateSave));
        }
    }
    Ok(())
}

/// fio's own verdict on a job file's text (`fio --parse-only -`, the text on its stdin):
/// its words when it refuses it, else every file it added to a job as it named it (from
/// its `--debug=file` trace: `file 0x… "PATH" added at N`).
fn fio_parse_only(text: &str) -> Result<Vec<PathBuf>, FioError> {
    // Caged with no target: fio reading a job writes nothing.
    let (mut cmd, _scratch) = super::fio::caged(&[], &[])?;
    let mut child = cmd
        .args(["--parse-only", "--debug=file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(super::fio::spawn_error)?;
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
    let said = super::fio::first_lines(&err)
        .or_else(|| super::fio::first_lines(&words))
        .unwrap_or_else(|| format!("fio --parse-only exited with {}", out.status));
    Err(FioError::Refused(said))
}

/// The file of a trace line `file  PID file 0x… "PATH" added at N`.
fn added_file(line: &str) -> Option<PathBuf> {
    let rest = line.strip_prefix("file ")?;
    let start = rest.find(" \"")? + 2;
    let end = rest.rfind("\" added at ")?;
    (end >= start).then(|| PathBuf::from(&rest[start..end]))
}

/// Every file fio named must be one drivescope found (and so guards): else the job file
/// writes where drivescope cannot tell, and is refused. fio's parse-time list holds only
/// the files its options name: not those named inside an I/O log (`read_iolog`), which is
/// why that option is refused outright (see `Unfollowed`).
fn check_against_fio(fio_files: &[PathBuf], targets: &[JobTarget]) -> Result<(), FioError> {
    match fio_files
        .iter()
        .find(|f| !targets.iter().any(|t| t.path == **f))
    {
        Some(f) => Err(refuse_file(None, Refusal::UnfoundFile { path: f.clone() })),
        None => Ok(()),
    }
}

/// Reads, checks and parses the job file at `path`: fio's version first, then fio's own
/// parse of the text, then drivescope's (steps and targets). Nothing is written.
pub fn read(path: &Path) -> Result<JobFile, FioError> {
    // A regular file of at most 1 MiB, as a preset: a FIFO or a device is never read.
    let text = crate::input::read_text(path, crate::input::MIB, "fio job file")?;
    let version = fio_check()?;
    let fio_files = fio_parse_only(&text).map_err(|e| match e {
        FioError::Refused(said) => FioError::RefusedFile {
            path: path.to_path_buf(),
            said,
        },
        e => e,
    })?;
    let steps = parse_steps(&text)?;
    let targets = targets(&steps)?;
    check_against_fio(&fio_files, &targets)?;
    on_disk(&steps, &targets)?;
    let log_dirs = log_dirs(&steps);
    Ok(JobFile {
        path: path.to_path_buf(),
        text,
        version,
        steps,
        targets,
        log_dirs,
    })
}

/// The folders the jobs' logs go to, each once: a log prefix's folder (the current one
/// for a bare option or a name without one), made absolute.
fn log_dirs(steps: &[FileStep]) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for job in steps.iter().flat_map(|s| &s.jobs) {
        for key in LOG_KEYS.iter().chain(&["write_iolog"]) {
            let Some(v) = job.get(key) else { continue };
            let prefix = if v.is_empty() { job.name.as_str() } else { v };
            let dir = match Path::new(prefix).parent() {
                Some(d) if !d.as_os_str().is_empty() => cwd.join(d),
                _ => cwd.clone(),
            };
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stonewalled_jobs_are_steps_and_globals_apply_to_the_jobs_below() {
        let steps = parse_steps(
            "; c\n[global]\nfilename=/dev/x\nrw=read\n[a]\nbs=4k\n[b]\nrw=randwrite\n[c]\nstonewall\n[global]\nfilename=/tmp/f\\:1:/tmp/g\n[d]\nwait_for_previous=1\nreadwrite=randrw\n",
        )
        .unwrap();
        let labels: Vec<String> = steps.iter().map(FileStep::label).collect();
        assert_eq!(labels, ["a + b", "c", "d"]);
        assert!(!steps[0].jobs[0].writes() && steps[0].jobs[1].writes());
        let t = targets(&steps).unwrap();
        let got: Vec<(String, bool)> = t
            .iter()
            .map(|t| (t.path.display().to_string(), t.writes))
            .collect();
        assert_eq!(
            got,
            [
                ("/dev/x".to_string(), true),
                ("/tmp/f:1".to_string(), true),
                ("/tmp/g".to_string(), true)
            ]
        );
    }

    /// The reason a text is refused, and where.
    fn refusal(text: &str) -> (Option<String>, Option<usize>, Refusal) {
        match parse_steps(text).and_then(|s| targets(&s)) {
            Err(FioError::Unsafe { job, line, why }) => (job, line, why),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn what_drivescope_cannot_follow_is_refused() {
        let size = |key, value: &str| Refusal::UnreadableExtent {
            key,
            value: value.into(),
        };
        for (text, why) in [
            ("[a]\nrw=write\n", Refusal::NoFilename),
            (
                "[a]\nfilename=${DEV}\nrw=write\n",
                Refusal::Expansion { key: "filename" },
            ),
            (
                "[a]\nfilename=/tmp/x\nioengine=net\n",
                Refusal::OtherEngine {
                    engine: "net".into(),
                },
            ),
            (
                "[a]\nfilename=/tmp/x\ndirectory=/a:/b\n",
                Refusal::SeveralDirectories,
            ),
            ("[a]\nfilename=-\n", Refusal::StdinStdout),
            (
                "[a]\nfilename=/tmp/x\nnrfiles=2\n",
                Refusal::TooFewNames {
                    nrfiles: 2,
                    named: 1,
                },
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=0x100000\n",
                size("size", "0x100000"),
            ),
            ("[a]\nfilename=/tmp/x\nsize=50%\n", size("size", "50%")),
            (
                "[a]\nfilename=/tmp/x\nfilesize=1k-1m\n",
                size("filesize", "1k-1m"),
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=1m\noffset=$off\n",
                Refusal::Expansion { key: "offset" },
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=1m\noffset_increment=1m\nnumjobs=$ncpus\n",
                Refusal::UnreadableNumjobs {
                    value: "$ncpus".into(),
                },
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=15000000000000000000\noffset=15000000000000000000\n",
                Refusal::ReachOverflows,
            ),
        ] {
            let (job, line, got) = refusal(text);
            assert_eq!(got, why, "{text}");
            assert_eq!((job.as_deref(), line), (Some("a"), Some(1)), "{text}");
        }
        // Each option drivescope cannot follow (exec_prerun, opendir, read_iolog, …).
        for u in Unfollowed::ALL {
            let text = format!("[a]\nfilename=/tmp/x\n{}=/tmp/y\n", u.key());
            assert_eq!(refusal(&text).2, Refusal::Unfollowed(u), "{text}");
        }
        assert_eq!(
            refusal("[a]\nfilename_format=$jobname\n").2,
            Refusal::Unfollowed(Unfollowed::FilenameFormat)
        );
        // Where the refusal is: the file's line, a job's section, a global section.
        assert_eq!(
            refusal("include other.fio\n[a]\n"),
            (None, Some(1), Refusal::Include)
        );
        assert_eq!(
            refusal("; c\n[a]\nfilename=/tmp/x\ninclude other.fio\n"),
            (None, Some(4), Refusal::Include)
        );
        assert_eq!(
            refusal("rw=read\n[a]\n"),
            (None, Some(1), Refusal::OutsideSection)
        );
        assert_eq!(refusal("; nothing\n"), (None, None, Refusal::NoJob));
        assert_eq!(
            refusal("[a]\nfilename=/tmp/x\n\n[a]\nfilename=/tmp/y\n"),
            (Some("a".into()), Some(4), Refusal::SameName)
        );
        assert_eq!(
            refusal("[a]\nfilename=/tmp/x\n[global]\nfilename=$X\n[b]\n"),
            (
                Some("(global)".into()),
                Some(3),
                Refusal::Expansion { key: "filename" }
            )
        );
        let shown = FioError::Unsafe {
            job: Some("a".into()),
            line: Some(3),
            why: Refusal::NoFilename,
        }
        .to_string();
        assert!(
            shown.starts_with("fio job a (line 3): no filename=: ")
                && shown.ends_with("; refused before fio starts"),
            "{shown}"
        );
    }

    #[test]
    fn what_would_overwrite_or_delete_what_is_there_is_refused_by_its_kind() {
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine.txt");
        std::fs::write(&mine, "x").unwrap();
        let old_log = dir.path().join("lg_bw.1.log");
        std::fs::write(&old_log, "x").unwrap();
        let prefix = dir.path().join("lg");
        let on = |opts: &str| {
            let steps = parse_steps(&format!(
                "; c\n[j]\nfilename=/dev/null\nrw=write\nsize=1m\n{opts}"
            ))
            .unwrap();
            match on_disk(&steps, &targets(&steps).unwrap()) {
                Err(FioError::Unsafe { job, line, why }) => {
                    assert_eq!((job.as_deref(), line), (Some("j"), Some(2)), "{opts}");
                    Some(why)
                }
                Ok(()) => None,
                Err(e) => panic!("{opts}: {e}"),
            }
        };
        assert_eq!(
            on("unlink=1\n"),
            Some(Refusal::UnlinkNotRegular {
                path: "/dev/null".into()
            })
        );
        assert_eq!(
            on(&format!("write_iolog={}\n", mine.display())),
            Some(Refusal::IologOverwrites {
                value: mine.display().to_string()
            })
        );
        assert_eq!(
            on(&format!("write_bw_log={}\n", prefix.display())),
            Some(Refusal::LogOverwrites {
                key: "write_bw_log",
                value: prefix.display().to_string(),
                clash: LogClash::Exists(old_log.clone()),
            })
        );
        assert_eq!(
            on("write_lat_log=$x\n"),
            Some(Refusal::LogOverwrites {
                key: "write_lat_log",
                value: "$x".into(),
                clash: LogClash::Expansion,
            })
        );
        assert_eq!(on("verify=crc32c\n"), Some(Refusal::VerifyStateSave));
        assert_eq!(on("verify=crc32c\nverify_state_save=0\n"), None);
        let fresh = dir.path().join("new");
        assert_eq!(on(&format!("write_bw_log={}\n", fresh.display())), None);
    }

    #[test]
    fn a_name_is_in_its_directory_even_an_absolute_one_and_jobs_on_one_file_share_it() {
        let steps = parse_steps(
            "[global]\ndirectory=/srv/t\nsize=4m\n[a]\nfilename=f1:/abs/f2\n[b]\nfilename=f1\nrw=randwrite\nsize=8m\n",
        )
        .unwrap();
        let t = targets(&steps).unwrap();
        let got: Vec<(String, bool, Option<u64>)> = t
            .iter()
            .map(|t| (t.path.display().to_string(), t.writes, t.size))
            .collect();
        assert_eq!(
            got,
            [
                ("/srv/t/f1".to_string(), true, Some(8 << 20)),
                ("/srv/t//abs/f2".to_string(), false, Some(4 << 20)),
            ]
        );
        assert_eq!(t[0].job, "a", "named first by job a");
    }

    #[test]
    fn a_jobs_files_are_the_globals_above_it_and_its_own_each_in_its_sections_directory() {
        // fio adds every filename= to the job's files (a run here wrote /tmp/fsp/g from a
        // job naming only /tmp/fsp/j, under a global naming g), each named with the
        // directory of the section it is in; a global after a job is not that job's.
        let steps = parse_steps(
            "[global]\ndirectory=/g\nfilename=a\n[one]\nfilename=b\ndirectory=/j\nfilename=c\n\
             [global]\nfilename=/late\n[two]\nrw=write\n",
        )
        .unwrap();
        let files = |i: usize| -> Vec<String> {
            steps[0].jobs[i]
                .files
                .iter()
                .map(|p| p.display().to_string())
                .collect()
        };
        assert_eq!(files(0), ["/g/a", "/j/b", "/j/c"]);
        assert_eq!(files(1), ["/g/a", "/g//late"]);
    }

    #[test]
    fn fios_trace_names_its_files_and_one_drivescope_did_not_find_is_refused() {
        let trace = "fio: set debug option file\nfile     21459 add file a\n\
            file     21459 file 0x7fe2c20b40d0 \"/tmp/x \"y\" added at 0\" added at 0\n\
            file     21459 dup files: 1\n";
        let files: Vec<PathBuf> = trace.lines().filter_map(added_file).collect();
        assert_eq!(files, [PathBuf::from("/tmp/x \"y\" added at 0")]);
        let found = JobTarget {
            path: files[0].clone(),
            writes: false,
            size: None,
            reach: String::new(),
            job: "a".into(),
            unlinked: false,
        };
        assert!(check_against_fio(&files, std::slice::from_ref(&found)).is_ok());
        let other = JobTarget {
            path: "/tmp/other".into(),
            ..found
        };
        assert!(matches!(
            check_against_fio(&files, &[other]),
            Err(FioError::Unsafe {
                job: None,
                why: Refusal::UnfoundFile { path },
                ..
            }) if path == files[0]
        ));
    }

    #[test]
    fn a_targets_size_is_how_far_its_jobs_reach_into_it() {
        let reach = |opts: &str| {
            let steps = parse_steps(&format!("[a]\nfilename=/tmp/x\n{opts}")).unwrap();
            targets(&steps).unwrap()[0].size
        };
        assert_eq!(reach("rw=read\n"), None);
        assert_eq!(reach("offset=1m\n"), None, "no size: the file as it is");
        assert_eq!(reach("size=8k\n"), Some(8 << 10));
        assert_eq!(reach("filesize=1m\nsize=8k\n"), Some(1 << 20));
        assert_eq!(reach("fileoffset=4k\nsize=8k\n"), Some(12 << 10));
        assert_eq!(
            reach("offset=4k\nsize=8k\noffset_increment=1m\nnumjobs=2\n"),
            Some((4 << 10) + (2 << 20) + (8 << 10))
        );
    }

    #[test]
    fn times_read_as_fio_reads_them_a_plain_number_in_seconds() {
        let job = |opts: &str| parse_steps(&format!("[a]\n{opts}")).unwrap()[0].jobs[0].clone();
        let secs = std::time::Duration::from_secs;
        assert_eq!(job("runtime=30\n").runtime(), Some(secs(30)));
        assert_eq!(job("timeout=2m\n").runtime(), Some(secs(120)));
        assert_eq!(job("runtime=1h\n").runtime(), Some(secs(3600)));
        assert_eq!(job("runtime=1d\n").runtime(), Some(secs(86400)));
        assert_eq!(
            job("ramp_time=500ms\n").ramp(),
            Some(std::time::Duration::from_millis(500))
        );
        assert_eq!(
            job("ramp_time=250us\n").ramp(),
            Some(std::time::Duration::from_micros(250))
        );
        assert_eq!(job("ramp_time = 5 ; warm\n").ramp(), Some(secs(5)));
        assert_eq!(job("rw=read\n").runtime(), None);
        // fio compares the suffix in lower case; 0 is its "no limit".
        assert_eq!(job("runtime=2S\n").runtime(), Some(secs(2)));
        assert_eq!(job("runtime=1M\n").runtime(), Some(secs(60)));
        assert_eq!(
            job("ramp_time=20msec\n").ramp(),
            Some(std::time::Duration::from_millis(20))
        );
        assert_eq!(job("runtime=0\n").runtime(), None);
        assert_eq!(job("ramp_time=0s\n").ramp(), None);
    }

    #[test]
    fn a_time_fio_reads_otherwise_than_it_looks_is_refused() {
        // fio reads `2sec` and `1m30s` as microseconds, `1.5s` as 1 s, `10ns` as 10 µs.
        for (key, value) in [
            ("runtime", "2sec"),
            ("runtime", "1m30s"),
            ("ramp_time", "1.5s"),
            ("runtime", "10ns"),
            ("runtime", ""),
            ("ramp_time", "s"),
        ] {
            let text = format!("[a]\nfilename=/tmp/x\n{key}={value}\n");
            let (job, line, why) = refusal(&text);
            assert_eq!((job.as_deref(), line), (Some("a"), Some(1)), "{text}");
            assert_eq!(
                why,
                Refusal::UnreadableTime {
                    key,
                    value: value.into()
                },
                "{text}"
            );
        }
        // `timeout` is fio's other name for runtime.
        let (_, _, why) = refusal("[a]\nfilename=/tmp/x\ntimeout=5sec\n");
        assert!(matches!(
            why,
            Refusal::UnreadableTime { key: "runtime", .. }
        ));
    }

    #[test]
    fn lines_are_read_as_fio_reads_them() {
        // A comment starts at any `;` or `#`; a section whose name starts with `global` is
        // global; blanks around `=` go.
        let steps = parse_steps(
            "[global-x]\nfilename = /dev/loop7 ; the device\n[a]\nrw=write#now\nsize = 1m\n",
        )
        .unwrap();
        let t = targets(&steps).unwrap();
        assert_eq!(steps[0].jobs.len(), 1);
        assert_eq!(t[0].path, PathBuf::from("/dev/loop7"));
        assert!(t[0].writes);
        assert_eq!(t[0].size, Some(1 << 20));
        assert!(parse_steps("[a]\n[a]\n").is_err());
    }
}
