//! The count of one direction's completed I/Os and their bytes, added up by intervals,
//! jobs and steps.

use serde::{Deserialize, Serialize};

/// Completed I/Os and bytes of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DirCounts {
    pub ios: u64,
    pub bytes: u64,
}

impl DirCounts {
    /// No I/O (a direction a session leaves out of its file: trims of a step without any).
    pub fn is_zero(&self) -> bool {
        self.ios == 0 && self.bytes == 0
    }

    pub fn add(&mut self, o: &DirCounts) {
        self.ios += o.ios;
        self.bytes += o.bytes;
    }
}
