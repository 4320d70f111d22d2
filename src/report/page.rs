//! What every page of the report shares, below the pages and their sections: the page's
//! head and style, tables (and rows as aligned text for the terminal: `compare`'s table,
//! the diskmark grid beside a base, the headless run's steps table), and figures in the
//! units people read (latency that scales from µs to s, IOPS in k and M, capacities in
//! decimal GB with GiB beside, block sizes in IEC). The sections and the pages use it; it
//! uses none of them.

use std::fmt::Write;

use super::svg::esc;

pub const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:1232px}p,ul,pre,details{max-width:960px}\
h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px;margin-top:22px}h4{font-size:14px;margin:16px 0 6px}h2.drive{font-size:20px;margin-top:44px;border-bottom:2px solid #888}\
table{border-collapse:collapse;font-size:13px}th{vertical-align:bottom}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto;white-space:pre-wrap;overflow-wrap:anywhere}\
.wide{overflow-x:auto;max-width:100%}svg{max-width:100%;height:auto}td{overflow-wrap:break-word}td.n{white-space:nowrap}\
.note{color:#666}caption{caption-side:top;text-align:left;padding:4px 0;color:#333}table.pts{min-width:640px}\
table.not-steady caption,.off-method,.not-steady-status,.verdict.fail{color:#b00000;font-weight:bold}.verdict.pass{color:#006400}.verdict.incomplete{color:#8a5a00}@media (max-width:900px){body{margin:12px}td,th{padding:2px 5px}}\
@media print{body{max-width:none}.wide{overflow:visible}table{font-size:10px}td,th{padding:2px 4px}}";

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

/// A paragraph of class `class` (`note`, `off-method`): `text`, escaped.
pub fn para(o: &mut String, class: &str, text: &str) {
    let _ = writeln!(o, "<p class=\"{class}\">{}</p>", esc(text));
}

/// A list of warnings under the heading `title`; nothing when there are none.
pub fn warning_list(o: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(o, "<h2>{title}</h2><ul class=\"warnings\">");
    for w in items {
        let _ = write!(o, "<li>{}</li>", esc(w));
    }
    o.push_str("</ul>\n");
}

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
    grid_captioned(o, class, "", head, rows);
}

/// [`grid`] with a caption on the table itself (none when empty): what its figures are.
pub fn grid_captioned(
    o: &mut String,
    class: &str,
    caption: &str,
    head: &[&str],
    rows: &[Vec<String>],
) {
    let _ = write!(o, "<div class=\"wide\"><table class=\"{class}\">");
    if !caption.is_empty() {
        let _ = write!(o, "<caption>{}</caption>", esc(caption));
    }
    o.push_str("<tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr>");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            let numeric = looks_numeric(c);
            let _ = write!(
                o,
                "<td{}>{}</td>",
                if numeric { " class=\"n\"" } else { "" },
                esc(c)
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>\n");
}

/// Rows under a header as aligned text: the columns `left` (text) left-aligned, the
/// others (figures) right-aligned.
pub fn aligned(head: &[&str], rows: &[Vec<String>], left: &[usize]) -> String {
    let mut widths: Vec<usize> = head.iter().map(|c| c.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut o = String::new();
    let line = |o: &mut String, cells: &[String]| {
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            let gap = if i == 0 { "" } else { "  " };
            if left.contains(&i) {
                let _ = write!(o, "{gap}{c}{pad}");
            } else {
                let _ = write!(o, "{gap}{pad}{c}");
            }
        }
        while o.ends_with(' ') {
            o.pop();
        }
        o.push('\n');
    };
    let head: Vec<String> = head.iter().map(|c| c.to_string()).collect();
    line(&mut o, &head);
    for r in rows {
        line(&mut o, r);
    }
    o
}

/// Whether a table cell reads as a figure (`12.3k`, `1.20 ms`, `+4.5%`, `-`): a number and
/// at most a short unit after it, aligned right.
pub fn looks_numeric(c: &str) -> bool {
    if c == "-" {
        return true;
    }
    let end = c
        .char_indices()
        .find(|&(i, ch)| {
            !(ch.is_ascii_digit() || ch == '.' || ch == ',' || (i == 0 && "+-".contains(ch)))
        })
        .map_or(c.len(), |(i, _)| i);
    let (num, rest) = c.split_at(end);
    let rest = rest.trim_start();
    num.replace(',', "").parse::<f64>().is_ok() && rest.chars().count() <= 5 && !rest.contains(' ')
}

/// `n` and `word`, plural unless `n` is 1 (the one count helper, in `units`).
pub use crate::units::count;

/// A latency in µs as people read it: `85 µs`, `1.23 ms`, `2.10 s`; `-` when unknown.
pub use crate::ui::format::lat;

/// IOPS: `850`, `12.3k`, `1.20M`.
pub use crate::ui::format::iops;

/// Throughput given in MB/s (10^6 bytes a second): `85 MB/s`, `1.20 GB/s`.
pub fn mbps(mb: f64) -> String {
    crate::ui::format::bw(mb * 1e6)
}

/// A capacity as vendors print it, decimal, with the binary size beside it:
/// `274.9 GB (256 GiB)` (as every screen shows it).
pub use crate::ui::format::capacity;

/// A byte count of data moved, decimal as drives count it (`12.3 GB`), the exact count
/// beside it.
pub fn data(bytes: u64) -> String {
    let b = bytes as f64;
    let units = [
        (1e12, "TB", 2),
        (1e9, "GB", 2),
        (1e6, "MB", 1),
        (1e3, "kB", 1),
    ];
    match units.into_iter().find(|u| b >= u.0) {
        Some((scale, unit, p)) => format!("{:.p$} {unit} ({} bytes)", b / scale, grouped(bytes)),
        None => count(bytes as usize, "byte"),
    }
}

/// A whole number with its thousands apart: `563,200,000`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Seconds of a run: `11.3 s` under two minutes, else `m:ss` or `h:mm`.
pub fn seconds(x: f64) -> String {
    if x.abs() < 120.0 {
        format!("{x:.1} s")
    } else {
        super::svg::format_value(x, super::svg::Unit::Seconds)
    }
}
