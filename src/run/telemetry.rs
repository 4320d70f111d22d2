//! The drive under a run's target and its telemetry poller: samples go to the session and
//! the sinks; why there is no drive identity or telemetry is said once.

use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::request::DriveFacts;
use crate::drive::DriveInfo;
use crate::host::LocalHost;
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
        let (drive, notes) = LocalHost.drive_of(target);
        Live::of(drive, notes, period, t0)
    }

    /// Polls `drive` (resolved already: a run's when its target was prepared) every
    /// `period`; without one, `notes` say why there is no telemetry.
    fn of(
        drive: Option<DriveInfo>,
        notes: Vec<String>,
        period: Option<Duration>,
        t0: Instant,
    ) -> Live {
        let poller = drive
            .as_ref()
            .map(|d| Poller::spawn(d, period.unwrap_or(DEFAULT_PERIOD), t0));
        Live {
            drive,
            poller,
            notes,
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
    /// A target on a drive another target of the run already reads: no poller of its own.
    Shared(Option<DriveInfo>, Vec<String>),
    /// A host that polls its drive and streams the samples (another host's agent, on this
    /// run's clock); what it could not read, and what it says of itself, as notes.
    Streamed(Option<DriveInfo>, Receiver<TelemetrySample>, Vec<String>),
}

impl Feed {
    /// The feed of a target whose drive its host told when it was prepared (`told`: none
    /// without a target, the nop engine's).
    pub(super) fn start(src: TelemetrySource, told: &DriveFacts, t0: Instant) -> Feed {
        match src {
            TelemetrySource::Poll => {
                Feed::Own(Live::of(told.drive.clone(), told.notes.clone(), None, t0))
            }
            TelemetrySource::Tap(rx) => Feed::Tap(told.drive.clone(), rx),
        }
    }

    /// A target on drive `disk` (`told` of it), whose telemetry target `first` already
    /// reads.
    pub(super) fn shared(told: &DriveFacts, disk: &str, first: &str) -> Feed {
        Feed::Shared(
            told.drive.clone(),
            vec![format!(
                "shares drive {disk} with {first}: its telemetry is read once, recorded under {first}"
            )],
        )
    }

    /// A target on a drive another target of the run reads.
    pub(super) fn is_shared(&self) -> bool {
        matches!(self, Feed::Shared(..))
    }

    pub(super) fn drive(&self) -> Option<&DriveInfo> {
        match self {
            Feed::Own(l) => l.drive.as_ref(),
            Feed::Tap(d, _) | Feed::Shared(d, _) | Feed::Streamed(d, ..) => d.as_ref(),
        }
    }

    /// The disk this machine can read SMART of at once (a drive on another host has none
    /// here: its streamed samples are all there is; a drive another target reads is that
    /// target's to read).
    pub(super) fn local_disk(&self) -> Option<&crate::drive::Disk> {
        match self {
            Feed::Own(_) | Feed::Tap(..) => self.drive()?.primary(),
            Feed::Shared(..) | Feed::Streamed(..) => None,
        }
    }

    /// Why there is no telemetry (said by an own poller only; a tap's owner says it).
    pub(super) fn notes(&self) -> &[String] {
        match self {
            Feed::Own(l) => &l.notes,
            Feed::Shared(_, n) | Feed::Streamed(_, _, n) => n,
            Feed::Tap(..) => &[],
        }
    }

    pub(super) fn drain(&self) -> Vec<TelemetrySample> {
        match self {
            Feed::Own(l) => l.drain(),
            Feed::Tap(_, rx) | Feed::Streamed(_, rx, _) => rx.try_iter().collect(),
            Feed::Shared(..) => Vec::new(),
        }
    }

    /// Waits up to `limit` for a sample with a SMART-ish reading (the poller's first one
    /// comes at once; smartctl may take seconds); every sample that arrived, in order.
    pub(super) fn wait_for_reading(&self, limit: Duration) -> Vec<TelemetrySample> {
        let has_poller = match self {
            Feed::Own(l) => l.poller.is_some(),
            Feed::Tap(..) => true,
            Feed::Streamed(d, ..) => d.is_some(),
            Feed::Shared(..) => false,
        };
        let until = Instant::now() + limit;
        let mut got = Vec::new();
        while has_poller && Instant::now() < until {
            got.extend(self.drain());
            if got.iter().any(|s| s.smart.is_some()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        got
    }
}

/// The longest a run whose plan needs the temperature waits for the drive's first reading.
pub(super) const FIRST_READING_WAIT: Duration = Duration::from_secs(15);

/// Why `samples` give no temperature, or `None` when one does.
pub(super) fn no_temperature(samples: &[TelemetrySample], notes: &[String]) -> Option<String> {
    if samples
        .iter()
        .filter_map(|s| s.smart.as_ref())
        .any(|r| r.temperature_c.is_some())
    {
        return None;
    }
    let mut why: Vec<String> = notes.to_vec();
    for s in samples {
        if let Some(r) = &s.smart {
            if let Some(u) = r.temperature_unknown {
                why.push(u.to_string());
            }
            why.extend(r.notes.iter().cloned());
        }
        why.extend(s.notes.iter().cloned());
    }
    why.dedup();
    Some(if why.is_empty() {
        "the drive reports no temperature".to_string()
    } else {
        format!("the drive reports no temperature ({})", why.join("; "))
    })
}
