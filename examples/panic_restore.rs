//! Puts the terminal into the dashboard's mode and panics, the way a bug in a panel would:
//! `tests/it/dashboard_tmux.rs` checks that the panic message is readable on the normal
//! screen afterwards and that the terminal is back in cooked mode.

use drivescope::tui::terminal::{install_panic_hook, TerminalGuard};

fn main() -> std::io::Result<()> {
    install_panic_hook();
    let _guard = TerminalGuard::enter(false)?;
    print!("inside the alternate screen");
    std::thread::sleep(std::time::Duration::from_millis(300));
    panic!("deliberate panic to test that the terminal is restored");
}
