//! The agent's protocol: one JSON object per line, each way. The controller sends
//! [`ToAgent`] requests on the agent's stdin; the agent answers with [`FromAgent`] records
//! on its stdout. A version handshake comes first; then the target is prepared (the write
//! guard runs on the agent's host), its steps checked, its telemetry streamed, and steps run
//! one at a time, each interval answered by the controller (go on, or end the step and why).

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use crate::host::{PrepareRequest, PreparedReply};
use crate::outcome::EndedBy;
use crate::stats::{IntervalReport, IoErrorRecord, LatHists, StepSummary};
use crate::telemetry::TelemetrySample;
use crate::workload::StepSpec;

/// The protocol's version: both sides must speak the same one (2: `started`, after which
/// the test file the agent made stays; before it, the agent removes that file when it ends;
/// 3: a workload's `access`, which an agent of 2 would drop and draw uniformly; 4: `lock`,
/// the target's run lock, which an agent of 3 would not take).
pub const PROTOCOL: u32 = 4;

/// drivescope's own version, as the handshake states it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The longest line either end reads. The largest records are a step's request or summary
/// (with a job file's per-job series) and an interval carrying its latency histograms, tens
/// to a few hundred KiB; 8 MiB is far past any of them, and bounds what a broken or hostile
/// peer can make the other hold.
pub const LINE_MAX: usize = 8 << 20;

/// A request to the agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    /// The handshake (also sent again as a clock probe).
    Hello {
        protocol: u32,
        version: String,
    },
    /// Make the target ready: the write guard runs here, on the host that owns it.
    Prepare(PrepareRequest),
    /// Check the steps against the prepared target before anything runs.
    Check {
        steps: Vec<StepSpec>,
    },
    /// Lock the prepared target for the run (exclusively when it writes or fills it, else
    /// shared), held until the agent ends.
    Lock {
        exclusive: bool,
    },
    /// Stream the target's drive telemetry, a sample every `period_ms`.
    Telemetry {
        period_ms: Option<u64>,
    },
    /// Fill a never-written test file before reads: with O_DIRECT unless the run goes
    /// through the page cache (`--direct 0`).
    Fill {
        #[serde(default = "yes")]
        direct: bool,
    },
    /// The run has started (its session exists): the test file the agent made for it stays.
    /// An agent that ends before this (the run refused after the prepare) removes it.
    Started,
    /// Run one step on the prepared target.
    Step {
        spec: Box<StepSpec>,
    },
    /// The controller's answer to interval `index`: go on, or end the step for this reason.
    Answer {
        index: u64,
        end: Option<EndedBy>,
    },
    Pause,
    Resume,
    /// End the step (or fill) now, as stopped.
    Stop,
    /// The controller is done: the agent exits.
    Bye,
}

fn yes() -> bool {
    true
}

/// A record from the agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    /// The handshake's answer: the agent's versions and its clocks when it answered
    /// (monotonic since the agent started, and wall time since the Unix epoch).
    Hello {
        protocol: u32,
        version: String,
        mono_ns: u64,
        wall_ns: u64,
    },
    Prepared(Box<PreparedReply>),
    /// The steps can run.
    Checked,
    /// The target is locked for the run.
    Locked,
    /// A request could not be done, in the agent's words; `refused` is a refusal of the
    /// input (the guard, a bad step), else a failure of the host.
    Failed {
        message: String,
        refused: bool,
    },
    /// A telemetry sample, `t_ns` on the agent's monotonic clock since it started.
    Telemetry {
        sample: Box<TelemetrySample>,
    },
    /// The fill's progress.
    Show {
        text: String,
    },
    /// The fill is done: what it did (the session's fill event), or `None` when the
    /// target needed none, with what was said instead.
    Filled {
        summary: Option<Box<StepSummary>>,
        notes: Vec<String>,
    },
    Interval(Box<WireInterval>),
    Note {
        text: String,
    },
    StepDone {
        summary: Box<StepSummary>,
    },
    /// Records the agent dropped rather than stall its engine on a slow link.
    Dropped {
        records: u64,
    },
}

