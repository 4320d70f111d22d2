//! Every key binding in one place: the named actions, their defaults, and the override
//! from `~/.config/drivescope/keys.yaml` (errors give file:line:column and the defaults
//! stay in force).
//!
//! ```yaml
//! # keys.yaml: any action may be given one key or a list; unnamed actions keep defaults
//! quit: [q, ctrl-q]
//! snapshot: w
//! help: ["?", f1]   # characters YAML gives a meaning to are quoted
//! ```
//!
//! A key bound to two actions of the same screen is an error too.

use std::fmt;
use std::path::{Path, PathBuf};

use ratatui::crossterm::event::KeyEvent;
use serde::Deserialize;
use thiserror::Error;

use super::keys::KeyBinding;
use crate::user_file::{read_text, InputError};
use crate::yaml_pos;

/// The largest keymap file read.
const MAX_FILE_BYTES: u64 = crate::user_file::MIB;

/// A keys.yaml that could not be used.
#[derive(Debug, Error)]
pub enum KeymapError {
    #[error(transparent)]
    Read(#[from] InputError),
    #[error("{path}:{line}:{column}: {message}")]
    Parse {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Keys as written in keys.yaml: one key or a list.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum KeyList {
    One(String),
    Many(Vec<String>),
}

impl KeyList {
    fn names(&self) -> Vec<String> {
        match self {
            KeyList::One(s) => vec![s.clone()],
            KeyList::Many(v) => v.clone(),
        }
    }
}

macro_rules! actions {
    ($( $variant:ident $field:ident $name:literal [$($key:literal),*] $desc:literal; )*) => {
        /// A named thing a key does.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Action { $($variant),* }

        impl Action {
            /// Every action, in the order the help lists them.
            pub const ALL: &'static [Action] = &[$(Action::$variant),*];

            /// The name used in keys.yaml.
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name),* }
            }

            /// What the action does, for the help overlay.
            pub fn description(self) -> &'static str {
                match self { $(Action::$variant => $desc),* }
            }

            fn default_keys(self) -> &'static [&'static str] {
                match self { $(Action::$variant => &[$($key),*]),* }
            }
        }

        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct KeysFile {
            $( #[serde(default, rename = $name)] $field: Option<KeyList>, )*
        }

        impl KeysFile {
            fn into_raw(self) -> Vec<(Action, KeyList)> {
                let mut out = Vec::new();
                $( if let Some(k) = self.$field { out.push((Action::$variant, k)); } )*
                out
            }
        }
    };
}

actions! {
    Start start "start" ["enter"] "start the highlighted preset on the chosen target";
    PauseResume pause_resume "pause" ["space"] "pause or resume the run";
    Stop stop "stop" ["x"] "stop the run (the session is saved)";
    SkipStep skip_step "skip" ["n"] "skip to the next step";
    Snapshot snapshot "snapshot" ["s"] "save a snapshot of the session";
    Presets presets "presets" ["p"] "choose a preset";
    Targets targets "targets" ["t", "ctrl-t"] "choose a target; ctrl-t from the preset picker";
    Themes themes "themes" ["c"] "choose a colour theme";
    Units units "units" ["u"] "throughput chart in IOPS or MB/s";
    Help help "help" ["?", "f1"] "show or hide this help";
    Quit quit "quit" ["q"] "quit (asks first while a run is going)";
    SeekBack seek_back "seek_back" ["["] "replay: step back through time";
    SeekForward seek_forward "seek_forward" ["]"] "replay: step forward through time";
    SeekStart seek_start "seek_start" ["home"] "replay: go to the start";
    SeekEnd seek_end "seek_end" ["end"] "replay: go to the end";
    Interrupt interrupt "interrupt" ["ctrl-c"] "stop the run (asks first), or quit";
    NextTab next_tab "next_tab" ["tab", "right"] "next panel (tabs on small terminals)";
    PrevTab prev_tab "prev_tab" ["backtab", "left"] "previous panel";
    ShowTab show_tab "tab" ["1", "2", "3", "4", "5", "6", "7"] "show the panel of that tab number";
    Zoom zoom "zoom" ["z"] "the panel shown on the whole screen, and back";
    Up up "up" ["up", "k"] "move up in a list";
    Down down "down" ["down", "j"] "move down in a list";
    PageUp page_up "page_up" ["pageup"] "lists and help: a page up";
    PageDown page_down "page_down" ["pagedown"] "lists and help: a page down";
    First first "first" ["home"] "lists and help: the first entry";
    Last last "last" ["end"] "lists and help: the last entry";
    Select select "select" ["enter"] "choose the highlighted entry";
    Back back "back" ["esc"] "close the window on top";
    Yes yes "yes" ["y"] "answer yes";
    No no "no" ["n", "esc"] "answer no";
    AllDrives all_drives "all_drives" ["o"] "several drives: charts of all drives, or one";
    StopDrive stop_drive "stop_drive" ["X"] "several drives: stop the picked drive only";
    Note note "note" ["m"] "write a timestamped note into the running session";
    Erase erase "erase" ["backspace"] "filters, notes and typed names: erase the last character";
}

