//! The target of a step as every engine is given it.

use std::path::PathBuf;
use std::sync::Arc;

/// The target as the engine needs it: where, how large, its O_DIRECT alignment.
#[derive(Debug, Clone)]
pub struct StepTarget {
    pub path: PathBuf,
    pub size: u64,
    /// Offset and length alignment for O_DIRECT (the logical block size), bytes.
    pub align: u64,
    /// A verified run's state (`--verify`): writes stamp full headers and every read is
    /// checked against the generation map.
    pub verify: Option<Arc<crate::verify::VerifyState>>,
}
