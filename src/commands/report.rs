//! `drivescope report SESSION.yaml [--out DIR]`: loads a session (what a crash or an
//! edit left of it too), then writes its charts, CSV and HTML page.

use std::path::PathBuf;

use super::error::ReportCmdError;
use crate::cli::{ReportArgs, SpanArg};

use crate::output::{err_line, out_line};
use crate::report;
use crate::report::svg::{format_value, Unit};
use crate::session::{self, paths};
use crate::stats::LatSummary;

/// Runs the command: warnings on stderr, the files written on stdout.
pub fn run(a: &ReportArgs) -> Result<Vec<PathBuf>, ReportCmdError> {
    if report::power_loss::is_record_file(&a.session) {
        return power_loss(a);
    }
    let loaded = session::load(&a.session)?;
    for w in &loaded.warnings {
        err_line(&format!("warning: {w}"));
    }
    let s = &loaded.session;
    if let Some(span) = a.span {
        print_span(a, s, span)?;
        return Ok(Vec::new());
    }
    if s.summary.is_none() {
        err_line(&format!(
            "note: {} has no final summary (its run is still going, or did not end cleanly); reporting the {} intervals saved so far",
            a.session.display(),
            s.intervals.len()
        ));
    }
    let dir = out_dir(a);
    report::check_dir(
        &dir,
        report::REPORT_FILES,
        a.force,
        &[(a.session.as_path(), "session")],
    )?;
    // The steps' latency distributions, when the session's histograms are beside it.
    let hlog = s
        .histograms
        .as_deref()
        .filter(|name| plain_name(name))
        .map(|name| a.session.with_file_name(name))
        .filter(|p| p.is_file());
    let files = report::write_report_with(s, &dir, &loaded.warnings, hlog.as_deref())?;
    for f in &files {
        out_line(&f.display().to_string());
    }
    Ok(files)
}

/// Where the report goes: `--out`, else `<input>-report` beside the input.
fn out_dir(a: &ReportArgs) -> PathBuf {
    a.out
        .clone()
        .unwrap_or_else(|| paths::sibling(&a.session, "-report"))
}

/// The power-loss page and cycles of a power-cut record.
fn power_loss(a: &ReportArgs) -> Result<Vec<PathBuf>, ReportCmdError> {
    let r = crate::run::power_cut::load_record(&a.session)?;
    let dir = out_dir(a);
    report::check_dir(
        &dir,
        report::power_loss::FILES,
        a.force,
        &[(a.session.as_path(), "power-cut record")],
    )?;
    let files = report::power_loss::write(&r, &a.session, &dir)?;
    for f in &files {
        out_line(&f.display().to_string());
    }
    Ok(files)
}

/// A file name beside the session: not a path that leads elsewhere.
fn plain_name(name: &str) -> bool {
    let mut parts = std::path::Path::new(name).components();
    matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    )
}

/// Prints the percentiles of `span`, recomputed from the interval log.
fn print_span(a: &ReportArgs, s: &session::Session, span: SpanArg) -> Result<(), ReportCmdError> {
    let Some(name) = &s.histograms else {
        return Err(ReportCmdError::NoHistograms(a.session.clone()));
    };
    if !plain_name(name) {
        return Err(ReportCmdError::HistogramsName {
            session: a.session.clone(),
            name: name.clone(),
        });
    };
    let hlog = a.session.with_file_name(name);
    let read = session::histlog::read_span(&hlog, span.from_s, span.to_s, None)?;
    let shown = format!(
        "{}..{}",
        format_value(span.from_s, Unit::Seconds),
        format_value(span.to_s, Unit::Seconds)
    );
    if read.histograms == 0 {
        return Err(ReportCmdError::EmptySpan {
            path: hlog,
            span: shown,
            why: read.stopped,
        });
    }
    if let Some(why) = &read.stopped {
        err_line(&format!("warning: {}: {why}", hlog.display()));
    }
    let l = LatSummary::from_hist(&read.hist);
    out_line(&format!(
        "latency {shown} ({} interval histograms, {} I/Os), µs: mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  p99.99 {:.1}  max {:.1}",
        read.histograms,
        l.samples,
        l.mean,
        l.p50,
        l.p90,
        l.p99,
        l.p99_9,
        l.p99_99,
        l.max
    ));
    Ok(())
}