impl Action {
    /// The actions of the main screen (no window open): no key may do two of them.
    pub const MAIN: &'static [Action] = &[
        Action::Interrupt,
        Action::Start,
        Action::PauseResume,
        Action::Stop,
        Action::SkipStep,
        Action::Snapshot,
        Action::Presets,
        Action::Targets,
        Action::Themes,
        Action::Units,
        Action::Help,
        Action::Quit,
        Action::SeekBack,
        Action::SeekForward,
        Action::SeekStart,
        Action::SeekEnd,
        Action::NextTab,
        Action::PrevTab,
        Action::ShowTab,
        Action::Zoom,
        Action::Up,
        Action::Down,
        Action::AllDrives,
        Action::StopDrive,
        Action::Note,
    ];

    /// The actions of a list window (pickers), likewise exclusive.
    pub const LIST: &'static [Action] = &[
        Action::Select,
        Action::Back,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::First,
        Action::Last,
        Action::Erase,
        Action::Interrupt,
    ];

    /// The answers of a question, likewise exclusive.
    pub const ANSWER: &'static [Action] = &[Action::Yes, Action::No];
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The keys of every action.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    bindings: Vec<(Action, Vec<KeyBinding>)>,
}

impl Default for Keymap {
    fn default() -> Self {
        let bindings = Action::ALL
            .iter()
            .map(|&a| {
                let keys = a
                    .default_keys()
                    .iter()
                    .filter_map(|k| KeyBinding::parse(k).ok())
                    .collect();
                (a, keys)
            })
            .collect();
        Keymap { bindings }
    }
}

impl Keymap {
    /// The keys bound to `action`.
    pub fn keys(&self, action: Action) -> &[KeyBinding] {
        self.bindings
            .iter()
            .find(|(a, _)| *a == action)
            .map(|(_, k)| k.as_slice())
            .unwrap_or(&[])
    }

    /// The first key of `action` as a footer prints it (`q`); empty when it has none.
    pub fn first_key(&self, action: Action) -> String {
        self.keys(action)
            .first()
            .map(|k| k.to_string())
            .unwrap_or_default()
    }

    /// The keys of `action` as the help prints them: `? / f1`.
    /// Three or more digits in a row print as a range: `1-6`.
    pub fn describe(&self, action: Action) -> String {
        describe_keys(self.keys(action))
    }

    /// The keys of `action` that work while a filter is typed (those that type no
    /// character), as [`describe`](Self::describe) prints them; empty when it has none.
    pub fn describe_command(&self, action: Action) -> String {
        let keys: Vec<KeyBinding> = self
            .keys(action)
            .iter()
            .filter(|k| !k.is_text())
            .copied()
            .collect();
        describe_keys(&keys)
    }

    /// The key event triggers `action` and types no character: a command while a filter
    /// is open, where every character is text.
    pub fn is_command(&self, action: Action, ev: &KeyEvent) -> bool {
        self.keys(action)
            .iter()
            .any(|k| !k.is_text() && k.matches(ev))
    }

