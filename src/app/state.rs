//! The one state the dashboard draws from: lists to pick from, the run's progress, bounded
//! histories of intervals, telemetry and events, the open overlay, theme and keymap.

use std::path::PathBuf;

use super::datasheet::{self, Datasheet};
use super::history::{Ring, EVENT_HISTORY};
use super::keymap::Keymap;
use super::msg::RunState;
use super::overlay::{Overlay, Panel};
use super::slot::{DriveSetup, DriveSlot, DriveState};
use super::view::{DriveView, EventCategory, EventView, PresetEntry, TargetEntry};
use crate::theme::Theme;

/// How long a notice stays in the status bar, seconds.
pub const NOTICE_SECONDS: f64 = 6.0;

/// What the app starts from; the runtime fills it.
#[derive(Debug, Clone)]
pub struct AppConfig {
    pub presets: Vec<PresetEntry>,
    /// Id of the preset highlighted at start ("quick-look"); the first when absent.
    pub highlight_preset: Option<String>,
    pub targets: Vec<TargetEntry>,
    /// Index of the target chosen at start.
    pub target: usize,
    pub drive: Option<DriveView>,
    /// At least one theme; the first is the default.
    pub themes: Vec<Theme>,
    /// Name of the theme to start with.
    pub theme: Option<String>,
    pub keymap: Keymap,
    pub datasheets: Vec<Datasheet>,
    /// Problems met while loading configuration (bad theme or keys file), shown as
    /// events and in the status bar.
    pub load_errors: Vec<String>,
    /// Open the preset picker at start.
    pub open_presets: bool,
    /// Replaying a saved session: no runs start; the seek keys move through time.
    pub replay: bool,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The drives of a dashboard on several drives (none, or one, for the usual one).
    pub drives: Vec<DriveSetup>,
    /// The keys.yaml the keymap was read from (or would be), as the help names it.
    pub keys_file: Option<PathBuf>,
}

impl Default for AppConfig {
    fn default() -> Self {
        AppConfig {
            presets: Vec::new(),
            highlight_preset: None,
            targets: Vec::new(),
            target: 0,
            drive: None,
            themes: vec![Theme::fallback()],
            theme: None,
            keymap: Keymap::default(),
            datasheets: Vec::new(),
            load_errors: Vec::new(),
            open_presets: true,
            replay: false,
            size: (120, 40),
            drives: Vec::new(),
            keys_file: None,
        }
    }
}

/// The run under way (or the last one): what belongs to the whole run. Each drive's own
/// figures are in its [`DriveSlot`]'s [`DriveRun`](super::slot::DriveRun).
#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub state: RunState,
    pub preset_id: Option<String>,
    pub saved_to: Option<PathBuf>,
    pub error: Option<String>,
    /// A verified run's integrity (`--verify`); `None` for a run that does not verify.
    pub integrity: Option<super::IntegrityView>,
    /// The user's pauses: how long they held the run, so its clocks leave them out.
    pub pauses: PauseClock,
}

/// How long the user's pauses have held the run (the dashboard's clock, seconds): the
/// step and plan clocks, which the engine's intervals give, run on through a pause.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PauseClock {
    /// The pauses that ended.
    pub held_s: f64,
    /// When the pause going on began.
    pub since: Option<f64>,
}

impl PauseClock {
    pub fn pause(&mut self, now_s: f64) {
        self.since.get_or_insert(now_s);
    }

    pub fn resume(&mut self, now_s: f64) {
        if let Some(t) = self.since.take() {
            self.held_s += (now_s - t).max(0.0);
        }
    }

    /// Every pause so far, the one going on included, at `now_s`: the clocks stand still
    /// while paused (the engine's intervals run on) and do not jump on resume.
    pub fn held(&self, now_s: f64) -> f64 {
        self.held_s + self.since.map_or(0.0, |t| (now_s - t).max(0.0))
    }
}

