//! Where everything goes: on large terminals every panel in a grid under the header; on
//! smaller ones (down to 80×24 and a bit below) a tab bar with one panel at a time; below
//! the minimum, a message saying so.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::app::Panel;

/// Smallest terminal the dashboard draws in (columns, rows).
pub const MIN_SIZE: (u16, u16) = (60, 18);
/// Smallest terminal that shows every panel at once.
pub const GRID_SIZE: (u16, u16) = (110, 34);
/// Rows of the header, borders included.
pub const HEADER_ROWS: u16 = 6;

/// How the screen is laid out at a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Grid,
    Tabs,
    TooSmall,
}

pub fn mode(width: u16, height: u16) -> Mode {
    if width < MIN_SIZE.0 || height < MIN_SIZE.1 {
        Mode::TooSmall
    } else if width >= GRID_SIZE.0 && height >= GRID_SIZE.1 {
        Mode::Grid
    } else {
        Mode::Tabs
    }
}

/// The areas of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Areas {
    pub header: Rect,
    /// The drives table, when there are several drives.
    pub drives: Option<Rect>,
    /// The tab bar, in tab mode.
    pub tabs: Option<Rect>,
    pub panels: Vec<(Panel, Rect)>,
    pub status: Rect,
}

/// Splits `area` for the mode its size calls for; `None` when it is too small.
pub fn areas(area: Rect, tab: Panel) -> Option<Areas> {
    areas_for(area, tab, 0)
}

/// Rows of the drives table besides its drives: borders and the column heads.
pub const DRIVES_FRAME_ROWS: u16 = 3;

/// How many drives of `n` the drives table shows at once in a terminal of `size` (the
/// rest are on other pages): as many as leave the panels their room, at least two (or the
/// one of a targets file of one entry).
pub fn drive_rows(size: (u16, u16), n: usize) -> u16 {
    if n == 0 {
        return 0;
    }
    let (w, h) = size;
    let panels = match mode(w, h) {
        Mode::Grid => 27,
        _ => 11,
    };
    let body = h.saturating_sub(HEADER_ROWS + 1);
    let room = body.saturating_sub(panels + DRIVES_FRAME_ROWS).clamp(2, 12);
    room.min(n.min(usize::from(u16::MAX)) as u16)
}

/// The areas of a zoomed panel: `tab` on the whole screen but the status line (no
/// header, drives table or tab bar).
pub fn zoomed(area: Rect, tab: Panel) -> Option<Areas> {
    if mode(area.width, area.height) == Mode::TooSmall {
        return None;
    }
    let [panel, status] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    Some(Areas {
        header: Rect::new(area.x, area.y, area.width, 0),
        drives: None,
        tabs: None,
        panels: vec![(tab, panel)],
        status,
    })
}

/// [`areas`] with the drives table of `drives` drives above the panels (none for none).
pub fn areas_for(area: Rect, tab: Panel, drives: usize) -> Option<Areas> {
    let m = mode(area.width, area.height);
    if m == Mode::TooSmall {
        return None;
    }
    let [header, body, status] = Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Min(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let rows = drive_rows((area.width, area.height), drives);
    let (table, body) = if rows > 0 {
        let [t, b] = Layout::vertical([
            Constraint::Length(rows + DRIVES_FRAME_ROWS),
            Constraint::Min(1),
        ])
        .areas(body);
        (Some(t), b)
    } else {
        (None, body)
    };
    if m == Mode::Tabs {
        let [tabs, panel] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
        return Some(Areas {
            header,
            drives: table,
            tabs: Some(tabs),
            panels: vec![(tab, panel)],
            status,
        });
    }
    let rows = Layout::vertical([Constraint::Ratio(1, 3); 3]).split(body);
    let mut panels = Vec::with_capacity(6);
    for (i, row) in rows.iter().enumerate() {
        let cols = Layout::horizontal([Constraint::Ratio(1, 2); 2]).split(*row);
        for (j, col) in cols.iter().enumerate() {
            let p = match Panel::GRID[i * 2 + j] {
                Panel::Curve if tab == Panel::Steps => Panel::Steps,
                p => p,
            };
            panels.push((p, *col));
        }
    }
    Some(Areas {
        header,
        drives: table,
        tabs: None,
        panels,
        status,
    })
}

/// The tab bar's labels and their column ranges, from `x0`.
pub fn tab_spans(x0: u16) -> Vec<(Panel, u16, u16)> {
    let mut x = x0;
    Panel::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let w = tab_label(i, *p).chars().count() as u16;
            let span = (*p, x, x + w);
            x += w + 1;
            span
        })
        .collect()
}

