//! The drive under a run's target and its telemetry poller: samples go to the session and
//! the sinks; why there is no drive identity or telemetry is said once.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use crate::drive::{self, DriveInfo};
use crate::telemetry::{Poller, TelemetrySample, DEFAULT_PERIOD};

/// The drive under a target and its telemetry poller.
pub struct Live {
    pub drive: Option<DriveInfo>,
    poller: Option<(Poller, Receiver<TelemetrySample>)>,
    /// Why there is no drive identity or telemetry, said once.
    pub notes: Vec<String>,
}

impl Live {
    /// Resolves the drive under `target` and starts polling it every `period` (2 s by
    /// default), timestamps relative to `t0`.
    pub fn start(target: &Path, period: Option<Duration>, t0: Instant) -> Live {
        match drive::resolve(target) {
            Ok(d) => {
                let (p, rx) = Poller::spawn(&d, period.unwrap_or(DEFAULT_PERIOD), t0);
                Live {
                    drive: Some(d),
                    poller: Some((p, rx)),
                    notes: Vec::new(),
                }
            }
            Err(e) => Live {
                drive: None,
                poller: None,
                notes: vec![format!("no drive telemetry: {e}")],
            },
        }
    }

    /// The samples that arrived since the last call (never blocks).
    pub fn drain(&self) -> Vec<TelemetrySample> {
        match &self.poller {
            Some((_, rx)) => rx.try_iter().collect(),
            None => Vec::new(),
        }
    }

    /// Stops the poller.
    pub fn stop(&mut self) {
        if let Some((p, _)) = self.poller.take() {
            p.stop();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Where a run's telemetry comes from.
pub enum TelemetrySource {
    /// The run polls the drive itself (headless).
    Poll,
    /// Someone else polls and hands the samples over (the dashboard's telemetry thread,
    /// which keeps polling between runs).
    Tap(Receiver<TelemetrySample>),
}

/// A running source: the drive's identity and the samples so far.
pub(super) enum Feed {
    Own(Live),
    Tap(Option<DriveInfo>, Receiver<TelemetrySample>),
}

impl Feed {
    pub(super) fn start(src: TelemetrySource, target: &Path, t0: Instant) -> Feed {
        match src {
            TelemetrySource::Poll => Feed::Own(Live::start(target, None, t0)),
            TelemetrySource::Tap(rx) => Feed::Tap(drive::resolve(target).ok(), rx),
        }
    }

    pub(super) fn drive(&self) -> Option<&DriveInfo> {
        match self {
            Feed::Own(l) => l.drive.as_ref(),
            Feed::Tap(d, _) => d.as_ref(),
        }
    }

    /// Why there is no telemetry (said by an own poller only; a tap's owner says it).
    pub(super) fn notes(&self) -> &[String] {
        match self {
            Feed::Own(l) => &l.notes,
            Feed::Tap(..) => &[],
        }
    }

    pub(super) fn drain(&self) -> Vec<TelemetrySample> {
        match self {
            Feed::Own(l) => l.drain(),
            Feed::Tap(_, rx) => rx.try_iter().collect(),
        }
    }
}
