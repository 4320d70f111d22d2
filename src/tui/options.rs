//! What the dashboard is started with ([`DashboardOptions`]), and turning it into the
//! app's starting state: themes and keys loaded from the config directory (with their
//! errors kept for display), the datasheet table, the lists the runtime gathered.

use std::path::PathBuf;

use crate::app::datasheet;
use crate::app::drives::DriveSetup;
use crate::app::keymap::{config_dir, Keymap};
use crate::app::{AppConfig, DriveView, PresetEntry, TargetEntry};
use crate::theme;

/// Everything the runtime gives the dashboard at start.
#[derive(Debug, Clone, Default)]
pub struct DashboardOptions {
    pub presets: Vec<PresetEntry>,
    /// Id of the preset highlighted at start (`"quick-look"`).
    pub highlight_preset: Option<String>,
    pub targets: Vec<TargetEntry>,
    /// Index into `targets` of the target chosen at start.
    pub target: usize,
    pub drive: Option<DriveView>,
    /// Theme name to start with (the default theme when absent or unknown).
    pub theme: Option<String>,
    /// Where keys.yaml and themes/ are read from; `~/.config/drivescope` when absent.
    pub config_dir: Option<PathBuf>,
    /// No colour (`--color never`, `NO_COLOR`): the monochrome theme alone, and crossterm
    /// told to write no colour.
    pub monochrome: bool,
    /// Capture the mouse (wheel scrolls lists and tabs, a click picks a tab).
    pub mouse: bool,
    /// Replaying a saved session (`drivescope open`).
    pub replay: bool,
    /// Several drives (`--target` repeated, `--targets FILE`, or a session of several).
    pub drives: Vec<DriveSetup>,
}

impl DashboardOptions {
    /// The app's starting configuration for a terminal of `size`.
    pub fn app_config(&self, size: (u16, u16)) -> AppConfig {
        let dir = self.config_dir.clone().or_else(config_dir);
        let mut load_errors = Vec::new();
        let (mut themes, theme_errors) =
            theme::load_all(dir.as_ref().map(|d| d.join("themes")).as_deref());
        if self.monochrome {
            themes = vec![theme::Theme::monochrome()];
        }
        load_errors.extend(
            theme_errors
                .into_iter()
                .map(|e| format!("theme not loaded: {e}")),
        );
        let keymap = match &dir {
            Some(d) => {
                let (k, e) = Keymap::load(&d.join("keys.yaml"));
                if let Some(e) = e {
                    load_errors.push(format!("default keys in use: {e}"));
                }
                k
            }
            None => Keymap::default(),
        };
        // The theme chosen in an earlier dashboard, unless --theme names one.
        let mut theme = self.theme.clone();
        if let (None, Some(d)) = (&theme, &dir) {
            match super::chosen_theme::load(d) {
                Ok(saved) => theme = saved,
                Err(e) => load_errors.push(format!("the theme chosen last is not used: {e}")),
            }
        }
        let datasheets = match datasheet::builtin() {
            Ok(d) => d,
            Err(e) => {
                load_errors.push(format!("assets/datasheets.yaml: {e}"));
                Vec::new()
            }
        };
        AppConfig {
            presets: self.presets.clone(),
            highlight_preset: self.highlight_preset.clone(),
            targets: self.targets.clone(),
            target: self.target,
            drive: self.drive.clone(),
            themes,
            theme: theme.filter(|_| !self.monochrome),
            keymap,
            datasheets,
            load_errors,
            open_presets: !self.replay,
            replay: self.replay,
            size,
            drives: self.drives.clone(),
            keys_file: dir.as_ref().map(|d| d.join("keys.yaml")),
        }
    }
}