    /// The first of `candidates` that the key event triggers as a command
    /// ([`is_command`](Self::is_command)).
    pub fn first_command(&self, candidates: &[Action], ev: &KeyEvent) -> Option<Action> {
        candidates.iter().copied().find(|&a| self.is_command(a, ev))
    }

    /// The key event triggers `action`.
    pub fn is(&self, action: Action, ev: &KeyEvent) -> bool {
        self.keys(action).iter().any(|k| k.matches(ev))
    }

    /// Which of `action`'s keys the key event is (0 for its first key): the tab key `3`
    /// is the third panel.
    pub fn which(&self, action: Action, ev: &KeyEvent) -> Option<usize> {
        self.keys(action).iter().position(|k| k.matches(ev))
    }

    /// The first of `candidates` that the key event triggers.
    pub fn first_of(&self, candidates: &[Action], ev: &KeyEvent) -> Option<Action> {
        candidates.iter().copied().find(|&a| self.is(a, ev))
    }

    /// The defaults with the overrides of a keys.yaml text; `path` names it in errors.
    pub fn from_yaml(text: &str, path: &str) -> Result<Keymap, KeymapError> {
        let mut map = Keymap::default();
        if text.trim().is_empty() {
            return Ok(map);
        }
        let err = |(line, column), message| KeymapError::Parse {
            path: path.to_string(),
            line,
            column,
            message,
        };
        let file: KeysFile =
            serde_yaml::from_str(text).map_err(|e| err(yaml_pos::of_error(&e), e.to_string()))?;
        for (action, raw) in file.into_raw() {
            let names = raw.names();
            let bad =
                |value: &str, message| err(yaml_pos::of_value(text, action.name(), value), message);
            if names.is_empty() {
                return Err(bad("", format!("{action}: needs at least one key")));
            }
            let mut keys = Vec::with_capacity(names.len());
            for n in &names {
                keys.push(KeyBinding::parse(n).map_err(|m| bad(n, format!("{action}: {m}")))?);
            }
            if let Some(slot) = map.bindings.iter_mut().find(|(a, _)| *a == action) {
                slot.1 = keys;
            }
        }
        if let Some((key, a, b)) = map.conflict() {
            // Point at whichever of the two the file rebound (the later one if both).
            let line = yaml_pos::key_line(text, b.name())
                .or_else(|| yaml_pos::key_line(text, a.name()))
                .unwrap_or(1);
            let message =
                format!("{key} is bound to both {a} and {b}; one of them could never be used");
            return Err(err((line, 1), message));
        }
        Ok(map)
    }

    /// The first key bound to two actions that share a screen, with both actions.
    pub fn conflict(&self) -> Option<(KeyBinding, Action, Action)> {
        for group in [Action::MAIN, Action::LIST, Action::ANSWER] {
            for (i, &a) in group.iter().enumerate() {
                for &b in &group[i + 1..] {
                    for k in self.keys(a) {
                        if self.keys(b).contains(k) {
                            return Some((*k, a, b));
                        }
                    }
                }
            }
        }
        None
    }

    /// Loads `path` if it exists: the keymap to use, and the error that made it fall back
    /// to the defaults.
    pub fn load(path: &Path) -> (Keymap, Option<KeymapError>) {
        let text = match read_text(path, MAX_FILE_BYTES, "keymap") {
            Ok(t) => t,
            Err(InputError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return (Keymap::default(), None)
            }
            Err(e) => return (Keymap::default(), Some(e.into())),
        };
        match Keymap::from_yaml(&text, &path.display().to_string()) {
            Ok(k) => (k, None),
            Err(e) => (Keymap::default(), Some(e)),
        }
    }
}

/// Keys as the help prints them: `? / f1`; three or more digits in a row as a range: `1-6`.
fn describe_keys(keys: &[KeyBinding]) -> String {
    let digit = |k: &KeyBinding| match k.code {
        ratatui::crossterm::event::KeyCode::Char(c) if k.mods.is_empty() => c.to_digit(10),
        _ => None,
    };
    let digits: Option<Vec<u32>> = keys.iter().map(digit).collect();
    if let Some(d) = digits.filter(|d| d.len() > 2 && d.windows(2).all(|w| w[1] == w[0] + 1)) {
        if let (Some(a), Some(b)) = (d.first(), d.last()) {
            return format!("{a}-{b}");
        }
    }
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    keys.join(" / ")
}

