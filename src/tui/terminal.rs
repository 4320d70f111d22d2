//! Putting the terminal into the dashboard's mode (raw, alternate screen, hidden cursor,
//! optional mouse capture) and always getting it back: on drop, on panic (a hook restores
//! before the panic message prints), and from the signal path.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};

/// Whether the terminal is in the dashboard's mode (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Restores the terminal: leaves the alternate screen, ends raw mode and mouse capture,
/// shows the cursor. Safe to call any number of times, from any thread.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut out = io::stdout();
        let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, Show);
        let _ = disable_raw_mode();
        let _ = out.flush();
    }
}

/// Chains a panic hook that restores the terminal before the previous hook prints.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// The terminal in the dashboard's mode until dropped.
#[derive(Debug)]
pub struct TerminalGuard(());

impl TerminalGuard {
    pub fn enter(mouse: bool) -> io::Result<TerminalGuard> {
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = TerminalGuard(());
        let mut out = io::stdout();
        execute!(out, EnterAlternateScreen)?;
        if mouse {
            execute!(out, EnableMouseCapture)?;
        }
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}
