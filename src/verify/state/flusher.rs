//! The thread that makes a verify state's flush epochs while a step runs ([`Flusher`]).

use super::*;

/// A thread that makes a flush epoch every [`FLUSH_EVERY`] while a step runs; stopping it
/// makes the last one and closes the state cleanly.
pub struct Flusher {
    stop: Arc<AtomicBool>,
    abandoned: Arc<AtomicBool>,
    handle: Option<JoinHandle<std::io::Result<()>>>,
}

impl Flusher {
    /// Starts flushing `state` with `target` (opened for this, its writes are synced).
    pub fn start(state: Arc<VerifyState>, target: File) -> std::io::Result<Flusher> {
        state.opened()?;
        let stop = Arc::new(AtomicBool::new(false));
        let abandoned = Arc::new(AtomicBool::new(false));
        let (s, a) = (stop.clone(), abandoned.clone());
        let handle = std::thread::Builder::new()
            .name("verify-flush".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    std::thread::park_timeout(FLUSH_EVERY);
                    if !s.load(Ordering::Relaxed) {
                        state.flush(&target)?;
                    }
                }
                if a.load(Ordering::Relaxed) {
                    return Ok(());
                }
                state.close(&target)
            })?;
        Ok(Flusher {
            stop,
            abandoned,
            handle: Some(handle),
        })
    }

    /// Stops it after the last flush, once every write has completed.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.end()
    }

    /// Stops it without the last flush or the clean end: writes may still be in flight
    /// (a stalled device), so the state stays open, as after a crash.
    pub fn abandon(mut self) {
        self.abandoned.store(true, Ordering::Relaxed);
        let _ = self.end();
    }

    fn end(&mut self) -> std::io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.handle.take() {
            Some(h) => {
                h.thread().unpark();
                h.join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("the verify flusher panicked")))
            }
            None => Ok(()),
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        let _ = self.end();
    }
}
