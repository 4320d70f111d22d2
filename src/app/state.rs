//! The one state the dashboard draws from: lists to pick from, the run's progress, bounded
//! histories of intervals, telemetry and events, the open overlay, theme and keymap.

use std::path::PathBuf;

use super::datasheet::{self, Datasheet};
use super::drives::{DriveSlot, DriveState};
use super::history::{
    IntervalPoint, Ring, ThermalPoint, CURVE_HISTORY, EVENT_HISTORY, INTERVAL_HISTORY,
    TELEMETRY_HISTORY,
};
use super::keymap::Keymap;
use super::msg::RunState;
use super::overlay::{Overlay, Panel};
use super::view::{
    CurvePoint, DriveView, EventCategory, EventView, PresetEntry, SteadyView, StepInfo,
    TargetEntry, TelemetryView,
};
use crate::stats::IntervalReport;
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
    pub drives: Vec<super::drives::DriveSetup>,
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
        }
    }
}

/// The last telemetry figures and the samples' history.
#[derive(Debug, Clone)]
pub struct TelemetryState {
    pub history: Ring<ThermalPoint>,
    pub last: Option<TelemetryView>,
    /// Run times at which throttle transitions went up.
    pub throttle_marks: Vec<f64>,
    /// Reasons telemetry is missing, each once, in arrival order.
    pub unavailable: Vec<String>,
}

impl TelemetryState {
    pub fn new() -> Self {
        TelemetryState {
            history: Ring::new(TELEMETRY_HISTORY),
            last: None,
            throttle_marks: Vec::new(),
            unavailable: Vec::new(),
        }
    }
}

impl Default for TelemetryState {
    fn default() -> Self {
        Self::new()
    }
}

/// The run under way (or the last one).
#[derive(Debug, Clone)]
pub struct RunView {
    pub state: RunState,
    pub preset_id: Option<String>,
    pub target: Option<PathBuf>,
    pub step: Option<StepInfo>,
    pub steady: SteadyView,
    pub intervals: Ring<IntervalPoint>,
    /// The latest interval (histograms dropped), for the current figures and tables.
    pub last: Option<IntervalReport>,
    /// Finished steps of the run: the curve.
    pub curve: Ring<CurvePoint>,
    pub errors: u64,
    pub saved_to: Option<PathBuf>,
    pub error: Option<String>,
    /// The run's thermal events (run clock), for a soak's live figures.
    pub thermal: Vec<(f64, crate::thermal::ThermalEvent)>,
    /// A verified run's integrity (`--verify`); `None` for a run that does not verify.
    pub integrity: Option<super::IntegrityView>,
}

impl Default for RunView {
    fn default() -> Self {
        RunView {
            state: RunState::Idle,
            preset_id: None,
            target: None,
            step: None,
            steady: SteadyView::NotApplicable,
            intervals: Ring::new(INTERVAL_HISTORY),
            last: None,
            curve: Ring::new(CURVE_HISTORY),
            errors: 0,
            saved_to: None,
            error: None,
            thermal: Vec::new(),
            integrity: None,
        }
    }
}

/// The most thermal events a run keeps for its figures (a soak has a handful).
const THERMAL_EVENTS: usize = 256;

impl RunView {
    /// Keeps a thermal event, the first ones when there are too many (the onset matters).
    pub fn push_thermal(&mut self, t_s: f64, e: crate::thermal::ThermalEvent) {
        if self.thermal.len() < THERMAL_EVENTS {
            self.thermal.push((t_s, e));
        }
    }

    /// A soak's figures so far: from the thermal events, the intervals and the peak of
    /// the temperatures shown; `None` before any thermal event.
    pub fn soak(&self, temps: &[(f64, f64)]) -> Option<crate::thermal::SoakSummary> {
        if self.thermal.is_empty() {
            return None;
        }
        let loads: Vec<crate::thermal::Load> = self
            .intervals
            .iter()
            .map(|p| {
                let iops = p.read_iops + p.write_iops;
                crate::thermal::Load {
                    t: p.t_s,
                    dt: p.dt_s,
                    iops,
                    mbps: (p.read_bw + p.write_bw) / 1e6,
                    loaded: !p.ramp && iops > 0.0,
                }
            })
            .collect();
        let events: Vec<_> = self.thermal.iter().map(|(t, e)| (*t, e)).collect();
        Some(crate::thermal::SoakSummary::build(temps, &loads, &events))
    }

