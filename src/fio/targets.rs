//! The files and devices an fio job file's jobs touch, as drivescope reads them for the write guard: each target's reach, and the refusals of what it cannot tell for sure or what would overwrite a file beside a target.

use std::path::{Path, PathBuf};

use super::error::FioError;
use super::names::default_files;
use super::parse::{refuse, refuse_file, FileJob, FileStep};
use super::refusal::{Refusal, Unfollowed, FILELESS_ENGINES, FILE_ENGINES};

/// A file or device a job opens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Some job's size is a share of the file (`size=50%`): a file that does not exist yet
    /// has none.
    pub share: bool,
}

/// Options in bytes that set how far into its files a job reaches (fio lays out anew, even
/// for a read, a file shorter than that).
const EXTENT_KEYS: &[&str] = &["size", "filesize", "offset", "offset_increment"];

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
        if fileless(job) {
            // It opens no file: nothing to guard, create or fill.
            continue;
        }
        // fio makes a job's size "as large as it gets" (init.c), writing until ENOSPC.
        if job.flag("fill_device") && job.first_bytes("size").is_none_or(|s| s == 0) {
            return Err(refuse(job, Refusal::FillsFilesystem));
        }
        let engine = job.engine();
        if !FILE_ENGINES.contains(&engine) {
            return Err(refuse(
                job,
                Refusal::OtherEngine {
                    engine: engine.to_string(),
                },
            ));
        }
        // A job naming no file has the files fio names itself (`jobname.jobnum.filenum`);
        // one naming fewer than its nrfiles has only those (fio counts the names it has).
        let files = if job.files.is_empty() {
            default_files(job).map_err(|why| refuse(job, why))?
        } else {
            job.files.clone()
        };
        let per_job = if job.files.is_empty() {
            job.number("nrfiles").unwrap_or(1)
        } else {
            u32::try_from(files.len()).unwrap_or(u32::MAX)
        };
        let how_far = extent(job, per_job)?;
        let reach: Vec<String> = EXTENT_KEYS
            .iter()
            .filter_map(|k| job.get(k).map(|v| format!("{k}={v}")))
            .collect();
        let reach = reach.join(" ");
        for path in files {
            if holds_no_data(&path) && !job.unlinks() {
                // Nothing to guard, make or fill; fio's cage has it.
                continue;
            }
            let (size, share) = match how_far {
                Reach::Upto(b) => (Some(b), false),
                Reach::File => (None, false),
                Reach::Share => (None, true),
                Reach::FromShare {
                    offset,
                    increment,
                    jobs,
                    align,
                    then,
                } => {
                    let start = share_of(&path, increment, align)
                        .checked_mul(jobs)
                        .and_then(|i| i.checked_add(share_of(&path, offset, align)))
                        .and_then(|s| s.checked_add(then));
                    match start {
                        Some(r) => (Some(r), false),
                        None => return Err(refuse(job, Refusal::ReachOverflows)),
                    }
                }
            };
            match out.iter_mut().find(|t| t.path == path) {
                Some(t) => {
                    t.writes |= job.writes();
                    if size > t.size {
                        t.size = size;
                        t.reach = reach.clone();
                    }
                    t.unlinked |= job.unlinks();
                    t.share |= share;
                }
                None => out.push(JobTarget {
                    path,
                    writes: job.writes(),
                    size,
                    reach: reach.clone(),
                    job: job.name.clone(),
                    unlinked: job.unlinks(),
                    share,
                }),
            }
        }
    }
    Ok(out)
}

/// What fio aligns a percentage offset to: `offset_align`, else the job's block size.
fn offset_align(job: &FileJob) -> u64 {
    job.first_bytes("offset_align")
        .filter(|a| *a > 0)
        .or(job.bs())
        .unwrap_or(4096)
}

/// The job's engine opens no file (`null`, `cpuio`).
pub(super) fn fileless(job: &FileJob) -> bool {
    let engine = job.engine();
    FILELESS_ENGINES.contains(&engine)
}

