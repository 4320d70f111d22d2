//! The diskmark grid as it fills, in the curve panel's place while a run's tests make one
//! figure of several runs (the `diskmark` presets): a row per test and direction with its
//! runs so far and the figures of its best run so far (or the runs' mean): MB/s, IOPS,
//! mean and p99 latency. The cells are the headless run's and the report's
//! ([`crate::session::grid_of`]).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

use crate::app::{App, RunState};
use crate::session::GridCell;
use crate::ui::format;
use crate::ui::widgets::panel_block;
use crate::workload::RunPick;

/// The columns: test, direction, runs, MB/s, IOPS, mean, p99.
const WIDTHS: [u16; 7] = [14, 5, 5, 9, 8, 9, 9];

fn row<'a>(app: &App, c: &GridCell) -> Row<'a> {
    let t = app.theme();
    let num = |s: String, colour| {
        Cell::from(Line::styled(s, Style::default().fg(colour)).right_aligned())
    };
    let lat = format::lat;
    Row::new(vec![
        Cell::from(Span::styled(c.test.clone(), Style::default().fg(t.fg))),
        Cell::from(Span::styled(c.dir.word(), t.dim_style())),
        num(format!("{}/{}", c.runs, c.of), t.fg),
        num(format!("{:.2}", c.mbps), t.accent),
        num(format::iops(c.iops), t.fg),
        num(lat(c.mean_us), t.fg),
        num(lat(c.p99_us), t.p99),
    ])
}

/// The line above the grid: how a cell's figure is made, and the test running.
fn status<'a>(app: &App, cells: &[GridCell]) -> Line<'a> {
    let t = app.theme();
    let how = match cells.first().map(|c| c.pick) {
        Some(RunPick::Mean) => "mean of the runs so far",
        Some(RunPick::Best) | None => "best run so far (highest MB/s)",
    };
    let mut spans = vec![Span::styled(how, t.dim_style())];
    let running = matches!(app.run.state, RunState::Running | RunState::Paused);
    if let (true, Some(step)) = (running, &app.picked_slot().run.step) {
        spans.push(Span::styled(" · running ", t.dim_style()));
        spans.push(Span::styled(
            crate::ui::format::shown(&step.name),
            Style::default().fg(t.accent),
        ));
    }
    Line::from(spans)
}

/// Draws the grid of `cells` (not empty) into `area`.
pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let cells = &app.picked_slot().run.grid;
    let block = panel_block("Diskmark grid", t);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [top, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    f.render_widget(Paragraph::new(status(app, cells)).style(t.base()), top);
    let header = Row::new(
        ["test", "dir", "runs", "MB/s", "IOPS", "svc mean", "svc p99"]
            .into_iter()
            .enumerate()
            .map(|(i, h)| {
                let l = Line::from(h);
                Cell::from(if i >= 2 { l.right_aligned() } else { l })
            }),
    )
    .style(t.dim_style().add_modifier(Modifier::BOLD));
    let rows: Vec<Row<'_>> = cells.iter().map(|c| row(app, c)).collect();
    let table = Table::new(rows, WIDTHS.map(Constraint::Length))
        .header(header)
        .style(t.base());
    f.render_widget(table, body);
}
