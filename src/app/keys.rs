//! One key binding: parsing from and printing to the names used in `keys.yaml`
//! (`q`, `?`, `enter`, `ctrl-c`, `f1`, `space`, `backtab`), and matching key events.

use std::fmt;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// A key with its modifiers (Shift is part of the character for printable keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBinding {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("space", KeyCode::Char(' ')),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
];

impl KeyBinding {
    pub const fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        KeyBinding { code, mods }
    }

    /// Parses `q`, `Q`, `?`, `ctrl-c`, `alt-x`, `f5`, `enter`, `space`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("an empty key name".into());
        }
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.chars().count() > 1
                && (lower.starts_with("ctrl-") || lower.starts_with("ctrl+"))
            {
                mods |= KeyModifiers::CONTROL;
                rest = &rest[5..];
            } else if rest.chars().count() > 1
                && (lower.starts_with("alt-") || lower.starts_with("alt+"))
            {
                mods |= KeyModifiers::ALT;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            return Ok(KeyBinding::new(KeyCode::Char(c), mods));
        }
        let lower = rest.to_ascii_lowercase();
        if let Some((_, code)) = NAMED.iter().find(|(n, _)| *n == lower) {
            return Ok(KeyBinding::new(*code, mods));
        }
        if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
            if (1..=24).contains(&n) {
                return Ok(KeyBinding::new(KeyCode::F(n), mods));
            }
        }
        Err(format!(
            "'{s}' is not a key (examples: q, ?, enter, esc, space, tab, up, f1, ctrl-c, alt-x)"
        ))
    }

    /// A key that types a character (no Ctrl, no Alt): while a filter is open it is text,
    /// never a command.
    pub fn is_text(&self) -> bool {
        matches!(self.code, KeyCode::Char(_))
            && !self
                .mods
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    }

    /// The key event is this binding. Shift is ignored for characters (it is in the
    /// character already) and a key release never matches.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        if ev.kind == KeyEventKind::Release {
            return false;
        }
        let strip = |m: KeyModifiers| m - KeyModifiers::SHIFT;
        match (self.code, ev.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => {
                let (a, b) = if self.mods.contains(KeyModifiers::CONTROL) {
                    (a.to_ascii_lowercase(), b.to_ascii_lowercase())
                } else {
                    (a, b)
                };
                a == b && strip(self.mods) == strip(ev.modifiers)
            }
            (KeyCode::BackTab, KeyCode::BackTab) => true,
            (a, b) => a == b && strip(self.mods) == strip(ev.modifiers),
        }
    }
}

impl fmt::Display for KeyBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("alt-")?;
        }
        if let Some((name, _)) = NAMED.iter().find(|(_, c)| *c == self.code) {
            return f.write_str(name);
        }
        match self.code {
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn parses_and_prints_round_trip() {
        for s in [
            "q", "?", "enter", "ctrl-c", "alt-x", "f1", "space", "backtab", "Q",
        ] {
            let k = KeyBinding::parse(s).unwrap();
            assert_eq!(k.to_string(), s);
        }
        assert_eq!(
            KeyBinding::parse("Ctrl+C").unwrap(),
            KeyBinding::new(KeyCode::Char('C'), KeyModifiers::CONTROL)
        );
        assert!(KeyBinding::parse("hyper-q").is_err());
        assert!(KeyBinding::parse("").is_err());
        assert!(KeyBinding::parse("f99").is_err());
    }

    #[test]
    fn shift_is_in_the_character() {
        let k = KeyBinding::parse("?").unwrap();
        assert!(k.matches(&ev(KeyCode::Char('?'), KeyModifiers::SHIFT)));
        assert!(!KeyBinding::parse("q")
            .unwrap()
            .matches(&ev(KeyCode::Char('Q'), KeyModifiers::SHIFT)));
        let c = KeyBinding::parse("ctrl-c").unwrap();
        assert!(c.matches(&ev(KeyCode::Char('c'), KeyModifiers::CONTROL)));
        assert!(!c.matches(&ev(KeyCode::Char('c'), KeyModifiers::NONE)));
    }

    #[test]
    fn text_keys_are_characters_without_ctrl_or_alt() {
        for s in ["q", "t", "?", "1", "space", "Q"] {
            assert!(KeyBinding::parse(s).unwrap().is_text(), "{s}");
        }
        for s in ["ctrl-t", "alt-x", "f1", "enter", "esc", "up", "tab"] {
            assert!(!KeyBinding::parse(s).unwrap().is_text(), "{s}");
        }
    }
}
