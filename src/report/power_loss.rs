//! The power-loss test as it is read: one page of a power-cut record (the drive, how it was
//! cut, the verdict, every cycle's cut, epoch, writes in flight, time to ready and findings
//! by kind, each finding at its offset) and the cycles as CSV and JSON for spreadsheets.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::csv::text_cell;
use super::page::{capacity, grid, grid_captioned, kv_table, page_start, para, seconds, PAGE_END};
use super::svg::esc;
use super::{open_dir, ReportError};
use crate::run::power_cut::{CutAt, CycleRecord, PowerCutRecord, Verdict};
use crate::session::Output;
use crate::verify::power_cut::CutKind;

/// The files of a power-loss report.
pub const HTML_FILE: &str = "report.html";
pub const CSV_FILE: &str = "cycles.csv";
pub const FILES: &[&str] = &[HTML_FILE, CSV_FILE];

/// The cycles CSV's header: how the file is known as ours.
const CSV_HEAD: &str = "cycle,cut_at,cut_after_s,cut_took_s,epoch,blocks_in_flight,ready_after_s,machine_down,blocks_checked,in_flight,not_durable,lost_after_flush,torn,not_durable_findings,corrupt,misdirected,unexpected,verdict_so_far,session";

/// Whether the file at `path` is a power-cut record (by its first line), not a session.
pub fn is_record_file(path: &Path) -> bool {
    crate::user_file::head(path, 64).is_ok_and(|h| crate::run::power_cut::is_record(&h))
}

/// Whether `head` (a file's first bytes) is a cycles CSV drivescope wrote.
pub fn is_cycles_csv(head: &[u8]) -> bool {
    head.starts_with(CSV_HEAD.as_bytes())
}

fn output_of(name: &str) -> Output {
    let (what, ours): (_, fn(&[u8]) -> bool) = if name == CSV_FILE {
        ("cycles CSV file", is_cycles_csv)
    } else {
        ("page", super::page::is_page)
    };
    Output { what, ours }
}

/// Writes the page and the cycles CSV of `r` (read from `from`) into `dir`.
pub fn write(r: &PowerCutRecord, from: &Path, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let mut out = open_dir(dir)?;
    let mut files = Vec::new();
    for (name, text) in [(CSV_FILE, cycles_csv(r)), (HTML_FILE, page(r, from))] {
        files.push(out.write(name, output_of(name), |w| w.write_all(text.as_bytes()))?);
    }
    Ok(files)
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn secs(v: Option<f64>) -> String {
    v.map(|s| format!("{s:.3}")).unwrap_or_default()
}

/// Whether the cycles up to and with `c` pass (no finding).
fn passes_so_far(r: &PowerCutRecord, c: &CycleRecord) -> bool {
    r.cycles
        .iter()
        .take_while(|x| x.cycle <= c.cycle)
        .all(|x| x.tally.passes())
}

/// The cycles, one row each.
pub fn cycles_csv(r: &PowerCutRecord) -> String {
    let mut o = String::from(CSV_HEAD);
    o.push('\n');
    for c in &r.cycles {
        let t = &c.tally;
        let _ = writeln!(
            o,
            "{},{},{:.3},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            c.cycle,
            text_cell(&c.cut_at),
            c.cut_after_s,
            secs(c.cut_took_s),
            c.epoch,
            opt(c.blocks_in_flight),
            secs(c.ready_after_s),
            c.machine_down,
            t.blocks_checked,
            t.in_flight,
            t.not_durable,
            t.lost_after_flush,
            t.torn,
            t.not_durable_findings,
            t.corrupt,
            t.misdirected,
            t.unexpected,
            if passes_so_far(r, c) { "pass" } else { "fail" },
            text_cell(c.session.as_deref().unwrap_or("")),
        );
    }
    o
}

/// The whole record as JSON (the cycles with their findings, the totals, the verdict).
pub fn record_json(r: &PowerCutRecord) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

/// When the power was cut, in words.
fn moment(at: CutAt) -> String {
    match at {
        CutAt::Fixed(d) => format!("{} after the workload started", seconds(d.as_secs_f64())),
        CutAt::Random(a, b) => format!(
            "at a random moment {} to {} after the workload started",
            seconds(a.as_secs_f64()),
            seconds(b.as_secs_f64())
        ),
        CutAt::Epochs(n) => format!("once {n} flush epochs had completed"),
    }
}

/// What each finding kind means, for the page's key.
fn meaning(k: CutKind) -> &'static str {
    match k {
        CutKind::LostAfterFlush => {
            "acknowledged before the last completed flush and found older or gone: the drive broke its flush promise"
        }
        CutKind::Torn => "sectors of one atomic write unit from different writes",
        CutKind::NotDurable => {
            "acknowledged after the last flush and found older: expected without power-loss protection, a finding with --plp"
        }
        CutKind::Corrupt => "a sector whose checksum fails",
        CutKind::Misdirected => "our header naming another address or another verify state",
        CutKind::Unexpected => "our data where none was written, or a generation never written",
    }
}

