//! Kernel and host: the kernel's view of the same I/O (`/sys/block/X/stat`) beside the
//! engine's, and the host's CPU and memory beside drivescope's own.

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
    let note = match (engine.is_some(), kernel.is_some()) {
        (true, false) => "kernel: no /sys/block figures for this target yet",
        (false, true) => "engine: no interval yet",
        _ => "",
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

fn format_size_short(bytes: u64) -> String {
    // Round to MiB so the figure does not print as an exact byte count.
    let mib = (bytes + (1 << 19)) >> 20;
    format::size(mib << 20)
}
