//! The drives table of a dashboard on several drives: one row per drive with its label,
//! model, state (and why it failed), step, IOPS, MB/s, response p99, temperature against its
//! warning threshold, power state and throttling, and errors; the picked drive
//! highlighted. It pages when the drives do not all fit.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row, Table};
use ratatui::Frame;

use crate::app::drives::{self, DriveState};
use crate::app::drives::{DriveSlot, TelemetryState};
use crate::app::layout::DRIVES_FRAME_ROWS;
use crate::app::{Action, App, RunEnd};
use crate::outcome::RunOutcome;
use crate::theme::Theme;
use crate::ui::format;
use crate::ui::widgets::{bold, panel_block};

/// Terminals this wide show the drive's model too.
const MODEL_WIDTH: u16 = 110;

/// Columns of the label, narrow and wide.
const LABEL_COLUMNS: (u16, u16) = (8, 14);

/// A label that fits `width` columns: its end, where paths differ (`…nvme1n1`).
fn fitted(label: &str, width: u16) -> String {
    crate::ui::format::cut_start(label, usize::from(width))
}

/// Drive `i`'s colour in charts of every drive: the theme's series colours in turn.
pub fn colour(t: &Theme, i: usize) -> Color {
    let all = [
        t.read, t.write, t.p50, t.p99, t.p999, t.service, t.ok, t.throttle, t.quoted, t.title,
    ];
    all[i % all.len()]
}

/// The state cell: what the drive is doing, or how it ended (and why it failed).
fn state_cell(s: &DriveState, t: &Theme) -> Span<'static> {
    let (text, colour) = match s {
        DriveState::Idle => ("idle".to_string(), t.dim),
        DriveState::Starting => ("starting".to_string(), t.accent),
        DriveState::Running => ("running".to_string(), t.ok),
        DriveState::Stopping => ("stopping".to_string(), t.warning),
        DriveState::Ended(RunOutcome::Completed { errors: 0, .. }) => ("done".to_string(), t.ok),
        DriveState::Ended(RunOutcome::Completed { errors, .. }) => {
            (format!("done, {errors} errors"), t.warning)
        }
        DriveState::Ended(RunOutcome::Stopped(_)) => ("stopped".to_string(), t.warning),
        // The step it failed in is in the events; the row says why.
        DriveState::Ended(RunOutcome::Failed { ended_by, .. }) => {
            let why = crate::ui::format::shown(&ended_by.to_string());
            (format!("failed: {why}"), t.critical)
        }
        DriveState::EndedWithRun(e) => (
            e.label().to_string(),
            match e {
                RunEnd::Completed => t.ok,
                RunEnd::Stopped => t.warning,
                RunEnd::Failed | RunEnd::NotStarted => t.critical,
            },
        ),
    };
    Span::styled(text, Style::default().fg(colour))
}

/// The temperature against the drive's warning threshold: `47/70°C`, in the warning or
/// critical colour past either.
fn temperature(tel: &TelemetryState, t: &Theme) -> Span<'static> {
    let Some(s) = &tel.last else {
        return Span::styled("-", t.dim_style());
    };
    let Some(c) = s.temperature_c else {
        return Span::styled("-", t.dim_style());
    };
    let colour = match (s.warning_c, s.critical_c) {
        (_, Some(cr)) if c >= cr => t.critical,
        (Some(w), _) if c >= w => t.warning,
        _ => t.fg,
    };
    let text = match s.warning_c {
        Some(w) => format!("{c:.0}/{w:.0}°C"),
        None => format!("{c:.0}°C"),
    };
    Span::styled(text, Style::default().fg(colour))
}

/// The power state and, once throttling began, how often it did: `PS0 T2`.
fn power(tel: &TelemetryState, t: &Theme) -> Line<'static> {
    let ps = tel
        .last
        .as_ref()
        .and_then(|s| s.power_state)
        .map(|p| format!("PS{p}"))
        .unwrap_or_else(|| "-".into());
    let mut spans = vec![Span::styled(ps, Style::default().fg(t.fg))];
    let marks = tel.throttle_marks.len();
    if marks > 0 {
        spans.push(Span::styled(format!(" T{marks}"), bold(t.throttle)));
    }
    Line::from(spans)
}

fn right(text: String, style: Style) -> Cell<'static> {
    Cell::from(Line::styled(text, style).right_aligned())
}

