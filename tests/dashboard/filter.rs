//! Type-to-filter in the pickers (issue 29): letters keep the rows that hold them (name,
//! id or path, any case), the title says the filter and how many rows it kept, moves and
//! Enter go through the rows kept, Backspace takes a letter back and Esc clears the
//! filter before it closes the picker; the picker's own letters (q, t, j, k) keep their
//! keys until a filter is begun.

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
fn the_pickers_letters_keep_their_keys_until_a_filter_is_begun() {
    let mut app = idle(SMALL);
    send(&mut app, [key('p'), key('j')]);
    assert_eq!(app.filter, "", "j moves while nothing is typed");
    send(&mut app, typed("lo"));
    send(&mut app, [key('q'), key('t')]);
    assert_eq!(app.filter, "loqt", "inside a filter q and t are letters");
    assert_eq!(app.overlay, Some(Overlay::Presets));
    send(&mut app, [code(KeyCode::Esc)]);
    assert_eq!(send(&mut app, [key('q')]), vec![Effect::Quit]);
}
