//! Events: phase changes, steady state reached, throttling, errors, saves; newest last,
//! long ones wrapped under their text. A verified run's integrity heads the panel.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::{App, EventCategory, EventView};
use crate::ui::format;
use crate::ui::widgets::{empty, panel_block};

/// Columns taken by the time and kind before an event's text.
const PREFIX: usize = 15;

fn lines_of<'a>(app: &App, e: &EventView, width: usize) -> Vec<Line<'a>> {
    let t = app.theme();
    let colour = match e.kind {
        EventCategory::Error => t.critical,
        EventCategory::Throttle => t.throttle,
        EventCategory::Health => t.critical,
        EventCategory::SteadyState => t.ok,
        EventCategory::Save => t.accent,
        EventCategory::Phase => t.title,
        EventCategory::Info => t.fg,
        EventCategory::Note => t.accent,
    };
    format::wrap(&format::shown(&e.text), width.saturating_sub(PREFIX))
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let (time, kind) = if i == 0 {
                (format::clock(e.t_s), e.kind.label())
            } else {
                (String::new(), "")
            };
            Line::from(vec![
                Span::styled(format!("{time:>5} "), t.dim_style()),
                Span::styled(format!("{kind:<8} "), Style::default().fg(colour)),
                Span::styled(piece, Style::default().fg(t.fg)),
            ])
        })
        .collect()
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let block = panel_block("Events", t);
    let integrity = app.run.integrity.as_ref();
    if app.events.is_empty() && integrity.is_none() {
        return empty(f, area, block, vec!["no events yet".into()], t);
    }
    let mut inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(iv) = integrity {
        let head = super::integrity::lines(app, iv, inner.width as usize);
        let h = (head.len() as u16).min(inner.height);
        let top = Rect { height: h, ..inner };
        f.render_widget(Paragraph::new(head), top);
        inner.y += h;
        inner.height -= h;
    }
    let rows = inner.height as usize;
    let mut lines: Vec<Line> = Vec::new();
    // The lines of the oldest event taken: one that does not fit whole is left out (its
    // wrapped tail would stand at the top without its time), unless it is the only one.
    let mut oldest = 0;
    for e in app.events.iter().rev() {
        let mut l = lines_of(app, e, inner.width as usize);
        oldest = l.len();
        l.append(&mut lines);
        lines = l;
        if lines.len() >= rows {
            break;
        }
    }
    let mut skip = lines.len().saturating_sub(rows);
    if skip > 0 && lines.len() > oldest {
        skip = skip.max(oldest);
    }
    let mut shown = lines.split_off(skip.min(lines.len()));
    // The newest stays on the last row when an event was left out above.
    let gap = rows.saturating_sub(shown.len());
    if skip > 0 && gap > 0 {
        let mut padded: Vec<Line> = (0..gap).map(|_| Line::raw("")).collect();
        padded.append(&mut shown);
        shown = padded;
    }
    f.render_widget(Paragraph::new(shown), inner);
}
