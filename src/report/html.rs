//! The self-contained HTML page of one session: summary table, the charts inline, drive
//! and host identity, SMART before and after, the steps, and the events. The page is
//! well-formed XML (XHTML syntax), so tools and tests can parse it.

use std::fmt::Write;

use serde_yaml::Value;

use super::svg::{esc, format_value, Chart, Unit};
use crate::session::Session;
use crate::units::format_size;

pub const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:960px}\
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto}\
.note{color:#666}";

/// Starts a page (XHTML syntax) with `title`.
pub fn page_start(title: &str) -> String {
    format!(
        "{PAGE_HEAD}{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    )
}

/// How every page [`page_start`] begins: the mark of a page drivescope wrote.
const PAGE_HEAD: &str = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head><meta charset=\"utf-8\"/><title>";

/// Whether `head` (a file's first bytes) is the start of a page drivescope wrote.
pub fn is_page(head: &[u8]) -> bool {
    head.starts_with(PAGE_HEAD.as_bytes())
}

pub const PAGE_END: &str = "</body></html>\n";

/// A two-column table of (name, value) rows.
pub fn kv_table(o: &mut String, class: &str, rows: &[(String, String)]) {
    let _ = write!(o, "<table class=\"{class}\">");
    for (k, v) in rows {
        let _ = write!(o, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    o.push_str("</table>\n");
}

/// A table with a header row; numeric-looking cells align right.
pub fn grid(o: &mut String, class: &str, head: &[&str], rows: &[Vec<String>]) {
    let _ = write!(o, "<table class=\"{class}\"><tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            let numeric = c.parse::<f64>().is_ok();
            let _ = write!(
                o,
                "<td{}>{}</td>",
                if numeric { " class=\"n\"" } else { "" },
                esc(c)
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table>\n");
}

/// Leaves of a YAML value as `a.b.c` → text rows.
pub fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Mapping(m) => {
            for (k, val) in m {
                let key = match k {
                    Value::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                let p = if prefix.is_empty() {
                    key
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&p, val, out);
            }
        }
        Value::Sequence(items) if items.iter().any(|i| i.is_mapping() || i.is_sequence()) => {
            for (i, item) in items.iter().enumerate() {
                let p = if prefix.is_empty() {
                    i.to_string()
                } else {
                    format!("{prefix}.{i}")
                };
                flatten(&p, item, out);
            }
        }
        Value::Null => {}
        Value::String(s) => out.push((prefix.into(), s.clone())),
        Value::Bool(b) => out.push((prefix.into(), b.to_string())),
        Value::Number(n) => out.push((prefix.into(), n.to_string())),
        other => out.push((
            prefix.into(),
            serde_yaml::to_string(other)
                .unwrap_or_default()
                .trim()
                .replace('\n', " "),
        )),
    }
}

/// The report's word on a session taken through the page cache.
const PAGE_CACHE_ROW: &str =
    "through the page cache (--direct 0): the figures are the cache's as much as the drive's";

fn f1(x: f64) -> String {
    format!("{x:.1}")
}

fn summary_rows(s: &Session) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = s
        .note
        .iter()
        .map(|n| ("note".to_string(), n.clone()))
        .collect();
    rows.extend([
        ("state".into(), format!("{:?}", s.state).to_lowercase()),
        ("started".into(), s.started.clone()),
        ("target".into(), s.target.path.clone()),
        ("intervals".into(), s.intervals.len().to_string()),
        ("steps".into(), s.steps.len().to_string()),
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
            ("elapsed".into(), format_value(sm.elapsed_s, Unit::Seconds)),
            ("measured".into(), format!("{:.1} s", sm.measured_s)),
            (
                "read".into(),
                format!(
                    "{:.0} IOPS, {:.1} MB/s, {}",
                    sm.read_iops,
                    sm.read_mbps,
                    format_size(sm.read_bytes)
                ),
            ),
            (
                "write".into(),
                format!(
                    "{:.0} IOPS, {:.1} MB/s, {}",
                    sm.write_iops,
                    sm.write_mbps,
                    format_size(sm.write_bytes)
                ),
            ),
        ]);
        if sm.trim_bytes > 0 {
            rows.push((
                "trim".into(),
                format!(
                    "{:.0} IOPS, {:.1} MB/s, {}",
                    sm.trim_iops,
                    sm.trim_mbps,
                    format_size(sm.trim_bytes)
                ),
            ));
        }
        rows.extend([
            (
                "latency (µs)".into(),
                format!(
                    "mean {:.1}, p50 {:.1}, p90 {:.1}, p99 {:.1}, p99.9 {:.1}, p99.99 {:.1}, max {:.1}",
                    sm.lat_us.mean,
                    sm.lat_us.p50,
                    sm.lat_us.p90,
                    sm.lat_us.p99,
                    sm.lat_us.p99_9,
                    sm.lat_us.p99_99,
                    sm.lat_us.max
                ),
            ),
            ("errors".into(), sm.errors.to_string()),
        ]);
    } else {
        rows.push((
            "summary".into(),
            "none: the run had not reached its final save (still running, or it did not end cleanly); this is its last autosave".into(),
        ));
    }
    rows
}

/// Numeric leaves of a sample's `smart` mapping. The tables (ATA attributes, SCSI error
/// counters) are not leaves to list one field at a time: an ATA attribute is one row, keyed
/// by its id and name, with its raw value, as smartctl users compare them.
fn smart_numbers(sample: &Value) -> Vec<(String, f64)> {
    let mut rows = Vec::new();
    let mut attributes = Vec::new();
    if let Some(smart) = sample.get("smart") {
        let mut rest = smart.clone();
        if let Some(m) = rest.as_mapping_mut() {
            if let Some(Value::Sequence(attrs)) = m.remove("ata_attributes") {
                attributes = attrs;
            }
            m.remove("scsi_error_counters");
        }
        drop_text(&mut rest);
        flatten("", &rest, &mut rows);
    }
    let mut numbers: Vec<(String, f64)> = rows
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok()?)))
        .collect();
    for a in &attributes {
        let (Some(id), Some(raw)) = (a.get("id").and_then(Value::as_u64), a.get("raw")) else {
            continue;
        };
        let Some(raw) = raw.as_f64() else { continue };
        let name = a.get("name").and_then(Value::as_str).unwrap_or("attribute");
        numbers.push((format!("ATA {id} {name} (raw)"), raw));
    }
    numbers
}

