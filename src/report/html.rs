//! The self-contained HTML page of one session, in the order a review reads it: the summary,
//! the results by workload (summary, four corners, a table per workload, QoS nines), the
//! charts and each step's latency distribution, then the drive, SMART before and after, the
//! host, the plan and preset, and the events; a run of several drives gets a section a drive.
//! The page is well-formed XML (XHTML syntax), so tools and tests can parse it.

use std::fmt::Write;

use super::page::{
    count, data, grid, iops, kv_table, lat, page_start, para, seconds, warning_list, PAGE_END,
};
use super::results;
use super::svg::{esc, format_value, Chart, Unit};
use crate::session::{off_method_text, Session};
use crate::units::format_size;

/// The report's word on a session taken through the page cache.
const PAGE_CACHE_ROW: &str =
    "through the page cache (--direct 0): the figures are the cache's as much as the drive's";

/// Each step's latency distribution (nothing when there are no charts).
fn distribution_section(o: &mut String, charts: &[Chart], h: &str) {
    if charts.is_empty() {
        return;
    }
    let _ = writeln!(o, "<{h}>Latency distribution per step</{h}>\n<p class=\"note\">From the histograms saved with the session: for each latency, the share of the step's I/Os that took longer (0.01 is the p99, 0.001 the p99.9).</p>");
    for c in charts {
        o.push_str(&c.figure());
    }
}

/// The notes written during the run, with the run time each came at.
fn notes_section(o: &mut String, s: &Session) {
    let notes = s.user_notes();
    if notes.is_empty() {
        return;
    }
    o.push_str("<h2>Notes</h2>\n");
    let rows: Vec<Vec<String>> = notes
        .iter()
        .map(|(t, n)| vec![crate::ui::format::clock(*t), n.to_string()])
        .collect();
    grid(o, "notes", &["time", "note"], &rows);
}

/// A run off its method (time-scaled, stopped): a line saying how, where the figures it
/// qualifies begin (nothing for a run that kept to its method).
pub fn off_method_note(o: &mut String, s: &Session) {
    if let Some(t) = off_method_text(s) {
        para(o, "off-method", &format!("Off-method run: {t}."));
    }
}

/// The SNIA PTS pages of `s` (none for another preset), after the line of a run off its
/// method.
fn pts_pages(o: &mut String, s: &Session, heading: &str) {
    let mut pages = String::new();
    super::pts::section(&mut pages, s, heading);
    super::pts_steady::section(&mut pages, s, heading);
    if !pages.is_empty() {
        off_method_note(o, s);
        o.push_str(&pages);
    }
}

fn summary_rows(s: &Session) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = s
        .note
        .iter()
        .map(|n| ("note".to_string(), n.clone()))
        .collect();
    if let Some(t) = off_method_text(s) {
        rows.push(("method".into(), format!("off-method: {t}")));
    }
    if !s.drives.is_empty() {
        rows.push(("drives".into(), count(s.drives.len(), "drive")));
    }
    rows.extend([
        ("state".into(), format!("{:?}", s.state).to_lowercase()),
        ("started".into(), s.started.clone()),
        ("target".into(), s.target.path.clone()),
        (
            "recorded".into(),
            format!(
                "{}, {}",
                count(results::steps(s).len(), "step"),
                count(s.intervals.len(), "interval")
            ),
        ),
    ]);
    if s.target.page_cache {
        rows.push(("page cache".into(), PAGE_CACHE_ROW.into()));
    }
    if let Some(c) = &s.command {
        rows.push(("command".into(), c.clone()));
    }
    if let Some(sm) = &s.summary {
        rows.extend([
            ("ended".into(), sm.ended.clone()),
            ("ended by".into(), sm.ended_by.to_string()),
            ("elapsed".into(), seconds(sm.elapsed_s)),
            ("measured".into(), seconds(sm.measured_s)),
            ("data read".into(), data(sm.read_bytes)),
            ("data written".into(), data(sm.write_bytes)),
        ]);
        if sm.trim_bytes > 0 {
            rows.push(("data trimmed".into(), data(sm.trim_bytes)));
        }
        rows.push(("errors".into(), sm.errors.to_string()));
    } else {
        rows.push((
            "summary".into(),
            "none: the run had not reached its final save (still running, or it did not end cleanly); this is its last autosave".into(),
        ));
    }
    rows
}

