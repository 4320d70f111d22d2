//! The kind of a session event ([`EventKind`]), stored by name. The run layer says which
//! kind each of its events is; the dashboard and replay colour them by kind.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of a session event, as the session stores it (by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// Something to read: an engine work-around, a plan change, no telemetry.
    Note,
    /// A phase of the plan began.
    Phase,
    /// A steady-state verdict.
    SteadyState,
    /// A step or the rest of a curve was skipped.
    Skip,
    /// A step finished with I/O errors.
    Errors,
    /// One failed I/O, with its offset and errno.
    IoError,
    /// The run failed with an error.
    Error,
    /// A test file was filled before reads.
    Fill,
    /// The run was stopped early.
    Stopped,
    /// A snapshot was exported.
    Snapshot,
    /// The session was saved somewhere.
    Saved,
    /// A step ended without its summary (the run broke off mid-step).
    StepIncomplete,
    /// The drive's health verdict changed (or was failing when first read).
    Health,
    /// The drive's temperature or throttling: a threshold crossed, a throttle, a soak's
    /// steady temperature or cool-down.
    Thermal,
    /// Wrong data read back in a verified run (its finding as data).
    VerifyFinding,
    /// A verified step's totals (as data).
    Verified,
    /// A verified step's verify state could not be saved (its folder and error as data).
    VerifyUnsaved,
    /// What a run or a step did to the drive: its SMART counters' change beside
    /// drivescope's own count of bytes (as data).
    DriveWear,
    /// New media errors or error log entries the drive reported while the run went on.
    DriveErrors,
    /// The user paused the run: its I/O held from here.
    Paused,
    /// The user resumed the run (how long it stood paused, as data: `{paused_s}`).
    Resumed,
    /// A note the user wrote while the run went on (the dashboard's note key).
    UserNote,
    /// A power-cut run cut the power here (its cycle, epoch and writes in flight as data).
    PowerCut,
    /// A kind this release does not know (a session of a later one); kept as written.
    Other(String),
}

impl EventKind {
    /// Every kind this release knows.
    pub const KNOWN: [EventKind; 23] = [
        EventKind::Note,
        EventKind::Phase,
        EventKind::SteadyState,
        EventKind::Skip,
        EventKind::Errors,
        EventKind::IoError,
        EventKind::Error,
        EventKind::Fill,
        EventKind::Stopped,
        EventKind::Snapshot,
        EventKind::Saved,
        EventKind::StepIncomplete,
        EventKind::Health,
        EventKind::Thermal,
        EventKind::VerifyFinding,
        EventKind::Verified,
        EventKind::VerifyUnsaved,
        EventKind::DriveWear,
        EventKind::DriveErrors,
        EventKind::Paused,
        EventKind::Resumed,
        EventKind::UserNote,
        EventKind::PowerCut,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            EventKind::Note => "note",
            EventKind::Phase => "phase",
            EventKind::SteadyState => "steady_state",
            EventKind::Skip => "skip",
            EventKind::Errors => "errors",
            EventKind::IoError => "io_error",
            EventKind::Error => "error",
            EventKind::Fill => "fill",
            EventKind::Stopped => "stopped",
            EventKind::Snapshot => "snapshot",
            EventKind::Saved => "saved",
            EventKind::StepIncomplete => "step_incomplete",
            EventKind::Health => "health",
            EventKind::Thermal => "thermal",
            EventKind::VerifyFinding => "verify_finding",
            EventKind::Verified => "verified",
            EventKind::VerifyUnsaved => "verify_unsaved",
            EventKind::DriveWear => "drive_wear",
            EventKind::DriveErrors => "drive_errors",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::UserNote => "user_note",
            EventKind::PowerCut => "power_cut",
            EventKind::Other(s) => s,
        }
    }

    /// What an event with no kind reads as.
    pub fn unknown() -> EventKind {
        EventKind::Other(String::new())
    }

    /// The kind a session stored under `name`.
    pub fn parse(name: &str) -> EventKind {
        Self::KNOWN
            .into_iter()
            .find(|k| k.as_str() == name)
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
            assert_eq!(EventKind::parse(k.as_str()), k);
        }
        assert_eq!(EventKind::VerifyUnsaved.as_str(), "verify_unsaved");
        assert_eq!(EventKind::parse("user_note"), EventKind::UserNote);
        assert_eq!(
            EventKind::parse("a later kind"),
            EventKind::Other("a later kind".into())
        );
    }
}
