//! Reading sessions back: SVG charts, the intervals and the steps as CSV (the steps as JSON
//! too), one self-contained HTML page
//! per session ([`write_report`]), snapshots of a running session ([`export_snapshot`]),
//! and the overlay of several sessions ([`compare`]).

pub mod charts;
pub mod compare;
pub mod csv;
pub mod diskmark;
pub mod distribution;
pub mod drive;
pub mod html;
pub mod page;
pub mod plan;
pub mod power_loss;
pub mod pts;
pub mod pts_steady;
pub mod pts_test;
pub mod results;
pub mod soak;
pub mod step_delta;
pub mod steps;
pub mod svg;
pub mod verify;
pub mod wear;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::session::outputs::{self, Output, Refusal};
use crate::session::{self, OutFolder, Session, SessionError};
use crate::user_file::FileKind;

#[derive(Debug, Error)]
pub enum ReportError {
    #[error("{}: cannot create the folder: {source}", path.display())]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] SessionError),
    #[error("{}: already there (a new file is written, never one replaced)", path.display())]
    Exists { path: PathBuf },
    #[error("{}: cannot write: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes `bytes` into `path`, a file that must not exist yet (made whole, and only where
/// nothing is: a file there, or a link, is refused and left as it was).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    use crate::owned::{Folder, OwnedError};
    let made = Folder::of_file(path)
        .and_then(|(folder, name)| folder.create(&name, |w| w.write_all(bytes)));
    match made {
        Ok(_) => Ok(()),
        Err(OwnedError::Exists { path }) => Err(ReportError::Exists { path }),
        Err(e) => Err(ReportError::Write(e.into())),
    }
}

/// File names of a report, in the output folder.
pub const CHART_FILES: [&str; 4] = [
    "throughput.svg",
    "latency.svg",
    "curve.svg",
    "temperature.svg",
];
pub const CSV_FILE: &str = "intervals.csv";
pub const HTML_FILE: &str = "report.html";
pub const YAML_FILE: &str = "session.yaml";

/// Every file a report writes.
pub const REPORT_FILES: &[&str] = &[
    CHART_FILES[0],
    CHART_FILES[1],
    CHART_FILES[2],
    CHART_FILES[3],
    CSV_FILE,
    steps::CSV_FILE,
    steps::JSON_FILE,
    HTML_FILE,
];

/// How the file `name` of a report, comparison or snapshot is known as drivescope's.
fn output_of(name: &str) -> Output {
    let (what, ours): (_, fn(&[u8]) -> bool) = if name == YAML_FILE {
        return outputs::SESSION;
    } else if name == steps::CSV_FILE {
        ("steps CSV file", steps::is_steps_csv)
    } else if name == steps::JSON_FILE {
        ("steps JSON file", steps::is_steps_json)
    } else if name.ends_with(".svg") {
        ("chart", svg::is_chart)
    } else if name.ends_with(".csv") {
        ("CSV file", csv::is_intervals)
    } else {
        ("page", page::is_page)
    };
    Output { what, ours }
}

fn refused(path: &Path, why: Refusal) -> ReportError {
    ReportError::Write(SessionError::Refused {
        path: path.to_path_buf(),
        what: "report",
        why,
    })
}

