//! The note key: a one-line input over the status line while a run goes on; Enter sends
//! the note to the run (recorded in the session as a timestamped `user_note` event), Esc
//! drops it.

use ratatui::crossterm::event::KeyEvent;

use super::keymap::Action;
use super::msg::Effect;
use super::overlay::Overlay;
use super::state::App;
use super::view::EventCategory;

/// The longest note taken, in characters.
pub const MAX_NOTE_CHARS: usize = 500;

/// Opens the input, or says why not (no run going).
pub(super) fn open(app: &mut App) {
    if app.run.state.is_active() {
        app.overlay = Some(Overlay::Note {
            text: String::new(),
        });
    } else {
        app.notify("no run going: a note goes into a running session (or --note TEXT)");
    }
}

/// A key while the input is open.
pub(super) fn key(app: &mut App, k: &KeyEvent, mut text: String) -> Vec<Effect> {
    if app.keymap.is(Action::Interrupt, k) {
        app.overlay = None;
        return Vec::new();
    }
    if app.keymap.is_command(Action::Back, k) {
        app.overlay = None;
    } else if app.keymap.is_command(Action::Erase, k) {
        text.pop();
        app.overlay = Some(Overlay::Note { text });
    } else if app.keymap.is_command(Action::Select, k) {
        app.overlay = None;
        let note = text.trim().to_string();
        if note.is_empty() {
            app.notify("an empty note: nothing recorded");
            return Vec::new();
        }
        if !app.run.state.is_active() {
            app.notify("the run ended: the note was not recorded");
            return Vec::new();
        }
        app.push_event(EventCategory::Note, note.clone());
        return vec![Effect::Note(note)];
    } else if let Some(c) = super::filter::typed(k) {
        if text.chars().count() < MAX_NOTE_CHARS {
            text.push(c);
        }
        app.overlay = Some(Overlay::Note { text });
    }
    Vec::new()
}
