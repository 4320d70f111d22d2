//! How a step and a run end, as values: [`EndedBy`] (a step), [`DeviceFault`] (the device
//! failed), [`RunOutcome`] (the whole run), [`VerifyUnsaved`] (a verified step's state not
//! saved), [`Pacing`] (how a paced step's workers kept to their schedule). The engine, the runner, the session and the dashboard decide on these; text is
//! made only where it is shown or stored.
//!
//! The session stores a step's `ended_by` as text (its [`Display`](std::fmt::Display)
//! form, as every release has); [`EndedBy::parse`] reads that text back, so one mapping
//! serves both directions.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How the device failed, ending its step (or, [`FaultKind::Refused`], the kernel refused
/// the step's requests: the step cannot run on this device, which is not blamed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// Every I/O of an interval failed.
    AllFailed,
    /// Every I/O of an interval failed, and the kernel refused each one it named for the
    /// request's shape (EINVAL, EOPNOTSUPP): an error of the requests, not of the drive.
    Refused,
    /// The device went away (ENODEV/ENXIO, its node or sysfs entry gone).
    Gone,
    /// The step's end came while the device still held I/O it never completed.
    Stalled,
}

impl FaultKind {
    pub const ALL: [FaultKind; 4] = [
        FaultKind::AllFailed,
        FaultKind::Refused,
        FaultKind::Gone,
        FaultKind::Stalled,
    ];

    /// The words a stored `ended_by` starts with.
    fn prefix(self) -> &'static str {
        match self {
            FaultKind::AllFailed => "every I/O failed",
            FaultKind::Refused => "every I/O refused by the kernel, not the drive",
            FaultKind::Gone => "device gone",
            FaultKind::Stalled => "device stalled",
        }
    }

    /// What stands before and after the detail, which follows the prefix: " (" and ")"
    /// for the detail in parentheses, ": " and nothing otherwise.
    fn brackets(self) -> (&'static str, &'static str) {
        match self {
            FaultKind::AllFailed | FaultKind::Refused | FaultKind::Gone => (" (", ")"),
            FaultKind::Stalled => (": ", ""),
        }
    }
}

/// The device failed: which way, and what it said (the first error, where it happened).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFault {
    pub kind: FaultKind,
    /// The evidence, as the engine saw it ("3 errors in interval 2; first: read of …").
    pub detail: String,
}

/// Why a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EndedBy {
    /// Its measured time ran out.
    #[default]
    Duration,
    /// Its amount of data was moved.
    Bytes,
    /// The user (a key, a signal) stopped the run.
    Stopped,
    /// The user skipped the step.
    Skipped,
    /// Live steady state was reached (fio style): the step ended early.
    SteadyState,
    /// The drive's temperature was steady by the step's rule.
    TemperatureSteady,
    /// The drive throttled and stayed throttled as long as the step's rule asks.
    Throttled,
    /// The drive cooled back to the run's starting temperature (an idle step).
    Cooled,
    /// The device failed; the run stops (exit code 1).
    Device(DeviceFault),
    /// The link to the target's host broke (ssh ended, the agent was killed): nothing is
    /// known of the drive, which is not blamed; the drive's run stops (exit code 1).
    HostLost(String),
    /// A reason a session of another release stored that this one does not know; kept as
    /// written.
    Other(String),
}

impl EndedBy {
    pub fn device(kind: FaultKind, detail: impl Into<String>) -> EndedBy {
        EndedBy::Device(DeviceFault {
            kind,
            detail: detail.into(),
        })
    }

    /// The device failed: the run must stop and say so.
    pub fn is_device_failure(&self) -> bool {
        matches!(self, EndedBy::Device(_))
    }

    /// The step reached its own end (time or data), as planned.
    pub fn is_own_end(&self) -> bool {
        matches!(self, EndedBy::Duration | EndedBy::Bytes)
    }

    /// The step was cut short from outside its own measure: the user stopped or skipped
    /// it, the device failed, or the host was lost. Such a stop waits for no drain.
    pub fn is_interruption(&self) -> bool {
        matches!(
            self,
            EndedBy::Stopped | EndedBy::Skipped | EndedBy::Device(_) | EndedBy::HostLost(_)
        )
    }

    /// Reads the stored form back (the inverse of `Display`).
    pub fn parse(s: &str) -> EndedBy {
        match s {
            "duration" => return EndedBy::Duration,
            "bytes" => return EndedBy::Bytes,
            "stopped" => return EndedBy::Stopped,
            "skipped" => return EndedBy::Skipped,
            "steady state" => return EndedBy::SteadyState,
            "temperature steady" => return EndedBy::TemperatureSteady,
            "throttled" => return EndedBy::Throttled,
            "cooled" => return EndedBy::Cooled,
            _ => {}
        }
        if let Some(why) = s.strip_prefix(HOST_LOST) {
            return EndedBy::HostLost(why.to_string());
        }
        for kind in FaultKind::ALL {
            if let Some(rest) = s.strip_prefix(kind.prefix()) {
                let (open, close) = kind.brackets();
                let detail = rest
                    .strip_prefix(open)
                    .map(|d| d.strip_suffix(close).unwrap_or(d))
                    .unwrap_or(rest.trim_start());
                return EndedBy::device(kind, detail);
            }
        }
        EndedBy::Other(s.to_string())
    }
}

