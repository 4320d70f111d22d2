//! The files fio names itself for a job that gives no `filename=` (fio 3.33 init.c
//! `add_job` and `make_filename`, options.c `set_name_idx`): `nrfiles` files for each of
//! the job's `numjobs` copies, named `jobname.jobnum.filenum` (or by a `filename_format` of
//! `$jobname`, `$jobnum` and `$filenum`), each in the directory of its copy's number among
//! `directory=`'s (in turn), or in the working directory.

use std::path::{Path, PathBuf};

use super::parse::{split_files, FileJob};
use super::refusal::{Refusal, Unfollowed};

/// fio's keywords of `filename_format`, in the order fio replaces them.
const JOBNAME: &str = "$jobname";
const JOBNUM: &str = "$jobnum";
const FILENUM: &str = "$filenum";
/// A client's address, in fio's client/server mode only.
const CLIENTUID: &str = "$clientuid";

/// The files fio adds to `job` when it names none, as fio names them.
pub(super) fn default_files(job: &FileJob) -> Result<Vec<PathBuf>, Refusal> {
    let nrfiles = job.number("nrfiles").unwrap_or(1);
    let numjobs = job.threads();
    let dirs = job.get("directory").map(split_files).unwrap_or_default();
    let format = job.get("filename_format").filter(|f| !f.is_empty());
    if let Some(f) = format {
        // A job name holding `$` could hold a keyword fio would then replace again.
        if f.to_ascii_lowercase().contains(CLIENTUID) || job.name.contains('$') {
            return Err(Refusal::Unfollowed(Unfollowed::FilenameFormat));
        }
    }
    let mut out = Vec::new();
    for jobnum in 0..numjobs {
        // fio names a job's one file after the job itself where that is a device or any
        // other file but a regular one (`[/dev/sdb]`).
        let names: Vec<String> = if nrfiles == 1 && exists_and_not_regfile(&job.name) {
            vec![job.name.clone()]
        } else {
            (0..nrfiles)
                .map(|filenum| match format {
                    Some(f) => formatted(f, &job.name, jobnum, filenum),
                    None => format!("{}.{jobnum}.{filenum}", job.name),
                })
                .collect()
        };
        for name in names {
            let path = match dirs.get(jobnum as usize % dirs.len().max(1)) {
                Some(d) => PathBuf::from(format!("{d}/{name}")),
                None => PathBuf::from(name),
            };
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// fio's `exists_and_not_regfile`: the name is there and is not a regular file.
fn exists_and_not_regfile(name: &str) -> bool {
    std::fs::metadata(Path::new(name)).is_ok_and(|m| !m.is_file())
}

/// `filename_format` with fio's keywords replaced (each wherever it is, in any case).
fn formatted(format: &str, jobname: &str, jobnum: u32, filenum: u32) -> String {
    let mut out = format.to_string();
    for (word, value) in [
        (JOBNAME, jobname.to_string()),
        (JOBNUM, jobnum.to_string()),
        (FILENUM, filenum.to_string()),
    ] {
        while let Some(at) = out.to_ascii_lowercase().find(word) {
            out.replace_range(at..at + word.len(), &value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    fn names(text: &str) -> Vec<Vec<String>> {
        parse_steps(text)
            .unwrap()
            .iter()
            .flat_map(|s| &s.jobs)
            .map(|j| {
                default_files(j)
                    .unwrap()
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn fios_own_names_are_jobname_jobnum_filenum_with_the_directories_in_turn() {
        // As fio 3.33 made them (run here): the copies of a job take the directories in
        // turn; filename_format's keywords in any case.
        assert_eq!(
            names(
                "[global]\nsize=64k\n[d]\nrw=write\n\
                 [j]\ndirectory=/t/d1:/t/d2\nnrfiles=2\nnumjobs=3\n\
                 filename_format=f.$JOBNUM.$filenum\n[k]\nnr_files=2\ndirectory=/s\n"
            ),
            [
                vec!["d.0.0".to_string()],
                ["/t/d1/f.0.0", "/t/d1/f.0.1", "/t/d2/f.1.0", "/t/d2/f.1.1"]
                    .iter()
                    .chain(&["/t/d1/f.2.0", "/t/d1/f.2.1"])
                    .map(|s| s.to_string())
                    .collect(),
                vec!["/s/k.0.0".to_string(), "/s/k.0.1".to_string()],
            ]
        );
        // Copies naming one file share it.
        assert_eq!(
            names("[s]\nnumjobs=4\nfilename_format=shared.$jobname\n"),
            [vec!["shared.s".to_string()]]
        );
        // A job named after a device uses it.
        assert_eq!(
            names("[/dev/null]\nrw=read\n"),
            [vec!["/dev/null".to_string()]]
        );
    }

    #[test]
    fn a_clients_name_is_refused() {
        let steps = parse_steps("[c]\nfilename_format=$clientuid.$filenum\n").unwrap();
        assert_eq!(
            default_files(&steps[0].jobs[0]),
            Err(Refusal::Unfollowed(Unfollowed::FilenameFormat))
        );
    }
}
