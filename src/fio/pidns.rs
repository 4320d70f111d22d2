//! fio's PID namespace: fio's main process is the first process (init) of a PID namespace
//! of its own, so that when it ends, however it ends, the kernel kills every process it
//! left (fio's job processes are forks that outlive it otherwise); a keeper process
//! between drivescope and fio ends fio when drivescope ends (both by `PR_SET_PDEATHSIG`).
//!
//! Called in the child between fork and exec, after `unshare(CLONE_NEWPID)` (which puts
//! the caller's next child, not the caller, in the new namespace): it forks once more. The
//! caller becomes the keeper, which never returns: it closes every descriptor (so that
//! fio's output closes with fio, and `Command::spawn`'s exec-error pipe closes at fio's
//! exec), waits for fio, and exits as fio did (its code, or the same signal). The new
//! child, pid 1 of the namespace, returns to exec fio. Both stay in the process group
//! drivescope signals; the keeper ignores the signals that end fio (fio takes them from
//! the group itself) and stops with the group.

use std::io;

/// Forks fio's init in the PID namespace made by the caller's `unshare(CLONE_NEWPID)`;
/// returns in that child only (the caller keeps it and exits as it does).
pub(super) fn fork_into() -> io::Result<()> {
    // SAFETY: fork(2) in the single-threaded child of a spawn: the new process makes only
    // system calls until it execs (the caller's contract), and the keeper below only
    // system calls until it exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // fio's main process: it ends when its keeper does (drivescope killed).
        return die_with_parent();
    }
    keep(pid)
}

/// `PR_SET_PDEATHSIG(SIGKILL)`: this process is killed when its parent's thread ends.
pub(super) fn die_with_parent() -> io::Result<()> {
    // SAFETY: prctl(2) with plain values.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The keeper: waits for fio (`pid`) and exits as it did. Never returns.
fn keep(pid: libc::pid_t) -> ! {
    // SAFETY: each call takes plain values or a pointer to `status`, which lives through
    // it; signal(2) sets dispositions to SIG_IGN / SIG_DFL only (no handler runs here).
    unsafe {
        // Killed with drivescope (the thread that spawned it waits for it): fio then dies
        // with its keeper, and its namespace with it.
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1] {
            libc::signal(sig, libc::SIG_IGN);
        }
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        let mut status: libc::c_int = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}
