//! Type-to-filter in the pickers (presets, targets, themes): the letters typed keep the
//! rows that hold them (any case, in the name, the id or the path), and the moves go
//! through the rows kept. While a picker is open every printable key is filter text (`q`,
//! `t`, `j` and `?` too, first or not); its commands are the keys that type nothing
//! (Enter, Esc, the arrows, Ctrl-T, F1, Ctrl-C), and its footer says which.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::Action;
use super::state::App;

/// The longest filter kept.
const MAX_CHARS: usize = 64;

/// Every word of `filter` is in one of `fields`, ignoring case (an empty filter keeps all).
pub fn keeps(filter: &str, fields: &[&str]) -> bool {
    filter.split_whitespace().all(|w| {
        let w = w.to_lowercase();
        fields.iter().any(|f| f.to_lowercase().contains(&w))
    })
}

/// The character a key types into a filter: any printable one without Ctrl or Alt.
pub fn typed(k: &KeyEvent) -> Option<char> {
    if k.modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        return None;
    }
    match k.code {
        KeyCode::Char(c) if !c.is_control() => Some(c),
        _ => None,
    }
}

/// What a key did to the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// A character added or removed, or the filter cleared.
    Changed,
    /// Not a filter key.
    None,
}

/// Applies a filter key (a character, or the erase or back key while there is a filter); a
/// leading space is swallowed, not typed.
pub fn edit(app: &mut App, k: &KeyEvent) -> Edit {
    if let Some(c) = typed(k) {
        if app.filter.chars().count() < MAX_CHARS && !(c == ' ' && app.filter.is_empty()) {
            app.filter.push(c);
        }
        return Edit::Changed;
    }
    if app.filter.is_empty() {
        return Edit::None;
    }
    if app.keymap.is_command(Action::Erase, k) {
        app.filter.pop();
        Edit::Changed
    } else if app.keymap.is_command(Action::Back, k) {
        app.filter.clear();
        Edit::Changed
    } else {
        Edit::None
    }
}

impl App {
    /// The indexes of the presets the filter keeps.
    pub fn preset_rows(&self) -> Vec<usize> {
        let f = &self.filter;
        let rows = self.presets.iter().enumerate();
        rows.filter(|(_, p)| keeps(f, &[&p.name, &p.id]))
            .map(|(i, _)| i)
            .collect()
    }

    /// The indexes of the targets the filter keeps.
    pub fn target_rows(&self) -> Vec<usize> {
        let f = &self.filter;
        let rows = self.targets.iter().enumerate();
        rows.filter(|(_, t)| keeps(f, &[&t.label, &t.path.to_string_lossy()]))
            .map(|(i, _)| i)
            .collect()
    }

    /// The indexes of the themes the filter keeps.
    pub fn theme_rows(&self) -> Vec<usize> {
        let f = &self.filter;
        let rows = self.themes.iter().enumerate();
        rows.filter(|(_, t)| keeps(f, &[&t.name]))
            .map(|(i, _)| i)
            .collect()
    }
}

/// `sel` on a row kept: the first kept when it is not one (unchanged when none is kept).
pub fn settle(sel: &mut usize, rows: &[usize]) {
    if !rows.contains(sel) {
        if let Some(&first) = rows.first() {
            *sel = first;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_in_any_field_any_case() {
        assert!(keeps("", &["x"]));
        assert!(keeps("quick", &["Quick look", "quick-look"]));
        assert!(keeps(
            "SR 4k",
            &["StorageReview 4K random read", "sr-4k-randread"]
        ));
        assert!(!keeps("snia 4k", &["StorageReview 4K", "sr-4k"]));
        assert!(keeps("vdb", &["(no model) loop device", "/dev/vdb"]));
    }

    #[test]
    fn settle_moves_to_a_kept_row() {
        let mut sel = 1;
        settle(&mut sel, &[3, 5]);
        assert_eq!(sel, 3);
        settle(&mut sel, &[3, 5]);
        assert_eq!(sel, 3);
        let mut sel = 2;
        settle(&mut sel, &[]);
        assert_eq!(sel, 2, "nothing kept: nothing to pick");
    }
}
