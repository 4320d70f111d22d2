//! The dashboard's telemetry thread: keeps a poller on the current target's drive and
//! forwards its samples to the panels (and to the running session, through a tap), run or
//! no run.

use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::views::telemetry_view;
use crate::app::{Msg, TelemetryView};
use crate::run::Live;
use crate::telemetry::TelemetrySample;

/// Commands to the telemetry thread.
pub(super) enum TelemetryCmd {
    /// Watch the drive under this target.
    Target(PathBuf),
    /// Watch nothing for now (a run of several drives polls each drive itself).
    Off,
    /// Also hand samples to a run (its session), with the run's start for the time axis.
    Tap(Option<(std_mpsc::Sender<TelemetrySample>, Instant)>),
    Quit,
}

/// Keeps a poller on the current target's drive and forwards its samples to the panels
/// (and to the running session), run or no run.
pub(super) fn spawn_telemetry(
    first: PathBuf,
    msgs: UnboundedSender<Msg>,
    origin: Instant,
) -> (std_mpsc::Sender<TelemetryCmd>, JoinHandle<()>) {
    let (tx, rx) = std_mpsc::channel();
    let h = std::thread::spawn(move || {
        let mut live = Live::start(&first, None, origin);
        let mut tap: Option<(std_mpsc::Sender<TelemetrySample>, Instant)> = None;
        let announce = |live: &Live, msgs: &UnboundedSender<Msg>| {
            for n in &live.notes {
                let _ = msgs.send(Msg::Telemetry(Box::new(TelemetryView {
                    unavailable: vec![n.clone()],
                    ..TelemetryView::default()
                })));
            }
        };
        announce(&live, &msgs);
        loop {
            match rx.recv_timeout(Duration::from_millis(250)) {
                Ok(TelemetryCmd::Target(p)) => {
                    live.stop();
                    live = Live::start(&p, None, origin);
                    announce(&live, &msgs);
                }
                Ok(TelemetryCmd::Off) => live.stop(),
                Ok(TelemetryCmd::Tap(t)) => tap = t,
                Ok(TelemetryCmd::Quit) | Err(std_mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std_mpsc::RecvTimeoutError::Timeout) => {}
            }
            for s in live.drain() {
                let offset = tap
                    .as_ref()
                    .map(|(_, start)| start.duration_since(origin).as_secs_f64())
                    .unwrap_or(0.0);
                let t_s = s.t_ns as f64 / 1e9 - offset;
                let _ = msgs.send(Msg::Telemetry(Box::new(telemetry_view(&s, t_s))));
                if let Some((run, _)) = &tap {
                    let _ = run.send(s);
                }
            }
        }
        live.stop();
    });
    (tx, h)
}
