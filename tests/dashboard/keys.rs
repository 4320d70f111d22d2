//! One keymap: the key table of docs/DASHBOARD.md is the one the keymap makes, and every
//! key the dashboard acts on, in every window, is a key of the keymap (the help lists
//! them all from it), except the characters typed into a filter, a note or a name.

use drivescope::app::keymap::DOCS_TABLE_MARKS;
use drivescope::app::{Action, App, Confirm, Keymap, Overlay};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::fixtures::{draw, idle, running, send};

#[test]
fn the_docs_key_table_is_the_one_the_keymap_makes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/DASHBOARD.md");
    let doc = std::fs::read_to_string(&path).expect("docs/DASHBOARD.md");
    let (start, end) = DOCS_TABLE_MARKS;
    let from = doc.find(start).expect("the table's start mark") + start.len();
    let to = doc[from..].find(end).expect("the table's end mark") + from;
    let made = Keymap::default().markdown_table();
    assert_eq!(
        doc[from..to].trim(),
        made.trim(),
        "docs/DASHBOARD.md's key table is not the keymap's: put this between the marks\n{made}"
    );
    // Every action is a row, with its keys.
    for &a in Action::ALL {
        assert!(made.contains(&format!("| `{}` |", a.name())), "{a}\n{made}");
    }
}

/// Every key a terminal sends that the dashboard could act on.
fn every_key() -> Vec<KeyEvent> {
    let mut out = Vec::new();
    for c in ' '..='~' {
        let shift = if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        out.push(KeyEvent::new(KeyCode::Char(c), shift));
    }
    for c in 'a'..='z' {
        out.push(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
        out.push(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT));
    }
    let codes = [
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Insert,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
    ];
    for c in codes.into_iter().chain((1..=12).map(KeyCode::F)) {
        for m in [KeyModifiers::NONE, KeyModifiers::CONTROL, KeyModifiers::ALT] {
            out.push(KeyEvent::new(c, m));
        }
    }
    out
}

/// A window of the dashboard: its name, how to make it, and whether it takes typed text.
type Window = (&'static str, fn() -> App, bool);

fn with(mut app: App, o: Overlay) -> App {
    app.overlay = Some(o);
    app
}

const SIZE: (u16, u16) = (80, 24);

fn windows() -> Vec<Window> {
    vec![
        ("the main screen, idle", || idle(SIZE), false),
        ("the main screen, running", || running(SIZE), false),
        (
            "a replay",
            || {
                let mut a = running(SIZE);
                a.replay = true;
                a
            },
            false,
        ),
        (
            "the help",
            || with(idle(SIZE), Overlay::Help { scroll: 0 }),
            false,
        ),
        (
            "a question",
            || with(running(SIZE), Overlay::Confirm(Confirm::StopRun)),
            false,
        ),
        (
            "the preset picker",
            || with(idle(SIZE), Overlay::Presets),
            true,
        ),
        (
            "the preset picker, filtered",
            || {
                let mut a = with(idle(SIZE), Overlay::Presets);
                a.filter = "qu".into();
                a
            },
            true,
        ),
        (
            "the target picker",
            || with(idle(SIZE), Overlay::Targets { typing: None }),
            true,
        ),
        (
            "a typed target name",
            || {
                with(
                    idle(SIZE),
                    Overlay::Targets {
                        typing: Some("nvme".into()),
                    },
                )
            },
            true,
        ),
        (
            "the theme picker",
            || with(idle(SIZE), Overlay::Themes { original: 0 }),
            true,
        ),
        (
            "a note",
            || with(running(SIZE), Overlay::Note { text: "fan".into() }),
            true,
        ),
    ]
}

/// A window as it stands before a key: what it shows, to tell whether a key changed it.
struct Before {
    app: App,
    drawn: ratatui::buffer::Buffer,
}

impl Before {
    fn of(app: App) -> Before {
        Before {
            drawn: draw(&app),
            app,
        }
    }

    /// The key changed what the app shows or does.
    fn acts(&self, k: KeyEvent) -> bool {
        let before = &self.app;
        let mut after = before.clone();
        let fx = send(&mut after, [drivescope::app::Msg::Key(k)]);
        !fx.is_empty()
            || after.quit != before.quit
            || after.overlay != before.overlay
            || after.filter != before.filter
            || draw(&after) != self.drawn
    }
}

#[test]
fn every_key_the_dashboard_acts_on_is_in_the_keymap() {
    let keymap = Keymap::default();
    let bound = |k: &KeyEvent| Action::ALL.iter().any(|a| keymap.is(*a, k));
    let typed = |k: &KeyEvent| {
        matches!(k.code, KeyCode::Char(c) if !c.is_control())
            && !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    };
    let mut unlisted = Vec::new();
    let mut acted = 0;
    for (name, make, text) in windows() {
        let before = Before::of(make());
        for k in every_key() {
            if !before.acts(k) {
                continue;
            }
            acted += 1;
            let listed = bound(&k) || (text && typed(&k));
            if !listed {
                unlisted.push(format!("{name}: {:?} {:?}", k.modifiers, k.code));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "keys acted on but not in the keymap (so not in the help nor the docs):\n{}",
        unlisted.join("\n")
    );
    // The check saw keys work: the windows are live, not inert.
    assert!(acted > 100, "only {acted} keys did anything");
}
