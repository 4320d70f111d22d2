//! The overlays at both sizes the issue names (80x24 and 120x40), those the other files
//! snapshot at one size only: the help, the preset filter, the target picker while a
//! device's name is typed, and the theme picker.

use drivescope::app::App;
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const SIZES: [((u16, u16), &str); 2] = [((80, 24), "80x24"), ((120, 40), "120x40")];

fn typed(s: &str) -> Vec<drivescope::app::Msg> {
    s.chars().map(key).collect()
}

/// The idle app at `size` after `msgs`.
fn after(size: (u16, u16), msgs: Vec<drivescope::app::Msg>) -> App {
    let mut app = idle(size);
    send(&mut app, msgs);
    app
}

#[test]
fn the_help_at_both_sizes() {
    for (size, name) in SIZES {
        let s = screen(&after(size, vec![key('?')]));
        assert!(s.contains("╭ Keys "), "{s}");
        assert!(s.contains("pause or resume the run"), "{s}");
        if name == "120x40" {
            insta::assert_snapshot!("help_120x40", s);
        }
    }
}

#[test]
fn the_preset_filter_at_both_sizes() {
    for (size, name) in SIZES {
        let mut msgs = vec![key('p')];
        msgs.extend(typed("SNIA"));
        let s = screen(&after(size, msgs));
        assert!(s.contains("Presets: filter 'SNIA' · 1 of 3"), "{s}");
        assert!(!s.contains("Quick look"), "{s}");
        if name == "120x40" {
            insta::assert_snapshot!("presets_filtered_120x40", s);
        }
    }
}

#[test]
fn the_target_picker_typing_a_name_at_both_sizes() {
    for (size, name) in SIZES {
        let msgs = vec![
            key('t'),
            code(KeyCode::Down),
            code(KeyCode::Enter),
            key('n'),
            key('v'),
        ];
        let s = screen(&after(size, msgs));
        assert!(s.contains("Type nvme1n1 and Enter"), "{s}");
        assert!(s.contains("> nv"), "{s}");
        if name == "80x24" {
            insta::assert_snapshot!("targets_typing_80x24", s);
        }
    }
}

#[test]
fn the_theme_picker_at_both_sizes() {
    for (size, name) in SIZES {
        let s = screen(&after(size, vec![key('c'), code(KeyCode::Down)]));
        assert!(s.contains("▶"), "{s}");
        if name == "80x24" {
            insta::assert_snapshot!("themes_80x24", s);
        }
    }
}
