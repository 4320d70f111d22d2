//! Drawing: [`render`] is a pure function of the [`App`] — layout, panels, the tab bar, the
//! status line and any overlay. Themes live in [`theme`].

pub mod format;
pub use crate::app::layout;
pub mod overlays;
pub mod panels;
pub use crate::theme;
pub mod widgets;

use ratatui::layout::Alignment;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use crate::app::{Action, App, RunState};

/// Draws the whole screen from `app`; no cell holds a control character or a
/// bidirectional override ([`format::printable_cells`]), whatever text reached a panel.
pub fn render(app: &App, f: &mut Frame) {
    draw(app, f);
    format::printable_cells(f.buffer_mut());
}

fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    let t = app.theme();
    f.render_widget(Block::default().style(t.base()), area);
    let laid = if app.zoomed {
        layout::zoomed(area, app.tab)
    } else {
        layout::areas_for(area, app.tab, app.table_drives().len())
    };
    let Some(a) = laid else {
        let (w, h) = layout::MIN_SIZE;
        let text = vec![
            Line::styled(
                format!(
                    "This terminal is {}×{}: too small.",
                    area.width, area.height
                ),
                widgets::bold(t.warning),
            ),
            Line::raw(format!("drivescope needs at least {w}×{h}.")),
            Line::styled(
                format!("{} quits", app.keymap.describe(Action::Quit)),
                t.dim_style(),
            ),
        ];
        let top = area.height.saturating_sub(3) / 2;
        let mut r = area;
        r.y += top;
        r.height = r.height.saturating_sub(top);
        f.render_widget(
            Paragraph::new(text)
                .alignment(Alignment::Center)
                .wrap(Wrap { trim: true })
                .style(t.base()),
            r,
        );
        return;
    };
    if a.header.height > 0 {
        panels::header::render(app, app.picked_slot(), f, a.header);
    }
    if let Some(d) = a.drives {
        panels::drives::render(app, f, d);
    }
    if let Some(tabs) = a.tabs {
        tab_bar(app, f, tabs);
    }
    for (p, r) in &a.panels {
        panels::render(*p, app, f, *r);
    }
    // In the grid, the panel the zoom key would enlarge has its border in the accent.
    if let Some((_, r)) = a
        .panels
        .iter()
        .find(|(p, _)| *p == app.tab && a.panels.len() > 1)
    {
        widgets::accent_border(f, *r, Style::default().fg(t.accent));
    }
    status(app, f, a.status);
    overlays::render(app, f, area);
}

fn tab_bar(app: &App, f: &mut Frame, area: ratatui::layout::Rect) {
    let t = app.theme();
    let mut spans = Vec::new();
    for (i, p) in crate::app::Panel::ALL.iter().enumerate() {
        let label = layout::tab_label(i, *p);
        let style = if *p == app.tab {
            t.highlight()
        } else {
            Style::default().fg(t.fg)
        };
        spans.push(Span::styled(label, style));
        spans.push(Span::raw(" "));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The note being written, on the status line: its end in view as it grows.
fn note_input(app: &App, f: &mut Frame, area: ratatui::layout::Rect, text: &str) {
    let t = app.theme();
    let hint = "  Enter records · Esc drops";
    let room = usize::from(area.width).saturating_sub(6 + 1 + hint.chars().count());
    let spans = vec![
        Span::styled("note: ", Style::default().fg(t.accent)),
        Span::styled(
            format::cut_start(&format::shown(text), room),
            Style::default().fg(t.fg),
        ),
        Span::styled("▏", Style::default().fg(t.accent)),
        Span::styled(hint, t.dim_style()),
    ];
    f.render_widget(Paragraph::new(Line::from(spans)).style(t.base()), area);
}

fn status(app: &App, f: &mut Frame, area: ratatui::layout::Rect) {
    let t = app.theme();
    if let Some(crate::app::Overlay::Note { text }) = &app.overlay {
        return note_input(app, f, area, text);
    }
    if let Some((n, _)) = &app.notice {
        // A notice longer than the line wraps upwards over the panels' last rows (at most
        // a third of the screen) rather than being cut.
        let lines = format::wrap(&format::shown(n), usize::from(area.width));
        let most = (f.area().height / 3).max(1);
        let rows = u16::try_from(lines.len()).unwrap_or(u16::MAX).min(most);
        let r = ratatui::layout::Rect {
            y: area.bottom().saturating_sub(rows),
            height: rows,
            ..area
        };
        let text: Vec<Line> = lines
            .into_iter()
            .take(usize::from(rows))
            .map(|l| Line::styled(l, Style::default().fg(t.accent)))
            .collect();
        f.render_widget(ratatui::widgets::Clear, r);
        f.render_widget(Paragraph::new(text).style(t.base()), r);
        return;
    }
    let active = app.run.state.is_active();
    let mut pairs: Vec<(Action, &str)> = Vec::new();
    if active {
        let pause = if app.run.state == RunState::Paused {
            "resume"
        } else {
            "pause"
        };
        pairs.extend([
            (Action::PauseResume, pause),
            (Action::Stop, "stop"),
            (Action::SkipStep, "next step"),
            (Action::Snapshot, "snapshot"),
        ]);
    } else if app.replay {
        pairs.extend([
            (Action::SeekBack, "back"),
            (Action::SeekForward, "forward"),
            (Action::SeekStart, "start"),
            (Action::SeekEnd, "end"),
        ]);
    } else {
        pairs.extend([
            (Action::Start, "start"),
            (Action::Presets, "presets"),
            (Action::Targets, "targets"),
        ]);
    }
    pairs.retain(|(a, _)| app.available(*a));
    let zoom = if app.zoomed { "unzoom" } else { "zoom" };
    pairs.extend([
        (Action::Zoom, zoom),
        (Action::NextTab, "panel"),
        (Action::Themes, "theme"),
        (Action::Help, "help"),
        (Action::Quit, "quit"),
    ]);
    let key = |a: Action| app.keymap.first_key(a);
    // What does not fit goes, the least needed first (the tab bar names the panels; the
    // help lists every key).
    let width = |pairs: &[(Action, &str)]| -> usize {
        pairs
            .iter()
            .map(|(a, w)| key(*a).chars().count() + 1 + w.chars().count() + 2)
            .sum::<usize>()
            .saturating_sub(2)
    };
    for drop in [
        Action::NextTab,
        Action::Themes,
        Action::SeekStart,
        Action::SeekEnd,
    ] {
        if width(&pairs) <= usize::from(area.width) {
            break;
        }
        pairs.retain(|(a, _)| *a != drop);
    }
    let mut spans = Vec::new();
    for (i, (a, what)) in pairs.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled("  ", t.dim_style()));
        }
        spans.push(Span::styled(key(*a), Style::default().fg(t.accent)));
        spans.push(Span::styled(format!(" {what}"), t.dim_style()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}