impl fmt::Display for EndedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndedBy::Duration => f.write_str("duration"),
            EndedBy::Bytes => f.write_str("bytes"),
            EndedBy::Stopped => f.write_str("stopped"),
            EndedBy::Skipped => f.write_str("skipped"),
            EndedBy::SteadyState => f.write_str("steady state"),
            EndedBy::TemperatureSteady => f.write_str("temperature steady"),
            EndedBy::Throttled => f.write_str("throttled"),
            EndedBy::Cooled => f.write_str("cooled"),
            EndedBy::Device(d) => {
                let (open, close) = d.kind.brackets();
                write!(f, "{}{open}{}{close}", d.kind.prefix(), d.detail)
            }
            EndedBy::HostLost(why) => write!(f, "{HOST_LOST}{why}"),
            EndedBy::Other(s) => f.write_str(s),
        }
    }
}

/// The words a stored `ended_by` of a lost host starts with.
const HOST_LOST: &str = "host lost: ";

impl Serialize for EndedBy {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for EndedBy {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(EndedBy::parse(&s))
    }
}

/// A verified step whose verify state could not be saved (`--verify`): the generation map
/// or the journal on disk is behind what the step wrote: the state has no clean end (a
/// later save puts the pages not saved back) and the run's verification record was not
/// kept (exit code 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyUnsaved {
    /// The state's folder.
    pub dir: std::path::PathBuf,
    /// What the system said (shown only).
    pub error: String,
}

impl fmt::Display for VerifyUnsaved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the verify state in {} was not saved: {}",
            self.dir.display(),
            self.error
        )
    }
}

/// How a paced step's workers keep to their schedule (engine/wake.rs), as its first job
/// found it when the step started: each I/O on time (sleeping to a lead before it and
/// spinning the rest), or each sleep to its due time, whose lateness then shows in response
/// time (never in service time), and why. The lead is learnt on while the step runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pacing {
    /// Asleep until `lead_us` before each I/O, spinning the rest.
    OnTime { lead_us: f64 },
    /// As many paced workers as CPUs: none to spare for spinning.
    NoSpareCpu { workers: usize, cpus: usize },
    /// A sleep here ends up to `lead_us` late, over half the `period_us` between I/Os.
    LeadOverHalfPeriod { lead_us: f64, period_us: f64 },
}

/// Who stopped a run early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopBy {
    /// SIGINT, SIGTERM or SIGHUP.
    Signal,
    /// A key in the dashboard.
    User,
}

/// How a whole run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every step ran (or was skipped by the plan's rules); `errors` I/Os failed, the
    /// first of them described by `first_error`.
    Completed {
        errors: u64,
        first_error: Option<String>,
    },
    /// Stopped early.
    Stopped(StopBy),
    /// The device failed in step `step` (its name; `None` for a plain one-step run); the
    /// run stopped there.
    Failed {
        step: Option<String>,
        ended_by: EndedBy,
    },
}

impl RunOutcome {
    /// The one-word state ("completed", "stopped", "failed").
    pub fn word(&self) -> &'static str {
        match self {
            RunOutcome::Completed { .. } => "completed",
            RunOutcome::Stopped(_) => "stopped",
            RunOutcome::Failed { .. } => "failed",
        }
    }

    /// Reads the stored form back (the inverse of `Display`, as [`EndedBy::parse`] is of
    /// its own): the session keeps a run's or a drive's outcome as its `ended_by` text.
    pub fn parse(s: &str) -> RunOutcome {
        if let Some(rest) = s.strip_prefix("completed") {
            let (errors, first_error) = match rest.strip_prefix(" with ") {
                None => (0, None),
                Some(r) => {
                    let (n, tail) = r.split_once(" I/O errors").unwrap_or((r, ""));
                    let first = tail
                        .strip_prefix(" (first: ")
                        .and_then(|t| t.strip_suffix(')'))
                        .map(str::to_string);
                    (n.trim().parse().unwrap_or(0), first)
                }
            };
            return RunOutcome::Completed {
                errors,
                first_error,
            };
        }
        match s {
            "stopped by a signal" => return RunOutcome::Stopped(StopBy::Signal),
            "stopped" => return RunOutcome::Stopped(StopBy::User),
            _ => {}
        }
        // A plain run's failure is its step's reason alone; a preset's names the step first.
        match EndedBy::parse(s) {
            EndedBy::Other(_) => match s.split_once(": ") {
                Some((step, why)) => RunOutcome::Failed {
                    step: Some(step.to_string()),
                    ended_by: EndedBy::parse(why),
                },
                None => RunOutcome::Failed {
                    step: None,
                    ended_by: EndedBy::Other(s.to_string()),
                },
            },
            ended_by => RunOutcome::Failed {
                step: None,
                ended_by,
            },
        }
    }

    /// Why it failed, for the last line and the session.
    pub fn failure(&self) -> Option<String> {
        match self {
            RunOutcome::Failed {
                step: Some(s),
                ended_by,
            } => Some(format!("{s}: {ended_by}")),
            RunOutcome::Failed {
                step: None,
                ended_by,
            } => Some(ended_by.to_string()),
            _ => None,
        }
    }
}

