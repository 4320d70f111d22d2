//! `run --verify --power-cut CMD`: cycles of a verified write workload, each ended by the
//! user's power cut at a chosen moment; the instant, the last completed flush epoch and
//! the writes in flight recorded; the drive waited for (the same drive: serial, WWN, size);
//! every block written under the verify state read back and judged
//! ([`crate::verify::power_cut`]); the state settled to what was found; the next cycle.

use std::fs::File;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use super::control::{RunCmd, RunControl, RunHandle};
use super::error::RunError;
use super::hub::Finished;
use super::request::{Prepared, RunRequest};
use crate::verify::header::{Sector, SECTOR};
use crate::verify::map::BUSY;
use crate::verify::power_cut::{judge, CutBlock, CutFinding, CutTally, Judgement};
use crate::verify::state::MAX_KEPT;
use crate::verify::{Generation, VerifyError, VerifyState};

/// When in a cycle the power is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CutAt {
    /// This long after the workload starts.
    Fixed(#[serde(with = "secs")] Duration),
    /// At a (seeded) random moment within this window after the workload starts.
    Random(
        #[serde(with = "secs")] Duration,
        #[serde(with = "secs")] Duration,
    ),
    /// Once this many flush epochs have completed.
    Epochs(u64),
}

mod secs {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

impl CutAt {
    /// `fixed 5s` (or `5s`), `random 2s..8s`, `after 4 epochs` (or `4 epochs`).
    pub fn parse(s: &str) -> Result<CutAt, String> {
        let dur = |t: &str| crate::units::parse_duration(t).map_err(|e| e.to_string());
        let words: Vec<&str> = s.split_whitespace().collect();
        let bad = || format!("`{s}` is not a cut moment (fixed 5s, random 2s..8s, after 4 epochs)");
        match words.as_slice() {
            ["fixed", d] | [d] => Ok(CutAt::Fixed(dur(d)?)),
            ["random", w] => {
                let (a, b) = w.split_once("..").ok_or_else(bad)?;
                let (a, b) = (dur(a)?, dur(b)?);
                if a > b {
                    return Err(format!("`{s}`: the window's start is after its end"));
                }
                Ok(CutAt::Random(a, b))
            }
            ["after", n, "epochs" | "epoch"] | [n, "epochs" | "epoch"] => {
                let n: u64 = n.parse().map_err(|_| bad())?;
                if n == 0 {
                    return Err(format!("`{s}`: at least 1 epoch"));
                }
                Ok(CutAt::Epochs(n))
            }
            _ => Err(bad()),
        }
    }
}

/// A power-cut run, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerCutAsk {
    /// The command that cuts the power (run by `sh -c`).
    pub cut: String,
    /// The command that gives it back, if the cut does not itself.
    pub restore: Option<String>,
    pub cycles: u32,
    pub at: CutAt,
    /// The drive is said to have power-loss protection: not-durable writes are findings.
    pub plp: bool,
    /// How long the drive may take to be ready again after the cut (and restore).
    pub ready_within: Duration,
    /// Seeds the random cut moments.
    pub seed: u64,
    /// The drive's atomic write unit on power fail, bytes (NVMe AWUPF); `None`: the
    /// logical block, as the verify state has it.
    pub atomic: Option<u64>,
}

/// Why a power-cut run ended before its cycles were done.
#[derive(Debug, thiserror::Error)]
pub enum PowerCutError {
    #[error("cycle {cycle}: the cut command `{cmd}` {status}; the run ends here and nothing is said about the drive")]
    CutFailed {
        cycle: u32,
        cmd: String,
        status: CommandStatus,
    },
    #[error("cycle {cycle}: the restore command `{cmd}` {status}; the run ends here and nothing is said about the drive")]
    RestoreFailed {
        cycle: u32,
        cmd: String,
        status: CommandStatus,
    },
    #[error("cycle {cycle}: {} came back as another drive ({what}); the loop stops", .path.display())]
    OtherDrive {
        cycle: u32,
        path: PathBuf,
        what: String,
    },
    #[error("cycle {cycle}: {} was not ready again within {:.0} s of the cut ({last}); the loop stops", .path.display(), .within.as_secs_f64())]
    NotBack {
        cycle: u32,
        path: PathBuf,
        within: Duration,
        last: String,
    },
    #[error("cycle {cycle}: the workload ended before the cut moment: give a --duration longer than --cut-at")]
    EndedFirst { cycle: u32 },
    #[error("{what} ({}) is on {disk}, the drive whose power is cut: keep it on another drive{hint}", .path.display())]
    SameDrive {
        what: &'static str,
        path: PathBuf,
        disk: String,
        hint: &'static str,
    },
    #[error("--power-cut needs {0}")]
    Needs(&'static str),
    #[error("power cut: {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CommandStatus {
    /// Its exit status; `None`: killed by a signal, or it could not be started.
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl std::fmt::Display for CommandStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exited with status {c}"),
            (None, Some(s)) => write!(f, "was killed by signal {s}"),
            (None, None) => f.write_str("could not be started"),
        }
    }
}