    /// Seconds of the current step done, from the engine's own clock.
    pub fn step_elapsed_s(&self) -> f64 {
        self.last.as_ref().map(|r| r.end_s).unwrap_or(0.0)
    }

    /// Seconds since the run started, from the engine's clock.
    pub fn run_elapsed_s(&self) -> f64 {
        self.step.as_ref().map(|s| s.started_s).unwrap_or(0.0) + self.step_elapsed_s()
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
    pub drive: Option<DriveView>,
    pub datasheets: Vec<Datasheet>,
    pub run: RunView,
    pub telemetry: TelemetryState,
    pub events: Ring<EventView>,
    pub overlay: Option<Overlay>,
    pub tab: Panel,
    /// The throughput chart shows bandwidth (MB/s) instead of IOPS.
    pub chart_bandwidth: bool,
    pub themes: Vec<Theme>,
    pub theme_idx: usize,
    pub keymap: Keymap,
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
    /// Several drives: each one's state and figures (the picked one's are in `run`,
    /// `telemetry` and `drive`); empty for a dashboard on one drive.
    pub drives: Vec<DriveSlot>,
    /// The drive the panels show.
    pub picked: usize,
    /// The throughput, latency and thermal charts draw every drive.
    pub all_drives: bool,
}

impl App {
    /// Whether `a` does something here: a replay starts, stops and picks nothing (it
    /// only moves through time); a live dashboard has no time to move through. The keys
    /// refuse, and the footer leaves out, what is not available.
    pub fn available(&self, a: super::Action) -> bool {
        use super::Action::*;
        match a {
            Start | PauseResume | Stop | SkipStep | Snapshot | Targets | Presets => !self.replay,
            StopDrive => !self.replay && self.drives.len() > 1,
            AllDrives => self.drives.len() > 1,
            SeekBack | SeekForward | SeekStart | SeekEnd => self.replay,
            _ => true,
        }
    }

    /// The actions the help lists: those of several drives only when there are several.
    pub fn help_actions(&self) -> Vec<super::Action> {
        use super::Action::*;
        super::Action::ALL
            .iter()
            .copied()
            .filter(|a| self.drives.len() > 1 || !matches!(a, StopDrive | AllDrives))
            .collect()
    }

    /// Forgets the run, telemetry and events shown (a replay moving back in time).
    pub fn reset_run_views(&mut self) {
        self.run = RunView::default();
        self.telemetry = TelemetryState::new();
        self.events = Ring::new(EVENT_HISTORY);
        for d in &mut self.drives {
            d.run = RunView::default();
            d.telemetry = TelemetryState::new();
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
            drive: cfg.drive,
            datasheets: cfg.datasheets,
            run: RunView::default(),
            telemetry: TelemetryState::new(),
            events: Ring::new(EVENT_HISTORY),
            overlay: (cfg.open_presets && !cfg.replay).then_some(Overlay::Presets),
            tab: Panel::default(),
            chart_bandwidth: false,
            themes,
            theme_idx,
            keymap: cfg.keymap,
            notice: None,
            now_s: 0.0,
            size: cfg.size,
            dirty: true,
            quit: false,
            quit_signal: None,
            replay: cfg.replay,
            drives: Vec::new(),
            picked: 0,
            all_drives: false,
        };
        if !cfg.drives.is_empty() {
            app.drives = cfg.drives.into_iter().map(DriveSlot::new).collect();
            app.targets = app.drives.iter().map(|d| d.target.clone()).collect();
            app.target_sel = 0;
            app.drive = app.drives[0].drive.take();
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
                .drives
                .iter()
                .any(|d| d.confirmed && d.target.path == path)
    }

    pub fn selected_target(&self) -> Option<&TargetEntry> {
        self.targets.get(self.target_sel)
    }

    /// The datasheet row of the drive under test, if the model is known.
    pub fn datasheet(&self) -> Option<&Datasheet> {
        datasheet::find(&self.datasheets, self.drive.as_ref()?)
    }

    pub fn push_event(&mut self, kind: EventCategory, text: String) {
        let t_s = self.run.run_elapsed_s();
        self.events.push(EventView { t_s, kind, text });
        self.dirty = true;
    }

    pub fn notify(&mut self, text: impl Into<String>) {
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

fn fallback_theme() -> &'static Theme {
    static FALLBACK: std::sync::OnceLock<Theme> = std::sync::OnceLock::new();
    FALLBACK.get_or_init(Theme::fallback)
}
