//! Kernel and host: the kernel's view of the same I/O (`/sys/block/X/stat`) beside the
//! engine's (with a word on why their IOPS differ when the kernel merged or split the
//! requests), and the host's CPU and memory beside drivescope's own.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

use crate::app::slot::DriveSlot;
use crate::app::App;
use crate::ui::format;
use crate::ui::widgets::{empty, panel_block};

pub fn render(app: &App, slot: &DriveSlot, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Kernel & host", t);
    let last = slot.telemetry.last.as_ref();
    let kernel = last.and_then(|l| l.kernel);
    let host = last.and_then(|l| l.host);
    let engine = slot.run.intervals.last();
    if kernel.is_none() && host.is_none() && engine.is_none() {
        let mut why = slot.telemetry.unavailable.clone();
        if why.is_empty() {
            why.push("no kernel or host figures yet".into());
        }
        return empty(f, area, block, why, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [table_area, host_area] =
        Layout::vertical([Constraint::Min(1), Constraint::Length(2)]).areas(inner);

    // Columns only for the sources that have figures: no dashes standing in for numbers.
    let rows = [
        (
            "read IOPS",
            engine.map(|e| e.read_iops),
            kernel.map(|k| k.read_iops),
            format::iops as fn(f64) -> String,
        ),
        (
            "write IOPS",
            engine.map(|e| e.write_iops),
            kernel.map(|k| k.write_iops),
            format::iops,
        ),
        (
            "read",
            engine.map(|e| e.read_bw),
            kernel.map(|k| k.read_bw),
            format::bw,
        ),
        (
            "write",
            engine.map(|e| e.write_bw),
            kernel.map(|k| k.write_bw),
            format::bw,
        ),
    ];
    let cell = |v: String, style: Style| Cell::from(Line::styled(v, style).right_aligned());
    let mut out: Vec<Row> = rows
        .into_iter()
        .map(|(name, e, k, fmt)| {
            let mut cells = vec![Cell::from(Span::styled(name, t.dim_style()))];
            if let Some(e) = e {
                cells.push(cell(fmt(e), Style::default().fg(t.accent)));
            }
            if let Some(k) = k {
                cells.push(cell(fmt(k), Style::default().fg(t.fg)));
            }
            Row::new(cells)
        })
        .collect();
    if let Some(k) = kernel {
        for (name, v) in [
            ("busy", format!("{:.0} %", k.util_pct)),
            ("in flight", k.in_flight.to_string()),
        ] {
            let mut cells = vec![Cell::from(Span::styled(name, t.dim_style()))];
            if engine.is_some() {
                cells.push(Cell::from(""));
            }
            cells.push(cell(v, Style::default().fg(t.fg)));
            out.push(Row::new(cells));
        }
    }
    let mut head = vec![Cell::from("")];
    let mut widths = vec![Constraint::Length(11)];
    if engine.is_some() {
        head.push(Cell::from(Line::raw("engine").right_aligned()));
        widths.push(Constraint::Length(12));
    }
    if kernel.is_some() {
        head.push(Cell::from(Line::raw("kernel").right_aligned()));
        widths.push(Constraint::Length(12));
    }
    let header = Row::new(head).style(t.dim_style().add_modifier(Modifier::BOLD));
    let merged;
    let note = match (engine, kernel) {
        (Some(_), None) => "kernel: no /sys/block figures for this target yet",
        (None, Some(_)) => "engine: no interval yet",
        (Some(e), Some(k)) => {
            merged = regrouped(
                [(e.read_iops, e.read_bw), (e.write_iops, e.write_bw)],
                [(k.read_iops, k.read_bw), (k.write_iops, k.write_bw)],
            );
            merged.as_deref().unwrap_or("")
        }
        (None, None) => "",
    };
    let [table_area, note_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(u16::from(!note.is_empty())),
    ])
    .areas(table_area);
    f.render_widget(
        Table::new(out, widths).header(header).style(t.base()),
        table_area,
    );
    f.render_widget(Paragraph::new(Line::styled(note, t.dim_style())), note_area);

    let host_lines = match host {
        Some(h) => vec![
            Line::from(vec![
                Span::styled("host CPU ", t.dim_style()),
                Span::styled(format!("{:.0} %", h.cpu_pct), Style::default().fg(t.fg)),
                Span::styled("   drivescope ", t.dim_style()),
                Span::styled(
                    format!("{:.1} %", h.own_cpu_pct),
                    Style::default().fg(t.accent),
                ),
            ]),
            Line::from(vec![
                Span::styled("memory used ", t.dim_style()),
                Span::styled(
                    format_size_short(h.mem_used_bytes),
                    Style::default().fg(t.fg),
                ),
                Span::styled("   drivescope RSS ", t.dim_style()),
                Span::styled(
                    format_size_short(h.own_rss_bytes),
                    Style::default().fg(t.fg),
                ),
            ]),
        ],
        None => vec![Line::styled("no host figures yet", t.dim_style())],
    };
    f.render_widget(Paragraph::new(host_lines), host_area);
}

/// The kernel counts requests after its block layer merged adjacent I/Os (sequential
/// writes) or split large ones: the same bytes in fewer or more requests. Below this ratio
/// of IOPS the two are taken as the same (their windows differ a little).
const REGROUPED_RATIO: f64 = 1.5;
/// The bytes agree within this share when the difference is merging, not other I/O.
const SAME_BYTES: f64 = 0.25;

/// Why the kernel's IOPS differ from the engine's with the same bytes, for (IOPS, bytes/s)
/// of reads and writes from each: `kernel merged adjacent writes: fewer, larger requests`.
fn regrouped(engine: [(f64, f64); 2], kernel: [(f64, f64); 2]) -> Option<String> {
    let mut merged = Vec::new();
    let mut split = Vec::new();
    for (dir, (e, k)) in ["reads", "writes"]
        .into_iter()
        .zip(engine.into_iter().zip(kernel))
    {
        let ((e_iops, e_bw), (k_iops, k_bw)) = (e, k);
        if e_iops <= 0.0 || k_iops <= 0.0 || (e_bw - k_bw).abs() > SAME_BYTES * e_bw {
            continue;
        }
        if e_iops > k_iops * REGROUPED_RATIO {
            merged.push(dir);
        } else if k_iops > e_iops * REGROUPED_RATIO {
            split.push(dir);
        }
    }
    fn what(dirs: &[&'static str]) -> &'static str {
        if dirs.len() == 2 {
            "I/Os"
        } else {
            dirs[0]
        }
    }
    match (merged.is_empty(), split.is_empty()) {
        (false, _) => Some(format!(
            "kernel merged adjacent {}: fewer, larger requests",
            what(&merged)
        )),
        (true, false) => Some(format!(
            "kernel split the {}: more, smaller requests",
            what(&split)
        )),
        (true, true) => None,
    }
}

fn format_size_short(bytes: u64) -> String {
    // Round to MiB so the figure does not print as an exact byte count.
    let mib = (bytes + (1 << 19)) >> 20;
    format::size(mib << 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_sequential_writes_are_explained_and_equal_figures_are_not() {
        // 17.0k engine write IOPS of 128 KiB beside 2,262 kernel IOPS, the same MB/s.
        let bw = 17_000.0 * 131_072.0;
        let said = regrouped(
            [(0.0, 0.0), (17_000.0, bw)],
            [(0.0, 0.0), (2_262.0, bw * 1.02)],
        );
        assert_eq!(
            said.as_deref(),
            Some("kernel merged adjacent writes: fewer, larger requests")
        );
        // The figures agree (4K random): nothing to explain.
        let bw = 84_000.0 * 4096.0;
        assert_eq!(
            regrouped([(0.0, 0.0), (83_900.0, bw)], [(0.0, 0.0), (84_500.0, bw)]),
            None
        );
        // Fewer kernel IOPS with fewer bytes too is not merging (other I/O, a window
        // apart): no word that could be wrong.
        assert_eq!(
            regrouped([(9_000.0, 9e8), (0.0, 0.0)], [(3_000.0, 3e8), (0.0, 0.0)]),
            None
        );
        // Large reads split by the block layer's request size limit.
        assert_eq!(
            regrouped([(500.0, 5e8), (0.0, 0.0)], [(4_000.0, 5e8), (0.0, 0.0)]).as_deref(),
            Some("kernel split the reads: more, smaller requests")
        );
    }
}
