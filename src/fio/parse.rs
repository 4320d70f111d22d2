//! An fio job file's text read as fio reads it: its sections, the globals each job takes,
//! its steps (jobs up to each `stonewall` or `wait_for_previous`), and the refusals of
//! what drivescope cannot read for sure (a time fio reads otherwise than it looks; an
//! `include` left in the text: `fio::include` puts a job file's in place first).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::FioError;
use super::expand::{Expander, Vars};
use super::refusal::Refusal;
use crate::workload::BlockSizes;

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
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.options.get(key).map(String::as_str)
    }

    /// The job's name as fio reports it (its `jobname` in the JSON): `name=`, else its
    /// section's name.
    pub fn fio_name(&self) -> &str {
        self.get("name")
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.name)
    }

    /// A boolean option: given bare, or with a value other than 0/false/no/off.
    pub fn flag(&self, key: &str) -> bool {
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
    pub(super) fn unlinks(&self) -> bool {
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

    /// The read block size, as fio reads `bs` (its first round: `4k,64k` reads 4 KiB and
    /// writes 64 KiB; `4KiB` is 4000 bytes under fio's default `kb_base`).
    pub fn bs(&self) -> Option<u64> {
        self.first_bytes("bs")
    }

    /// The write block size: `bs`'s second round (`4k,64k`), else its only one (after a
    /// trailing `,` fio keeps its default write size).
    pub fn write_bs(&self) -> Option<u64> {
        match super::value::rounds(self.get("bs")?.trim()).len() {
            1 => self.bs(),
            _ => self.round_bytes("bs", 1),
        }
    }

    /// The block sizes of the job's reads, or of its writes (`write`): its `bssplit` as fio
    /// reads it (`4k/50:64k/50`, a group per direction after `,`) where every size has its
    /// share and they add up to 100, else its one size. `None` where `bssplit` is given in
    /// a form drivescope does not follow (a share left for fio to divide).
    pub fn block_sizes(&self, write: bool) -> Option<BlockSizes> {
        let Some(raw) = self.get("bssplit") else {
            let bs = if write { self.write_bs() } else { self.bs() };
            return Some(BlockSizes::single(bs.unwrap_or(4096)));
        };
        let groups: Vec<&str> = raw.trim().split(',').collect();
        let group = match (write, groups.get(1)) {
            (true, Some(g)) if !g.trim().is_empty() => g,
            _ => groups.first()?,
        };
        let mut split = Vec::new();
        for entry in group.split(':') {
            let (size, share) = entry.trim().split_once('/')?;
            let size = super::value::decimal(size.trim(), self.kb_base())?
                .bytes()
                .filter(|b| *b > 0)?;
            let share: u32 = share.trim().parse().ok()?;
            if share > 0 {
                split.push((size, share));
            }
        }
        let total: u32 = split.iter().map(|(_, s)| *s).sum();
        (total == 100).then_some(BlockSizes { split })
    }

    /// The smallest and largest I/O fio makes in a direction (0 reads, 1 writes, 2 trims),
    /// as fio sets them (options.c): `bssplit`'s sizes, else `bsrange`'s, else `bs`'s; a
    /// list given for fewer directions goes on with its last one (`bs=4k,64k` writes and
    /// trims 64 KiB), an empty round is fio's 4 KiB. `None` where a value does not read.
    pub fn size_bounds(&self, dir: usize) -> Option<(u64, u64)> {
        const DEFAULT_BS: u64 = 4096;
        let kb = self.kb_base();
        let pick = |raw: &str| -> String {
            let groups: Vec<&str> = raw.trim().split(',').collect();
            groups[dir.min(groups.len() - 1)].trim().to_string()
        };
        let size = |t: &str| -> Option<u64> {
            if t.trim().is_empty() {
                return Some(DEFAULT_BS);
            }
            super::value::decimal(t.trim(), kb)?.bytes()
        };
        if let Some(raw) = self.get("bssplit") {
            let group = pick(raw);
            let sizes: Option<Vec<u64>> = group
                .split(':')
                .filter(|e| !e.trim().is_empty())
                .map(|e| size(e.split('/').next().unwrap_or(e)))
                .collect();
            let sizes = sizes?;
            return Some((*sizes.iter().min()?, *sizes.iter().max()?));
        }
        if let Some(raw) = self.get("bsrange") {
            let range = pick(raw);
            let (lo, hi) = range.split_once('-').unwrap_or((&range, &range));
            let (lo, hi) = (size(lo)?, size(hi)?);
            return Some((lo.min(hi), lo.max(hi)));
        }
        let raw = self.get("bs").unwrap_or("");
        let b = size(&pick(raw))?;
        Some((b, b))
    }

    /// The IOPS fio holds the job to, all its `numjobs` copies together: `rate_iops` for
    /// its one direction (its first round for reads, the second, else the first, for a job
    /// that only writes). `None` for a mix (fio paces each direction on its own) or a job
    /// without a rate.
    pub fn target_iops(&self) -> Option<f64> {
        let raw = self.get("rate_iops")?.trim();
        let rounds = super::value::rounds(raw);
        let round = match (self.reads(), self.writes()) {
            (true, false) => 0,
            (false, true) if rounds.len() > 1 => 1,
            (false, true) => 0,
            _ => return None,
        };
        let rate = self.round_bytes("rate_iops", round).filter(|r| *r > 0)?;
        Some(rate as f64 * f64::from(self.threads()))
    }

    /// A whole number as fio reads an integer option (its first round, suffixes and all:
    /// `iodepth=0x10` is 16).
    pub fn number(&self, key: &str) -> Option<u32> {
        u32::try_from(self.first_bytes(key)?).ok()
    }

    /// The read share of a mix in percent: `rwmixread`, else 100 less `rwmixwrite` (fio
    /// sets both shares from either), else fio's 50.
    pub fn rwmixread(&self) -> u8 {
        let read = self.number("rwmixread");
        let read = read.or_else(|| self.number("rwmixwrite").map(|w| 100 - w.min(100)));
        read.map_or(50, |r| r.min(100) as u8)
    }

    /// fio's `ioengine` (`psync` when none is given, fio 3.33's default on Linux).
    pub fn engine(&self) -> &str {
        self.get("ioengine").unwrap_or("psync").trim()
    }

    /// The queue depth fio runs the job at: its `iodepth`, capped at 1 on a synchronous
    /// engine (fio: "queue depth will be capped at 1").
    pub fn queue_depth(&self) -> u32 {
        if super::refusal::SYNC_ENGINES.contains(&self.engine()) {
            return 1;
        }
        self.number("iodepth").unwrap_or(1).max(1)
    }

    /// `direct`: a number other than 0, as fio reads a boolean option (it refuses one
    /// without a value itself).
    pub fn direct(&self) -> bool {
        self.number("direct").is_some_and(|n| n != 0)
    }

    /// The job's `kb_base` (fio applies it before the job's other options).
    pub(super) fn kb_base(&self) -> u64 {
        super::value::kb_base(self.get("kb_base"))
    }

    /// The bytes of the first round of `key`'s value, as fio reads it.
    pub(super) fn first_bytes(&self, key: &str) -> Option<u64> {
        self.round_bytes(key, 0)
    }

    /// The bytes of round `round` of `key`'s value, as fio reads it.
    fn round_bytes(&self, key: &str, round: usize) -> Option<u64> {
        let raw = self.get(key)?.trim();
        let text = *super::value::rounds(raw).get(round)?;
        super::value::decimal(text, self.kb_base())?.bytes()
    }

    /// The threads (processes) fio makes of it: one per `numjobs` copy.
    pub fn threads(&self) -> u32 {
        self.number("numjobs").unwrap_or(1).max(1)
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

/// A step: jobs fio runs together (the first waits for the jobs before it). Its jobs'
/// shapes and names as fio reports them: `fio::shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStep {
    pub jobs: Vec<FileJob>,
}

/// Option names fio takes for the same option, as read here.
fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "timeout" => "runtime",
        "wait_for_previous" => "stonewall",
        "fileoffset" => "offset",
        "io_limit" => "io_size",
        "nr_files" => "nrfiles",
        "fill_fs" => "fill_device",
        "iodepth_batch_submit" => "iodepth_batch",
        "iodepth_batch_complete" => "iodepth_batch_complete_min",
        "blockalign" => "ba",
        "blocksize_range" => "bsrange",
        "blocksize_unaligned" => "bs_unaligned",
        "iomem" => "mem",
        "mem_align" => "iomem_align",
        "ratemin" => "rate_min",
        "ratecycle" => "rate_cycle",
        "disable_bw" => "disable_bw_measurement",
        k => k,
    }
}