/// Runs `cmd` by `sh -c`; its status.
fn run_command(cmd: &str) -> CommandStatus {
    use std::os::unix::process::ExitStatusExt;
    match std::process::Command::new("sh").arg("-c").arg(cmd).status() {
        Ok(s) => CommandStatus {
            code: s.code(),
            signal: s.signal(),
        },
        Err(_) => CommandStatus {
            code: None,
            signal: None,
        },
    }
}

fn succeeded(s: &CommandStatus) -> bool {
    s.code == Some(0)
}

/// What makes a drive the same drive after the cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriveIdentity {
    pub size: u64,
    pub serial: Option<String>,
    /// WWN / EUI-64 / NGUID as the kernel gives it (`wwid`).
    pub wwid: Option<String>,
}

impl DriveIdentity {
    /// What differs between `self` (before) and `now`, in words.
    fn differs(&self, now: &DriveIdentity) -> Option<String> {
        let mut d = Vec::new();
        if self.size != now.size {
            d.push(format!("size {} bytes, was {}", now.size, self.size));
        }
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "none".into());
        if self.serial != now.serial {
            d.push(format!(
                "serial {}, was {}",
                opt(&now.serial),
                opt(&self.serial)
            ));
        }
        if self.wwid != now.wwid {
            d.push(format!("wwid {}, was {}", opt(&now.wwid), opt(&self.wwid)));
        }
        (!d.is_empty()).then(|| d.join("; "))
    }
}

/// The identity of the drive at `path`: its size, and for a block device its disk's
/// serial and wwid.
pub fn identity(path: &Path) -> std::io::Result<DriveIdentity> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_block_device() {
        return Ok(DriveIdentity {
            size: meta.len(),
            serial: None,
            wwid: None,
        });
    }
    let (size, _) = crate::dut::block_device_geometry(&file)?;
    let disk = crate::drive::resolve(path)
        .ok()
        .and_then(|i| i.primary().cloned());
    let wwid = disk.as_ref().and_then(|d| {
        let base = Path::new("/sys/block").join(&d.name);
        ["wwid", "device/wwid"]
            .iter()
            .find_map(|f| std::fs::read_to_string(base.join(f)).ok())
            .map(|s| s.trim().to_string())
    });
    Ok(DriveIdentity {
        size,
        serial: disk.and_then(|d| d.serial),
        wwid,
    })
}

/// The whole disks under `path` (none known: an empty list, e.g. tmpfs).
fn disks_of(path: &Path) -> Vec<String> {
    crate::drive::resolve(path)
        .map(|i| i.disks.into_iter().map(|d| d.name).collect())
        .unwrap_or_default()
}

/// Refuses a verify state or session on the drive whose power is cut.
fn check_elsewhere(target: &Path, state: &Path, sessions: &Path) -> Result<(), PowerCutError> {
    let cut = disks_of(target);
    for (what, path, hint) in [
        (
            "the verify state",
            state,
            " (--verify-state PATH on another drive)",
        ),
        (
            "the sessions folder",
            sessions,
            " (--session PATH, or XDG_DATA_HOME, on another drive)",
        ),
    ] {
        if let Some(disk) = disks_of(path).into_iter().find(|d| cut.contains(d)) {
            return Err(PowerCutError::SameDrive {
                what,
                path: path.to_path_buf(),
                disk,
                hint,
            });
        }
    }
    Ok(())
}