/// The kernel's null and zero devices (`/dev/null`, `/dev/zero`: character devices 1:3
/// and 1:5, Documentation/admin-guide/devices.txt), and only those: they hold no data, so a
/// job reading or writing one needs no guard and no `--destroy-data`, and fio's cage has
/// both. Any other node under `/dev` (`/dev/full`, a disk) keeps the device rules.
pub(super) fn holds_no_data(path: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    const NODES: [(&str, u32); 2] = [("/dev/null", 3), ("/dev/zero", 5)];
    NODES.iter().any(|(name, minor)| {
        path == Path::new(name)
            && std::fs::metadata(path).is_ok_and(|m| {
                m.file_type().is_char_device()
                    && libc::major(m.rdev()) == 1
                    && libc::minor(m.rdev()) == *minor
            })
    })
}

/// The files fio names that are no target: those only jobs of an engine that opens none
/// name (fio lists them, nothing opens them), and `/dev/null` and `/dev/zero`.
pub(super) fn named_only(steps: &[FileStep]) -> Vec<PathBuf> {
    let jobs = || steps.iter().flat_map(|s| &s.jobs);
    jobs()
        .filter(|j| fileless(j))
        .flat_map(|j| j.files.iter().cloned())
        .chain(
            jobs()
                .filter(|j| !j.unlinks())
                .flat_map(|j| j.files.iter().filter(|f| holds_no_data(f)).cloned()),
        )
        .collect()
}

/// How far a job reaches into each of its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Up to this many bytes from the file's start.
    Upto(u64),
    /// The file as it is: no size given (or one fio reads as none).
    File,
    /// `size=N%`: a share of the file as it is (fio never goes past its end), which a file
    /// that does not exist yet has none of.
    Share,
    /// `offset=N%` or `offset_increment=N%`: from `offset` percent of the file as it is
    /// (0 for a new one) plus `jobs` times `increment` percent of it, each aligned up to
    /// `align`, then `then` bytes more.
    FromShare {
        offset: u8,
        increment: u8,
        jobs: u64,
        align: u64,
        then: u64,
    },
}

/// Where `offset=N%` starts in a file, as fio works it out (filesetup.c
/// `get_start_offset`): that share of the file's size as it is now (0 for a file not made
/// yet), aligned up to `offset_align` or the block size.
fn share_of(path: &Path, percent: u8, align: u64) -> u64 {
    use std::io::Seek as _;
    let here = match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m.len(),
        // A device's size is where its end is.
        Ok(_) => std::fs::File::open(path)
            .and_then(|mut f| f.seek(std::io::SeekFrom::End(0)))
            .unwrap_or(0),
        Err(_) => 0,
    };
    let raw = u128::from(here) * u128::from(percent) / 100;
    let align = u128::from(align.max(1));
    u64::try_from(raw.div_ceil(align) * align).unwrap_or(u64::MAX)
}

