//! The preset file's serde model. Every struct denies unknown keys, so a misspelt key is an
//! error (with the nearest valid key suggested by [`super::parse_str`]) rather than silently
//! ignored. Cross-field rules (exactly one of `bs`/`bssplit`, a rate that names an earlier
//! phase, …) are checked afterwards, in the `validate` module.

use std::fmt;

use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::values::Metric;
use super::values::{
    Amount, BlockSize, Count, Criterion, DataAmount, DeltaC, Dur, Percent, RateValue, ReadShare,
};
use crate::workload::{Arrivals, EngineKind, JobRegion, RwMode};

/// A preset: which published method it reproduces, and its phases in order.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// Short kebab-case identifier (`storagereview-4k-randread`).
    pub id: String,
    pub name: String,
    /// Which published method this reproduces, or that it approximates one and how.
    pub description: String,
    pub phases: Vec<Phase>,
    /// Verify the data it writes: `reads` (every read checked) or `readback` (a read-back
    /// pass of the region after the last step); see `drivescope run --verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifyMode>,
    /// Where the preset came from: `builtin`, or the file's path.
    #[serde(skip)]
    pub origin: String,
}

/// One phase: a workload, how each of its steps ends, a ramp, and a rate or a sweep.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    /// Name of the phase, unique within the preset; rates refer to phases by it.
    pub name: String,
    /// The I/O, or `idle` (no I/O: a cool-down that watches the drive).
    pub workload: Work,
    /// Run the workload once per combination of these values (SNIA's test matrices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Matrix>,
    pub end: EndSpec,
    /// Warm-up before each step's measurement (fio `ramp_time`).
    #[serde(default)]
    pub ramp: Dur,
    /// Rate of every step of the phase; `max` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateValue>,
    /// An iorate sweep: a probe at `max`, then one step per percentage of its result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSpec>,
    /// Repeat the phase's steps in rounds until SNIA's steady state holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsSpec>,
    /// Run each step several times (CrystalDiskMark's test count, SNIA HIR's bursts with
    /// a wait after each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsSpec>,
    /// Take each step's threads and queue depth from an operating point of an earlier
    /// phase of rounds over a threads x queue depth matrix (SNIA DIRTH's max/mid/min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape_from: Option<ShapeFromSpec>,
    /// The phase prepares the drive for the test (SNIA's workload-independent
    /// preconditioning): run and saved as any phase, never a session's headline, four
    /// corners or best-of figure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preparation: bool,
}

/// Where a phase's threads x queue depth come from: `point` of phase `phase`'s last
/// round.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeFromSpec {
    pub phase: String,
    pub point: OperatingPoint,
}

/// An operating point of a demand-intensity curve (SNIA DIRTH, as ADATA's
/// implementation picks it from the last round's combinations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatingPoint {
    /// The most IOPS among the combinations whose mean response time is under 5 ms.
    Max,
    /// Among those, the IOPS closest to the mean of their most and least.
    Mid,
    /// The least outstanding I/O (1 thread x QD 1).
    Min,
}

/// Runs of each step of a phase: `count` runs one after the other, `idle` of no I/O after
/// each, a `warmup` before the first left out of its figures, and `pick` to make one
/// figure of them (each run stands alone without it).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunsSpec {
    pub count: Count,
    /// No I/O for this long after each run (SNIA HIR's wait states); none when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<Dur>,
    /// I/O before the first run, left out of its figures (CrystalDiskMark's preparation
    /// pass); added to the phase's ramp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Dur>,
    /// `best` (CrystalDiskMark) or `mean` (KDiskMark's default profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<crate::workload::RunPick>,
}

/// What a phase does: I/O, or nothing while the drive is watched (`workload: idle`).
#[derive(Debug, Clone, PartialEq)]
pub enum Work {
    Io(WorkloadSpec),
    Idle,
}

impl Work {
    /// The workload, unless the phase is idle.
    pub fn io(&self) -> Option<&WorkloadSpec> {
        match self {
            Work::Io(w) => Some(w),
            Work::Idle => None,
        }
    }
}

