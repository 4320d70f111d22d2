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
pub mod pts;
pub mod results;
pub mod soak;
pub mod step_delta;
pub mod steps;
pub mod svg;
pub mod verify;
pub mod wear;

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::input::FileKind;
use crate::session::outputs::{self, Output, Refusal};
use crate::session::{self, write_atomic, Session, SessionError};

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

/// Writes `bytes` into `path`, a file that must not exist yet (created with O_EXCL: a file
/// there, or a link, is refused and left as it was).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => ReportError::Exists {
                path: path.to_path_buf(),
            },
            _ => ReportError::Create {
                path: path.to_path_buf(),
                source,
            },
        })?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|source| {
            // The file is this call's own (created just now): a cut one is not left behind.
            let _ = std::fs::remove_file(path);
            ReportError::Create {
                path: path.to_path_buf(),
                source,
            }
        })
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
    if name == YAML_FILE {
        outputs::SESSION
    } else if name == steps::CSV_FILE {
        Output {
            what: "steps CSV file",
            ours: steps::is_steps_csv,
        }
    } else if name == steps::JSON_FILE {
        Output {
            what: "steps JSON file",
            ours: steps::is_steps_json,
        }
    } else if name.ends_with(".svg") {
        Output {
            what: "chart",
            ours: svg::is_chart,
        }
    } else if name.ends_with(".csv") {
        Output {
            what: "CSV file",
            ours: csv::is_intervals,
        }
    } else {
        Output {
            what: "page",
            ours: page::is_page,
        }
    }
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

/// Checks a running session's snapshot folder before its first snapshot: a new snapshot
/// replaces the one before it (of this session or of the one it replaces), only what
/// drivescope wrote, never the session or its histogram log (`inputs`).
pub fn check_snapshot_dir(dir: &Path, inputs: &[(&Path, &'static str)]) -> Result<(), ReportError> {
    for names in [&[YAML_FILE][..], REPORT_FILES] {
        check_dir(dir, names, true, inputs)?;
    }
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Folder {
        path: dir.to_path_buf(),
        source,
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

/// [`write_report`], the page with each step's latency distribution from `hlog`, the
/// session's histogram log, when given (a session of one drive).
pub fn write_report_with(
    s: &Session,
    dir: &Path,
    warnings: &[String],
    hlog: Option<&Path>,
) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(dir)?;
    let charts = charts::all(s);
    let mut files = Vec::new();
    for (chart, name) in charts.iter().zip(CHART_FILES) {
        let p = dir.join(name);
        write_atomic(&p, chart.render().as_bytes())?;
        files.push(p);
    }
    let p = dir.join(CSV_FILE);
    write_atomic(&p, csv::session_intervals(s).as_bytes())?;
    files.push(p);
    let results = session::step_results(s);
    for (name, text) in [
        (steps::CSV_FILE, steps::csv(&results)),
        (steps::JSON_FILE, steps::json(&results)),
    ] {
        let p = dir.join(name);
        write_atomic(&p, text.as_bytes())?;
        files.push(p);
    }
    let p = dir.join(HTML_FILE);
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
    write_atomic(
        &p,
        html::page(s, &charts, &distributions, warnings).as_bytes(),
    )?;
    files.push(p);
    Ok(files)
}

/// [`check_snapshot_dir`] as the session recorder's snapshot check.
pub fn snapshot_check(
    dir: &Path,
    inputs: &[(&Path, &'static str)],
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    check_snapshot_dir(dir, inputs).map_err(|e| Box::new(e) as _)
}

/// Recorder options that write a snapshot's report files ([`snapshot_exporter`]) and
/// check its folder first ([`snapshot_check`]), as every command's run does.
pub fn with_snapshot_files(o: crate::session::RecorderOptions) -> crate::session::RecorderOptions {
    crate::session::RecorderOptions {
        exporter: Some(snapshot_exporter),
        snapshot_check: Some(snapshot_check),
        ..o
    }
}

/// [`export_snapshot`] as the session recorder's exporter.
pub fn snapshot_exporter(s: &Session, dir: &Path) -> Result<(), String> {
    export_snapshot(s, dir)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A snapshot of a running session: the session so far as YAML plus its report files.
pub fn export_snapshot(s: &Session, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    create_dir(dir)?;
    let p = dir.join(YAML_FILE);
    session::write_atomic_with(&p, |w| session::write_yaml(w, s))?;
    let mut files = vec![p];
    files.extend(write_report(s, dir, &[])?);
    Ok(files)
}

#[cfg(test)]
mod tests;
