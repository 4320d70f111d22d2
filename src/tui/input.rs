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

/// Reads terminal events until `stop` is set or the receiver is gone.
pub fn spawn_input(
    tx: UnboundedSender<Msg>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ds-input".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
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
