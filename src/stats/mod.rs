//! Latency histograms and per-interval counters: what each worker records, what the
//! collector merges, and the percentile summaries printed and saved.
//!
//! Latencies are recorded in nanoseconds in HdrHistograms covering 1 µs to 60 s at 3
//! significant digits. Percentiles of an interval or of a whole step always come from a
//! merged histogram, never from averaging percentiles.

mod counts;
mod due;
mod hist;
mod interval;
mod job_shape;
mod series;

pub use counts::DirCounts;
pub use due::DueEarlier;
pub use hist::{new_histogram, LatHists, LatSummary};
pub use interval::{
    ArrivalGaps, FailedBy, IntervalReport, IoErrorRecord, StepSummary, WorkerInterval,
    MAX_ERROR_RECORDS_PER,
};
pub use job_shape::JobShape;
pub use series::{JobEnd, SeriesDir, SeriesSummary};
