//! The telemetry poller: its own thread, a sample every period (default 2 s, never under
//! 1 s), timestamps on the engine's clock. The SMART source runs on a further thread, so
//! a slow or hung drive command delays only its own figures: the sample goes out on time
//! with the last reading it has. Each note is sent once, in the first sample that has it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::drive::zones::{self, ZoneStates};
use crate::drive::{DriveInfo, SysRoot, Zones};
use crate::telemetry::blockstat::{self, BlockStat, BlockStatDelta};
use crate::telemetry::collect::SmartSource;
use crate::telemetry::host::{HostSampler, HostStats};
use crate::telemetry::reading::SmartReading;

/// The default polling period.
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(2);
/// The shortest period allowed: NVMe hwmon reads are real log page reads.
pub const MIN_PERIOD: Duration = Duration::from_secs(1);

/// One poll's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// Nanoseconds since the clock origin given to [`Poller::spawn`].
    pub t_ns: u64,
    /// The latest SMART-ish reading of the primary disk, if one has arrived yet.
    pub smart: Option<SmartReading>,
    /// Age of that reading, milliseconds.
    pub smart_age_ms: Option<u64>,
    /// Kernel block counters over the last period, for the target's block device.
    pub block: Option<BlockStatDelta>,
    /// Host and own-process CPU/memory; `None` where sysinfo cannot read them.
    pub host: Option<HostStats>,
    /// Notes first seen in this sample ("no NVMe SMART log: …: run as root").
    pub notes: Vec<String>,
    /// A zoned target's zones by condition, from its zone report this period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZoneStates>,
}

/// The running poller; dropping it stops the poller thread.
pub struct Poller {
    stop_tx: Option<Sender<()>>,
    stop_flag: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    period: Duration,
}

type Latest = Arc<Mutex<Option<(Instant, SmartReading)>>>;

fn since(origin: Instant, t: Instant) -> u64 {
    u64::try_from(t.saturating_duration_since(origin).as_nanos()).unwrap_or(u64::MAX)
}