/// Checks the folder `dir` before files `names` are written into it: a folder or nothing
/// yet; each file nothing yet or a regular file drivescope wrote, and then replaced only
/// with `force` (an earlier report is not overwritten by mistake); none of them one of
/// `inputs` (a path and what it is), whatever `force` says.
pub fn check_dir(
    dir: &Path,
    names: &[&str],
    force: bool,
    inputs: &[(&Path, &'static str)],
) -> Result<(), ReportError> {
    for (input, what) in inputs {
        if outputs::same_file(dir, input) {
            return Err(refused(dir, Refusal::Input(what)));
        }
    }
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(m) => return Err(refused(dir, Refusal::Kind(FileKind::of(m.file_type())))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(ReportError::Folder {
                path: dir.to_path_buf(),
                source,
            })
        }
    }
    let mut earlier = None;
    for name in names {
        let p = dir.join(name);
        for (input, what) in inputs {
            if outputs::same_file(&p, input) {
                return Err(refused(&p, Refusal::Input(what)));
            }
        }
        let kind = match std::fs::symlink_metadata(&p) {
            Ok(m) => FileKind::of(m.file_type()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(SessionError::io(&p, "cannot look at what is there", e).into()),
        };
        match kind {
            // The report's files are written where they stand, never through a link.
            FileKind::Symlink => {
                let why = match std::fs::canonicalize(&p) {
                    Ok(target) => {
                        let kind = std::fs::symlink_metadata(&target)
                            .map(|m| FileKind::of(m.file_type()))
                            .unwrap_or(FileKind::Other);
                        Refusal::LinkTo { target, kind }
                    }
                    Err(_) => Refusal::Dangling,
                };
                return Err(refused(&p, why));
            }
            FileKind::Regular => {
                outputs::writable(&p, output_of(name))?;
                earlier.get_or_insert(*name);
            }
            kind => return Err(refused(&p, Refusal::Kind(kind))),
        }
    }
    match earlier {
        Some(name) if !force => Err(refused(dir, Refusal::Earlier(name.to_string()))),
        _ => Ok(()),
    }
}

/// Checks a running session's snapshot folder before its first snapshot (the session
/// recorder's snapshot check): a new snapshot replaces the one before it (of this session
/// or of the one it replaces), only what drivescope wrote, never the session or its
/// histogram log (`inputs`).
pub fn check_snapshot_dir(
    dir: &Path,
    inputs: &[(&Path, &'static str)],
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    for names in [&[YAML_FILE][..], REPORT_FILES] {
        check_dir(dir, names, true, inputs)?;
    }
    Ok(())
}

/// The output folder `dir`, made if missing, held open while it is written.
pub fn open_dir(dir: &Path) -> Result<OutFolder, ReportError> {
    OutFolder::open_or_make(dir).map_err(|e| match e {
        SessionError::Owned(crate::owned::OwnedError::Io { source, .. }) => ReportError::Folder {
            path: dir.to_path_buf(),
            source,
        },
        e => e.into(),
    })
}

/// Writes the charts, the CSV and the HTML page of `s` into `dir`; returns the files.
/// `warnings` (what loading dropped) are shown at the top of the page.
pub fn write_report(
    s: &Session,
    dir: &Path,
    warnings: &[String],
) -> Result<Vec<PathBuf>, ReportError> {
    write_report_with(s, dir, warnings, None)
}

/// Writes `text` as the file `name` of a report, comparison or snapshot in `out`.
fn put(out: &mut OutFolder, name: &str, text: &str) -> Result<PathBuf, ReportError> {
    Ok(out.write(name, output_of(name), |w| w.write_all(text.as_bytes()))?)
}

/// [`write_report`], the page with each step's latency distribution from `hlog`, the
/// session's histogram log, when given (a session of one drive).
pub fn write_report_with(
    s: &Session,
    dir: &Path,
    warnings: &[String],
    hlog: Option<&Path>,
) -> Result<Vec<PathBuf>, ReportError> {
    write_report_into(s, &mut open_dir(dir)?, warnings, hlog)
}

/// [`write_report_with`] into a folder held open.
fn write_report_into(
    s: &Session,
    out: &mut OutFolder,
    warnings: &[String],
    hlog: Option<&Path>,
) -> Result<Vec<PathBuf>, ReportError> {
    let charts = charts::all(s);
    let mut files = Vec::new();
    for (chart, name) in charts.iter().zip(CHART_FILES) {
        files.push(put(out, name, &chart.render())?);
    }
    files.push(put(out, CSV_FILE, &csv::session_intervals(s))?);
    let results = session::step_results(s);
    for (name, text) in [
        (steps::CSV_FILE, steps::csv(&results)),
        (steps::JSON_FILE, steps::json(&results)),
    ] {
        files.push(put(out, name, &text)?);
    }
    // One list for a session, one a drive for a session of several (ids kept apart).
    let distributions: Vec<Vec<svg::Chart>> = match hlog {
        Some(h) if s.drives.is_empty() => vec![distribution::charts(s, h)],
        Some(h) => s
            .drive_views()
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut charts = distribution::charts(v, h);
                for c in &mut charts {
                    c.id = format!("drive-{}-{}", i + 1, c.id);
                }
                charts
            })
            .collect(),
        None => Vec::new(),
    };
    let page = html::page(s, &charts, &distributions, warnings);
    files.push(put(out, HTML_FILE, &page)?);
    Ok(files)
}

/// Recorder options that write a snapshot's report files ([`export_snapshot`]) and check
/// its folder first ([`check_snapshot_dir`]), as every command's run does.
pub fn with_snapshot_files(o: crate::session::RecorderOptions) -> crate::session::RecorderOptions {
    crate::session::RecorderOptions {
        exporter: Some(export_snapshot),
        snapshot_check: Some(check_snapshot_dir),
        ..o
    }
}

/// A snapshot of a running session into `out` (the session recorder's exporter): the
/// session so far as YAML plus its report files (each replaced only while it is still the
/// one the snapshot before wrote).
pub fn export_snapshot(s: &Session, out: &mut OutFolder) -> Result<(), String> {
    let write = |out: &mut OutFolder| -> Result<(), ReportError> {
        out.write(YAML_FILE, outputs::SESSION, |w| session::write_yaml(w, s))?;
        write_report_into(s, out, &[], None).map(|_| ())
    };
    write(out).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
