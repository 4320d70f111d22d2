//! Events: phase changes, steady state reached, throttling, errors, saves; newest last,
//! long ones wrapped under their text.

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

/// Splits `text` into pieces of at most `width` characters, at spaces where it can.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word = word.to_string();
        loop {
            let used = line.chars().count();
            let need = word.chars().count() + usize::from(used > 0);
            if used + need <= width {
                if used > 0 {
                    line.push(' ');
                }
                line.push_str(&word);
                break;
            }
            if used > 0 {
                out.push(std::mem::take(&mut line));
                continue;
            }
            let head: String = word.chars().take(width).collect();
            word = word.chars().skip(width).collect();
            out.push(head);
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

fn lines_of<'a>(app: &App, e: &EventView, width: usize) -> Vec<Line<'a>> {
    let t = app.theme();
    let colour = match e.kind {
        EventCategory::Error => t.critical,
        EventCategory::Throttle => t.throttle,
        EventCategory::SteadyState => t.ok,
        EventCategory::Save => t.accent,
        EventCategory::Phase => t.title,
        EventCategory::Info => t.fg,
    };
    wrap(&e.text, width.saturating_sub(PREFIX))
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
    if app.events.is_empty() {
        return empty(f, area, block, vec!["no events yet".into()], t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let rows = inner.height as usize;
    let mut lines: Vec<Line> = Vec::new();
    for e in app.events.iter().rev() {
        let mut l = lines_of(app, e, inner.width as usize);
        l.append(&mut lines);
        lines = l;
        if lines.len() >= rows {
            break;
        }
    }
    let skip = lines.len().saturating_sub(rows);
    f.render_widget(Paragraph::new(lines.split_off(skip)), inner);
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces_and_splits_long_words() {
        assert_eq!(wrap("a bb ccc", 8), vec!["a bb ccc"]);
        assert_eq!(wrap("aaaa bbbb cccc", 9), vec!["aaaa bbbb", "cccc"]);
        assert_eq!(
            wrap("/a/very/long/path/without/spaces", 10),
            vec!["/a/very/lo", "ng/path/wi", "thout/spac", "es"]
        );
        assert_eq!(wrap("", 10), vec![""]);
    }
}