impl FromAgent {
    /// The handshake's answer of drivescope `version`: its clocks now (monotonic since
    /// `origin`, when the agent started; wall time since the Unix epoch).
    pub fn hello(version: &str, origin: std::time::Instant) -> FromAgent {
        let wall_ns = std::time::SystemTime::now()
            .duration_since(std::time::SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        FromAgent::Hello {
            protocol: PROTOCOL,
            version: version.into(),
            mono_ns: origin.elapsed().as_nanos() as u64,
            wall_ns,
        }
    }
}

/// An interval with what its serde form leaves out: its failed I/Os and its latency
/// histograms (compressed, base64), so the controller's session totals stay exact.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireInterval {
    pub report: IntervalReport,
    #[serde(default)]
    pub errors: Vec<IoErrorRecord>,
    pub hists: Option<WireHists>,
}

impl WireInterval {
    pub fn of(r: &IntervalReport) -> WireInterval {
        WireInterval {
            report: r.without_hists(),
            errors: r.error_records.clone(),
            hists: r.hists.as_deref().map(WireHists::of),
        }
    }

    /// The interval as the engine gave it.
    pub fn into_report(self) -> IntervalReport {
        let mut r = self.report;
        r.error_records = self.errors;
        r.hists = self.hists.and_then(|h| h.to_hists()).map(Box::new);
        r
    }
}

/// [`LatHists`] on the wire: each histogram in HdrHistogram's V2 encoding, base64.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireHists {
    pub service: [String; 2],
    pub response: Option<[String; 2]>,
    /// The trims' service and response histograms (absent from an agent of a release
    /// before trims had their own: its trims, if any, were in the writes').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<WireTrim>,
}

/// The trims' histograms on the wire.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireTrim {
    pub service: String,
    pub response: Option<String>,
}

fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    let _ = V2Serializer::new().serialize(h, &mut buf);
    base64::engine::general_purpose::STANDARD.encode(buf)
}

fn decode(s: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}

impl WireHists {
    pub fn of(h: &LatHists) -> WireHists {
        WireHists {
            service: [encode(&h.service[0]), encode(&h.service[1])],
            response: h.response.as_ref().map(|r| [encode(&r[0]), encode(&r[1])]),
            trim: (!h.service[2].is_empty()).then(|| WireTrim {
                service: encode(&h.service[2]),
                response: h.response.as_ref().map(|r| encode(&r[2])),
            }),
        }
    }

    /// The histograms, or `None` when one does not decode.
    pub fn to_hists(&self) -> Option<LatHists> {
        let trim = |t: Option<&String>| match t {
            Some(s) => decode(s),
            None => Some(crate::stats::new_histogram()),
        };
        let three =
            |a: &[String; 2], t: Option<&String>| Some([decode(&a[0])?, decode(&a[1])?, trim(t)?]);
        let t = self.trim.as_ref();
        Some(LatHists {
            service: three(&self.service, t.map(|t| &t.service))?,
            response: match &self.response {
                Some(r) => Some(three(r, t.and_then(|t| t.response.as_ref()))?),
                None => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_cross_the_wire_whole() {
        let mut h = LatHists::new(true);
        for v in [1_000u64, 2_000, 50_000, 7_000_000] {
            h.service[0].record(v).unwrap();
            h.response.as_mut().unwrap()[1].record(v * 2).unwrap();
        }
        let json = serde_json::to_string(&WireHists::of(&h)).unwrap();
        let back: WireHists = serde_json::from_str(&json).unwrap();
        let back = back.to_hists().unwrap();
        assert_eq!(back.service[0], h.service[0]);
        assert_eq!(back.service[1].len(), 0);
        assert!(
            back.service[2].is_empty() && !json.contains("trim"),
            "{json}"
        );
        h.service[2].record(3_000).unwrap();
        h.response.as_mut().unwrap()[2].record(9_000).unwrap();
        let json = serde_json::to_string(&WireHists::of(&h)).unwrap();
        let wire: WireHists = serde_json::from_str(&json).unwrap();
        let back3 = wire.to_hists().unwrap();
        assert_eq!(back3.service[2], h.service[2]);
        assert_eq!(
            back3.response.as_ref().unwrap()[2],
            h.response.as_ref().unwrap()[2]
        );
        assert_eq!(back.response.unwrap()[1], h.response.unwrap()[1]);
    }

    #[test]
    fn requests_are_tagged_json_lines() {
        let s = serde_json::to_string(&ToAgent::Answer {
            index: 3,
            end: Some(EndedBy::SteadyState),
        })
        .unwrap();
        assert_eq!(s, r#"{"type":"answer","index":3,"end":"steady state"}"#);
        let back: ToAgent = serde_json::from_str(&s).unwrap();
        assert!(matches!(
            back,
            ToAgent::Answer {
                index: 3,
                end: Some(EndedBy::SteadyState)
            }
        ));
    }
}