/// The SMART thread: reads, stores, sleeps; exits when asked after its current read.
/// `Ok(false)` when the drive has no disk to read.
fn spawn_smart_worker(
    root: SysRoot,
    drive: &DriveInfo,
    period: Duration,
    latest: Latest,
    stop: Arc<AtomicBool>,
) -> Result<bool, String> {
    let Some(disk) = drive.primary().cloned() else {
        return Ok(false);
    };
    let spawned = std::thread::Builder::new()
        .name("telemetry-smart".into())
        .spawn(move || {
            // Kept across readings: what the drive does not support is asked once.
            let mut source = SmartSource::default();
            while !stop.load(Ordering::Relaxed) {
                let r = source.read(&root, &disk);
                if let Ok(mut g) = latest.lock() {
                    *g = Some((Instant::now(), r));
                }
                let until = Instant::now() + period;
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
    spawned
        .map(|_| true)
        .map_err(|e| format!("no SMART thread: {e}"))
}

impl Poller {
    /// Starts polling `drive` every `period` (raised to [`MIN_PERIOD`] if shorter).
    pub fn spawn(
        drive: &DriveInfo,
        period: Duration,
        clock_origin: Instant,
    ) -> (Poller, Receiver<TelemetrySample>) {
        Self::spawn_in(SysRoot::real(), drive, period, clock_origin)
    }

    /// As [`Poller::spawn`], reading sysfs under `root`.
    pub fn spawn_in(
        root: SysRoot,
        drive: &DriveInfo,
        period: Duration,
        clock_origin: Instant,
    ) -> (Poller, Receiver<TelemetrySample>) {
        let period = period.max(MIN_PERIOD);
        let (tx, rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel();
        let stop_flag = Arc::new(AtomicBool::new(false));
        let latest: Latest = Arc::new(Mutex::new(None));
        let mut startup_notes = Vec::new();
        if drive.primary().is_none() {
            startup_notes.push("no SMART: the target has no whole disk".to_string());
        }
        let smart_started = match spawn_smart_worker(
            root.clone(),
            drive,
            period,
            latest.clone(),
            stop_flag.clone(),
        ) {
            Ok(started) => started,
            Err(n) => {
                startup_notes.push(n);
                false
            }
        };
        let stat_name = drive.stat_name.clone();
        let zoned_dev = Zones::read(&root, &stat_name).map(|_| root.dev.join(&stat_name));
        let thread = std::thread::Builder::new()
            .name("telemetry".into())
            .spawn(move || {
                poll_loop(PollCtx {
                    root,
                    stat_name,
                    period,
                    origin: clock_origin,
                    latest,
                    tx,
                    stop_rx,
                    startup_notes,
                    smart_started,
                    zoned_dev,
                })
            })
            .ok();
        (
            Poller {
                stop_tx: Some(stop_tx),
                stop_flag,
                thread,
                period,
            },
            rx,
        )
    }

    /// The period in force (after the 1 s floor).
    pub fn period(&self) -> Duration {
        self.period
    }

    /// Stops polling and waits for the poller thread (not for a hung SMART command).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop_flag.store(true, Ordering::Relaxed);
        self.stop_tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.shutdown();
    }
}

struct PollCtx {
    root: SysRoot,
    stat_name: String,
    period: Duration,
    origin: Instant,
    latest: Latest,
    tx: Sender<TelemetrySample>,
    stop_rx: Receiver<()>,
    startup_notes: Vec<String>,
    smart_started: bool,
    /// A zoned target's device node, whose zone report the polls count (at most every
    /// [`ZONE_REPORT_EVERY`]).
    zoned_dev: Option<std::path::PathBuf>,
}

/// How often a zoned target's zone report is read again (its states in the drive line are
/// at most this old).
const ZONE_REPORT_EVERY: Duration = Duration::from_secs(30);

fn poll_loop(ctx: PollCtx) {
    let mut seen: HashSet<String> = HashSet::new();
    let mut pending = ctx.startup_notes;
    let mut host = HostSampler::new();
    if host.is_none() {
        pending.push("no host CPU/memory figures: sysinfo cannot read this host".to_string());
    }
    let started = Instant::now();
    let mut prev: Option<(Instant, BlockStat)> = blockstat::read_at(&ctx.root, &ctx.stat_name)
        .ok()
        .map(|s| (Instant::now(), s));
    let slow_after = ctx.period * 3;
    let mut zones: Option<ZoneStates> = None;
    let mut zones_at: Option<Instant> = None;
    for tick in 1u32.. {
        let due = started + ctx.period * tick;
        match ctx
            .stop_rx
            .recv_timeout(due.saturating_duration_since(Instant::now()))
        {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return,
        }
        let now = Instant::now();
        let block = match blockstat::read_at(&ctx.root, &ctx.stat_name) {
            Ok(cur) => {
                let d = prev.map(|(t, p)| blockstat::delta(&p, &cur, now - t));
                prev = Some((now, cur));
                d
            }
            Err(e) => {
                pending.push(format!("no block stats: {e}"));
                None
            }
        };
        // A zone report is commands to the drive under test (REPORT ZONES on an SMR disk,
        // Zone Management Receive on ZNS), tens of thousands of zones on a large disk: it is
        // asked for on the first poll and then at most every ZONE_REPORT_EVERY, and each
        // sample carries the last one counted.
        if let Some(dev) = &ctx.zoned_dev {
            if zones_at.is_none_or(|t: Instant| now - t >= ZONE_REPORT_EVERY) {
                zones_at = Some(now);
                zones = match zones::states(dev) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        pending.push(format!("no zone report of {}: {e}", dev.display()));
                        None
                    }
                };
            }
        }
        let (smart, age) = match ctx.latest.lock().ok().and_then(|g| g.clone()) {
            Some((t, r)) => (Some(r), Some(now - t)),
            None => (None, None),
        };
        if let Some(r) = &smart {
            pending.extend(r.notes.iter().cloned());
        }
        let stale = ctx.smart_started
            && match age {
                Some(a) => a > slow_after,
                None => now - started > slow_after,
            };
        if stale {
            pending.push(format!(
                "SMART source slow: no fresh reading within {} s; showing the last one",
                slow_after.as_secs()
            ));
        }
        let notes: Vec<String> = pending
            .drain(..)
            .filter(|n| seen.insert(n.clone()))
            .collect();
        let sample = TelemetrySample {
            t_ns: since(ctx.origin, now),
            smart,
            smart_age_ms: age.map(|a| u64::try_from(a.as_millis()).unwrap_or(u64::MAX)),
            block,
            host: host.as_mut().map(HostSampler::sample),
            notes,
            zones,
        };
        if ctx.tx.send(sample).is_err() {
            return;
        }
    }
}
