//! The dashboard's runtime (`drivescope` with no subcommand): wires the UI
//! ([`run_dashboard`]) to the rest: the preset library and target list it offers, the
//! effects it asks for, carried out through the run pipeline on threads of their own
//! ([`runs`]), and a telemetry thread that keeps the drive's temperature, power and kernel
//! counters flowing, run or no run. `drivescope open` replays a session in the same UI
//! ([`replay`]).

mod method;
pub mod replay;
mod runs;
mod sink;
mod telemetry;
pub mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use crate::app::drives::DriveSetup;
use crate::app::TargetKind;
use crate::run::{TargetChoice, Where};
use crate::test_target;
use crate::tui::{run_dashboard, DashboardError, DashboardOptions, Exit};
use runs::spawn_effects;
use telemetry::{spawn_telemetry, TelemetryCmd};
use views::{device_entries, drive_view, file_entry, preset_entries};

/// What the dashboard opens with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The files or block devices to open on instead of the built-in test file: one, or
    /// several (a drives table; a run goes on every one at once).
    pub targets: Vec<TargetChoice>,
    /// The targets came from a targets file: the drives table even for one entry (its
    /// label, region and confirmation are the file's).
    pub targets_file: bool,
    /// The preset highlighted in the picker.
    pub preset: Option<String>,
    pub theme: Option<String>,
    pub mouse: bool,
    /// Colour on the terminal (`--color`, `NO_COLOR`); without it, the monochrome theme.
    pub colour: bool,
    /// Multiplies every duration of the presets.
    pub time_scale: f64,
    /// What is tested, in the user's words (`--note`), for every run's session.
    pub note: Option<String>,
    /// `--metrics`: every run of the dashboard also feeds this endpoint.
    pub metrics: Option<crate::metrics::MetricsServer>,
}

/// Keeps SIGHUP, SIGTERM and SIGINT from killing the process outright while the
/// dashboard shuts down: the dashboard turns the first into a clean stop, and a second one
/// (a closing terminal sends more than one) must not cut the final session save short.
pub fn hold_signals_for_shutdown() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGHUP, SIGTERM, SIGINT] {
        let _ = signal_hook::flag::register(sig, seen.clone());
    }
}

fn is_block_device(p: &Path) -> bool {
    std::fs::metadata(p)
        .map(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
        .unwrap_or(false)
}

/// The drives table's rows: each target with its label, what the picker says of it, its
/// identity, and whether a targets file confirmed writes to it already.
fn drive_setups(choices: &[TargetChoice]) -> Vec<DriveSetup> {
    let devices = device_entries();
    choices
        .iter()
        .filter_map(|c| {
            let path = c.path.clone()?;
            // A target on another host: nothing of it can be known here; its host prepares
            // it (its guard decides, on the confirmation in the targets file) and says
            // which drive it is when the run starts.
            if let Where::Remote(h) = &c.at {
                let label = format!("{}:{}", h.host, crate::ostext::escaped(path.as_os_str()));
                return Some(DriveSetup {
                    label: c.label.clone().unwrap_or_else(|| label.clone()),
                    drive: None,
                    confirmed: c.destroy_data.is_some(),
                    target: views::entry(&path, format!("on {}", h.host), TargetKind::File),
                });
            }
            let target = match devices.iter().find(|d| d.path == path) {
                Some(d) => d.clone(),
                None if is_block_device(&path) => {
                    views::entry(&path, "block device".into(), TargetKind::BlockDevice)
                }
                None => file_entry(&path, false, c.size),
            };
            Some(DriveSetup {
                label: c
                    .label
                    .clone()
                    .unwrap_or_else(|| crate::ostext::escaped(path.as_os_str())),
                drive: drive_view(&path),
                confirmed: c.destroy_data.as_deref() == Some(path.as_path()),
                target,
            })
        })
        .collect()
}

/// Opens the dashboard and runs until the user quits (or a signal ends it).
pub fn run(args: &Options) -> Result<Exit, DashboardError> {
    hold_signals_for_shutdown();
    let default_path = test_target::default_target_path();
    // Several drives, a targets file's (even one), or one on another host: the drives
    // table, which runs each entry as the file says (a remote target is never mistaken for
    // this host's file or device of the same name).
    let many = args.targets_file
        || args.targets.len() > 1
        || args.targets.iter().any(|t| t.at.is_remote());
    let drives = if many {
        drive_setups(&args.targets)
    } else {
        Vec::new()
    };
    let one = args
        .targets
        .first()
        .filter(|_| drives.is_empty())
        .and_then(|c| c.path.clone());
    let mut targets = Vec::new();
    if let Some(t) = &one {
        if !is_block_device(t) {
            let size = args.targets.first().and_then(|c| c.size);
            targets.push(file_entry(t, false, size));
        }
    }
    targets.push(file_entry(&default_path, true, None));
    let devices = device_entries();
    let mut selected = 0;
    if let Some(t) = &one {
        if let Some(i) = devices.iter().position(|d| &d.path == t) {
            selected = targets.len() + i;
        }
    }
    targets.extend(devices);
    let first = match (drives.first(), args.targets.first()) {
        // No telemetry between runs of a remote drive (it comes through its host's agent
        // once a run starts): an empty path resolves to no drive.
        (Some(_), Some(t)) if t.at.is_remote() => PathBuf::new(),
        (Some(d), _) => d.target.path.clone(),
        (None, _) => targets
            .get(selected)
            .map(|t| t.path.clone())
            .unwrap_or(default_path.clone()),
    };
    let capacity = targets
        .get(selected)
        .and_then(|t| t.size)
        .unwrap_or(test_target::DEFAULT_FILE_SIZE);
    let opts = DashboardOptions {
        presets: preset_entries(capacity, 512, args.time_scale),
        highlight_preset: Some(args.preset.clone().unwrap_or_else(|| "quick-look".into())),
        targets,
        target: selected,
        drive: drive_view(&first),
        theme: args.theme.clone(),
        monochrome: !args.colour,
        mouse: args.mouse,
        drives,
        ..DashboardOptions::default()
    };
    let origin = Instant::now();
    let (msg_tx, msg_rx) = mpsc::unbounded_channel();
    let (fx_tx, fx_rx) = mpsc::unbounded_channel();
    let (tele_tx, tele) = spawn_telemetry(first, msg_tx.clone(), origin);
    let many = if many {
        args.targets.clone()
    } else {
        Vec::new()
    };
    // The size given for a single named target (`--size`), which creates it when missing.
    let new_file = one.clone().zip(args.targets.first().and_then(|c| c.size));
    let effects = spawn_effects(
        fx_rx,
        msg_tx,
        tele_tx.clone(),
        runs::EveryRun {
            time_scale: args.time_scale,
            note: args.note.clone(),
        },
        many,
        new_file,
        args.metrics.as_ref().map(crate::metrics::MetricsSink::new),
    );
    // A panic in the UI must not skip the final save below.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_dashboard(opts, msg_rx, fx_tx)
    }))
    .unwrap_or_else(|_| Err(DashboardError::Terminal("the dashboard panicked".into())));
    // However the UI ended (quit, signal, error), its effects channel is closed: the
    // effects thread stops any run, which saves its session; then the telemetry thread.
    let _ = effects.join();
    let _ = tele_tx.send(TelemetryCmd::Quit);
    let _ = tele.join();
    result
}