/// A job refused, at its section's line.
pub(super) fn refuse(job: &FileJob, why: Refusal) -> FioError {
    FioError::Unsafe {
        job: Some(job.name.clone()),
        line: Some(job.line),
        why,
    }
}

/// The file refused, at a line of it or as a whole.
pub(super) fn refuse_file(line: Option<usize>, why: Refusal) -> FioError {
    FioError::Unsafe {
        job: None,
        line,
        why,
    }
}

/// A line of a job file as fio reads it (init.c, parse.c strip_blank_end): everything from
/// the first `;` or `#` is a comment, wherever it is; blanks around are dropped.
pub(super) fn content(raw: &str) -> &str {
    raw.split([';', '#']).next().unwrap_or("").trim()
}

/// The steps of a job file's text as fio reads it here: its `$` expansions from the
/// environment fio gets and this machine's figures ([`parse_steps_with`]).
pub fn parse_steps(text: &str) -> Result<Vec<FileStep>, FioError> {
    let env = |name: &str| std::env::var_os(name);
    parse_steps_with(
        text,
        &Expander {
            env: &env,
            vars: Vars::here(),
        },
    )
}

/// The steps of a job file's text: its jobs with their options (each option line expanded
/// as fio expands it, so every value read is the one fio reads), split where a job waits
/// for the ones before it. No file is touched.
pub fn parse_steps_with(text: &str, expander: &Expander) -> Result<Vec<FileStep>, FioError> {
    let mut global: BTreeMap<String, String> = BTreeMap::new();
    let mut global_files: Vec<PathBuf> = Vec::new();
    let mut jobs: Vec<FileJob> = Vec::new();
    // The section being read: a global one (`None`) or the last job, and its line, with
    // its `filename=` values, named once the section is read (fio applies `directory` first).
    let mut section: Option<(Option<usize>, usize)> = None;
    let mut names: Vec<String> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = content(raw);
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
        // fio expands the whole line (`key=value`) before it reads it.
        let line = expander
            .line(line)
            .map_err(|why| refuse_file(Some(n + 1), why))?;
        let line = line.as_str();
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
    // A name fio is given goes in the first of the directories (options.c set_name_idx,
    // index 0); only the names fio makes itself take the others in turn.
    let dir = options
        .get("directory")
        .and_then(|d| split_files(d).into_iter().next());
    for value in names.drain(..) {
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
pub(super) fn split_files(v: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::refusal::Unfollowed;
    use crate::fio::targets::targets;

    #[test]
    fn stonewalled_jobs_are_steps_and_globals_apply_to_the_jobs_below() {
        let steps = parse_steps(
            "; c\n[global]\nfilename=/dev/x\nrw=read\n[a]\nbs=4k\n[b]\nrw=randwrite\n[c]\nstonewall\n[global]\nfilename=/tmp/f\\:1:/tmp/g\n[d]\nwait_for_previous=1\nreadwrite=randrw\n",
        )
        .unwrap();
        let labels: Vec<String> = steps.iter().map(FileStep::names).collect();
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
            (
                "[a]\nfilename=/tmp/x\nioengine=net\n",
                Refusal::OtherEngine {
                    engine: "net".into(),
                },
            ),
            ("[a]\nfilename=-\n", Refusal::StdinStdout),
            // fio's alias, and a size of 0 (none, to fio).
            (
                "[a]\nfilename=/tmp/x\nrw=write\nfill_fs=1\n",
                Refusal::FillsFilesystem,
            ),
            (
                "[a]\nfilename=/tmp/x\nrw=write\nsize=0\nfill_device=1\n",
                Refusal::FillsFilesystem,
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=(1024*1024)\n",
                size("size", "(1024*1024)"),
            ),
            ("[a]\nfilename=/tmp/x\nsize=4k-8k\n", size("size", "4k-8k")),
            ("[a]\nfilename=/tmp/x\nsize=150%\n", size("size", "150%")),
            (
                "[a]\nfilename=/tmp/x\nfilesize=2z\n",
                size("filesize", "2z"),
            ),
            (
                "[a]\nfilename=/tmp/x\nzonemode=zbd\nsize=8z\n",
                Refusal::DeviceZones {
                    key: "size",
                    value: "8z".into(),
                },
            ),
            (
                "[a]\nfilename=/tmp/x\nfilesize=1k-1m\n",
                size("filesize", "1k-1m"),
            ),
            // A `$` fio does not expand is a `$`, which fio itself refuses in a size.
            (
                "[a]\nfilename=/tmp/x\nsize=1m\noffset=$off\n",
                size("offset", "$off"),
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=1m\noffset_increment=1m\nnumjobs=x\n",
                Refusal::UnreadableNumjobs { value: "x".into() },
            ),
            (
                "[a]\nfilename=/tmp/x\nsize=9000000000000000000\n\
                 offset_increment=9000000000000000000\nnumjobs=2\n",
                Refusal::ReachOverflows,
            ),
            // Past a C `long long`: fio fails it too.
            (
                "[a]\nfilename=/tmp/x\nsize=15000000000000000000\n",
                size("size", "15000000000000000000"),
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
            refusal("[a]\nfilename_format=$clientuid\n").2,
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
            refusal("[a]\nfilename=/tmp/x\n[global]\nfilename=${TMPDIR}/y\n[b]\n"),
            (None, Some(4), Refusal::ScratchVar)
        );
        let shown = FioError::Unsafe {
            job: Some("a".into()),
            line: Some(3),
            why: Refusal::StdinStdout,
        }
        .to_string();
        assert!(
            shown.starts_with("fio job a (line 3): filename=- (stdin or stdout)")
                && shown.ends_with("; refused before fio starts"),
            "{shown}"
        );
    }

    #[test]
    fn block_sizes_and_numbers_are_fios_rounds() {
        let job = |opts: &str| {
            let text = format!("[global]\nkb_base=1000\n[a]\nfilename=/tmp/x\n{opts}\n");
            parse_steps(&text).unwrap()[0].jobs[0].clone()
        };
        let j = job("bs=4k,64KiB\niodepth=0x10\nnumjobs=2k");
        // The global kb_base applies: 4k is 4000 bytes, 64KiB 65536.
        assert_eq!((j.bs(), j.write_bs()), (Some(4000), Some(65536)));
        assert_eq!((j.number("iodepth"), j.threads()), (Some(16), 2000));
        // fio's default engine is psync: synchronous, so one I/O at a time.
        assert_eq!(j.queue_depth(), 1);
        assert_eq!(job("ioengine=libaio\niodepth=0x10").queue_depth(), 16);
        assert_eq!(job("ioengine=pvsync2\niodepth=8").queue_depth(), 1);
        let j = job("bs=8k:16k:32k");
        assert_eq!((j.bs(), j.write_bs()), (Some(8000), Some(16000)));
        // After a trailing comma fio keeps its default write size.
        let j = job("bs=64k,");
        assert_eq!((j.bs(), j.write_bs()), (Some(64000), None));
        let j = job("bs=512");
        assert_eq!((j.bs(), j.write_bs()), (Some(512), Some(512)));
        assert!(job("direct=1").direct() && !job("direct=0").direct());
        let sizes = |o: &str, write| job(o).block_sizes(write).map(|b| b.split);
        assert_eq!(
            sizes("bssplit=4k/50:64KiB/50", false),
            Some(vec![(4000, 50), (65536, 50)])
        );
        assert_eq!(
            sizes("bssplit=4k/100,8k/30:16k/70", true),
            Some(vec![(8000, 30), (16000, 70)])
        );
        // A share left for fio to divide is not followed.
        assert_eq!(sizes("bssplit=4k/:8k/50", false), None);
        assert_eq!(sizes("bs=16k", false), Some(vec![(16000, 100)]));
        let rate = |o: &str| job(o).target_iops();
        assert_eq!(rate("rw=randread\nrate_iops=500\nnumjobs=2"), Some(1000.0));
        assert_eq!(rate("rw=write\nrate_iops=500,200"), Some(200.0));
        assert_eq!(rate("rw=randrw\nrate_iops=500"), None);
        assert_eq!(rate("rw=read"), None);
        let bounds = |o: &str, d| job(o).size_bounds(d);
        assert_eq!(bounds("bs=4k,64k", 0), Some((4000, 4000)));
        assert_eq!(bounds("bs=4k,64k", 2), Some((64000, 64000)));
        assert_eq!(bounds("rw=read", 1), Some((4096, 4096)));
        assert_eq!(bounds("bsrange=4k-512k", 1), Some((4000, 512000)));
        assert_eq!(bounds("bs=8k\nbsrange=1k-4k,2k-8k", 1), Some((2000, 8000)));
        assert_eq!(
            bounds("bssplit=4k/20:64k/80,32k/100\nbs=1m", 0),
            Some((4000, 64000))
        );
        assert_eq!(
            bounds("bssplit=4k/20:64k/80,32k/100", 1),
            Some((32000, 32000))
        );
        let shares = ["rwmixread=70", "rwmixwrite=30", "rw=randrw"].map(|o| job(o).rwmixread());
        assert_eq!(shares, [70, 70, 50]);
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
        // fio splits a job's size over its files: a's 4m is 2m of each.
        assert_eq!(
            got,
            [
                ("/srv/t/f1".to_string(), true, Some(8 << 20)),
                ("/srv/t//abs/f2".to_string(), false, Some(2 << 20)),
            ]
        );
        // Named files go in the first of several directories, as fio 3.33 puts them.
        let steps = parse_steps("[a]\ndirectory=/d1:/d2\nfilename=x:y\nnumjobs=2\n").unwrap();
        let t = targets(&steps).unwrap();
        let paths: Vec<String> = t.iter().map(|t| t.path.display().to_string()).collect();
        assert_eq!(paths, ["/d1/x", "/d1/y"]);
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
    fn times_read_as_fio_reads_them_a_plain_number_in_seconds() {
        use std::time::Duration;
        let (secs, ms) = (Duration::from_secs, Duration::from_millis);
        for (opts, runtime, ramp) in [
            ("runtime=30", Some(secs(30)), None),
            ("timeout=2m", Some(secs(120)), None),
            ("runtime=1h", Some(secs(3600)), None),
            ("runtime=1d", Some(secs(86400)), None),
            ("ramp_time=500ms", None, Some(ms(500))),
            ("ramp_time=250us", None, Some(Duration::from_micros(250))),
            ("ramp_time = 5 ; warm", None, Some(secs(5))),
            ("rw=read", None, None),
            // fio compares the suffix in lower case; 0 is its "no limit".
            ("runtime=2S", Some(secs(2)), None),
            ("runtime=1M", Some(secs(60)), None),
            ("ramp_time=20msec", None, Some(ms(20))),
            ("runtime=0", None, None),
            ("ramp_time=0s", None, None),
        ] {
            let job = parse_steps(&format!("[a]\n{opts}\n")).unwrap()[0].jobs[0].clone();
            assert_eq!((job.runtime(), job.ramp()), (runtime, ramp), "{opts}");
        }
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
