//! A prepared run's locks on its targets ([`RunLocks`]): taken once every target is
//! prepared and every other check passed, before the session exists and before any I/O
//! (`prepare::lock`), and held until the prepared run is dropped, so that no other run
//! slips in between its steps. Shared for a target the run only reads, exclusive for one
//! it writes or fills; the same lock whatever runs the target (the in-process engines, an
//! fio job file's targets, a verified run, a remote host's agent): see
//! `engine::native::target_lock`.

use crate::engine_list::TargetLock;

/// The locks a prepared run holds on its targets. A copy of the run (the one its `Started`
/// event carries to the session and the sinks) holds none: the locks are the prepared
/// run's own and go with it, so that nothing keeping a copy keeps a target locked.
#[derive(Debug, Default)]
pub struct RunLocks(Vec<TargetLock>);

impl Clone for RunLocks {
    fn clone(&self) -> Self {
        RunLocks::default()
    }
}

impl RunLocks {
    pub(super) fn new(locks: Vec<TargetLock>) -> RunLocks {
        RunLocks(locks)
    }

    /// The locks held (none for a copy, or for a run on a remote host, whose agent holds
    /// its own).
    pub fn held(&self) -> &[TargetLock] {
        &self.0
    }
}