/// One of the extent options' values in bytes: zones (`8z`) in the job's `zonesize=`;
/// `Err(N)` for a percentage of the file (only `size` and `offset` may be one here).
fn extent_bytes(job: &FileJob, key: &'static str, raw: &str) -> Result<Result<u64, u8>, FioError> {
    use super::value::Decimal;
    let unreadable = || {
        refuse(
            job,
            Refusal::UnreadableExtent {
                key,
                value: raw.to_string(),
            },
        )
    };
    let raw = raw.trim();
    // fio's zone units (FIO_OPT_STR_VAL_ZONE: digits and a `z`): not in filesize.
    let zones = raw
        .strip_suffix('z')
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if raw.ends_with('z') {
        let Some(n) = zones.filter(|_| key != "filesize") else {
            return Err(unreadable());
        };
        let n: u64 = n.parse().map_err(|_| unreadable())?;
        // zonemode=zbd counts in the device's own zones (zbd.c); otherwise in the job's
        // zonesize (fio refuses a zonesize without zonemode=strided itself), and with none
        // fio reads the value as 0.
        if job.get("zonemode").map(str::trim) == Some("zbd") {
            return Err(refuse(
                job,
                Refusal::DeviceZones {
                    key,
                    value: raw.to_string(),
                },
            ));
        }
        let zone = match ["zonesize", "zone_size"]
            .into_iter()
            .find(|k| job.get(k).is_some())
        {
            Some(k) => job.first_bytes(k).ok_or_else(unreadable)?,
            None => 0,
        };
        return n
            .checked_mul(zone)
            .map(Ok)
            .ok_or_else(|| refuse(job, Refusal::ReachOverflows));
    }
    // A value fio reads in rounds (`4k-8k`: 4 KiB, then 8 KiB) is not followed.
    let rounds = super::value::rounds(raw);
    if rounds.iter().skip(1).any(|r| !r.is_empty()) {
        return Err(unreadable());
    }
    match super::value::decimal(rounds[0], job.kb_base()).ok_or_else(unreadable)? {
        Decimal::Bytes(b) => Ok(Ok(b)),
        // fio reads 0% to 100% as a share (parse.h `parse_is_percent`); a share of 0 is
        // none, which is 0 bytes: `offset=0%` starts at the file's start, `size=0%` is no
        // size (options.c str_offset_cb, str_size_cb).
        Decimal::Percent(0) if matches!(key, "size" | "offset" | "offset_increment") => Ok(Ok(0)),
        Decimal::Percent(p @ 1..=100) if matches!(key, "size" | "offset" | "offset_increment") => {
            Ok(Err(p as u8))
        }
        Decimal::Percent(_) => Err(unreadable()),
    }
}

/// How far into each of its `nfiles` files a job reaches, in bytes: its offset (plus
/// `offset_increment` for each of its `numjobs`) and the larger of `filesize` and its share
/// of `size` (fio splits `size` over the files, the first ones a block larger where it does
/// not divide: filesetup.c `setup_files`); the file as it is when it gives neither or a size
/// of 0 (fio then takes the file as it is); a share of it for `size=N%` (fio's I/O then
/// ends at the file's end: filesetup.c). Zones count in the job's `zonesize`. A value
/// drivescope cannot read (`(1024*1024)`, a range, a percentage elsewhere) is refused: the
/// guard could not judge it.
fn extent(job: &FileJob, nfiles: u32) -> Result<Reach, FioError> {
    let mut v = [0u64; 4];
    let mut shares: [Option<u8>; 4] = [None; 4];
    for ((slot, share), key) in v.iter_mut().zip(shares.iter_mut()).zip(EXTENT_KEYS) {
        if let Some(raw) = job.get(key) {
            match extent_bytes(job, key, raw)? {
                Ok(b) => *slot = b,
                Err(p) => *share = Some(p),
            }
        }
    }
    let [total, filesize, offset, increment] = v;
    let [size_share, _, offset_share, increment_share] = shares;
    if size_share.is_some() {
        // fio lays the file out to filesize first, then takes its share of that.
        return Ok(if filesize > 0 {
            Reach::Upto(filesize)
        } else {
            Reach::Share
        });
    }
    let nfiles = u64::from(nfiles.max(1));
    let size = total / nfiles
        + if total % nfiles == 0 {
            0
        } else {
            job.bs().unwrap_or(4096)
        };
    if total == 0 && filesize == 0 {
        return Ok(Reach::File);
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
    let after = increment
        .checked_mul(numjobs)
        .and_then(|i| i.checked_add(size.max(filesize)));
    let Some(then) = after else {
        return Err(refuse(job, Refusal::ReachOverflows));
    };
    if offset_share.is_none() && increment_share.is_none() {
        return then
            .checked_add(offset)
            .map(Reach::Upto)
            .ok_or_else(|| refuse(job, Refusal::ReachOverflows));
    }
    // A share of the file as it is, worked out per file; an offset in bytes beside a
    // share of an increment adds to what follows it.
    let then = match offset_share {
        Some(_) => then,
        None => then
            .checked_add(offset)
            .ok_or_else(|| refuse(job, Refusal::ReachOverflows))?,
    };
    Ok(Reach::FromShare {
        offset: offset_share.unwrap_or(0),
        increment: increment_share.unwrap_or(0),
        jobs: numjobs,
        align: offset_align(job),
        then,
    })
}

/// What only the file system can tell: a job that would delete a device node (`unlink`
/// on anything but a regular file) is refused. (fio's logs go to the run's own folder,
/// where nothing is there before them: `super::logs`.)
pub(super) fn on_disk(steps: &[FileStep], targets: &[JobTarget]) -> Result<(), FioError> {
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
        let verifies = job
            .get("verify")
            .is_some_and(|v| !matches!(v.trim(), "" | "0" | "none"));
        if verifies && job.get("verify_state_save").map(str::trim) != Some("0") {
            return Err(refuse(job, Refusal::VerifyStateSave));
        }
    }
    Ok(())
}

