//! The child processes drivescope starts (fio, ssh), each the leader of a process group of
//! its own: a stop reaches the whole group, one that has not ended [`STOP_GRACE`] after
//! SIGTERM is killed with its group, and a second Ctrl-C (which ends drivescope at once)
//! kills every group still registered, from the signal handler ([`kill_registered`]), so
//! that none is left behind.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a child told to end (SIGTERM, or its input closed) has before its group is
/// killed (SIGKILL): fio prints its last dump and ssh closes its session well within it.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// How many groups can be registered at once (a run's fio, one ssh per remote target).
const SLOTS: usize = 256;

/// The registered groups' ids (0: a free slot); read from the signal handler.
static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

/// The headless run's stop flag (set by its signal handlers), for waits that start before
/// the run has its control (a host's handshake).
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Makes `stop` the flag [`stop_requested`] reads (the first call wins).
pub fn watch_stop(stop: Arc<AtomicBool>) {
    let _ = STOP.set(stop);
}

/// Whether the user asked the headless run to stop (SIGINT, SIGTERM, SIGHUP, its output
/// closed).
pub fn stop_requested() -> bool {
    STOP.get().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// A process group in the registry while this lives.
#[derive(Debug)]
pub struct Registered {
    slot: Option<usize>,
}

/// Registers the group `pgid` leads (a child spawned with `process_group(0)`: its pid);
/// with every slot taken it is not registered (a stop still reaches it, a second Ctrl-C
/// does not).
pub fn register(pgid: u32) -> Registered {
    let Ok(id) = i32::try_from(pgid) else {
        return Registered { slot: None };
    };
    let slot = GROUPS.iter().position(|g| {
        g.compare_exchange(0, id, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    });
    Registered { slot }
}

impl Registered {
    /// Leaves the registry (before the group's leader is reaped: its id may then be reused).
    pub fn release(&mut self) {
        if let Some(s) = self.slot.take() {
            GROUPS[s].store(0, Ordering::SeqCst);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.release();
    }
}

/// SIGKILLs every registered group. Async-signal-safe (atomic loads and kill(2)): called
/// from the signal handler on a second signal, just before drivescope exits.
pub fn kill_registered() {
    for g in &GROUPS {
        let id = g.load(Ordering::SeqCst);
        if id > 0 {
            // SAFETY: kill(2) has no memory preconditions; a registered id is a group our
            // own unreaped child leads, so it names no one else's group.
            unsafe {
                libc::kill(-id, libc::SIGKILL);
            }
        }
    }
}

/// Sends `sig` to the group `pgid` leads. The caller has not reaped its leader.
pub fn signal_group(pgid: u32, sig: libc::c_int) {
    if let Ok(id) = libc::pid_t::try_from(pgid) {
        // SAFETY: kill(2) has no memory preconditions; the leader is our unreaped child,
        // so the id names its group and no other.
        unsafe {
            libc::kill(-id, sig);
        }
    }
}

/// Where our child is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    /// Ended, not reaped: its zombie keeps the group's id from being reused, so the group
    /// can still be signalled.
    Ended,
    /// Not our child (reaped already): its id may name anyone now.
    Gone,
}

/// Whether our child `pid` has ended, without reaping it. A pid that is not our child
/// (reaped already) counts as ended.
pub fn has_ended(pid: u32) -> bool {
    state(pid) != State::Running
}

fn state(pid: u32) -> State {
    // SAFETY: siginfo_t is plain data; all zeroes is a valid value (si_pid 0: nothing).
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid writes only into `info`, which lives through the call; WNOWAIT
    // leaves the child for its `Child` to reap.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return State::Gone;
    }
    // SAFETY: waitid filled `info` (or left it zeroed); si_pid is valid for SIGCHLD info.
    match unsafe { info.si_pid() } {
        0 => State::Running,
        _ => State::Ended,
    }
}

/// Ends our child `child` (leading its own group): waits up to `patience` for it to end on
/// its own, then SIGTERMs its group and waits up to [`STOP_GRACE`], then SIGKILLs the
/// group; once it has ended, SIGKILLs what is left of its group (processes it started and
/// left behind) before reaping it. A child reaped already is only released.
pub fn end_group(
    child: &mut std::process::Child,
    registered: &mut Registered,
    patience: Duration,
) -> std::io::Result<std::process::ExitStatus> {
    let pid = child.id();
    if state(pid) == State::Gone {
        registered.release();
        return child.wait();
    }
    if !wait_for_end(pid, patience) {
        signal_group(pid, libc::SIGCONT);
        signal_group(pid, libc::SIGTERM);
        if !wait_for_end(pid, STOP_GRACE) {
            signal_group(pid, libc::SIGKILL);
        }
    }
    if state(pid) == State::Ended {
        signal_group(pid, libc::SIGKILL);
    }
    registered.release();
    child.wait()
}

/// Whether `pid` ended within `wait` (checked every 10 ms).
fn wait_for_end(pid: u32, wait: Duration) -> bool {
    let until = Instant::now() + wait;
    loop {
        if has_ended(pid) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
