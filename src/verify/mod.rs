//! Data integrity verification: every 512-byte sector a verified run writes carries a
//! self-describing [`header`] (its byte address, the verify state's random id, the block's
//! write generation, a timestamp and a CRC32C over the sector); [`classify`] turns the
//! bytes read back, with what the generation map expects, into typed [`Finding`]s; the
//! [`state`] module keeps the generation map and the journal of flush epochs on disk.
//! Pure except for `state` (files); I/O errors never become findings.

pub mod classify;
pub mod gen;
pub mod header;
pub mod map;
pub mod state;

pub use classify::{classify_block, BlockCheck, Expect, Finding, FindingKind, Window};
pub use gen::Generation;
pub use header::{stamp_block, HeaderFields, Sector, SECTOR};