/// The first existing folder at or above `p`.
fn existing(p: &Path) -> PathBuf {
    p.ancestors()
        .find(|a| a.exists())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

/// One cycle, as a power-loss test reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CycleRecord {
    pub cycle: u32,
    /// When the cut command was started, RFC 3339.
    pub cut_at: String,
    /// Seconds from the workload's start to the cut command's start.
    pub cut_after_s: f64,
    /// Seconds the cut command took.
    pub cut_took_s: f64,
    /// The last flush epoch completed before the cut (counted from the cycle's start).
    pub epoch: u64,
    /// Blocks with a write in flight at the cut (issued, not acknowledged).
    pub blocks_in_flight: u64,
    /// Seconds from the end of the cut (and restore) command to the drive open again as
    /// the same drive.
    pub ready_after_s: f64,
    #[serde(flatten)]
    pub tally: CutTally,
    /// The first findings ([`MAX_KEPT`] at most a cycle).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<CutFinding>,
}

/// The whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerCutRecord {
    pub target: PathBuf,
    pub cut_command: String,
    pub restore_command: Option<String>,
    pub cut_at: CutAt,
    pub plp: bool,
    pub identity: Option<DriveIdentity>,
    pub cycles: Vec<CycleRecord>,
    pub totals: CutTally,
    /// Pass: no block lost after a flush, torn or damaged (with `--plp`, none not durable).
    pub verdict: Verdict,
    /// Why the loop stopped before its cycles were done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Fewer cycles than asked (the loop stopped), none failing.
    Incomplete,
}

impl PowerCutRecord {
    fn sum(&mut self, asked: u32) {
        let mut t = CutTally::default();
        for c in &self.cycles {
            t.add_tally(&c.tally);
        }
        self.verdict = if !t.passes() {
            Verdict::Fail
        } else if self.cycles.len() < asked as usize || self.stopped.is_some() {
            Verdict::Incomplete
        } else {
            Verdict::Pass
        };
        self.totals = t;
    }
}

/// The power-cut record as a file: YAML, known as ours by its first line.
pub const RECORD: crate::session::Output = crate::session::Output {
    what: "power-cut record",
    ours: |b| b.starts_with(RECORD_HEAD.as_bytes()),
};
const RECORD_HEAD: &str = "# drivescope power-cut record\n";

impl PowerCutRecord {
    /// The record as its file holds it.
    pub fn to_yaml(&self) -> String {
        let body = serde_yaml::to_string(self).unwrap_or_default();
        format!("{RECORD_HEAD}{body}")
    }
}

/// What the cutter thread saw.
enum Cut {
    Done {
        at: SystemTime,
        after: Duration,
        took: Duration,
        epoch: u64,
        at_cut: Vec<u8>,
    },
    Failed(CommandStatus),
    /// The run ended first.
    RunEnded,
    /// Stopped by a signal before the cut.
    Interrupted,
}

/// How often the cutter looks at the clock, the epochs and the stop flag.
const TICK: Duration = Duration::from_millis(5);

/// Waits for the moment, cuts, freezes the state, stops the run.
fn cutter(
    ask: PowerCutAsk,
    moment: Option<Duration>,
    state: Arc<VerifyState>,
    handle: RunHandle,
    stop: Arc<AtomicBool>,
    ended: mpsc::Receiver<()>,
) -> Cut {
    let start = Instant::now();
    loop {
        let due = match (ask.at, moment) {
            (CutAt::Epochs(n), _) => state.epoch() >= n,
            (_, Some(m)) => start.elapsed() >= m,
            (_, None) => true,
        };
        if due {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            handle.send(RunCmd::Stop);
            return Cut::Interrupted;
        }
        match ended.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => return Cut::RunEnded,
        }
    }
    let at = SystemTime::now();
    let after = start.elapsed();
    let status = run_command(&ask.cut);
    let took = start.elapsed().saturating_sub(after);
    if !succeeded(&status) {
        handle.send(RunCmd::Stop);
        return Cut::Failed(status);
    }
    let (epoch, at_cut) = state.cut();
    handle.send(RunCmd::Stop);
    Cut::Done {
        at,
        after,
        took,
        epoch,
        at_cut,
    }
}

/// A power-cut run's end: the cycles recorded (none when it was refused before the first
/// cut), and what ended it early.
#[derive(Debug)]
pub struct PowerCutRun {
    pub record: Option<PowerCutRecord>,
    pub ended: Option<RunError>,
}

/// The caller's side of a cycle: runs one cycle's prepared workload under the given
/// control (with its printer and session).
pub type RunOne<'a> = dyn FnMut(&[Prepared], &RunControl) -> Result<Finished, RunError> + 'a;