/// `v` with its text leaves taken out: a serial of digits (`19666372154600481`) is text,
/// never a number to compare (nor one read as a float, and mangled).
fn drop_text(v: &mut Value) {
    match v {
        Value::String(_) => *v = Value::Null,
        Value::Mapping(m) => m.values_mut().for_each(drop_text),
        Value::Sequence(items) => items.iter_mut().for_each(drop_text),
        Value::Tagged(t) => drop_text(&mut t.value),
        _ => {}
    }
}

/// SMART before and after: the first and last samples with a `smart` mapping, every
/// numeric attribute with its change, and the headline figures.
fn smart_section(o: &mut String, s: &Session) {
    o.push_str("<h2>SMART before and after</h2>\n");
    // Decoded one by one from each end: only the before and after samples are built.
    let has_smart = |x: &crate::session::Sample| {
        let v = x.value();
        v.get("smart").is_some_and(Value::is_mapping).then_some(v)
    };
    let before = s.telemetry.iter().find_map(has_smart);
    let after = s.telemetry.iter().rev().find_map(has_smart);
    let temps: Vec<f64> = s
        .telemetry
        .iter()
        .filter_map(|x| x.temperature_c())
        .filter(|c| c.is_finite())
        .collect();
    let mut headline = Vec::new();
    if let (Some(first), Some(max)) = (temps.first(), temps.iter().cloned().reduce(f64::max)) {
        headline.push((
            "temperature rise".to_string(),
            format!(
                "{:+.1} °C (from {first:.1} to a peak of {max:.1})",
                max - first
            ),
        ));
    }
    let (Some(before), Some(after)) = (before, after) else {
        kv_table(o, "smart-headline", &headline);
        o.push_str("<p class=\"note\">No SMART samples in this session.</p>\n");
        return;
    };
    let b = smart_numbers(&before);
    let mut a = smart_numbers(&after);
    // The ATA table is kept in a sample only when it changed (at most once a minute): the
    // after side's rows are those of the last sample that holds one.
    let has_table = |x: &crate::session::Sample| {
        let v = x.value();
        v.get("smart")
            .and_then(|m| m.get("ata_attributes"))
            .is_some()
            .then_some(v)
    };
    if let Some(last) = s.telemetry.iter().rev().find_map(has_table) {
        a.retain(|(k, _)| !k.starts_with("ATA "));
        a.extend(
            smart_numbers(&last)
                .into_iter()
                .filter(|(k, _)| k.starts_with("ATA ")),
        );
    }
    let mut rows = Vec::new();
    for (k, vb) in &b {
        let va = a.iter().find(|(ka, _)| ka == k).map(|(_, v)| *v);
        let change = va.map(|va| va - vb);
        let lk = k.to_ascii_lowercase();
        if let Some(d) = change {
            if lk == "data_units_written" {
                // NVMe: one unit is 1000 × 512 bytes.
                headline.push((
                    "data written".into(),
                    format!(
                        "{} ({d} NVMe data units)",
                        format_size(
                            (d.max(0.0) * crate::telemetry::reading::DATA_UNIT_BYTES as f64) as u64
                        )
                    ),
                ));
            } else if lk.contains("written") {
                headline.push((format!("data written ({k})"), format!("{d}")));
            } else if (lk.contains("throttl") && (lk.contains("second") || lk.contains("time")))
                || lk.ends_with("temp_time")
            {
                headline.push((format!("throttle time ({k})"), format!("{d} s")));
            }
        }
        rows.push(vec![
            k.clone(),
            format!("{vb}"),
            va.map(|v| format!("{v}")).unwrap_or_default(),
            change.map(|d| format!("{d}")).unwrap_or_default(),
        ]);
    }
    kv_table(o, "smart-headline", &headline);
    let time = |v: &Value| v.get("t").and_then(Value::as_f64).unwrap_or(0.0);
    let (bt, at) = (time(&before), time(&after));
    let _ = writeln!(
        o,
        "<p class=\"note\">Before: the sample at {}; after: the sample at {}.</p>",
        esc(&format_value(bt, Unit::Seconds)),
        esc(&format_value(at, Unit::Seconds))
    );
    grid(
        o,
        "smart",
        &["attribute", "before", "after", "change"],
        &rows,
    );
}

