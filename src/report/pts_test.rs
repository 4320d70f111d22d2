//! Which SNIA PTS test a session ran, by its preset's id: the one place the report names
//! the tests that have a page of their own.

use crate::session::Session;

/// A SNIA PTS test with a report page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtsTest {
    Iops,
    Throughput,
    Latency,
    Hir,
    Xsr,
    /// DIRTH, and ECW, which runs DIRTH's flow on its composite workload: the same page.
    Dirth,
}

impl PtsTest {
    pub fn of(s: &Session) -> Option<PtsTest> {
        match s.preset_info().id?.as_str() {
            "snia-iops" => Some(PtsTest::Iops),
            "snia-throughput" | "snia-fio-throughput" => Some(PtsTest::Throughput),
            "snia-latency" => Some(PtsTest::Latency),
            "snia-hir" => Some(PtsTest::Hir),
            "snia-xsr" => Some(PtsTest::Xsr),
            "snia-dirth" | "snia-ecw" => Some(PtsTest::Dirth),
            _ => None,
        }
    }

    /// The tests whose figures are steady-state window averages (`pts_steady`'s pages).
    pub fn of_steady_state(s: &Session) -> Option<PtsTest> {
        PtsTest::of(s)
            .filter(|t| matches!(t, PtsTest::Iops | PtsTest::Throughput | PtsTest::Latency))
    }

    pub fn title(self) -> &'static str {
        match self {
            PtsTest::Iops => "SNIA PTS IOPS",
            PtsTest::Throughput => "SNIA PTS Throughput",
            PtsTest::Latency => "SNIA PTS Latency",
            PtsTest::Hir => "SNIA Host Idle Recovery",
            PtsTest::Xsr => "SNIA Cross Stimulus Recovery",
            PtsTest::Dirth => "SNIA Demand Intensity / Response Time",
        }
    }
}