/// The dashboard's whole state.
#[derive(Debug, Clone)]
pub struct App {
    pub presets: Vec<PresetEntry>,
    pub preset_sel: usize,
    pub targets: Vec<TargetEntry>,
    pub target_sel: usize,
    /// The target whose name the user typed to allow destroying its data.
    pub confirmed_target: Option<PathBuf>,
    pub datasheets: Vec<Datasheet>,
    /// The run's own state (each drive's figures are in its slot).
    pub run: RunView,
    pub events: Ring<EventView>,
    pub overlay: Option<Overlay>,
    pub tab: Panel,
    /// The panel of `tab` fills the screen (the zoom key; again, or Esc, goes back).
    pub zoomed: bool,
    /// What was typed to filter the open picker (cleared when it closes).
    pub filter: String,
    /// The throughput chart shows bandwidth (MB/s) instead of IOPS.
    pub chart_bandwidth: bool,
    pub themes: Vec<Theme>,
    pub theme_idx: usize,
    pub keymap: Keymap,
    /// The keys.yaml the keymap was read from (or would be).
    pub keys_file: Option<PathBuf>,
    /// Status-bar notice and when it expires (dashboard clock).
    pub notice: Option<(String, f64)>,
    /// Seconds since the dashboard started.
    pub now_s: f64,
    pub size: (u16, u16),
    /// Something changed since the last draw.
    pub dirty: bool,
    /// The app asked to quit.
    pub quit: bool,
    /// The signal (SIGTERM, SIGHUP, SIGINT) that made it quit, if one did.
    pub quit_signal: Option<i32>,
    /// Replaying a saved session (`drivescope open`).
    pub replay: bool,
    /// Each drive's identity, state, figures and telemetry: never empty (a dashboard on
    /// one drive has one slot).
    pub drives: Vec<DriveSlot>,
    /// The drives came from a targets file: they are shown as the drives table and a run
    /// starts on every one (a table may hold one drive).
    pub table: bool,
    /// The index in `drives` of the drive the panels show.
    pub picked: usize,
    /// The throughput, latency and thermal charts draw every drive.
    pub all_drives: bool,
    /// The start key asked for devices' names: the run starts once the last is typed
    /// (Esc forgets it).
    pub start_pending: bool,
    /// The notice says a skip was asked for: the next step's start clears it.
    pub skip_notice: bool,
}

impl App {
    /// Whether `a` does something here: a replay starts, stops and picks nothing (it
    /// only moves through time); a live dashboard has no time to move through. The keys
    /// refuse, and the footer leaves out, what is not available.
    pub fn available(&self, a: super::Action) -> bool {
        use super::Action::*;
        match a {
            Start | PauseResume | Stop | SkipStep | Snapshot | Targets | Presets | Note => {
                !self.replay
            }
            StopDrive => !self.replay && self.drives.len() > 1,
            AllDrives => self.drives.len() > 1,
            SeekBack | SeekForward | SeekStart | SeekEnd => self.replay,
            _ => true,
        }
    }

    /// The actions the help lists: every one of the key map (those of several drives say
    /// so in their description), so the help cannot miss a key.
    pub fn help_actions(&self) -> Vec<super::Action> {
        super::Action::ALL.to_vec()
    }

    /// The help window's height: its lines, two borders, two lines of footer and one
    /// spare, at most the screen's less a line above and below (the status line stays in
    /// view; the help scrolls).
    pub fn help_height(&self) -> u16 {
        let lines = u16::try_from(self.help_actions().len()).unwrap_or(u16::MAX);
        lines.saturating_add(5).min(self.size.1.saturating_sub(2))
    }

    /// Forgets the run, telemetry and events shown (a replay moving back in time).
    pub fn reset_run_views(&mut self) {
        self.run = RunView::default();
        self.events = Ring::new(EVENT_HISTORY);
        for d in &mut self.drives {
            d.reset();
            d.state = DriveState::Idle;
        }
        self.dirty = true;
    }

    pub fn new(cfg: AppConfig) -> App {
        let preset_sel = cfg
            .highlight_preset
            .as_ref()
            .and_then(|id| cfg.presets.iter().position(|p| &p.id == id))
            .unwrap_or(0);
        let mut themes = cfg.themes;
        if themes.is_empty() {
            themes.push(Theme::fallback());
        }
        let theme_idx = cfg
            .theme
            .as_ref()
            .and_then(|n| themes.iter().position(|t| &t.name == n))
            .unwrap_or(0);
        let mut app = App {
            preset_sel,
            target_sel: cfg.target.min(cfg.targets.len().saturating_sub(1)),
            presets: cfg.presets,
            targets: cfg.targets,
            confirmed_target: None,
            datasheets: cfg.datasheets,
            run: RunView::default(),
            events: Ring::new(EVENT_HISTORY),
            overlay: (cfg.open_presets && !cfg.replay).then_some(Overlay::Presets),
            tab: Panel::default(),
            zoomed: false,
            filter: String::new(),
            chart_bandwidth: false,
            themes,
            theme_idx,
            keymap: cfg.keymap,
            keys_file: cfg.keys_file,
            notice: None,
            now_s: 0.0,
            size: cfg.size,
            dirty: true,
            quit: false,
            quit_signal: None,
            replay: cfg.replay,
            drives: vec![DriveSlot::solo(cfg.drive)],
            table: false,
            picked: 0,
            all_drives: false,
            start_pending: false,
            skip_notice: false,
        };
        if !cfg.drives.is_empty() {
            app.drives = cfg.drives.into_iter().map(DriveSlot::new).collect();
            app.table = true;
            app.targets = app.drives.iter().map(|d| d.target.clone()).collect();
            app.target_sel = 0;
        }
        if let Some(name) = cfg.theme.as_ref().filter(|_| theme_idx == 0) {
            if app.themes[0].name != *name {
                app.load_error(format!("theme '{name}' not found; using the default"));
            }
        }
        for e in cfg.load_errors {
            app.load_error(e);
        }
        app
    }

