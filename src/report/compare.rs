//! Several sessions side by side, like a review's comparison chart: their latency-vs-IOPS
//! curves and throughput over time overlaid (SVG), a summary table for the terminal, and
//! an HTML page holding both.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::page::{aligned, grid, page_start, warning_list, PAGE_END};
use super::svg::{colour, esc, Chart, Series, Style, Unit};
use super::{charts, step_delta, ReportError};

use crate::session::{IntervalRecord, Session, SessionState};

/// One session in a comparison, with the name it goes by.
pub struct Entry<'a> {
    pub name: String,
    pub session: &'a Session,
}

pub const CURVE_FILE: &str = "compare-curve.svg";
pub const THROUGHPUT_FILE: &str = "compare-throughput.svg";
pub const HTML_FILE: &str = "compare.html";
/// Every file a comparison writes.
pub const COMPARE_FILES: &[&str] = &[CURVE_FILE, THROUGHPUT_FILE, HTML_FILE];

/// Distinct names: the drive model or target; the session's file name where two share one
/// (a drive of a session of several: its target too).
pub fn names(sessions: &[(&Path, &Session)]) -> Vec<String> {
    let labels: Vec<String> = sessions.iter().map(|(_, s)| s.label()).collect();
    let same_file = |i: usize| sessions.iter().filter(|(p, _)| *p == sessions[i].0).count() > 1;
    sessions
        .iter()
        .enumerate()
        .map(|(i, (p, _))| {
            let dup = labels.iter().filter(|l| **l == labels[i]).count() > 1;
            let stem = || {
                p.file_stem()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_else(|| labels[i].clone())
            };
            if dup && same_file(i) {
                format!("{}: {}", stem(), sessions[i].1.target.path)
            } else if dup {
                stem()
            } else {
                labels[i].clone()
            }
        })
        .collect()
}

