//! The agent's fill or step: one at a time, on a thread of its own (the request loop stays
//! free for stop and pause), its result the request's answer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::outbox::Outbox;
use super::proto::FromAgent;
use crate::engine::StepControl;

/// The fill or step running, and whether it has its answer (then it is ending: the
/// controller may already have sent the next request).
#[derive(Default)]
pub(super) struct Job(Option<(JoinHandle<()>, Arc<AtomicBool>)>);

impl Job {
    /// A fill or step runs still (one that has its answer is joined).
    pub(super) fn busy(&mut self) -> bool {
        match &self.0 {
            Some((j, answered)) if !j.is_finished() && !answered.load(Ordering::Acquire) => true,
            _ => {
                self.join();
                false
            }
        }
    }

    /// Starts `work` with the flags cleared, unless one runs still.
    pub(super) fn start(
        &mut self,
        out: &Outbox,
        ctl: &StepControl,
        work: impl FnOnce(&Outbox, &StepControl) -> FromAgent + Send + 'static,
    ) {
        if self.busy() {
            return out.failed("a fill or step is still running", true);
        }
        ctl.stop.store(false, Ordering::Relaxed);
        ctl.pause.store(false, Ordering::Relaxed);
        let (out2, ctl) = (out.clone(), ctl.clone());
        let answered = Arc::new(AtomicBool::new(false));
        let done = answered.clone();
        let job = std::thread::Builder::new()
            .name("ds-agent-job".into())
            .spawn(move || {
                let reply = work(&out2, &ctl);
                done.store(true, Ordering::Release);
                out2.must(reply);
            });
        match job {
            Ok(h) => self.0 = Some((h, answered)),
            Err(e) => out.failed(format!("cannot start a thread: {e}"), false),
        }
    }

    /// Waits for the fill or step to end.
    pub(super) fn join(&mut self) {
        if let Some((j, _)) = self.0.take() {
            let _ = j.join();
        }
    }
}
