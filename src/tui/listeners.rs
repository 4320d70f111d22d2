//! The threads that turn the outside world into messages: terminal input (keys, mouse,
//! resize) read with crossterm, and SIGTERM / SIGHUP / SIGINT.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::{Handle, Signals};
use tokio::sync::mpsc::UnboundedSender;

use crate::app::Msg;

/// How long the input thread waits for an event before checking whether to stop.
const POLL: Duration = Duration::from_millis(250);

/// True when standard input is a terminal that has hung up (its window or tmux pane was
/// closed): crossterm would then spin on a dead descriptor.
fn tty_hung_up() -> bool {
    let mut p = libc::pollfd {
        fd: 0,
        events: 0,
        revents: 0,
    };
    // SAFETY: `p` is one live, exclusively borrowed pollfd and nfds is 1, so poll reads
    // and writes only `p`; fd 0 need not be open (poll reports POLLNVAL); a zero timeout
    // returns at once.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

/// Reads terminal events until `stop` is set or the receiver is gone. A terminal that
/// hangs up is reported as SIGHUP (the run is stopped and its session saved).
pub fn spawn_input(
    tx: UnboundedSender<Msg>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ds-input".into())
        .spawn(move || {
            // SAFETY: isatty takes a plain descriptor number (any value is allowed: a
            // closed one yields 0 and EBADF) and passes no memory.
            let watch_hangup = unsafe { libc::isatty(0) } == 1;
            while !stop.load(Ordering::Relaxed) {
                if watch_hangup && tty_hung_up() {
                    let _ = tx.send(Msg::Signal(SIGHUP));
                    break;
                }
                match event::poll(POLL) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(_) => break,
                }
                let msg = match event::read() {
                    Ok(Event::Key(k)) => Msg::Key(k),
                    Ok(Event::Mouse(m)) => Msg::Mouse(m),
                    Ok(Event::Resize(w, h)) => Msg::Resize(w, h),
                    Ok(_) => continue,
                    Err(_) => break,
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
        })
}

/// Forwards SIGTERM, SIGHUP and SIGINT as [`Msg::Signal`]; close the handle to end it.
pub fn spawn_signals(tx: UnboundedSender<Msg>) -> std::io::Result<(Handle, JoinHandle<()>)> {
    let mut signals = Signals::new([SIGTERM, SIGHUP, SIGINT])?;
    let handle = signals.handle();
    let thread = std::thread::Builder::new()
        .name("ds-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if tx.send(Msg::Signal(sig)).is_err() {
                    break;
                }
            }
        })?;
    Ok((handle, thread))
}