impl<'de> Deserialize<'de> for Work {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Work;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a workload ({rw: .., bs: .., iodepth: ..}) or idle")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Work, E> {
                match v.trim() {
                    "idle" => Ok(Work::Idle),
                    other => Err(E::custom(format!(
                        "'{other}' is not a workload: give a map ({{rw: .., bs: .., iodepth: ..}}) or idle"
                    ))),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Work, A::Error> {
                WorkloadSpec::deserialize(MapAccessDeserializer::new(map)).map(Work::Io)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Work {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Work::Io(w) => w.serialize(s),
            Work::Idle => s.serialize_str("idle"),
        }
    }
}

/// The engine's options, as written in a preset.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub rw: RwMode,
    /// Read share of `rw`/`randrw`; fio's default, 50%, when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<ReadShare>,
    /// Trim share of `rw`/`randrw`, percent of all I/Os (the rest split by `rwmixread`);
    /// drivescope's own, fio has none. No trims when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixtrim: Option<ReadShare>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<BlockSize>,
    /// fio's `bssplit` syntax: `4k/60:8k/30:64k/10`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<BsSplit>,
    pub iodepth: Count,
    #[serde(default = "one")]
    pub jobs: Count,
    /// The part of the target to work on; the whole target when absent.
    #[serde(
        default,
        deserialize_with = "region_opt",
        skip_serializing_if = "Option::is_none"
    )]
    pub region: Option<RegionSpec>,
    /// How paced I/Os arrive (`uniform` or `poisson`); uniform when absent. Only steps with
    /// a rate (a fixed rate, a percentage of a phase, a sweep's points) are paced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Sequential patterns: each job streams over its own slice of the region (`slice`,
    /// the default) or over the whole region (`whole`, fio's `size=100%` jobs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_region: Option<JobRegion>,
    /// Random patterns: where the offsets fall, in fio's syntax: `random` (uniform, the
    /// default) or `zoned:IO%/RANGE%:…` (`zoned:50/5:30/15:20/80`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_distribution: Option<crate::workload::Access>,
    /// The engine of the phase's steps: `io_uring`, `sync`, `nop` (io_uring NOPs: the
    /// engine's own ceiling, no I/O to the target) or `uring-cmd` (NVMe passthrough on
    /// /dev/ngXnY); the run's engine when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineKind>,
    /// Polled completions (IORING_SETUP_IOPOLL): NVMe devices with poll queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hipri: Option<bool>,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL, idle 1 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll: Option<bool>,
    /// Sequential writes as NVMe Zone Append commands (`rw: write`, the uring-cmd engine
    /// on a zoned namespace's /dev/ngXnY); plain writes when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_append: Option<bool>,
}

fn one() -> Count {
    Count(1)
}

/// A block-size split in fio syntax, checked when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BsSplit(pub crate::workload::BlockSizes);

impl<'de> Deserialize<'de> for BsSplit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::workload::BlockSizes::parse_split(&s)
            .map(BsSplit)
            .map_err(de::Error::custom)
    }
}

impl Serialize for BsSplit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let parts: Vec<String> = self
            .0
            .split
            .iter()
            .map(|(b, w)| format!("{}/{w}", crate::units::format_size(*b)))
            .collect();
        s.serialize_str(&parts.join(":"))
    }
}

/// The part of the target a phase works on: `25%`, `10GiB`, or `{offset: 50%, size: 10GiB}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RegionSpec {
    pub offset: Amount,
    /// From `offset` to the end of the target when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Amount>,
}

fn zero_offset() -> Amount {
    Amount::Bytes(0)
}

fn region_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RegionSpec>, D::Error> {
    region_from(d).map(Some)
}

/// Reads a region either as a bare size/percentage or as a map.
pub fn region_from<'de, D: Deserializer<'de>>(d: D) -> Result<RegionSpec, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = RegionSpec;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a region: 25%, 10GiB, or {offset: .., size: ..}")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<RegionSpec, E> {
            let size = Amount::deserialize(de::value::StrDeserializer::<E>::new(v))?;
            Ok(RegionSpec {
                offset: Amount::Bytes(0),
                size: Some(size),
            })
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<RegionSpec, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RegionSpec, A::Error> {
            #[derive(Deserialize)]
            #[serde(deny_unknown_fields)]
            struct Map {
                #[serde(default = "zero_offset")]
                offset: Amount,
                size: Option<Amount>,
            }
            let m = Map::deserialize(MapAccessDeserializer::new(map))?;
            Ok(RegionSpec {
                offset: m.offset,
                size: m.size,
            })
        }
    }
    d.deserialize_any(V)
}

/// How each step of the phase ends: the first of a duration and an amount of data; a
/// fio-style steady-state rule may end it earlier.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EndSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Dur>,
    /// A multiple of the region (`2x`) or a size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataAmount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadySpec>,
    /// Steady state on the drive's composite temperature: the step ends once the
    /// least-squares line through the temperatures of the last `window` moves less than
    /// `slope` across it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<TemperatureSpec>,
    /// The step ends once the drive has throttled and stayed throttled this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<Dur>,
    /// An idle phase ends once the temperature is back within this of the run's first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooled: Option<DeltaC>,
}

/// Steady state on temperature: under `slope` across `window` (0.5C per 5m).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TemperatureSpec {
    /// The most the least-squares line may move across the window.
    pub slope: DeltaC,
    pub window: Dur,
}

