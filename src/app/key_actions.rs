//! Keys and mouse: what each does on the main screen and in each overlay (pickers, help,
//! confirmations, the typed confirmation of a destructive target).

use ratatui::crossterm::event::{KeyEvent, MouseEvent, MouseEventKind};

use super::drives::{self, DriveState};
use super::filter;
use super::keymap::Action;
use super::msg::{Effect, RunState, Seek};
use super::overlay::{Confirm, Overlay};
use super::slot::DriveRun;
use super::state::{App, RunView};
use super::view::EventCategory;

pub(super) fn key(app: &mut App, k: &KeyEvent) -> Vec<Effect> {
    let before = app.overlay.as_ref().map(std::mem::discriminant);
    let fx = overlay_key(app, k);
    // A picker's filter lasts as long as the picker.
    if app.overlay.as_ref().map(std::mem::discriminant) != before {
        app.filter.clear();
    }
    fx
}

fn overlay_key(app: &mut App, k: &KeyEvent) -> Vec<Effect> {
    // A terminal too small draws no picker, only "q quits": its letters are not filter text.
    let picker = matches!(
        app.overlay,
        Some(Overlay::Presets | Overlay::Targets { typing: None } | Overlay::Themes { .. })
    );
    if picker && super::layout::mode(app.size.0, app.size.1) == super::layout::Mode::TooSmall {
        return main_key(app, k);
    }
    match app.overlay.clone() {
        Some(Overlay::Help { scroll }) => help_key(app, k, scroll),
        Some(Overlay::Presets) => presets_key(app, k),
        Some(Overlay::Targets { typing }) => targets_key(app, k, typing),
        Some(Overlay::Themes { original }) => themes_key(app, k, original),
        Some(Overlay::Confirm(c)) => confirm_key(app, k, c),
        Some(Overlay::Note { text }) => super::note::key(app, k, text),
        None => main_key(app, k),
    }
}

fn main_key(app: &mut App, k: &KeyEvent) -> Vec<Effect> {
    use Action::*;
    let Some(action) = app.keymap.first_of(Action::MAIN, k) else {
        // Esc leaves a zoomed panel as the zoom key does.
        if app.zoomed && app.keymap.is(Back, k) {
            app.zoomed = false;
        }
        return Vec::new();
    };
    if app.replay && !app.available(action) {
        app.notify("a replay shows a saved session: [ and ] move through time, q quits");
        return Vec::new();
    }
    match action {
        SeekBack | SeekForward | SeekStart | SeekEnd => seek_key(app, action),
        Interrupt | Quit => {
            // A replay has no run to stop: mid-seek its panels replay a running state, and
            // the key still quits.
            if app.replay || !app.run.state.is_active() {
                return quit_now(app);
            }
            let ask = if action == Quit {
                Confirm::Quit
            } else {
                Confirm::StopRun
            };
            app.overlay = Some(Overlay::Confirm(ask));
            Vec::new()
        }
        Start => start(app),
        PauseResume | Stop | SkipStep | Snapshot => run_key(app, action),
        StopDrive => {
            stop_drive_key(app);
            Vec::new()
        }
        Note => {
            super::note::open(app);
            Vec::new()
        }
        _ => {
            view_key(app, action, k);
            Vec::new()
        }
    }
}

/// The seek keys: moving through a replay's time.
fn seek_key(app: &mut App, action: Action) -> Vec<Effect> {
    if !app.replay {
        app.notify("moving through time is for replays (drivescope open SESSION)");
        return Vec::new();
    }
    let s = match action {
        Action::SeekBack => Seek::Back,
        Action::SeekForward => Seek::Forward,
        Action::SeekStart => Seek::Start,
        _ => Seek::End,
    };
    vec![Effect::Seek(s)]
}

/// The keys of a run going: pause or resume, stop, skip a step, a snapshot.
fn run_key(app: &mut App, action: Action) -> Vec<Effect> {
    use Action::*;
    match action {
        PauseResume => match app.run.state {
            RunState::Running => {
                app.run.state = RunState::Paused;
                app.run.pauses.pause(app.now_s);
                app.push_event(EventCategory::Info, "paused".into());
                vec![Effect::Pause]
            }
            RunState::Paused => {
                app.run.state = RunState::Running;
                app.run.pauses.resume(app.now_s);
                app.push_event(EventCategory::Info, "resumed".into());
                vec![Effect::Resume]
            }
            _ => {
                app.notify("no run to pause");
                Vec::new()
            }
        },
        Stop => {
            if app.run.state.is_active() && app.run.state != RunState::Stopping {
                app.overlay = Some(Overlay::Confirm(Confirm::StopRun));
            } else {
                app.notify("no run to stop");
            }
            Vec::new()
        }
        SkipStep => {
            if matches!(app.run.state, RunState::Running | RunState::Paused) {
                app.notify("skipping to the next step");
                app.skip_notice = true;
                vec![Effect::SkipStep]
            } else {
                app.notify("no run: nothing to skip");
                Vec::new()
            }
        }
        Snapshot => {
            if app.run.state == RunState::Idle {
                app.notify("nothing to save yet: start a run first");
                Vec::new()
            } else {
                app.notify("saving a snapshot");
                vec![Effect::Snapshot]
            }
        }
        _ => Vec::new(),
    }
}