/// Runs the cycles; `on_cycle` hears each cycle as it is recorded.
pub fn run_cycles(
    reqs: &[RunRequest],
    ask: &PowerCutAsk,
    sessions: &Path,
    stop: &Arc<AtomicBool>,
    run_one: &mut RunOne<'_>,
    on_cycle: &mut dyn FnMut(&CycleRecord),
) -> PowerCutRun {
    let mut record = None;
    let ended = cycles(&mut record, reqs, ask, sessions, stop, run_one, on_cycle).err();
    if let Some(r) = &mut record {
        r.stopped = ended.as_ref().map(ToString::to_string);
        r.sum(ask.cycles);
    }
    PowerCutRun { record, ended }
}

fn cycles(
    record: &mut Option<PowerCutRecord>,
    reqs: &[RunRequest],
    ask: &PowerCutAsk,
    sessions: &Path,
    stop: &Arc<AtomicBool>,
    run_one: &mut RunOne<'_>,
    on_cycle: &mut dyn FnMut(&CycleRecord),
) -> Result<(), RunError> {
    let [req] = reqs else {
        return Err(PowerCutError::Needs("one target").into());
    };
    if req.verify.is_none() {
        return Err(PowerCutError::Needs("--verify").into());
    }
    // Before anything of the state is made: it and the sessions on another drive.
    let target = req
        .target
        .path
        .clone()
        .unwrap_or_else(crate::dut::default_target_path);
    let state_dir = req
        .verify
        .as_ref()
        .and_then(|v| v.state.clone())
        .unwrap_or_else(|| super::verify::dir_for_target(&target));
    check_elsewhere(
        &existing(&target),
        &existing(&state_dir),
        &existing(sessions),
    )?;
    let mut req = req.clone();
    let mut rng = crate::engine::native::rng::Rng::new(ask.seed ^ 0x9e37_79b9_7f4a_7c15);
    for cycle in 1..=ask.cycles {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Each cycle writes its own sequence of offsets.
        let seed = ask.seed.wrapping_add(u64::from(cycle));
        req.plan.seed = seed;
        if let super::request::RunWhat::Single(s) = &mut req.what {
            s.workload.seed = seed;
        }
        let (prepared, _) = super::prepare::prepare_all(std::slice::from_ref(&req), false, None)?;
        // Only the first cycle starts a new state when asked to.
        if let Some(v) = &mut req.verify {
            v.reset = false;
        }
        let p = prepared.first().ok_or(PowerCutError::Needs("one target"))?;
        let state = p.verify.clone().ok_or(PowerCutError::Needs("--verify"))?;
        let path = p.target.path.clone();
        let dir = state.dir().to_path_buf();
        let io = |what: &str| {
            let what = format!("{what} {}", path.display());
            move |source| PowerCutError::Io { what, source }
        };
        let before = identity(&path).map_err(io("reading the identity of"))?;
        let rec = match record {
            Some(r) => r,
            None => record.insert(PowerCutRecord {
                target: path.clone(),
                cut_command: ask.cut.clone(),
                restore_command: ask.restore.clone(),
                cut_at: ask.at,
                plp: ask.plp,
                identity: Some(before.clone()),
                cycles: Vec::new(),
                totals: CutTally::default(),
                verdict: Verdict::Pass,
                stopped: None,
            }),
        };
        let moment = match ask.at {
            CutAt::Fixed(d) => Some(d),
            CutAt::Random(a, b) => {
                let span = (b - a).as_nanos() as u64;
                Some(a + Duration::from_nanos(rng.below(span.max(1))))
            }
            CutAt::Epochs(_) => None,
        };
        let (handle, ctl) = RunControl::new();
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let cut = {
            let (ask, state, stop) = (ask.clone(), state.clone(), stop.clone());
            std::thread::Builder::new()
                .name("power-cut".into())
                .spawn(move || cutter(ask, moment, state, handle, stop, ended_rx))
                .map_err(io("starting the cutter for"))?
        };
        let finished = run_one(&prepared, &ctl);
        drop(ended_tx);
        let cut = cut.join().unwrap_or(Cut::Interrupted);
        // The run's hold on the state and the target ends here.
        drop(state);
        drop(prepared);
        finished?;
        let (at, after, took, epoch, at_cut) = match cut {
            Cut::Done {
                at,
                after,
                took,
                epoch,
                at_cut,
            } => (at, after, took, epoch, at_cut),
            Cut::Failed(status) => {
                return Err(PowerCutError::CutFailed {
                    cycle,
                    cmd: ask.cut.clone(),
                    status,
                }
                .into())
            }
            Cut::RunEnded => return Err(PowerCutError::EndedFirst { cycle }.into()),
            Cut::Interrupted => break,
        };
        if let Some(cmd) = &ask.restore {
            let status = run_command(cmd);
            if !succeeded(&status) {
                return Err(PowerCutError::RestoreFailed {
                    cycle,
                    cmd: cmd.clone(),
                    status,
                }
                .into());
            }
        }
        let back = Instant::now();
        wait_ready(&path, &before, cycle, ask.ready_within, stop)?;
        let ready_after = back.elapsed();
        let (tally, findings) = check_after_cut(&dir, &path, &at_cut, ask)?;
        let c = CycleRecord {
            cycle,
            cut_at: crate::session::time::LocalTime::of(at).rfc3339(),
            cut_after_s: after.as_secs_f64(),
            cut_took_s: took.as_secs_f64(),
            epoch,
            blocks_in_flight: at_cut.iter().filter(|b| *b & BUSY != 0).count() as u64,
            ready_after_s: ready_after.as_secs_f64(),
            tally,
            findings,
        };
        on_cycle(&c);
        rec.cycles.push(c);
        rec.sum(ask.cycles);
    }
    Ok(())
}

