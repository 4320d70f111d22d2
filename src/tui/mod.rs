//! The dashboard's runtime: terminal setup and restore, the input and signal threads, and
//! the event loop that feeds [`update`](crate::app::update) and draws with
//! [`render`](crate::ui::render). [`run_dashboard`] is the entry point the binary (and the
//! engine runner) connect to: messages in, effects out.
//!
//! ```no_run
//! use drivescope::app::{Effect, Msg};
//! use drivescope::tui::{run_dashboard, DashboardOptions, Exit};
//!
//! let (msg_tx, msg_rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
//! let (fx_tx, mut fx_rx) = tokio::sync::mpsc::unbounded_channel::<Effect>();
//! // The runner: a plain thread that carries out effects and reports back with Msgs.
//! let runner = std::thread::spawn(move || {
//!     while let Some(effect) = fx_rx.blocking_recv() {
//!         match effect {
//!             Effect::StartRun { preset_id, target, .. } => {
//!                 let _ = msg_tx.send(Msg::RunStarted { preset_id, target });
//!                 // ... Msg::StepStarted, Msg::Interval(report), Msg::Telemetry(..),
//!                 // Msg::StepFinished(point, result), Msg::RunEnded { .. }
//!             }
//!             Effect::Quit => break,
//!             _ => {}
//!         }
//!     }
//! });
//! let opts = DashboardOptions { highlight_preset: Some("quick-look".into()), ..Default::default() };
//! let exit = run_dashboard(opts, msg_rx, fx_tx)?;
//! let _ = runner.join();
//! if let Exit::Signal(sig) = exit {
//!     std::process::exit(128 + sig);
//! }
//! # Ok::<(), drivescope::tui::DashboardError>(())
//! ```

pub mod chosen_theme;
mod event_loop;
mod listeners;
mod options;
pub mod terminal;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use thiserror::Error;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

pub use event_loop::{event_loop, MIN_FRAME};
pub use options::DashboardOptions;

/// Bytes a frame is gathered in before it is written: a whole redraw of a large terminal
/// (300x100 cells, each with its colours) fits.
const FRAME_BUFFER: usize = 1 << 20;

use crate::app::{App, Effect, Msg};

/// Why the dashboard could not run.
#[derive(Debug, Error)]
pub enum DashboardError {
    #[error("cannot set up the terminal: {0}")]
    Setup(#[from] std::io::Error),
    #[error("cannot draw: {0}")]
    Terminal(String),
    /// `--target` repeated or `--targets FILE` that cannot be used.
    #[error(transparent)]
    Targets(#[from] crate::run::targets::TargetsError),
    /// `DRIVESCOPE_SSH` that cannot be split into words.
    #[error("DRIVESCOPE_SSH: {0}")]
    Ssh(#[from] crate::remote::HostError),
    /// A target that cannot be used as given (a missing path without `--size`).
    #[error(transparent)]
    Target(#[from] crate::test_target::TargetError),
    /// `--preset` that names no preset of the catalog.
    #[error(transparent)]
    Preset(#[from] crate::preset::PresetError),
    /// `--theme` that names no theme.
    #[error(transparent)]
    Theme(#[from] crate::theme::ThemeError),
    /// `--metrics` at an address that cannot be listened on.
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
}

/// How the dashboard ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The user quit.
    Quit,
    /// SIGTERM, SIGHUP or SIGINT arrived (the run was asked to stop first).
    Signal(i32),
}

/// Runs the dashboard on this terminal until the user quits or a signal arrives.
///
/// `msgs` brings the engine's and telemetry's messages; `effects` takes what the user
/// asked for (start, pause, stop, snapshot, quit...). The terminal is restored on return,
/// on error and on panic. Blocks the calling thread (it runs its own single-threaded
/// tokio runtime).
pub fn run_dashboard(
    opts: DashboardOptions,
    msgs: UnboundedReceiver<Msg>,
    effects: UnboundedSender<Effect>,
) -> Result<Exit, DashboardError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    terminal::install_panic_hook();
    // `--color always` colours even under NO_COLOR (crossterm reads it itself).
    ratatui::crossterm::style::force_color_output(!opts.monochrome);
    let guard = terminal::TerminalGuard::enter(opts.mouse)?;
    // A frame goes out in one write: stdout alone writes in pieces of 1 KiB, and a terminal
    // that reads between two pieces (a loaded machine, a slow link) shows the frame torn.
    let out = std::io::BufWriter::with_capacity(FRAME_BUFFER, std::io::stdout());
    let mut term = Terminal::new(CrosstermBackend::new(out))?;
    let size = term.size()?;
    let mut app = App::new(opts.app_config((size.width, size.height)));

    let (tx, input_rx) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let input_thread = listeners::spawn_input(tx.clone(), stop.clone())?;
    let (sig_handle, sig_thread) = listeners::spawn_signals(tx)?;

    let result = rt.block_on(event_loop(&mut term, &mut app, msgs, input_rx, &effects));
    // ratatui's Terminal prints (eprintln!, which panics on a dead terminal) when it cannot
    // show the cursor on drop: show it here, and if the terminal is gone, skip that drop.
    if term.show_cursor().is_err() {
        std::mem::forget(term);
    } else {
        drop(term);
    }

    stop.store(true, Ordering::Relaxed);
    sig_handle.close();
    let _ = sig_thread.join();
    // The input thread may be stuck inside crossterm on a terminal that went away: wait
    // for it briefly, never forever (the process is about to exit).
    let waited = std::time::Instant::now();
    while !input_thread.is_finished() && waited.elapsed() < std::time::Duration::from_millis(500) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if input_thread.is_finished() {
        let _ = input_thread.join();
    }
    drop(guard);
    result?;
    Ok(match app.quit_signal {
        Some(sig) => Exit::Signal(sig),
        None => Exit::Quit,
    })
}
