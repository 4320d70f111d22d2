//! The kind of a session event ([`EventKind`]), stored by name. The run layer says which
//! kind each of its events is; the dashboard and replay colour them by kind.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of a session event ([`EventKind`]), each known kind with the name the session
/// stores it by, and a kind this release does not know (`Other`).
macro_rules! kinds {
    ($( $(#[$doc:meta])* $kind:ident = $name:literal, )*) => {
        /// The kind of a session event, as the session stores it (by name).
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum EventKind {
            $( $(#[$doc])* $kind, )*
            /// A kind this release does not know (a session of a later one); kept as written.
            Other(String),
        }

        impl EventKind {
            /// Every kind this release knows.
            pub const KNOWN: &[EventKind] = &[$(EventKind::$kind),*];

            pub fn as_str(&self) -> &str {
                match self {
                    $(EventKind::$kind => $name,)*
                    EventKind::Other(s) => s,
                }
            }
        }
    };
}

kinds! {
    /// Something to read: an engine work-around, a plan change, no telemetry.
    Note = "note",
    /// A phase of the plan began.
    Phase = "phase",
    /// A steady-state verdict.
    SteadyState = "steady_state",
    /// A step or the rest of a curve was skipped.
    Skip = "skip",
    /// A step finished with I/O errors.
    Errors = "errors",
    /// One failed I/O, with its offset and errno.
    IoError = "io_error",
    /// The run failed with an error.
    Error = "error",
    /// A test file was filled before reads.
    Fill = "fill",
    /// The run was stopped early.
    Stopped = "stopped",
    /// A snapshot was exported.
    Snapshot = "snapshot",
    /// The session was saved somewhere.
    Saved = "saved",
    /// A step ended without its summary (the run broke off mid-step).
    StepIncomplete = "step_incomplete",
    /// The drive's health verdict changed (or was failing when first read).
    Health = "health",
    /// The drive's temperature or throttling: a threshold crossed, a throttle, a soak's
    /// steady temperature or cool-down.
    Thermal = "thermal",
    /// Wrong data read back in a verified run (its finding as data).
    VerifyFinding = "verify_finding",
    /// A verified step's totals (as data).
    Verified = "verified",
    /// A verified step's verify state could not be saved (its folder and error as data).
    VerifyUnsaved = "verify_unsaved",
    /// What a run or a step did to the drive: its SMART counters' change beside
    /// drivescope's own count of bytes (as data).
    DriveWear = "drive_wear",
    /// New media errors or error log entries the drive reported while the run went on.
    DriveErrors = "drive_errors",
    /// The user paused the run: its I/O held from here.
    Paused = "paused",
    /// The user resumed the run (how long it stood paused, as data: `{paused_s}`).
    Resumed = "resumed",
    /// A note the user wrote while the run went on (the dashboard's note key).
    UserNote = "user_note",
    /// A power-cut run cut the power here (its cycle, epoch and writes in flight as data).
    PowerCut = "power_cut",
}

impl EventKind {
    /// What an event with no kind reads as.
    pub fn unknown() -> EventKind {
        EventKind::Other(String::new())
    }

    /// The kind a session stored under `name`.
    pub fn parse(name: &str) -> EventKind {
        Self::KNOWN
            .iter()
            .find(|k| k.as_str() == name)
            .cloned()
            .unwrap_or_else(|| EventKind::Other(name.to_string()))
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(EventKind::parse(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::EventKind;

    #[test]
    fn every_kind_reads_back_from_its_name() {
        for k in EventKind::KNOWN {
            assert_eq!(EventKind::parse(k.as_str()), *k);
        }
        assert_eq!(EventKind::VerifyUnsaved.as_str(), "verify_unsaved");
        assert_eq!(EventKind::parse("user_note"), EventKind::UserNote);
        assert_eq!(
            EventKind::parse("a later kind"),
            EventKind::Other("a later kind".into())
        );
    }
}