fn steps_section(o: &mut String, s: &Session, heading: &str) {
    let steps = results::steps(s);
    let _ = writeln!(o, "<{heading}>Results by workload</{heading}>");
    off_method_note(o, s);
    if steps.is_empty() {
        o.push_str("<p class=\"note\">No step finished.</p>\n");
        return;
    }
    // A SNIA steady-state test's headline is its window averages (its page, above), never
    // a round's peak.
    if super::pts_steady::applies(s) {
        o.push_str("<p class=\"note\">This SNIA PTS test's figures are its steady-state window averages (its page above); the steps below are each round's own, none of them the test's result.</p>\n");
    } else {
        results::summary_section(o, &steps);
        results::corners_section(o, &steps, heading);
    }
    let sub = if heading == "h2" { "h3" } else { "h4" };
    results::workload_sections(o, &steps, sub);
    results::qos_section(o, &steps, heading);
    fio_series_section(o, s);
}

/// Each fio job's (or reporting group's) own figures, in the steps of an fio job file.
fn fio_series_section(o: &mut String, s: &Session) {
    let cell = |d: &crate::stats::SeriesDir| {
        if d.ios == 0 {
            return "-".to_string();
        }
        format!(
            "{} I/Os, {}, {} IOPS, p50 {} p99 {} p99.9 {}",
            d.ios,
            data(d.bytes),
            iops(d.iops),
            lat(Some(d.lat_us.p50)),
            lat(Some(d.lat_us.p99)),
            lat(Some(d.lat_us.p99_9))
        )
    };
    // A trim column only when some job trims.
    let trims = s
        .steps
        .iter()
        .flat_map(|st| &st.summary.fio_series)
        .any(|x| x.trim.ios > 0);
    let rows: Vec<Vec<String>> = s
        .steps
        .iter()
        .enumerate()
        .flat_map(|(n, st)| {
            st.summary.fio_series.iter().map(move |x| {
                let mut row = vec![
                    (n + 1).to_string(),
                    x.name.clone(),
                    x.jobs
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    format!("{:.2}", x.runtime_s),
                    cell(&x.read),
                    cell(&x.write),
                ];
                if trims {
                    row.push(cell(&x.trim));
                }
                row
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str("<h3>fio jobs</h3>\n");
    let head = [
        "step",
        "fio job",
        "as fio ran it",
        "s",
        "read",
        "write",
        "trim",
    ];
    let head = if trims { &head[..] } else { &head[..6] };
    grid(o, "fio-jobs", head, &rows);
}

/// Events shown on the page (the YAML keeps them all).
const MAX_EVENTS: usize = 500;

/// A session of several drives: one row a drive.
fn drives_table(o: &mut String, s: &Session) {
    o.push_str("<h2>Drives</h2>\n");
    let rows: Vec<Vec<String>> = s
        .drive_labels()
        .iter()
        .zip(s.drive_views())
        .map(|(label, v)| {
            let sum = v.summary.clone().unwrap_or_default();
            vec![
                label.clone(),
                super::drive::model(v.drive.as_ref()).unwrap_or_else(|| "-".into()),
                v.target.path.clone(),
                count(results::steps(&v).len(), "step"),
                data(sum.read_bytes + sum.write_bytes + sum.trim_bytes),
                sum.errors.to_string(),
                sum.ended_by.to_string(),
            ]
        })
        .collect();
    grid(
        o,
        "drives",
        &[
            "drive",
            "model",
            "target",
            "steps",
            "data moved",
            "errors",
            "ended by",
        ],
        &rows,
    );
}

/// A drive's identity, SMART before and after, and what the run did to it.
fn drive_sections(o: &mut String, s: &Session, heading: &str) {
    super::drive::identity_section(o, s, heading);
    super::drive::smart_section(o, s, heading);
    super::wear::section(o, s, heading);
}

/// The page of one session, charts inline.
pub fn session_page(s: &Session, charts: &[Chart], warnings: &[String]) -> String {
    page(s, charts, &[], warnings)
}

/// The page of one session, charts inline, with the steps' latency distributions.
/// `distributions`: the latency distribution charts of the session (one list), or of each
/// drive of a session of several (a list a drive, in order).
pub fn page(
    s: &Session,
    charts: &[Chart],
    distributions: &[Vec<Chart>],
    warnings: &[String],
) -> String {
    let title = if s.drives.is_empty() {
        format!("drivescope report: {}", s.label())
    } else {
        let name = s.preset_info().name.unwrap_or_else(|| "run".into());
        format!(
            "drivescope report: {name} on {} ({})",
            count(s.drives.len(), "drive"),
            s.drive_labels().join(", ")
        )
    };
    let mut o = page_start(&title);
    off_method_note(&mut o, s);
    warning_list(&mut o, "Loaded with losses", warnings);
    o.push_str("<h2>Summary</h2>\n");
    kv_table(&mut o, "summary", &summary_rows(s));
    notes_section(&mut o, s);
    if !s.drives.is_empty() {
        drives_table(&mut o, s);
    } else if let Some(sum) = super::soak::summary(s) {
        super::soak::section(&mut o, &sum);
    }
    super::verify::section(&mut o, s);
    super::diskmark::section(&mut o, s);
    if s.drives.is_empty() {
        pts_pages(&mut o, s, "h2");
        steps_section(&mut o, s, "h2");
    }
    o.push_str("<h2>Charts</h2>\n");
    for c in charts {
        o.push_str(&c.figure());
    }
    if s.histograms.is_none() && !s.steps.is_empty() {
        o.push_str("<p class=\"note\">Each step's latency distribution is drawn from the histograms a run saves with <code>--histograms</code>; this session has none.</p>\n");
    }
    if s.drives.is_empty() {
        let charts: &[Chart] = distributions.first().map_or(&[], Vec::as_slice);
        distribution_section(&mut o, charts, "h2");
        drive_sections(&mut o, s, "h2");
    } else {
        for (i, (label, view)) in s.drive_labels().iter().zip(s.drive_views()).enumerate() {
            let _ = writeln!(o, "<h2 class=\"drive\">Drive {}</h2>", esc(label));
            kv_table(&mut o, "summary", &summary_rows(&view));
            if let Some(sum) = super::soak::summary(&view) {
                super::soak::section(&mut o, &sum);
            }
            pts_pages(&mut o, &view, "h3");
            steps_section(&mut o, &view, "h3");
            // The drive's own curve, a colour a workload.
            let mut curve = super::charts::curve(&view);
            curve.id = format!("curve-drive-{}", i + 1);
            curve.title = format!("{label}: {}", curve.title);
            o.push_str(&curve.figure());
            distribution_section(
                &mut o,
                distributions.get(i).map_or(&[], Vec::as_slice),
                "h3",
            );
            drive_sections(&mut o, &view, "h3");
        }
    }
    o.push_str("<h2>Host and target</h2>\n");
    let h = &s.host;
    kv_table(
        &mut o,
        "host",
        &[
            ("hostname".into(), h.hostname.clone()),
            ("OS".into(), h.os.clone()),
            ("kernel".into(), h.kernel.clone()),
            (
                "CPU".into(),
                format!("{} ({} CPUs, {})", h.cpu, h.cpus, h.arch),
            ),
            ("memory".into(), format_size(h.memory_bytes)),
            ("target".into(), s.target.path.clone()),
            ("target kind".into(), s.target.kind.to_string()),
            ("target size".into(), format_size(s.target.size_bytes)),
            (
                "I/O".into(),
                if s.target.page_cache {
                    PAGE_CACHE_ROW.into()
                } else {
                    "O_DIRECT".into()
                },
            ),
            ("drivescope".into(), s.drivescope_version.clone()),
        ],
    );
    super::plan::plan_section(&mut o, s);
    super::plan::preset_section(&mut o, s);
    o.push_str("<h2>Events</h2>\n");
    let rows: Vec<Vec<String>> = s
        .events
        .iter()
        .take(MAX_EVENTS)
        .map(|e| {
            vec![
                format_value(e.t, Unit::Seconds),
                e.kind.to_string(),
                e.message.clone(),
            ]
        })
        .collect();
    grid(&mut o, "events", &["time", "kind", "message"], &rows);
    if s.events.len() > MAX_EVENTS {
        let more = s.events.len() - MAX_EVENTS;
        para(
            &mut o,
            "note",
            &format!("{more} more events in the session file."),
        );
    }
    o.push_str(PAGE_END);
    o
}
