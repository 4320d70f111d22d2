//! Type-to-filter in the pickers (issue 29): letters keep the rows that hold them (name,
//! id or path, any case), the title says the filter and how many rows it kept, moves and
//! Enter go through the rows kept, Backspace takes a letter back and Esc clears the
//! filter before it closes the picker. Every printable key is filter text while a picker
//! is open (issue 43: a first `q` quit, a first `t` left for the targets); the commands
//! are the keys that type nothing (Ctrl-T, F1, Ctrl-C, Esc, the arrows), and the footer
//! names them.

use drivescope::app::{Effect, Overlay};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const SMALL: (u16, u16) = (80, 24);

fn typed(s: &str) -> Vec<drivescope::app::Msg> {
    s.chars().map(key).collect()
}

#[test]
fn typing_filters_the_presets_and_enter_starts_the_one_kept() {
    let mut app = idle(SMALL);
    send(&mut app, [key('p')]);
    assert_eq!(app.overlay, Some(Overlay::Presets));
    send(&mut app, typed("SNIA"));
    let s = screen(&app);
    assert!(s.contains("Presets: filter 'SNIA' · 1 of 3"), "{s}");
    assert!(s.contains("▶ SNIA PTS IOPS"), "{s}");
    assert!(!s.contains("Quick look"), "a row the filter drops\n{s}");
    insta::assert_snapshot!("presets_filtered_80x24", s);
    let fx = send(&mut app, [code(KeyCode::Enter)]);
    assert!(
        matches!(fx.as_slice(), [Effect::StartRun { preset_id, .. }] if preset_id == "snia-iops"),
        "{fx:?}"
    );
}

#[test]
fn backspace_and_esc_give_the_whole_list_back() {
    let mut app = idle(SMALL);
    send(&mut app, [key('p')]);
    // The id matches too; a word that matches nothing says so and starts nothing.
    send(&mut app, typed("ck-lo"));
    assert!(screen(&app).contains("1 of 3"), "{}", screen(&app));
    send(&mut app, typed("zz"));
    let s = screen(&app);
    assert!(
        s.contains("0 of 3") && s.contains("no preset matches"),
        "{s}"
    );
    assert!(send(&mut app, [code(KeyCode::Enter)]).is_empty());
    send(
        &mut app,
        [code(KeyCode::Backspace), code(KeyCode::Backspace)],
    );
    assert_eq!(app.filter, "ck-lo");
    send(&mut app, [code(KeyCode::Esc)]);
    assert_eq!(app.filter, "");
    assert_eq!(
        app.overlay,
        Some(Overlay::Presets),
        "esc cleared the filter only"
    );
    let s = screen(&app);
    assert!(
        s.contains("Presets (type to filter)") && s.contains("SNIA PTS IOPS"),
        "{s}"
    );
    send(&mut app, [code(KeyCode::Esc)]);
    assert_eq!(app.overlay, None, "a second esc closes");
}

#[test]
fn moves_go_through_the_rows_kept_and_the_filter_goes_with_the_picker() {
    let mut app = idle(SMALL);
    send(&mut app, [key('p')]);
    // Only "iorate sweep" holds "ee": the highlighted Quick look gives way to it.
    send(&mut app, typed("ee"));
    assert_eq!(app.selected_preset().map(|p| p.id.as_str()), Some("sweep"));
    send(&mut app, [code(KeyCode::Down)]);
    assert_eq!(
        app.selected_preset().map(|p| p.id.as_str()),
        Some("sweep"),
        "the only row kept"
    );
    send(&mut app, [code(KeyCode::Esc), code(KeyCode::Esc), key('t')]);
    assert!(matches!(
        app.overlay,
        Some(Overlay::Targets { typing: None })
    ));
    assert_eq!(app.filter, "", "a new picker starts unfiltered");
    send(&mut app, typed("zz"));
    assert!(
        screen(&app).contains("Targets: filter 'zz' · 0 of"),
        "{}",
        screen(&app)
    );
}

#[test]
fn every_printable_key_is_filter_text_in_every_picker() {
    let chars = (' '..='~').chain(['é', 'ß', 'µ', '€']);
    for (open, picker) in [('p', "presets"), ('t', "targets"), ('c', "themes")] {
        for c in chars.clone() {
            let mut app = idle(SMALL);
            send(&mut app, [key(open)]);
            let before = app.overlay.clone();
            let fx = send(&mut app, [key(c)]);
            assert!(fx.is_empty(), "{picker}: '{c}' did {fx:?}");
            assert!(!app.quit, "{picker}: '{c}' quit");
            assert_eq!(app.overlay, before, "{picker}: '{c}' left the picker");
            let expected = if c == ' ' {
                String::new()
            } else {
                c.to_string()
            };
            assert_eq!(app.filter, expected, "{picker}: '{c}' is text");
            // A second key, after a first: text too.
            send(&mut app, [key('q')]);
            assert_eq!(app.overlay, before, "{picker}: 'q' after '{c}'");
            assert!(app.filter.ends_with('q'), "{picker}: {:?}", app.filter);
        }
    }
}