/// The stop key of one drive of several: asks first.
fn stop_drive_key(app: &mut App) {
    match app.table_drives().get(app.picked) {
        Some(d) if matches!(d.state, DriveState::Starting | DriveState::Running) => {
            app.overlay = Some(Overlay::Confirm(Confirm::StopDrive(app.picked)));
        }
        Some(d) => {
            let label = d.label.clone();
            app.notify(format!("{label} is not running: nothing to stop"));
        }
        None => app.notify("one drive: the stop key stops the run"),
    }
}

/// The keys that change what the screen shows: windows, panels, zoom, units, the drive.
fn view_key(app: &mut App, action: Action, k: &KeyEvent) {
    use Action::*;
    match action {
        Presets => app.overlay = Some(Overlay::Presets),
        Targets => app.overlay = Some(Overlay::Targets { typing: None }),
        Themes => {
            app.overlay = Some(Overlay::Themes {
                original: app.theme_idx,
            })
        }
        Help => app.overlay = Some(Overlay::Help { scroll: 0 }),
        Units => app.chart_bandwidth = !app.chart_bandwidth,
        Zoom => app.zoomed = !app.zoomed,
        NextTab => app.tab = app.tab.next(),
        PrevTab => app.tab = app.tab.prev(),
        ShowTab => {
            if let Some(p) = app
                .keymap
                .which(ShowTab, k)
                .and_then(|i| super::overlay::Panel::ALL.get(i))
            {
                app.tab = *p;
            }
        }
        Up | Down => drives::pick_step(app, action == Down),
        AllDrives => {
            if drives::many(app) {
                app.all_drives = !app.all_drives;
            } else {
                app.notify("one drive: its charts are all there is");
            }
        }
        _ => {}
    }
}

fn quit_now(app: &mut App) -> Vec<Effect> {
    app.quit = true;
    vec![Effect::Quit]
}

/// Starts the highlighted preset on the chosen target, or says why not.
fn start(app: &mut App) -> Vec<Effect> {
    if app.run.state.is_active() {
        app.notify("a run is going: stop it first");
        return Vec::new();
    }
    let Some(preset) = app.selected_preset().cloned() else {
        app.notify("no presets to start");
        return Vec::new();
    };
    if drives::table(app) {
        if preset.fio_job.is_some() {
            app.notify(
                "an fio job file names its own targets: run it without a drives table \
                 (--target, or no target)",
            );
            return Vec::new();
        }
        return start_drives(app, preset);
    }
    let Some(target) = app.selected_target().cloned() else {
        app.notify("no target: choose one with the targets key");
        return Vec::new();
    };
    let destroy_data = if target.needs_typed_confirmation() && preset.writes {
        if app.confirmed_target.as_ref() != Some(&target.path) {
            app.start_pending = true;
            app.overlay = Some(Overlay::Targets {
                typing: Some(String::new()),
            });
            app.notify(format!(
                "{} is a device: type its name to allow writing to it",
                target.path.display()
            ));
            return Vec::new();
        }
        Some(target.path.clone())
    } else {
        None
    };
    starting(app, &preset.id);
    let slot = app.picked_slot_mut();
    slot.run = DriveRun {
        target: Some(target.path.clone()),
        ..DriveRun::default()
    };
    slot.telemetry.history.clear();
    slot.telemetry.throttle_marks.clear();
    slot.telemetry.last = None;
    app.notify(format!("starting {}", preset.name));
    match preset.fio_job {
        Some(file) => vec![Effect::StartFioJob {
            preset_id: preset.id,
            file,
            destroy_data,
        }],
        None => vec![Effect::StartRun {
            preset_id: preset.id,
            target: target.path,
            destroy_data,
        }],
    }
}

