//! A verified run's integrity, at the top of the events panel: blocks written and
//! verified, findings by kind (red when any), the last finding's detail.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::app::{App, IntegrityView};
use crate::ui::format;
use crate::ui::widgets::figure;
use crate::verify::FindingKind;

/// The lines of the integrity summary, `width` columns wide.
pub fn lines<'a>(app: &App, iv: &IntegrityView, width: usize) -> Vec<Line<'a>> {
    let t = app.theme();
    let n = &iv.totals;
    let fig = |v: u64| Style::default().fg(if v > 0 { t.critical } else { t.ok });
    let mut first = vec![Span::styled("integrity ", Style::default().fg(t.title))];
    first.extend(figure(
        "written",
        n.blocks_written.to_string(),
        Style::default().fg(t.accent),
        t,
    ));
    first.push(Span::raw(" · "));
    first.extend(figure(
        "verified",
        n.blocks_checked.to_string(),
        Style::default().fg(t.accent),
        t,
    ));
    first.push(Span::raw(" · "));
    first.extend(figure(
        "findings",
        n.findings().to_string(),
        fig(n.findings()),
        t,
    ));
    let mut kinds = Vec::new();
    for (i, k) in FindingKind::ALL.into_iter().enumerate() {
        if i > 0 {
            kinds.push(Span::raw(" "));
        }
        kinds.extend(figure(k.name(), n.of(k).to_string(), fig(n.of(k)), t));
    }
    let mut out = vec![Line::from(first), Line::from(kinds)];
    match (&iv.last, n.findings()) {
        (Some(text), _) => {
            for (i, piece) in format::wrap(text, width.saturating_sub(6))
                .into_iter()
                .take(2)
                .enumerate()
            {
                let lead = if i == 0 { "last " } else { "     " };
                out.push(Line::from(vec![
                    Span::styled(lead, t.dim_style()),
                    Span::styled(format!(" {piece}"), Style::default().fg(t.critical)),
                ]));
            }
        }
        (None, 0) => out.push(Line::from(Span::styled(
            "no finding: every block read back as written",
            t.dim_style(),
        ))),
        // Counted, its detail not here (a replay's span, or kept findings all shown).
        (None, _) => {}
    }
    out.push(Line::from(Span::styled("─".repeat(width), t.dim_style())));
    out
}