/// The curves overlaid: one colour per session, average solid, p99 dashed.
pub fn curve_chart(entries: &[Entry<'_>]) -> Chart {
    let series = entries
        .iter()
        .enumerate()
        .flat_map(|(i, e)| {
            charts::curve_series(e.session, &format!("{} ", e.name), Some(colour(i)))
        })
        .collect();
    Chart {
        y_log: true,
        ..Chart::new(
            "compare-curve",
            "Latency vs IOPS",
            ("IOPS", Unit::Plain),
            ("service latency (average solid, p99 dashed)", Unit::Micros),
            series,
            "no session has a finished step",
        )
    }
}

/// Total throughput over time, one line per session.
pub fn throughput_chart(entries: &[Entry<'_>]) -> Chart {
    let all: Vec<_> = entries
        .iter()
        .flat_map(|e| e.session.intervals.iter().cloned())
        .collect();
    let mbps = charts::prefers_mbps(&all);
    let unit = if mbps { "MB/s" } else { "IOPS" };
    let moved = |r: &IntervalRecord| (r.t, if mbps { r.mbps() } else { r.iops() });
    let series = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.session.intervals.is_empty())
        .map(|(i, e)| {
            let points = e.session.intervals.iter().map(moved).collect();
            Series::new(e.name.clone(), colour(i), Style::Line, points)
        })
        .collect();
    Chart::new(
        "compare-throughput",
        format!("Throughput over time ({unit}, reads and writes)"),
        ("time since start", Unit::Seconds),
        (unit, Unit::Plain),
        series,
        "no intervals",
    )
}

/// The table's columns.
pub const COLUMNS: [&str; 10] = [
    "session",
    "state",
    "steps",
    "peak IOPS",
    "MB/s",
    "response p50 µs",
    "response p99 µs",
    "response p99.9 µs",
    "response max µs",
    "errors",
];

/// How the session's run ended: its state, for a failed or stopped run why, and how it is
/// off its method (time-scaled).
fn state_of(s: &Session) -> String {
    let ended = ended_of(s);
    match crate::session::OffMethod::of_scale(crate::session::method::time_scale(s)) {
        Some(m) => format!("{ended}; {m}"),
        None => ended,
    }
}

/// How the session's run ended: its state, and for a failed or stopped run, why.
fn ended_of(s: &Session) -> String {
    let state = match s.state {
        SessionState::Running => "running or cut short",
        SessionState::Complete => "complete",
        SessionState::Stopped => "stopped",
        SessionState::Failed => "failed",
    };
    match (&s.summary, s.state) {
        (Some(sm), SessionState::Failed | SessionState::Stopped)
            if !sm.ended_by.to_string().is_empty() =>
        {
            format!("{state}: {}", sm.ended_by)
        }
        _ => state.to_string(),
    }
}

/// What each session says was tested (`--note`) and the notes written during its run
/// (each with its run time: `at 1:05: fan off`): (its name, the note), for those that say.
pub fn notes<'a>(entries: &'a [Entry<'a>]) -> Vec<(&'a str, String)> {
    entries
        .iter()
        .flat_map(|e| {
            let given = e.session.note.iter().map(|n| n.to_string());
            let during = e
                .session
                .user_notes()
                .into_iter()
                .map(|(t, n)| format!("at {}: {n}", crate::ui::format::clock(t)));
            given
                .chain(during)
                .map(move |n| (e.name.as_str(), n))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What a session's workload is, as (name, value) pairs to set side by side: the preset
/// for a preset run, else the single workload's shape.
fn workload_facts(s: &Session) -> Vec<(&'static str, String)> {
    if let Some(id) = s.preset_info().id {
        return vec![("preset", id)];
    }
    let plan = s.plan_info();
    let plan_step = plan.first_step();
    let workload = s
        .steps
        .first()
        .and_then(|st| st.workload.clone())
        .or_else(|| plan_step?.workload.clone());
    let mut facts = vec![("preset", "none".to_string())];
    if let Some(w) = workload {
        let mix = w.rw.is_mixed().then(|| format!("{}%", w.rwmixread));
        let rate = w
            .rate_iops
            .map_or_else(|| "unlimited".into(), |r| format!("{r} IOPS"));
        facts.push(("rw", w.rw.to_string()));
        facts.extend(mix.map(|m| ("rwmixread", m)));
        facts.extend([
            ("bs", w.bs.to_string()),
            ("iodepth", w.iodepth.to_string()),
            ("jobs", w.jobs.to_string()),
            ("rate", rate),
            ("direct", w.direct.to_string()),
        ]);
    }
    let duration = plan_step.and_then(|p| p.duration_s);
    facts.extend(duration.map(|d| ("duration", format!("{d}s"))));
    facts
}

/// What the sessions' workloads differ in, one line per difference (`bs: 4KiB in A;
/// 128KiB in B`); empty when they are the same. Sessions that do not say (an older or
/// damaged file) are left out of a difference.
pub fn workload_differences(entries: &[Entry<'_>]) -> Vec<String> {
    let facts: Vec<_> = entries.iter().map(|e| workload_facts(e.session)).collect();
    let mut keys: Vec<&'static str> = Vec::new();
    for (k, _) in facts.iter().flatten() {
        if !keys.contains(k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for key in keys {
        // Each value and the sessions that have it, in the order first met.
        let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
        for (e, f) in entries.iter().zip(&facts) {
            let Some((_, v)) = f.iter().find(|(k, _)| *k == key) else {
                continue;
            };
            match groups.iter_mut().find(|(x, _)| x == v) {
                Some((_, names)) => names.push(&e.name),
                None => groups.push((v, vec![&e.name])),
            }
        }
        if groups.len() > 1 {
            let parts: Vec<String> = groups
                .iter()
                .map(|(v, names)| format!("{v} in {}", names.join(", ")))
                .collect();
            out.push(format!("{key}: {}", parts.join("; ")));
        }
    }
    out
}

/// One row per session: steps, the highest step IOPS, and the session summary's figures
/// (latency of every I/O: from the schedule in a paced step, from submission in another).
pub fn table_rows(entries: &[Entry<'_>]) -> Vec<Vec<String>> {
    entries
        .iter()
        .map(|e| {
            let s = e.session;
            // The test's steps only: a drive's preparation (SNIA's WIPC) is no headline.
            let peak = s
                .steps
                .iter()
                .filter(|st| !st.prepares())
                .map(|st| st.summary.iops)
                .fold(0.0, f64::max);
            let (mbps, lat, errors) = match &s.summary {
                Some(sm) => (
                    sm.read_mbps + sm.write_mbps + sm.trim_mbps,
                    Some(sm.lat_us),
                    sm.errors,
                ),
                None => (
                    s.intervals.iter().map(|r| r.mbps()).sum::<f64>()
                        / s.intervals.len().max(1) as f64,
                    None,
                    s.intervals.iter().map(|r| r.errors).sum(),
                ),
            };
            let l = |f: fn(&crate::stats::LatSummary) -> f64| {
                lat.map(|x| format!("{:.1}", f(&x)))
                    .unwrap_or_else(|| "-".into())
            };
            vec![
                e.name.clone(),
                state_of(s),
                s.steps.len().to_string(),
                format!("{peak:.0}"),
                format!("{mbps:.1}"),
                l(|x| x.p50),
                l(|x| x.p99),
                l(|x| x.p99_9),
                l(|x| x.max),
                errors.to_string(),
            ]
        })
        .collect()
}

/// The table as aligned text for the terminal.
pub fn text_table(entries: &[Entry<'_>]) -> String {
    aligned(&COLUMNS, &table_rows(entries), &[0, 1])
}

/// The steps of `new` beside the same steps of `base` ([`step_delta::matched`]), as
/// aligned text under a line naming both.
pub fn steps_text(base: &str, new: &str, pairs: &[step_delta::Pair<'_>]) -> String {
    let mut o = format!("steps of {new} against {base}:\n");
    if pairs.is_empty() {
        o.push_str("  no step matches (by label and workload)\n");
        return o;
    }
    o.push_str(&aligned(
        &step_delta::COLUMNS,
        &step_delta::rows(pairs),
        &[0, 1, 2],
    ));
    o
}

/// Steps matched between two sessions: the base's name, the new one's, and the pairs.
pub type StepsCompared<'a> = (String, String, Vec<step_delta::Pair<'a>>);

/// Writes the overlaid charts and the page into `dir`; returns the files. `steps`: each
/// further session's steps against the base's, shown side by side.
pub fn write_compare(
    entries: &[Entry<'_>],
    steps: &[StepsCompared<'_>],
    dir: &Path,
) -> Result<Vec<PathBuf>, ReportError> {
    let mut out = super::open_dir(dir)?;
    let curve = curve_chart(entries);
    let tput = throughput_chart(entries);
    let mut files = Vec::new();
    for (chart, name) in [(&curve, CURVE_FILE), (&tput, THROUGHPUT_FILE)] {
        files.push(super::put(&mut out, name, &chart.render())?);
    }
    let mut o = page_start("drivescope comparison");
    warning_list(
        &mut o,
        "Different workloads",
        &workload_differences(entries),
    );
    let noted = notes(entries);
    if !noted.is_empty() {
        o.push_str("<h2>What was tested</h2>\n");
        let rows: Vec<Vec<String>> = noted
            .iter()
            .map(|(name, note)| vec![name.to_string(), note.to_string()])
            .collect();
        grid(&mut o, "notes", &["session", "note"], &rows);
    }
    o.push_str("<h2>Summary</h2>\n");
    grid(&mut o, "compare", &COLUMNS, &table_rows(entries));
    for (base, new, pairs) in steps {
        let _ = writeln!(o, "<h2>Steps of {} against {}</h2>", esc(new), esc(base));
        grid(
            &mut o,
            "compare-steps",
            &step_delta::COLUMNS,
            &step_delta::rows(pairs),
        );
    }
    o.push_str("<h2>Charts</h2>\n");
    for c in [&curve, &tput] {
        o.push_str(&c.figure());
    }
    o.push_str("<h2>Sessions</h2><ul>");
    for e in entries {
        let _ = write!(
            o,
            "<li>{}: {} on {} ({}), started {}</li>",
            esc(&e.name),
            esc(&e.session.target.path),
            esc(&e.session.host.hostname),
            esc(&e.session.host.kernel),
            esc(&e.session.started)
        );
    }
    o.push_str("</ul>\n");
    o.push_str(PAGE_END);
    files.push(super::put(&mut out, HTML_FILE, &o)?);
    Ok(files)
}