/// The windows closed and the run starting with preset `id`.
fn starting(app: &mut App, id: &str) {
    app.overlay = None;
    app.start_pending = false;
    app.run = RunView {
        state: RunState::Starting,
        preset_id: Some(id.to_string()),
        ..RunView::default()
    };
}

/// Starts the highlighted preset on every drive, once each device's name was typed (one
/// device after the other), or asks for the next name.
fn start_drives(app: &mut App, preset: super::PresetEntry) -> Vec<Effect> {
    if let Some(i) = drives::next_unconfirmed(app).filter(|_| preset.writes) {
        app.start_pending = true;
        ask_name(app, i);
        return Vec::new();
    }
    starting(app, &preset.id);
    drives::starting(app);
    app.notify(format!(
        "starting {} on {}",
        preset.name,
        drives::count(app.drives.len()).trim_end()
    ));
    vec![Effect::StartDrives {
        preset_id: preset.id,
        destroy_data: drives::destroy_data(app),
    }]
}

/// The header and telemetry follow a target chosen between runs (one drive: a drives
/// table watches its own drives): what was shown of the last one is forgotten.
fn watch(app: &mut App, path: &std::path::Path) -> Vec<Effect> {
    if drives::table(app) || app.run.state.is_active() {
        return Vec::new();
    }
    let slot = app.picked_slot_mut();
    if slot.run.target.as_deref() == Some(path) {
        return Vec::new();
    }
    slot.drive = None;
    slot.telemetry.last = None;
    slot.telemetry.history.clear();
    app.dirty = true;
    vec![Effect::WatchTarget(path.to_path_buf())]
}

/// Opens the typed confirmation of drive `i`'s device.
fn ask_name(app: &mut App, i: usize) {
    app.target_sel = i;
    app.overlay = Some(Overlay::Targets {
        typing: Some(String::new()),
    });
    let left = app
        .table_drives()
        .iter()
        .filter(|d| d.target.needs_typed_confirmation() && !d.confirmed)
        .count();
    if let Some(d) = app.table_drives().get(i) {
        let path = d.target.path.display().to_string();
        app.notify(format!(
            "{path} is a device: type its name to allow writing to it ({left} to confirm)"
        ));
    }
}

fn step(sel: &mut usize, len: usize, down: bool) {
    if len == 0 {
        *sel = 0;
    } else if down {
        *sel = (*sel + 1) % len;
    } else {
        *sel = (*sel + len - 1) % len;
    }
}

/// Entries a page key moves by in a list or the help.
pub const PAGE: usize = 10;

/// Moves a list's selection by a list key (up and down wrap around; a page, the first and
/// the last stop at the ends); false for a key that is not one of them.
fn list_move(sel: &mut usize, len: usize, a: Action) -> bool {
    let last = len.saturating_sub(1);
    match a {
        Action::Up => step(sel, len, false),
        Action::Down => step(sel, len, true),
        Action::PageUp => *sel = sel.saturating_sub(PAGE),
        Action::PageDown => *sel = (*sel + PAGE).min(last),
        Action::First => *sel = 0,
        Action::Last => *sel = last,
        _ => return false,
    }
    true
}

/// Moves `sel` by a list key among the rows a filter kept (`rows`, indexes into the
/// list); false for a key that is not one of them.
fn move_in(sel: &mut usize, rows: &[usize], a: Action) -> bool {
    let mut at = rows.iter().position(|r| r == sel).unwrap_or(0);
    let moved = list_move(&mut at, rows.len(), a);
    if let Some(&r) = rows.get(at) {
        *sel = r;
    }
    moved
}

/// A key that edits the filter (every printable key does) or moves in a picker's list (its
/// `rows`, its selection `sel`), handled: the selection kept on a row the filter keeps.
fn filtered_or_moved(
    app: &mut App,
    k: &KeyEvent,
    rows: fn(&App) -> Vec<usize>,
    sel: fn(&mut App) -> &mut usize,
) -> bool {
    if filter::edit(app, k) == filter::Edit::Changed {
        let kept = rows(app);
        filter::settle(sel(app), &kept);
        app.dirty = true;
        return true;
    }
    let Some(m) = app.keymap.first_command(&MOVES, k) else {
        return false;
    };
    let kept = rows(app);
    move_in(sel(app), &kept, m);
    true
}

/// The keys that move in a list.
const MOVES: [Action; 6] = [
    Action::Up,
    Action::Down,
    Action::PageUp,
    Action::PageDown,
    Action::First,
    Action::Last,
];