/// The start and end of the key table in docs/DASHBOARD.md, made by [`Keymap::markdown_table`].
pub const DOCS_TABLE_MARKS: (&str, &str) = (
    "<!-- keys: made from src/app/keymap.rs (Keymap::markdown_table); tests/dashboard/keys.rs checks it -->",
    "<!-- end of keys -->",
);

impl Keymap {
    /// Every action as a Markdown table (key, name in keys.yaml, what it does), in the
    /// order the help lists them: the key table of docs/DASHBOARD.md.
    pub fn markdown_table(&self) -> String {
        let mut out = String::from("| key | action | does |\n|---|---|---|\n");
        for &a in Action::ALL {
            let keys = self.describe(a);
            let fence = if keys.contains('`') { "`` " } else { "`" };
            let close: String = fence.chars().rev().collect();
            let keys = format!("{fence}{keys}{close}").replace('|', "\\|");
            out.push_str(&format!(
                "| {keys} | `{}` | {} |\n",
                a.name(),
                a.description().replace('|', "\\|")
            ));
        }
        out
    }
}

/// `~/.config/drivescope` (or `$XDG_CONFIG_HOME/drivescope`).
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|p| p.join("drivescope"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn every_action_has_a_default_key() {
        let k = Keymap::default();
        for &a in Action::ALL {
            assert!(!k.keys(a).is_empty(), "{a} has no key");
        }
        assert!(k.is(Action::Quit, &key('q')));
        assert!(k.is(Action::Help, &key('?')));
    }

    #[test]
    fn yaml_overrides_only_what_it_names() {
        let k = Keymap::from_yaml("quit: [Q, ctrl-q]\nsnapshot: w\n", "keys.yaml").unwrap();
        assert!(!k.is(Action::Quit, &key('q')));
        assert!(k.is(Action::Quit, &key('Q')));
        assert!(k.is(
            Action::Quit,
            &KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL)
        ));
        assert!(k.is(Action::Snapshot, &key('w')));
        assert!(
            k.is(Action::Help, &key('?')),
            "unnamed actions keep defaults"
        );
        assert_eq!(k.describe(Action::Quit), "Q / ctrl-q");
    }

    #[test]
    fn bad_yaml_names_file_line_and_column() {
        let e = Keymap::from_yaml("quit: q\nhelp: hyper-h\n", "/home/u/keys.yaml").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("/home/u/keys.yaml:2:7:"), "{s}");
        assert!(s.contains("hyper-h"), "{s}");
        let e = Keymap::from_yaml("quitt: q\n", "k.yaml").unwrap_err();
        assert!(e.to_string().starts_with("k.yaml:1:1:"), "{e}");
        assert!(e.to_string().contains("quitt"), "{e}");
    }

    #[test]
    fn defaults_have_no_conflicts_and_overrides_are_checked() {
        assert_eq!(Keymap::default().conflict(), None);
        let e = Keymap::from_yaml("help: f1\nsnapshot: q\n", "k.yaml").unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("k.yaml:2:1:"), "{s}");
        assert!(s.contains("q is bound to both snapshot and quit"), "{s}");
        // the same key in different screens is fine: n skips a step and answers no
        assert!(Keymap::from_yaml("skip: n\n", "k.yaml").is_ok());
    }

    #[test]
    fn load_falls_back_to_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("keys.yaml");
        let (k, e) = Keymap::load(&p);
        assert!(e.is_none());
        assert_eq!(k, Keymap::default());
        std::fs::write(&p, "quit: [\n").unwrap();
        let (k, e) = Keymap::load(&p);
        assert_eq!(k, Keymap::default());
        let msg = e.unwrap().to_string();
        assert!(msg.starts_with(&format!("{}:", p.display())), "{msg}");
    }
}