impl fmt::Display for RunOutcome {
    /// What the session's summary stores as `ended_by`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunOutcome::Completed { errors: 0, .. } => f.write_str("completed"),
            RunOutcome::Completed {
                errors,
                first_error: Some(first),
            } => write!(f, "completed with {errors} I/O errors (first: {first})"),
            RunOutcome::Completed { errors, .. } => {
                write!(f, "completed with {errors} I/O errors")
            }
            RunOutcome::Stopped(StopBy::Signal) => f.write_str("stopped by a signal"),
            RunOutcome::Stopped(StopBy::User) => f.write_str("stopped"),
            RunOutcome::Failed { .. } => f.write_str(&self.failure().unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_reads_back_as_itself() {
        let all = [
            EndedBy::Duration,
            EndedBy::Bytes,
            EndedBy::Stopped,
            EndedBy::Skipped,
            EndedBy::SteadyState,
            EndedBy::TemperatureSteady,
            EndedBy::Throttled,
            EndedBy::Cooled,
            EndedBy::device(
                FaultKind::AllFailed,
                "16635 errors in interval 0; first: read of 4096 B at offset 0: Input/output error (os error 5)",
            ),
            EndedBy::device(
                FaultKind::Refused,
                "8 errors in interval 0; first: trim of 4096 B at offset 0 refused by the kernel: \
                 Invalid argument (os error 22) (the request, not a drive error)",
            ),
            EndedBy::device(FaultKind::Gone, "/dev/sda no longer exists; 3 errors in interval 1"),
            EndedBy::device(
                FaultKind::Stalled,
                "1 job(s) still had I/O in flight 1.2s after the stop (/dev/x is not completing it)",
            ),
            EndedBy::HostLost("lab2: ssh ended (exit status 255): Connection reset".into()),
            EndedBy::Other("something a later release says".into()),
        ];
        for e in all {
            let text = e.to_string();
            assert_eq!(EndedBy::parse(&text), e, "{text}");
            let y = serde_yaml::to_string(&e).unwrap();
            assert_eq!(serde_yaml::from_str::<EndedBy>(&y).unwrap(), e, "{y}");
        }
    }

    #[test]
    fn stored_texts_of_the_last_release_read_as_their_kind() {
        let e = EndedBy::parse("every I/O failed (3 errors in interval 2; first: x)");
        assert!(e.is_device_failure());
        assert!(
            EndedBy::parse("device gone (the kernel says: y; 1 errors in interval 0)")
                .is_device_failure()
        );
        assert!(
            EndedBy::parse("device stalled: 1 job(s) still had I/O in flight").is_device_failure()
        );
        assert!(!EndedBy::parse("duration").is_device_failure());
        assert_eq!(EndedBy::parse("steady state"), EndedBy::SteadyState);
    }

    #[test]
    fn run_outcomes_say_what_the_session_stored() {
        let c = RunOutcome::Completed {
            errors: 2,
            first_error: Some("read of 4096 B at offset 0: x".into()),
        };
        assert_eq!(
            c.to_string(),
            "completed with 2 I/O errors (first: read of 4096 B at offset 0: x)"
        );
        assert_eq!(
            RunOutcome::Stopped(StopBy::Signal).to_string(),
            "stopped by a signal"
        );
        let f = RunOutcome::Failed {
            step: Some("sweep 50%".into()),
            ended_by: EndedBy::device(FaultKind::AllFailed, "1 errors in interval 0"),
        };
        assert_eq!(
            f.to_string(),
            "sweep 50%: every I/O failed (1 errors in interval 0)"
        );
        let plain = RunOutcome::Failed {
            step: None,
            ended_by: EndedBy::device(FaultKind::Gone, "/dev/sda no longer exists"),
        };
        let all = [
            c,
            RunOutcome::Completed {
                errors: 0,
                first_error: None,
            },
            RunOutcome::Completed {
                errors: 7,
                first_error: None,
            },
            RunOutcome::Stopped(StopBy::Signal),
            RunOutcome::Stopped(StopBy::User),
            f,
            plain,
        ];
        for o in all {
            assert_eq!(RunOutcome::parse(&o.to_string()), o, "{o}");
        }
    }
}