fn help_key(app: &mut App, k: &KeyEvent, scroll: u16) -> Vec<Effect> {
    use Action::*;
    let lines = app.help_actions().len();
    // The first line of the last page (the help's window less two borders and two lines
    // of footer), where scrolling stops.
    let shown = usize::from(app.help_height()).saturating_sub(4).max(1);
    let top = lines.saturating_sub(shown);
    if let Some(m) = app.keymap.first_of(&MOVES, k) {
        {
            let mut at = scroll as usize;
            // Up and down stop at the ends here: the help is read, not picked from.
            match m {
                Up => at = at.saturating_sub(1),
                Down => at = (at + 1).min(top),
                other => {
                    list_move(&mut at, top + 1, other);
                }
            }
            app.overlay = Some(Overlay::Help {
                scroll: u16::try_from(at).unwrap_or(u16::MAX),
            });
            return Vec::new();
        }
    }
    match app.keymap.first_of(&[Back, Help, Quit, Interrupt], k) {
        Some(Interrupt) => {
            app.overlay = None;
            return main_key(app, k);
        }
        Some(_) => app.overlay = None,
        None => {}
    }
    Vec::new()
}

fn presets_key(app: &mut App, k: &KeyEvent) -> Vec<Effect> {
    use Action::*;
    if filtered_or_moved(app, k, App::preset_rows, |a| &mut a.preset_sel) {
        return Vec::new();
    }
    match app
        .keymap
        .first_command(&[Select, Back, Targets, Help, Quit, Interrupt], k)
    {
        Some(Select) if app.preset_rows().is_empty() => {
            app.notify(format!("no preset matches '{}'", app.filter));
            Vec::new()
        }
        Some(Select) => start(app),
        Some(Back) => {
            app.overlay = None;
            Vec::new()
        }
        Some(Targets) => {
            app.overlay = Some(Overlay::Targets { typing: None });
            Vec::new()
        }
        Some(Help) => {
            app.overlay = Some(Overlay::Help { scroll: 0 });
            Vec::new()
        }
        Some(Quit | Interrupt) => {
            app.overlay = None;
            main_key(app, k)
        }
        _ => Vec::new(),
    }
}

fn targets_key(app: &mut App, k: &KeyEvent, typing: Option<String>) -> Vec<Effect> {
    use Action::*;
    if let Some(mut typed) = typing {
        if app.keymap.is(Interrupt, k) {
            app.overlay = None;
            app.start_pending = false;
            return main_key(app, k);
        }
        if app.keymap.is_command(Back, k) {
            app.start_pending = false;
            app.overlay = Some(Overlay::Targets { typing: None });
        } else if app.keymap.is_command(Erase, k) {
            typed.pop();
            app.overlay = Some(Overlay::Targets {
                typing: Some(typed),
            });
        } else if app.keymap.is_command(Select, k) {
            let Some(t) = app.selected_target().cloned() else {
                app.overlay = None;
                return Vec::new();
            };
            let typed = typed.trim();
            if typed == t.confirm_name() || typed == t.path.display().to_string() {
                if drives::table(app) {
                    if let Some(d) = app.drives.get_mut(app.target_sel) {
                        d.confirmed = true;
                    }
                    if let Some(next) = drives::next_unconfirmed(app) {
                        ask_name(app, next);
                        return Vec::new();
                    }
                } else {
                    app.confirmed_target = Some(t.path.clone());
                }
                let mut fx = watch(app, &t.path);
                app.notify(format!(
                    "{}: confirmed; a write test will destroy its data",
                    t.path.display()
                ));
                // The start key asked for the names: every one is typed, it starts.
                if app.start_pending {
                    fx.extend(start(app));
                    return fx;
                }
                app.overlay = Some(Overlay::Presets);
                return fx;
            } else {
                app.overlay = Some(Overlay::Targets {
                    typing: Some(String::new()),
                });
                app.notify(format!(
                    "'{typed}' is not '{}': not confirmed",
                    t.confirm_name()
                ));
            }
        } else if let Some(c) = filter::typed(k) {
            if typed.chars().count() < 256 {
                typed.push(c);
            }
            app.overlay = Some(Overlay::Targets {
                typing: Some(typed),
            });
        }
        return Vec::new();
    }
    if filtered_or_moved(app, k, App::target_rows, |a| &mut a.target_sel) {
        return Vec::new();
    }
    match app
        .keymap
        .first_command(&[Select, Back, Help, Quit, Interrupt], k)
    {
        Some(Select) if app.target_rows().is_empty() => {
            app.notify(format!("no target matches '{}'", app.filter));
        }
        Some(Select) => {
            let Some(t) = app.selected_target().cloned() else {
                app.overlay = None;
                return Vec::new();
            };
            if t.needs_typed_confirmation() && !app.is_confirmed(&t.path) {
                app.overlay = Some(Overlay::Targets {
                    typing: Some(String::new()),
                });
            } else {
                if let Some(reason) = &t.safety {
                    app.notify(format!(
                        "{}: writes will be refused ({reason}); read-only presets can run",
                        t.path.display()
                    ));
                } else {
                    app.notify(format!("target: {}", t.path.display()));
                }
                app.overlay = Some(Overlay::Presets);
                return watch(app, &t.path);
            }
        }
        Some(Back) => app.overlay = None,
        Some(Help) => app.overlay = Some(Overlay::Help { scroll: 0 }),
        Some(Quit | Interrupt) => {
            app.overlay = None;
            return main_key(app, k);
        }
        _ => {}
    }
    Vec::new()
}