fn row(app: &App, i: usize, d: &DriveSlot, wide: bool) -> Row<'static> {
    let t = app.theme();
    let (run, tel) = (&d.run, &d.telemetry);
    let model = d
        .drive
        .as_ref()
        .and_then(|v| v.model.as_deref())
        .map_or_else(|| "-".into(), crate::ui::format::shown);
    let step = run
        .step
        .as_ref()
        .map(|s| format!("{}/{}", s.index + 1, s.count))
        .unwrap_or_else(|| "-".into());
    // Live figures only while the drive runs: a stopped or finished drive's last interval
    // is not what it does now (its state cell says how it ended).
    let last = run.intervals.last().filter(|_| d.state.is_active());
    let (iops, mbps, p99) = match last {
        Some(p) => (
            format::iops(p.iops()),
            format!("{:.0}", p.bw() / 1e6),
            if p.lat.samples > 0 {
                format::us(p.lat.p99)
            } else {
                "-".into()
            },
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    let errors = if run.errors > 0 {
        right(run.errors.to_string(), Style::default().fg(t.critical))
    } else {
        right("0".into(), t.dim_style())
    };
    let width = if wide {
        LABEL_COLUMNS.1
    } else {
        LABEL_COLUMNS.0
    };
    let mut cells = vec![Cell::from(Span::styled(
        fitted(&crate::ui::format::shown(&d.label), width),
        bold(colour(t, i)),
    ))];
    if wide {
        cells.push(Cell::from(model));
    }
    cells.extend([
        Cell::from(step),
        right(iops, Style::default().fg(t.fg)),
        right(mbps, Style::default().fg(t.fg)),
        right(p99, Style::default().fg(t.p99)),
        Cell::from(Line::from(temperature(tel, t)).right_aligned()),
        Cell::from(power(tel, t)),
        errors,
        Cell::from(state_cell(&d.state, t)),
    ]);
    Row::new(cells)
}

/// Draws the drives table into `area`: the page that holds the picked drive.
pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let rows = usize::from(area.height.saturating_sub(DRIVES_FRAME_ROWS));
    let (first, count) = drives::page(app, rows);
    let n = app.table_drives().len();
    let mut title = if count < n {
        format!("Drives {}-{} of {n}", first + 1, first + count)
    } else {
        format!("Drives ({n})")
    };
    let key = |a: Action| app.keymap.first_key(a);
    let (up, all, stop) = (
        key(Action::Up),
        key(Action::AllDrives),
        key(Action::StopDrive),
    );
    title.push_str(&format!(" · {up}/down pick · {all} all"));
    if app.available(Action::StopDrive) {
        title.push_str(&format!(" · {stop} stop one"));
    }
    let block = panel_block(title, t);
    let wide = area.width >= MODEL_WIDTH;
    let body: Vec<Row> = (first..first + count)
        .filter_map(|i| app.table_drives().get(i).map(|d| row(app, i, d, wide)))
        .collect();
    let mut heads = vec!["drive"];
    let mut widths = vec![Constraint::Length(if wide {
        LABEL_COLUMNS.1
    } else {
        LABEL_COLUMNS.0
    })];
    if wide {
        heads.push("model");
        widths.push(Constraint::Length(18));
    }
    heads.extend([
        "step", "IOPS", "MB/s", "resp p99", "temp", "power", "err", "state",
    ]);
    widths.extend([
        Constraint::Length(5),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(8),
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Length(3),
        Constraint::Min(8),
    ]);
    let mut st = ratatui::widgets::TableState::default()
        .with_selected(app.picked.checked_sub(first).filter(|s| *s < count));
    f.render_stateful_widget(
        Table::new(body, widths)
            .header(Row::new(heads).style(t.dim_style().add_modifier(Modifier::BOLD)))
            .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("▶")
            .column_spacing(1)
            .block(block)
            .style(t.base()),
        area,
        &mut st,
    );
}

#[cfg(test)]
mod tests {
    use super::fitted;

    #[test]
    fn a_long_label_keeps_its_end() {
        assert_eq!(fitted("bay-1", 8), "bay-1");
        assert_eq!(fitted("/dev/nvme1n1", 8), "…nvme1n1");
        assert_eq!(fitted("/dev/nvme1n1", 8).chars().count(), 8);
    }
}