/// The page.
pub fn page(r: &PowerCutRecord, from: &Path) -> String {
    let mut o = page_start(&format!("Power-loss test: {}", r.target.display()));
    let verdict_class = match r.verdict {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Incomplete => "incomplete",
    };
    let t = &r.totals;
    let _ = writeln!(
        o,
        "<p class=\"verdict {verdict_class}\" id=\"verdict\"><strong>{}</strong>: {} of {} cycles; {} lost after flush, {} torn, {} not durable{}, {} other findings.</p>",
        r.verdict.word(),
        r.cycles.len(),
        r.cycles_asked.max(r.cycles.len() as u32),
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        if r.plp { " (findings: --plp)" } else { "" },
        t.corrupt + t.misdirected + t.unexpected,
    );
    o.push_str("<p class=\"note\">Pass only with no block lost after a flush, torn or damaged (with --plp, none not durable either). A write in flight at the cut may be found old or new: counted, not a finding.</p>\n");
    if let Some(why) = &r.stopped {
        para(&mut o, "off-method", &format!("The loop stopped: {why}"));
    }
    o.push_str("<h2>The test</h2>\n");
    let mut rows = vec![
        ("record".to_string(), from.display().to_string()),
        ("target".into(), r.target.display().to_string()),
    ];
    if let Some(id) = &r.identity {
        rows.push(("size".into(), capacity(id.size)));
        let none = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".into());
        rows.push(("serial".into(), none(&id.serial)));
        rows.push(("WWN / EUI".into(), none(&id.wwid)));
    }
    rows.extend([
        ("cut command".into(), r.cut_command.clone()),
        (
            "restore command".into(),
            r.restore_command.clone().unwrap_or_else(|| "none".into()),
        ),
        ("cut".into(), moment(r.cut_at)),
        (
            "atomic write unit".into(),
            r.atomic_unit
                .map_or_else(|| "the logical block".into(), |b| format!("{b} bytes")),
        ),
        (
            "power-loss protection claimed (--plp)".into(),
            if r.plp { "yes" } else { "no" }.into(),
        ),
        (
            "verify state".into(),
            r.verify_state
                .as_ref()
                .map_or_else(String::new, |p| p.display().to_string()),
        ),
    ]);
    kv_table(&mut o, "summary", &rows);
    o.push_str("<h2>Totals</h2>\n");
    let mut rows = vec![
        ("cycles".to_string(), r.cycles.len().to_string()),
        ("blocks checked".into(), t.blocks_checked.to_string()),
        (
            "blocks in flight at the cuts".into(),
            r.blocks_in_flight().to_string(),
        ),
        (
            "in flight, found old or new".into(),
            t.in_flight.to_string(),
        ),
    ];
    for k in CutKind::ALL {
        let n = match k {
            CutKind::NotDurable => t.not_durable + t.not_durable_findings,
            k => t.of(k),
        };
        rows.push((k.name().replace('_', " "), n.to_string()));
    }
    kv_table(&mut o, "totals", &rows);
    o.push_str("<h2>Cycles</h2>\n");
    let rows: Vec<Vec<String>> = r
        .cycles
        .iter()
        .map(|c| {
            let t = &c.tally;
            vec![
                c.cycle.to_string(),
                c.cut_at.clone(),
                format!("{:.3}", c.cut_after_s),
                c.epoch.to_string(),
                c.blocks_in_flight
                    .map_or_else(|| "unknown".into(), |n| n.to_string()),
                match (c.machine_down, c.ready_after_s) {
                    (true, _) => "machine down".into(),
                    (false, v) => secs(v),
                },
                t.blocks_checked.to_string(),
                t.lost_after_flush.to_string(),
                t.torn.to_string(),
                (t.not_durable + t.not_durable_findings).to_string(),
                (t.corrupt + t.misdirected + t.unexpected).to_string(),
                if t.passes() { "pass" } else { "fail" }.into(),
                c.session.clone().unwrap_or_default(),
            ]
        })
        .collect();
    grid_captioned(
        &mut o,
        "cycles",
        "Each cycle: the cut's moment after the workload started, the last flush epoch completed before it, the blocks with a write in flight, the seconds until the drive opened again as the same drive, and what the read-back found",
        &[
            "cycle",
            "cut at",
            "after s",
            "epoch",
            "in flight",
            "ready after s",
            "checked",
            "lost after flush",
            "torn",
            "not durable",
            "other",
            "result",
            "session",
        ],
        &rows,
    );
    if r.cycles.iter().any(|c| c.machine_down) {
        o.push_str("<p class=\"note\">machine down: the cut took this machine down; <code>drivescope verify</code> finished the cycle after the restart, every block judged against the last completed flush (what was in flight or acknowledged after it is unknown).</p>\n");
    }
    let findings: Vec<Vec<String>> = r
        .cycles
        .iter()
        .flat_map(|c| c.findings.iter().map(move |f| (c.cycle, f)))
        .map(|(cycle, f)| {
            let b = &f.finding;
            vec![
                cycle.to_string(),
                f.kind.name().replace('_', " "),
                b.offset.to_string(),
                b.sector.to_string(),
                b.expected
                    .generation
                    .map_or_else(|| "never written".to_string(), |g| g.to_string()),
                b.found_text(),
            ]
        })
        .collect();
    o.push_str("<h2>Findings</h2>\n");
    if findings.is_empty() {
        o.push_str("<p id=\"no-findings\">None.</p>\n");
    } else {
        grid(
            &mut o,
            "findings",
            &[
                "cycle",
                "kind",
                "offset",
                "sector",
                "expected generation",
                "found",
            ],
            &findings,
        );
    }
    o.push_str("<h2>What each finding means</h2>\n<dl>");
    for k in CutKind::ALL {
        let _ = write!(
            o,
            "<dt>{}</dt><dd>{}</dd>",
            esc(&k.name().replace('_', " ")),
            esc(meaning(k))
        );
    }
    o.push_str("</dl>\n");
    o.push_str(PAGE_END);
    o
}