fn themes_key(app: &mut App, k: &KeyEvent, original: usize) -> Vec<Effect> {
    use Action::*;
    if filtered_or_moved(app, k, App::theme_rows, |a| &mut a.theme_idx) {
        return Vec::new();
    }
    match app
        .keymap
        .first_command(&[Select, Back, Themes, Interrupt], k)
    {
        Some(Interrupt) => {
            app.theme_idx = original;
            app.overlay = None;
            return main_key(app, k);
        }
        Some(Select) => {
            app.overlay = None;
            return vec![Effect::SetTheme(app.theme().name.clone())];
        }
        Some(Back) => {
            app.theme_idx = original;
            app.overlay = None;
        }
        Some(Themes) => {
            let rows = app.theme_rows();
            move_in(&mut app.theme_idx, &rows, Down);
        }
        _ => {}
    }
    Vec::new()
}

fn confirm_key(app: &mut App, k: &KeyEvent, c: Confirm) -> Vec<Effect> {
    use Action::*;
    // A second Ctrl-C while asked whether to stop means yes.
    let yes = app.keymap.is(Yes, k)
        || app.keymap.is(Interrupt, k)
        || (c == Confirm::Quit && app.keymap.is(Quit, k));
    if let (true, Confirm::StopDrive(i)) = (yes, c) {
        app.overlay = None;
        return match app.drives.get_mut(i) {
            Some(d) if d.state.is_active() && d.state != DriveState::Stopping => {
                d.state = DriveState::Stopping;
                let text = format!("[{}] stop requested", d.label);
                app.push_event(EventCategory::Info, text);
                vec![Effect::StopDrive(i)]
            }
            _ => Vec::new(),
        };
    }
    if yes {
        app.overlay = None;
        let mut fx = Vec::new();
        if app.run.state.is_active() && app.run.state != RunState::Stopping {
            app.run.state = RunState::Stopping;
            for d in app.drives.iter_mut().filter(|d| d.state.is_active()) {
                d.state = DriveState::Stopping;
            }
            app.push_event(EventCategory::Info, "stop requested".into());
            fx.push(Effect::Stop);
        }
        if c == Confirm::Quit {
            app.quit = true;
            fx.push(Effect::Quit);
        }
        return fx;
    }
    if app.keymap.is(No, k) || app.keymap.is(Back, k) {
        app.overlay = None;
    }
    Vec::new()
}

pub(super) fn mouse(app: &mut App, m: &MouseEvent) -> Vec<Effect> {
    let down = match m.kind {
        MouseEventKind::ScrollDown => true,
        MouseEventKind::ScrollUp => false,
        MouseEventKind::Down(_) if app.zoomed => return Vec::new(),
        MouseEventKind::Down(_) => {
            if let Some(p) =
                super::layout::tab_at(app.size, app.table_drives().len(), m.column, m.row)
            {
                if app.overlay.is_none() {
                    app.tab = p;
                    app.dirty = true;
                }
            }
            return Vec::new();
        }
        _ => return Vec::new(),
    };
    let wheel = if down { Action::Down } else { Action::Up };
    match app.overlay {
        Some(Overlay::Presets) => {
            let rows = app.preset_rows();
            move_in(&mut app.preset_sel, &rows, wheel);
        }
        Some(Overlay::Targets { typing: None }) => {
            let rows = app.target_rows();
            move_in(&mut app.target_sel, &rows, wheel);
        }
        None => {
            app.tab = if down { app.tab.next() } else { app.tab.prev() };
        }
        _ => return Vec::new(),
    }
    app.dirty = true;
    Vec::new()
}