    fn load_error(&mut self, text: String) {
        self.notice = Some((text.clone(), self.now_s + NOTICE_SECONDS));
        self.push_event(EventCategory::Error, text);
    }

    pub fn theme(&self) -> &Theme {
        self.themes
            .get(self.theme_idx)
            .or_else(|| self.themes.first())
            .unwrap_or_else(|| fallback_theme())
    }

    pub fn selected_preset(&self) -> Option<&PresetEntry> {
        self.presets.get(self.preset_sel)
    }

    /// The user typed the name of the device at `path` (or it needs none).
    pub fn is_confirmed(&self, path: &std::path::Path) -> bool {
        self.confirmed_target.as_deref() == Some(path)
            || self
                .table_drives()
                .iter()
                .any(|d| d.confirmed && d.target.path == path)
    }

    pub fn selected_target(&self) -> Option<&TargetEntry> {
        self.targets.get(self.target_sel)
    }

    /// The drive the panels show.
    pub fn picked_slot(&self) -> &DriveSlot {
        // `drives` is never empty and `picked` always one of its indexes; the fallback
        // only keeps this total.
        self.drives
            .get(self.picked)
            .or_else(|| self.drives.first())
            .unwrap_or_else(|| fallback_slot())
    }

    /// Drive `i`'s slot, the picked one's when there is no drive `i`.
    pub fn slot_mut(&mut self, i: usize) -> &mut DriveSlot {
        if self.drives.is_empty() {
            self.drives.push(DriveSlot::solo(None));
        }
        let last = self.drives.len() - 1;
        let i = if i <= last { i } else { self.picked.min(last) };
        &mut self.drives[i]
    }

    /// The slot of the drive the panels show.
    pub fn picked_slot_mut(&mut self) -> &mut DriveSlot {
        self.slot_mut(self.picked)
    }

    /// The drives of the drives table: every slot when there is a table, none otherwise.
    pub fn table_drives(&self) -> &[DriveSlot] {
        if self.table {
            &self.drives
        } else {
            &[]
        }
    }

    /// The datasheet row of the drive under test, if the model is known.
    pub fn datasheet(&self) -> Option<&Datasheet> {
        datasheet::find(&self.datasheets, self.picked_slot().drive.as_ref()?)
    }

    /// Adds an event at the picked drive's run time.
    pub fn push_event(&mut self, kind: EventCategory, text: String) {
        self.push_event_on(self.picked, kind, text);
    }

    /// Adds an event at drive `i`'s run time.
    pub fn push_event_on(&mut self, i: usize, kind: EventCategory, text: String) {
        let t_s = self
            .drives
            .get(i)
            .unwrap_or_else(|| self.picked_slot())
            .run
            .run_elapsed_s();
        self.add_event(EventView { t_s, kind, text });
    }

    /// Adds an event, in the order they came: on one drive, a clock that starts again (a
    /// fill before the first step, timed on its own) never shows an event as earlier than
    /// the one above it; several drives each keep their own clock, and their events stand
    /// in the order of those times.
    pub fn add_event(&mut self, mut e: EventView) {
        if let Some(last) = self.events.last().filter(|_| !self.table) {
            e.t_s = e.t_s.max(last.t_s);
        }
        self.events.push(e);
        self.dirty = true;
    }

    pub fn notify(&mut self, text: impl Into<String>) {
        self.skip_notice = false;
        self.notice = Some((text.into(), self.now_s + NOTICE_SECONDS));
        self.dirty = true;
    }

    /// The preset a run uses, by id, for display.
    pub fn preset_name(&self, id: &str) -> String {
        self.presets
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.name.clone())
            .unwrap_or_else(|| id.to_string())
    }
}

fn fallback_slot() -> &'static DriveSlot {
    static FALLBACK: std::sync::OnceLock<DriveSlot> = std::sync::OnceLock::new();
    FALLBACK.get_or_init(|| DriveSlot::solo(None))
}

fn fallback_theme() -> &'static Theme {
    static FALLBACK: std::sync::OnceLock<Theme> = std::sync::OnceLock::new();
    FALLBACK.get_or_init(Theme::fallback)
}
