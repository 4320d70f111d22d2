//! fio's log files go to a folder drivescope made for the run, never to a folder the job
//! file names. Each log option (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`: a name prefix fio completes, `<prefix>_bw.1.log`; `write_iolog`: the
//! file) keeps the name it gives, its last component, and loses its folder: the text fio
//! runs gets, at the end of each job's section, the job's log options again naming that
//! file in the cage's log folder ([`LOGS_IN_CAGE`], where the cage mounts the run's
//! folder), which fio reads over the earlier ones (a job's later option wins). A name fio
//! would read otherwise in that line, or one that is no file, is refused before fio
//! starts; so are two folders' logs of one name, which would be one file there.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::cage::LOGS_IN_CAGE;
use super::error::FioError;
use super::parse::{content, refuse, FileJob, FileStep};
use super::refusal::Refusal;
use crate::workload::FioLog;

/// The log options whose value is a name prefix fio completes (`<prefix>_<kind>[.N].log`).
const PREFIX_KEYS: [&str; 4] = [
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
];

/// The I/O log option: its value is the file.
const IOLOG: &str = "write_iolog";

/// The name a job's log option names: the job's own name for a bare prefix option (fio's
/// `name=`, else its section's), as fio's `make_log_name` does.
fn prefix_of<'a>(job: &'a FileJob, key: &str, value: &'a str) -> &'a str {
    if !value.is_empty() || key == IOLOG {
        return value;
    }
    job.get("name")
        .filter(|n| !n.is_empty())
        .unwrap_or(&job.name)
}

/// `prefix`'s name (after its last `/`) and its folder (lexically, `.` left out), or why
/// its name cannot be a file in the run's log folder as the option's value.
fn split(prefix: &str) -> Result<(&str, PathBuf), &'static str> {
    let (folder, name) = match prefix.rsplit_once('/') {
        Some((f, n)) => (if f.is_empty() { "/" } else { f }, n),
        None => (".", prefix),
    };
    if matches!(name, "" | "." | "..") {
        return Err("it names a folder, not a file");
    }
    if name
        .chars()
        .any(|c| matches!(c, '$' | ';' | '#') || c.is_control())
    {
        return Err("its name holds $, ; or # (which fio reads again) or a control character");
    }
    let folder = Path::new(folder)
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect();
    Ok((name, folder))
}

/// Every log the jobs of `steps` write, as fio names it; refused where a name cannot be a
/// file in the run's log folder, or two folders give one name.
pub(super) fn logs(steps: &[FileStep]) -> Result<Vec<FioLog>, FioError> {
    let mut out = Vec::new();
    // Each name: the folder it was given in, and the option that gave it.
    let mut seen: BTreeMap<String, (PathBuf, String)> = BTreeMap::new();
    for job in steps.iter().flat_map(|s| &s.jobs) {
        for key in PREFIX_KEYS.into_iter().chain([IOLOG]) {
            let Some(value) = job.get(key) else { continue };
            let prefix = prefix_of(job, key, value);
            let refused = |why| {
                refuse(
                    job,
                    Refusal::LogName {
                        key,
                        value: value.to_string(),
                        why,
                    },
                )
            };
            let (name, folder) = match prefix {
                "" => return Err(refused("it names no file")),
                p => split(p).map_err(refused)?,
            };
            match seen.get(name) {
                Some((f, other)) if *f != folder => {
                    return Err(refuse(
                        job,
                        Refusal::LogsCollide {
                            key,
                            value: value.to_string(),
                            other: other.clone(),
                        },
                    ));
                }
                Some(_) => {}
                None => {
                    seen.insert(name.to_string(), (folder, format!("{key}={value}")));
                }
            }
            out.push(FioLog {
                job: job.name.clone(),
                line: job.line,
                key: key.to_string(),
                name: name.to_string(),
            });
        }
    }
    Ok(out)
}

/// The text fio runs: `text` with, after each job's section (before the next section's
/// line, or at the end), the job's log options again, naming their files in the cage's
/// log folder. The text as it is when no job writes a log.
pub fn redirected(text: &str, logs: &[FioLog]) -> String {
    if logs.is_empty() {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    // Each section's line (1-based).
    let sections: Vec<usize> = (1..=lines.len())
        .filter(|&n| content(lines[n - 1]).starts_with('['))
        .collect();
    // The last line of the section that starts at `line`.
    let end_of = |line: usize| {
        sections
            .iter()
            .find(|&&s| s > line)
            .map_or(lines.len(), |s| s - 1)
    };
    let mut after: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for l in logs {
        after
            .entry(end_of(l.line))
            .or_default()
            .push(format!("{}={LOGS_IN_CAGE}/{}", l.key, l.name));
    }
    let mut out = String::with_capacity(text.len() + 64 * logs.len());
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        for extra in after.get(&(i + 1)).into_iter().flatten() {
            out.push_str(extra);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse::parse_steps;

    fn of(text: &str) -> Result<Vec<FioLog>, FioError> {
        logs(&parse_steps(text).unwrap())
    }

    fn why(text: &str) -> Refusal {
        match of(text) {
            Err(FioError::Unsafe { why, .. }) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_log_keeps_its_name_and_loses_its_folder() {
        let text = "[global]\nwrite_lat_log\nfilename=/dev/null\n\
                    [a] ; first\nwrite_bw_log=/etc/cron.d/x\nwrite_iolog=../io.log\n\
                    [b]\nname=bee\nwrite_iops_log=\n";
        let l = of(text).unwrap();
        let got: Vec<(&str, &str, &str)> = l
            .iter()
            .map(|l| (l.job.as_str(), l.key.as_str(), l.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "write_bw_log", "x"),
                ("a", "write_lat_log", "a"),
                ("a", "write_iolog", "io.log"),
                ("b", "write_lat_log", "bee"),
                ("b", "write_iops_log", "bee"),
            ]
        );
        // fio reads the job's options again after its own lines: its later option wins.
        assert_eq!(
            redirected(text, &l),
            "[global]\nwrite_lat_log\nfilename=/dev/null\n\
             [a] ; first\nwrite_bw_log=/etc/cron.d/x\nwrite_iolog=../io.log\n\
             write_bw_log=/dev/fio-logs/x\nwrite_lat_log=/dev/fio-logs/a\n\
             write_iolog=/dev/fio-logs/io.log\n\
             [b]\nname=bee\nwrite_iops_log=\n\
             write_lat_log=/dev/fio-logs/bee\nwrite_iops_log=/dev/fio-logs/bee\n"
        );
        assert_eq!(redirected("[a]\nrw=read", &[]), "[a]\nrw=read");
    }

    #[test]
    fn a_name_that_is_no_file_or_that_two_folders_give_is_refused() {
        for (opt, words) in [
            ("write_bw_log=/tmp/", "names a folder"),
            ("write_bw_log=/tmp/..", "names a folder"),
            ("write_iolog=", "names no file"),
            ("write_iolog=/tmp/a$b", "holds $"),
        ] {
            let w = why(&format!("[a]\n{opt}\n")).to_string();
            assert!(w.contains(words), "{opt}: {w}");
        }
        assert!(matches!(
            why("[a]\nwrite_bw_log=/one/x\n[b]\nwrite_lat_log=/two/x\n"),
            Refusal::LogsCollide { .. }
        ));
        // One folder named two ways, or two jobs of one prefix: one log name, as in fio.
        assert_eq!(
            of("[a]\nwrite_bw_log=./d/x\n[b]\nwrite_bw_log=d/x\n")
                .unwrap()
                .len(),
            2
        );
    }
}