/// Every file fio named must be one drivescope found (and so guards), or one that is no
/// target (`named_only`: named only by jobs that open no file, or `/dev/null` and
/// `/dev/zero`): else the job file writes where drivescope cannot
/// tell, and is refused. fio's parse-time list holds only the files its options name: not
/// those named inside an I/O log (`read_iolog`), which is why that option is refused
/// outright (see `Unfollowed`).
pub(super) fn check_against_fio(
    fio_files: &[PathBuf],
    targets: &[JobTarget],
    named_only: &[PathBuf],
) -> Result<(), FioError> {
    match fio_files
        .iter()
        .find(|f| !targets.iter().any(|t| t.path == **f) && !named_only.contains(f))
    {
        Some(f) => Err(refuse_file(None, Refusal::UnfoundFile { path: f.clone() })),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    #[test]
    fn what_would_overwrite_or_delete_what_is_there_is_refused_by_its_kind() {
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
        assert_eq!(on("verify=crc32c\n"), Some(Refusal::VerifyStateSave));
        assert_eq!(on("verify=crc32c\nverify_state_save=0\n"), None);
    }

    #[test]
    fn jobs_of_an_engine_that_opens_no_file_have_no_targets() {
        let of = |text: &str| targets(&parse_steps(text).unwrap()).unwrap();
        assert!(of("[n]\nioengine=null\nsize=100g\n").is_empty());
        assert!(of("[c]\nioengine=cpuio\ncpuload=50\n").is_empty());
        // Named, never opened: fio lists the name, which is no unfound file.
        let steps =
            parse_steps("[n]\nioengine=null\nfilename=/tmp/none\n[w]\nfilename=/tmp/w\n").unwrap();
        let t = targets(&steps).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].path, PathBuf::from("/tmp/w"));
        let named = named_only(&steps);
        assert_eq!(named, [PathBuf::from("/tmp/none")]);
        let fio = [PathBuf::from("/tmp/none"), PathBuf::from("/tmp/w")];
        assert!(check_against_fio(&fio, &t, &named).is_ok());
        assert!(check_against_fio(&fio, &t, &[]).is_err());
    }

    #[test]
    fn dev_null_and_dev_zero_hold_no_data_and_other_devices_are_targets() {
        assert!(holds_no_data(Path::new("/dev/null")) && holds_no_data(Path::new("/dev/zero")));
        for other in ["/dev/full", "/dev/urandom", "/tmp/null", "/dev/nulls"] {
            assert!(!holds_no_data(Path::new(other)), "{other}");
        }
        let steps = parse_steps(
            "[z]\nfilename=/dev/zero\nrw=read\nsize=1m\n\
             [n]\nfilename=/dev/null\nrw=write\nsize=1m\n\
             [f]\nfilename=/dev/full\nrw=write\nsize=1m\n",
        )
        .unwrap();
        let t = targets(&steps).unwrap();
        let paths: Vec<&Path> = t.iter().map(|t| t.path.as_path()).collect();
        assert_eq!(paths, [Path::new("/dev/full")]);
        let named = named_only(&steps);
        assert_eq!(
            named,
            [PathBuf::from("/dev/zero"), PathBuf::from("/dev/null")]
        );
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
        // Zones of the job's zonesize; with none, fio reads 0: the file as it is.
        assert_eq!(
            reach("zonemode=strided\nzonesize=64k\nsize=3z\noffset=1z\n"),
            Some(4 << 16)
        );
        assert_eq!(reach("size=3z\n"), None);
        assert_eq!(reach("size=0\n"), None, "fio's size 0 is the whole file");
    }

    #[test]
    fn a_percentage_is_a_share_of_the_file_as_it_is() {
        let of = |opts: &str| {
            let steps = parse_steps(&format!("[a]\nfilename=/tmp/x\n{opts}")).unwrap();
            let t = targets(&steps).unwrap();
            (t[0].size, t[0].share)
        };
        assert_eq!(of("size=50%\n"), (None, true));
        // fio never goes past the file's end, whatever the offset.
        assert_eq!(of("size=50%\noffset=1g\n"), (None, true));
        // With filesize=, fio lays the file out to it first.
        assert_eq!(of("size=50%\nfilesize=1m\n"), (Some(1 << 20), false));
        assert_eq!(of("size=1m\n"), (Some(1 << 20), false));
    }

    #[test]
    fn a_percentage_offset_starts_at_that_share_of_the_file_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
        let reach = |path: &Path, opts: &str| {
            let text = format!("[a]\nfilename={}\n{opts}", path.display());
            targets(&parse_steps(&text).unwrap()).unwrap()[0].size
        };
        // Each job a quarter of 1 MiB further (fio's offset_increment=25%, filesetup.c):
        // at most numjobs increments, then its size.
        assert_eq!(
            reach(&f, "offset_increment=25%\nnumjobs=2\nsize=64k\n"),
            Some((512 << 10) + (64 << 10))
        );
        assert_eq!(
            reach(&f, "offset=4k\noffset_increment=25%\nnumjobs=1\nsize=64k\n"),
            Some((256 << 10) + (4 << 10) + (64 << 10))
        );
        assert_eq!(
            reach(
                &dir.path().join("new"),
                "offset_increment=25%\nnumjobs=2\nsize=64k\n"
            ),
            Some(64 << 10),
            "a new file is 0 bytes: every job starts at 0"
        );
        // Half of 1 MiB, then 64k: fio's offset=50%.
        assert_eq!(
            reach(&f, "offset=50%\nsize=64k\n"),
            Some((512 << 10) + (64 << 10))
        );
        // Aligned up to the block size (or offset_align).
        assert_eq!(
            reach(&f, "offset=33%\nsize=4k\nbs=64k\n"),
            Some((384 << 10) + (4 << 10))
        );
        assert_eq!(
            reach(&f, "offset=33%\nsize=4k\noffset_align=1m\n"),
            Some((1 << 20) + (4 << 10))
        );
        // A file not made yet is 0 bytes: fio starts at 0.
        assert_eq!(
            reach(&dir.path().join("new"), "offset=50%\nsize=64k\n"),
            Some(64 << 10)
        );
        // 0% is a share of none: fio starts at the file's start (and 100% at its end).
        assert_eq!(reach(&f, "offset=0%\nsize=64k\n"), Some(64 << 10));
        assert_eq!(
            reach(&f, "offset=0%\noffset_increment=0%\nnumjobs=4\nsize=64k\n"),
            Some(64 << 10)
        );
        assert_eq!(
            reach(&f, "offset=100%\nsize=64k\n"),
            Some((1 << 20) + (64 << 10))
        );
    }
}