fn steps_section(o: &mut String, s: &Session) {
    o.push_str("<h2>Steps</h2>\n");
    let rows: Vec<Vec<String>> = s
        .steps
        .iter()
        .map(|st| {
            let m = &st.summary;
            let l = m.service_lat();
            vec![
                st.index.to_string(),
                st.label.clone(),
                format!("{:.0}", m.iops),
                f1(m.bw_bytes() / 1e6),
                f1(l.p50),
                f1(l.p99),
                f1(l.p99_9),
                f1(l.max),
                m.response_from_schedule()
                    .map_or_else(|| "-".to_string(), |r| f1(r.mean)),
                m.errors.to_string(),
                m.ended_by.to_string(),
            ]
        })
        .collect();
    grid(
        o,
        "steps",
        &[
            "#",
            "step",
            "IOPS",
            "MB/s",
            "service p50 µs",
            "p99 µs",
            "p99.9 µs",
            "max µs",
            "response from schedule, mean µs",
            "errors",
            "ended by",
        ],
        &rows,
    );
    fio_series_section(o, s);
}

/// Each fio job's (or reporting group's) own figures, in the steps of an fio job file.
fn fio_series_section(o: &mut String, s: &Session) {
    let cell = |d: &crate::stats::SeriesDir| {
        if d.ios == 0 {
            return "-".to_string();
        }
        format!(
            "{} I/Os, {}, {:.0} IOPS, p50 {} p99 {} p99.9 {} µs",
            d.ios,
            format_size(d.bytes),
            d.iops,
            f1(d.lat_us.p50),
            f1(d.lat_us.p99),
            f1(d.lat_us.p99_9)
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
        .flat_map(|st| {
            st.summary.fio_series.iter().map(move |x| {
                let mut row = vec![
                    st.index.to_string(),
                    x.name.clone(),
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
    let head: &[&str] = if trims {
        &["step", "fio job", "s", "read", "write", "trim"]
    } else {
        &["step", "fio job", "s", "read", "write"]
    };
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
                v.label(),
                v.target.path.clone(),
                f1(sum.read_iops + sum.write_iops + sum.trim_iops),
                f1(sum.read_mbps + sum.write_mbps + sum.trim_mbps),
                f1(sum.lat_us.p99),
                sum.errors.to_string(),
                sum.ended_by.to_string(),
            ]
        })
        .collect();
    grid(
        o,
        "drives",
        &[
            "drive", "model", "target", "IOPS", "MB/s", "p99 µs", "errors", "ended by",
        ],
        &rows,
    );
}

/// A drive's steps, identity and SMART before and after.
fn drive_sections(o: &mut String, s: &Session, heading: &str) {
    steps_section(o, s);
    let _ = writeln!(o, "<{heading}>Drive</{heading}>");
    let mut drive = Vec::new();
    flatten("", &s.drive, &mut drive);
    if drive.is_empty() {
        o.push_str("<p class=\"note\">No drive identity recorded.</p>\n");
    } else {
        kv_table(o, "drive", &drive);
    }
    smart_section(o, s);
    super::wear::section(o, s);
}

/// The page of one session, charts inline.
pub fn session_page(s: &Session, charts: &[Chart], warnings: &[String]) -> String {
    let mut o = page_start(&format!("drivescope report: {}", s.label()));
    if !warnings.is_empty() {
        o.push_str("<h2>Loaded with losses</h2><ul class=\"warnings\">");
        for w in warnings {
            let _ = write!(o, "<li>{}</li>", esc(w));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("<h2>Summary</h2>\n");
    kv_table(&mut o, "summary", &summary_rows(s));
    if !s.drives.is_empty() {
        drives_table(&mut o, s);
    } else if let Some(sum) = super::soak::summary(s) {
        super::soak::section(&mut o, &sum);
    }
    super::verify::section(&mut o, s);
    super::diskmark::section(&mut o, s);
    o.push_str("<h2>Charts</h2>\n");
    for c in charts {
        let _ = writeln!(o, "<div class=\"figure\">{}</div>", c.render());
    }
    if s.drives.is_empty() {
        drive_sections(&mut o, s, "h2");
    } else {
        for (label, view) in s.drive_labels().iter().zip(s.drive_views()) {
            let _ = writeln!(o, "<h2 class=\"drive\">Drive {}</h2>", esc(label));
            kv_table(&mut o, "summary", &summary_rows(&view));
            if let Some(sum) = super::soak::summary(&view) {
                super::soak::section(&mut o, &sum);
            }
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
    for (name, v) in [("Preset", &s.preset), ("Plan", &s.plan)] {
        if !v.is_null() {
            let _ = writeln!(
                o,
                "<h2>{name}</h2><pre>{}</pre>",
                esc(&serde_yaml::to_string(v).unwrap_or_default())
            );
        }
    }
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
        let _ = writeln!(
            o,
            "<p class=\"note\">{} more events in the session file.</p>",
            s.events.len() - MAX_EVENTS
        );
    }
    o.push_str(PAGE_END);
    o
}
