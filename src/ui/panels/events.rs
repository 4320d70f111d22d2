//! Events: phase changes, steady state reached, throttling, errors, saves; newest last.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::{App, EventKind};
use crate::ui::format;
use crate::ui::widgets::{empty, panel_block};

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Events", t);
    if app.events.is_empty() {
        return empty(f, area, block, vec!["no events yet".into()], t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let rows = inner.height as usize;
    let skip = app.events.len().saturating_sub(rows);
    let lines: Vec<Line> = app
        .events
        .iter()
        .skip(skip)
        .map(|e| {
            let colour = match e.kind {
                EventKind::Error => t.critical,
                EventKind::Throttle => t.throttle,
                EventKind::SteadyState => t.ok,
                EventKind::Save => t.accent,
                EventKind::Phase => t.title,
                EventKind::Info => t.fg,
            };
            Line::from(vec![
                Span::styled(format!("{:>7} ", format::clock(e.t_s)), t.dim_style()),
                Span::styled(
                    format!("{:<8} ", e.kind.label()),
                    Style::default().fg(colour),
                ),
                Span::styled(e.text.clone(), Style::default().fg(t.fg)),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}