/// Waits until `path` opens again as the drive it was.
fn wait_ready(
    path: &Path,
    before: &DriveIdentity,
    cycle: u32,
    within: Duration,
    stop: &AtomicBool,
) -> Result<(), PowerCutError> {
    let deadline = Instant::now() + within;
    loop {
        let last = match identity(path) {
            Ok(now) => {
                return match before.differs(&now) {
                    None => Ok(()),
                    Some(what) => Err(PowerCutError::OtherDrive {
                        cycle,
                        path: path.to_path_buf(),
                        what,
                    }),
                }
            }
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return Err(PowerCutError::NotBack {
                cycle,
                path: path.to_path_buf(),
                within,
                last,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Bytes read at once by the check.
const CHUNK: u64 = 1 << 20;

/// Reads back every block written under the state (as saved, or at the cut), judges it,
/// settles the state to what was found and closes it cleanly.
fn check_after_cut(
    dir: &Path,
    path: &Path,
    at_cut: &[u8],
    ask: &PowerCutAsk,
) -> Result<(CutTally, Vec<CutFinding>), RunError> {
    let name = path.display().to_string();
    let size = identity(path)
        .map_err(|source| PowerCutError::Io {
            what: format!("reading the size of {name}"),
            source,
        })?
        .size;
    let state = VerifyState::open(dir, &name, size, 512, 512, false, false)?;
    let io_err = |source| VerifyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(io_err)?;
    let block = state.meta.block;
    // Within one block: a unit larger than the block is checked block by block.
    let atomic = ask.atomic.map_or(state.meta.atomic(), |a| {
        (a.clamp(512, block) / 512 * 512) as usize
    });
    let per_chunk = (CHUNK / block).max(1);
    let mut rng = crate::engine::native::rng::Rng::new(1);
    let mut buf = crate::engine::native::Buffers::new(1, (per_chunk * block) as usize, &mut rng)
        .ok_or(PowerCutError::Io {
            what: "allocating the read buffer".into(),
            source: std::io::ErrorKind::OutOfMemory.into(),
        })?;
    let blocks = state.map.blocks();
    let written =
        |i: u64| state.map.load(i) != 0 || at_cut.get(i as usize).is_some_and(|b| *b != 0);
    let mut tally = CutTally::default();
    let mut findings = Vec::new();
    let mut i = 0;
    while i < blocks {
        if !written(i) {
            i += 1;
            continue;
        }
        let mut n = 1;
        while n < per_chunk && i + n < blocks && written(i + n) {
            n += 1;
        }
        let len = (n * block) as usize;
        let data = &mut buf.slot_mut(0)[..len];
        file.read_exact_at(data, i * block).map_err(io_err)?;
        for k in 0..n {
            let b = i + k;
            let bytes = &data[(k * block) as usize..((k + 1) * block) as usize];
            let j = judge(
                &CutBlock {
                    offset: b * block,
                    id: state.meta.id,
                    atomic,
                    saved: state.map.load(b),
                    at_cut: at_cut.get(b as usize).copied().unwrap_or(0),
                    plp: ask.plp,
                },
                bytes,
            );
            tally.add(&j);
            if let Judgement::Finding(f) = j {
                if findings.len() < MAX_KEPT {
                    findings.push(f);
                }
            }
            state
                .map
                .settle(b, found_generation(bytes, b * block, state.meta.id));
        }
        i += n;
    }
    // What was found is what the drive holds now: the next cycle starts from it.
    state.close(&file).map_err(io_err)?;
    Ok((tally, findings))
}

/// The generation the block's first sector holds, if it is ours and of this address.
fn found_generation(bytes: &[u8], offset: u64, id: u64) -> Option<Generation> {
    match Sector::parse(bytes.get(..SECTOR)?) {
        Sector::Valid(h) if h.id == id && h.lba == offset => Generation::new(h.generation),
        _ => None,
    }
}

/// One line of text for a cycle.
pub fn cycle_line(c: &CycleRecord) -> String {
    let t = &c.tally;
    format!(
        "power cut {}: at {:.3}s (epoch {}), {} blocks in flight, ready after {:.3}s; {} blocks checked: {} lost after flush, {} torn, {} not durable{}, {} other findings",
        c.cycle,
        c.cut_after_s,
        c.epoch,
        c.blocks_in_flight,
        c.ready_after_s,
        t.blocks_checked,
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        if t.not_durable_findings > 0 { " (findings: --plp)" } else { "" },
        t.corrupt + t.misdirected + t.unexpected,
    )
}

/// A cycle as one JSON line (`"type": "power_cut_cycle"`).
pub fn cycle_json(c: &CycleRecord) -> String {
    typed_json("power_cut_cycle", c)
}

/// The whole run as one JSON line (`"type": "power_cut"`).
pub fn record_json(r: &PowerCutRecord) -> String {
    typed_json("power_cut", r)
}

fn typed_json(t: &str, v: &impl Serialize) -> String {
    let mut v = serde_json::to_value(v).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("type".into(), t.into());
    }
    v.to_string()
}

/// Saves the record in `folder` as `<date>-power-cut.yaml`; its path.
pub fn save_record(r: &PowerCutRecord, folder: &Path) -> Result<PathBuf, RunError> {
    let name = crate::session::paths::dated_file_name(SystemTime::now(), "power-cut");
    let path = folder.join(name);
    crate::session::ensure_parent(&path)?;
    crate::session::write_atomic(&path, RECORD, r.to_yaml().as_bytes())?;
    Ok(path)
}

/// Where the record was saved, as a note.
pub fn saved_note(path: &Path) -> String {
    format!("note: power-cut record saved to {}", path.display())
}

/// The verdict line.
pub fn verdict_line(r: &PowerCutRecord) -> String {
    let t = &r.totals;
    format!(
        "power-loss test {}: {} cycles, {} lost after flush, {} torn, {} not durable, {} other findings, {} blocks in flight at the cuts",
        match r.verdict {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Incomplete => "INCOMPLETE",
        },
        r.cycles.len(),
        t.lost_after_flush,
        t.torn,
        t.not_durable + t.not_durable_findings,
        t.corrupt + t.misdirected + t.unexpected,
        r.cycles.iter().map(|c| c.blocks_in_flight).sum::<u64>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_moments_parse() {
        let s = Duration::from_secs;
        assert_eq!(CutAt::parse("fixed 5s"), Ok(CutAt::Fixed(s(5))));
        assert_eq!(CutAt::parse("5s"), Ok(CutAt::Fixed(s(5))));
        assert_eq!(CutAt::parse("random 1s..3s"), Ok(CutAt::Random(s(1), s(3))));
        assert_eq!(CutAt::parse("after 4 epochs"), Ok(CutAt::Epochs(4)));
        assert!(CutAt::parse("random 3s..1s").is_err());
        assert!(CutAt::parse("after 0 epochs").is_err());
        assert!(CutAt::parse("sometime").is_err());
    }

    #[test]
    fn another_drive_is_named_by_what_differs() {
        let a = DriveIdentity {
            size: 100,
            serial: Some("S1".into()),
            wwid: None,
        };
        assert_eq!(a.differs(&a.clone()), None);
        let b = DriveIdentity {
            size: 200,
            serial: Some("S2".into()),
            wwid: None,
        };
        let d = a.differs(&b).unwrap();
        assert!(d.contains("size 200 bytes, was 100") && d.contains("serial S2, was S1"));
    }

    #[test]
    fn a_failing_command_says_its_status() {
        let s = run_command("exit 7");
        assert_eq!(s.code, Some(7));
        assert_eq!(s.to_string(), "exited with status 7");
        assert!(succeeded(&run_command("true")));
    }
}