/// A tab's label: ` 1 Throughput `.
pub fn tab_label(i: usize, p: Panel) -> String {
    format!(" {} {} ", i + 1, p.tab_title())
}

/// The panel whose tab is at (column, row) of a terminal of `size`, in tab mode.
pub fn tab_at(size: (u16, u16), drives: usize, column: u16, row: u16) -> Option<Panel> {
    let a = areas_for(Rect::new(0, 0, size.0, size.1), Panel::default(), drives)?;
    let tabs = a.tabs?;
    if row != tabs.y {
        return None;
    }
    tab_spans(tabs.x)
        .into_iter()
        .find(|(_, a, b)| column >= *a && column < *b)
        .map(|(p, _, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_by_size() {
        assert_eq!(mode(120, 40), Mode::Grid);
        assert_eq!(mode(80, 24), Mode::Tabs);
        assert_eq!(mode(200, 30), Mode::Tabs);
        assert_eq!(mode(59, 24), Mode::TooSmall);
        assert_eq!(mode(80, 17), Mode::TooSmall);
    }

    #[test]
    fn grid_has_every_panel_without_overlap() {
        let a = areas(Rect::new(0, 0, 120, 40), Panel::Curve).unwrap();
        assert_eq!(a.panels.len(), 6);
        for (i, (_, r)) in a.panels.iter().enumerate() {
            assert!(r.height >= 10 && r.width >= 55, "{r:?}");
            for (_, s) in &a.panels[i + 1..] {
                assert!(!r.intersects(*s), "{r:?} {s:?}");
            }
        }
        let s = areas(Rect::new(0, 0, 120, 40), Panel::Steps).unwrap();
        assert_eq!(
            s.panels[2],
            (Panel::Steps, a.panels[2].1),
            "steps in the curve's cell"
        );
        let t = areas(Rect::new(0, 0, 80, 24), Panel::Curve).unwrap();
        assert_eq!(t.panels, vec![(Panel::Curve, Rect::new(0, 7, 80, 16))]);
    }

    #[test]
    fn a_zoomed_panel_takes_all_but_the_status_line() {
        for (w, h) in [(80, 24), (120, 40)] {
            let a = zoomed(Rect::new(0, 0, w, h), Panel::Curve).unwrap();
            assert_eq!(a.panels, vec![(Panel::Curve, Rect::new(0, 0, w, h - 1))]);
            assert_eq!(a.status, Rect::new(0, h - 1, w, 1));
            assert_eq!((a.drives, a.tabs, a.header.height), (None, None, 0));
        }
        assert_eq!(zoomed(Rect::new(0, 0, 50, 24), Panel::Curve), None);
    }

    #[test]
    fn clicking_a_tab_finds_it() {
        assert_eq!(tab_at((80, 24), 0, 1, 6), Some(Panel::Throughput));
        let (_, x, end) = tab_spans(0)[6];
        assert!(end <= 80, "seven tabs fit 80 columns: {end}");
        assert_eq!(tab_at((80, 24), 0, x, 6), Some(Panel::Steps));
        let (_, x, _) = tab_spans(0)[2];
        assert_eq!(tab_at((80, 24), 0, x, 6), Some(Panel::Curve));
        assert_eq!(tab_at((80, 24), 0, x, 7), None);
        assert_eq!(tab_at((120, 40), 0, 1, 6), None, "no tabs in the grid");
    }
}
