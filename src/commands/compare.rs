//! `drivescope compare A.yaml B.yaml …`: the sessions' summaries as a table on stdout, the
//! steps of each beside the first's with the change in percent, and their curves and
//! throughput overlaid in SVG and one HTML page. `--baseline BASE.yaml NEW.yaml` gates:
//! the steps that got worse than `--max-regression` are named, and the verdict says so.

use std::path::{Path, PathBuf};

use super::error::ReportCmdError;
use crate::cli::{CompareArgs, DEFAULT_COMPARE_DIR};
use crate::output::{err_line, out_line, Output, Stream};
use crate::report::compare::{self, Entry};
use crate::report::step_delta::{self, Regression};
use crate::session::{self, StepResult};

/// How a comparison ended.
#[derive(Debug)]
pub enum Verdict {
    /// Compared (no baseline to hold the sessions to, or none got worse than the bound).
    Compared,
    /// Against the baseline, these matched steps got worse than the bound.
    Regressed(Vec<Regression>),
}

/// Runs the command: the tables and the files written on stdout, load warnings and the
/// steps that regressed on stderr.
pub fn run(a: &CompareArgs) -> Result<Verdict, ReportCmdError> {
    let all: Vec<&Path> = a
        .baseline
        .iter()
        .chain(&a.sessions)
        .map(PathBuf::as_path)
        .collect();
    let out = match (&a.out, &a.baseline) {
        (Some(o), _) => Some(o.clone()),
        (None, None) => Some(PathBuf::from(DEFAULT_COMPARE_DIR)),
        (None, Some(_)) => None,
    };
    let inputs: Vec<_> = all.iter().map(|p| (*p, "session")).collect();
    if let Some(dir) = &out {
        crate::report::check_dir(dir, compare::COMPARE_FILES, a.force, &inputs)?;
    }
    // A session of several drives is compared drive by drive.
    let mut loaded = Vec::with_capacity(all.len());
    let mut paths = Vec::with_capacity(all.len());
    let mut results: Vec<Vec<StepResult>> = Vec::with_capacity(all.len());
    let mut grids: Vec<Vec<session::GridCell>> = Vec::with_capacity(all.len());
    for p in &all {
        let l = session::load(p)?;
        for w in &l.warnings {
            err_line(&format!("warning: {w}"));
        }
        results.push(session::step_results(&l.session));
        grids.push(session::grid(&l.session));
        for view in l.session.drive_views() {
            paths.push(*p);
            loaded.push(view);
        }
    }
    let pairs: Vec<_> = paths.iter().copied().zip(loaded.iter()).collect();
    let entries: Vec<Entry<'_>> = compare::names(&pairs)
        .into_iter()
        .zip(&loaded)
        .map(|(name, session)| Entry { name, session })
        .collect();
    for d in compare::workload_differences(&entries) {
        err_line(&format!("warning: the sessions' workloads differ: {d}"));
    }
    let o = Output::default();
    o.text(Stream::Out, &compare::text_table(&entries));
    for (name, note) in compare::notes(&entries) {
        // A session file's text, shown with its control characters escaped.
        o.text(
            Stream::Out,
            &format!(
                "{}: {}\n",
                crate::ostext::printable(name),
                crate::ostext::printable(&note)
            ),
        );
    }
    // Every further session's steps against the first's (the baseline's).
    let name = |p: &Path| p.display().to_string();
    let steps: Vec<compare::StepsCompared<'_>> = results
        .iter()
        .zip(&all)
        .skip(1)
        .map(|(r, p)| (name(all[0]), name(p), step_delta::matched(&results[0], r)))
        .collect();
    for (base, new, matched) in &steps {
        o.text(Stream::Out, &compare::steps_text(base, new, matched));
    }
    for (g, p) in grids.iter().zip(&all).skip(1) {
        let text = crate::report::diskmark::compare_text(&name(all[0]), &name(p), &grids[0], g);
        if let Some(t) = text {
            o.text(Stream::Out, &t);
        }
    }
    if let Some(dir) = &out {
        for f in compare::write_compare(&entries, &steps, dir)? {
            out_line(&f.display().to_string());
        }
    }
    let Some(base) = &a.baseline else {
        return Ok(Verdict::Compared);
    };
    let mut regressed = Vec::new();
    for (_, new, matched) in &steps {
        if matched.is_empty() {
            return Err(ReportCmdError::NothingMatched {
                base: base.clone(),
                new: PathBuf::from(new),
            });
        }
        regressed.extend(step_delta::regressions(matched, a.max_regression));
    }
    if regressed.is_empty() {
        return Ok(Verdict::Compared);
    }
    for r in &regressed {
        err_line(&format!(
            "regressed by more than {}%: {r}",
            a.max_regression
        ));
    }
    Ok(Verdict::Regressed(regressed))
}