/// fio's steady state (`ss`, `ss_dur`, `ss_ramp`), evaluated on one sample per interval.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SteadySpec {
    /// `iops:X%`, `iops_slope:X%`, `bw:X%` or `bw_slope:X%`.
    pub criterion: Criterion,
    /// The window the criterion looks at (fio `ss_dur`).
    pub window: Dur,
    /// Time left out before samples count (fio `ss_ramp`).
    #[serde(default)]
    pub ramp: Dur,
}

/// An iorate sweep.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSpec {
    /// `storagereview` (10, 20, …, 120 %, the default), `vdbench` (10, 50, 70, 80, 90,
    /// 100 %) or a list of percentages.
    #[serde(default)]
    pub points: SweepPoints,
    /// vdbench's `stopcurve`: the sweep's remaining points are skipped once a point's mean
    /// response time is above this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopcurve: Option<Dur>,
}

/// The percentages a sweep steps through.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SweepPoints {
    #[default]
    StorageReview,
    Vdbench,
    List(Vec<f64>),
}

impl SweepPoints {
    /// The percentages, in the order they run.
    pub fn percents(&self) -> Vec<f64> {
        match self {
            SweepPoints::StorageReview => (1..=12).map(|i| f64::from(i) * 10.0).collect(),
            SweepPoints::Vdbench => vec![10.0, 50.0, 70.0, 80.0, 90.0, 100.0],
            SweepPoints::List(v) => v.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for SweepPoints {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SweepPoints;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("storagereview, vdbench, or a list of percentages")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SweepPoints, E> {
                match v.trim() {
                    "storagereview" => Ok(SweepPoints::StorageReview),
                    "vdbench" => Ok(SweepPoints::Vdbench),
                    other => Err(E::custom(format!(
                        "'{other}' is not a curve (storagereview, vdbench, or a list of percentages)"
                    ))),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SweepPoints, A::Error> {
                let mut out = Vec::new();
                while let Some(Percent(p)) = seq.next_element::<Percent>()? {
                    if p <= 0.0 {
                        return Err(de::Error::custom("a sweep point of 0% never issues an I/O"));
                    }
                    out.push(p);
                }
                Ok(SweepPoints::List(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for SweepPoints {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SweepPoints::StorageReview => s.serialize_str("storagereview"),
            SweepPoints::Vdbench => s.serialize_str("vdbench"),
            SweepPoints::List(v) => {
                let list: Vec<Percent> = v.iter().map(|p| Percent(*p)).collect();
                list.serialize(s)
            }
        }
    }
}

/// Values to combine: the phase runs one step per combination, read share in the outer
/// loop and block size inside it (the order of SNIA's PTS), then jobs, then iodepth (a
/// latency map over queue shapes).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rwmixread: Vec<ReadShare>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bs: Vec<BlockSize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<Count>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iodepth: Vec<Count>,
}

/// SNIA's rounds: the phase's steps repeat until the tracked value is steady over a window
/// of rounds, or the most rounds have run.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RoundsSpec {
    /// Window of consecutive rounds (SNIA: 5).
    #[serde(default = "snia_window")]
    pub window: Count,
    /// Most rounds (SNIA: 25).
    #[serde(default = "snia_max")]
    pub max: Count,
    /// Largest allowed max − min, in % of the window average (SNIA: 20%).
    #[serde(default = "snia_range")]
    pub range: Percent,
    /// Largest allowed excursion of the least-squares line, in % of the average (SNIA: 10%).
    #[serde(default = "snia_slope")]
    pub slope: Percent,
    /// Which step of the round is tracked (by its matrix values) and what is measured.
    pub track: Track,
    /// A write that opens each round, run and saved as a step but none of the round's
    /// combinations (SNIA DIRTH's and ECW's 5-minute TC 32 / QD 32 pre-write of a round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prewrite: Option<Prewrite>,
}

/// A round's pre-write: the phase's workload (region, block sizes, access distribution) as
/// a write pattern at its own shape, for `duration` (time-scaled as the phase's own).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Prewrite {
    pub rw: RwMode,
    /// One block size instead of the phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<BlockSize>,
    pub iodepth: Count,
    #[serde(default = "one")]
    pub jobs: Count,
    pub duration: Dur,
}

fn snia_window() -> Count {
    Count(5)
}
fn snia_max() -> Count {
    Count(25)
}
fn snia_range() -> Percent {
    Percent(20.0)
}
fn snia_slope() -> Percent {
    Percent(10.0)
}

/// The tracked step of a round and its metric.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Track {
    pub metric: Metric,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rwmixread: Option<ReadShare>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bs: Option<BlockSize>,
    /// The tracked step's jobs, in a matrix over jobs (SNIA DIRTH's TC 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Count>,
    /// The tracked step's queue depth, in a matrix over queue depths (DIRTH's QD 32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iodepth: Option<Count>,
}
