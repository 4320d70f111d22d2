//! Reading sessions back: SVG charts, the intervals as CSV, one self-contained HTML page
//! per session ([`write_report`]), snapshots of a running session ([`export_snapshot`]),
//! and the overlay of several sessions ([`compare`]).

pub mod charts;
pub mod compare;
pub mod csv;
pub mod html;
pub mod svg;

use std::path::{Path, PathBuf};

use thiserror::Error;

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
    create_dir(dir)?;
    let charts = charts::all(s);
    let mut files = Vec::new();
    for (chart, name) in charts.iter().zip(CHART_FILES) {
        let p = dir.join(name);
        write_atomic(&p, chart.render().as_bytes())?;
        files.push(p);
    }
    let p = dir.join(CSV_FILE);
    write_atomic(&p, csv::intervals(&s.intervals).as_bytes())?;
    files.push(p);
    let p = dir.join(HTML_FILE);
    write_atomic(&p, html::session_page(s, &charts, warnings).as_bytes())?;
    files.push(p);
    Ok(files)
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