#[test]
fn typing_each_presets_name_or_id_filters_to_it() {
    let app = with_builtins(SMALL);
    assert!(app.presets.len() > 10, "the built-in presets");
    for (i, p) in app.presets.iter().enumerate() {
        for text in [&p.name, &p.id] {
            let mut app = with_builtins(SMALL);
            send(&mut app, [key('p')]);
            let fx = send(&mut app, typed(text));
            assert!(fx.is_empty(), "typing '{text}' did {fx:?}");
            assert_eq!(app.overlay, Some(Overlay::Presets), "typing '{text}'");
            assert!(!app.quit, "typing '{text}' quit");
            assert_eq!(&app.filter, text.trim_start());
            let kept = app.preset_rows();
            assert!(kept.contains(&i), "'{text}' keeps {}: {kept:?}", p.id);
            // The one typed is kept, and nothing that does not hold the words typed.
            for r in kept {
                let q = &app.presets[r];
                assert!(
                    drivescope::app::filter::keeps(text, &[&q.name, &q.id]),
                    "'{text}' kept {}",
                    q.id
                );
            }
        }
    }
    // As a person types them: each keeps its presets and starts none.
    for (word, id) in [
        ("quick", "quick-look"),
        ("thermal", "thermal-soak"),
        ("snia", "snia-iops"),
    ] {
        let mut app = with_builtins(SMALL);
        send(&mut app, [key('p')]);
        send(&mut app, typed(word));
        assert_eq!(app.filter, word);
        assert_eq!(app.overlay, Some(Overlay::Presets));
        let ids: Vec<&str> = app
            .preset_rows()
            .iter()
            .map(|&r| app.presets[r].id.as_str())
            .collect();
        assert!(ids.contains(&id), "'{word}' kept {ids:?}");
        assert!(
            ids.iter().all(|i| i.contains(word)),
            "'{word}' kept only what holds it: {ids:?}"
        );
        let s = screen(&app);
        assert!(s.contains(&format!("Presets: filter '{word}'")), "{s}");
    }
}

#[test]
fn the_pickers_commands_are_keys_that_type_nothing() {
    let mut app = idle(SMALL);
    send(&mut app, [key('p'), key('l'), key('o')]);
    let s = screen(&app);
    for hint in [
        "enter start",
        "up move",
        "ctrl-t target",
        "esc clear",
        "f1 help",
        "ctrl-c quit",
    ] {
        assert!(s.contains(hint), "the footer says '{hint}'\n{s}");
    }
    assert!(!s.contains("? / f1"), "? is text here\n{s}");
    send(&mut app, [code(KeyCode::Esc)]);
    assert!(screen(&app).contains("esc close"), "{}", screen(&app));
    send(&mut app, [ctrl('t')]);
    assert!(matches!(
        app.overlay,
        Some(Overlay::Targets { typing: None })
    ));
    send(&mut app, [code(KeyCode::F(1))]);
    assert!(matches!(app.overlay, Some(Overlay::Help { .. })));
    send(&mut app, [code(KeyCode::Esc), key('p'), key('j')]);
    assert_eq!(app.filter, "j", "j is text; the arrows move");
    send(&mut app, [code(KeyCode::Esc), code(KeyCode::Down)]);
    assert_eq!(
        app.selected_preset().map(|p| p.id.as_str()),
        Some("snia-iops")
    );
    assert_eq!(
        send(&mut app, [ctrl('c')]),
        vec![Effect::Quit],
        "idle: ctrl-c quits"
    );
    // On the main screen the letters are keys again.
    let mut app = idle(SMALL);
    send(&mut app, [key('p'), code(KeyCode::Esc)]);
    assert_eq!(app.overlay, None);
    assert_eq!(send(&mut app, [key('q')]), vec![Effect::Quit]);
}

/// A terminal too small draws no picker, only "q quits": q quits there.
#[test]
fn q_quits_a_terminal_too_small_for_the_picker() {
    let mut cfg = config((50, 12));
    cfg.open_presets = true;
    let mut app = drivescope::app::App::new(cfg);
    assert_eq!(app.overlay, Some(Overlay::Presets));
    assert!(screen(&app).contains("q quits"), "{}", screen(&app));
    assert_eq!(send(&mut app, [key('q')]), vec![Effect::Quit]);
}
