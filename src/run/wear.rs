//! What a run and each of its steps did to the drive: a SMART reading at each edge (read
//! there and then where the drive is this machine's, else the latest streamed sample's),
//! the bytes drivescope moved in between, and their difference as a [`WearSpan`].

use crate::drive::{Disk, SysRoot};
use crate::stats::IntervalReport;
use crate::telemetry::reading::SmartReading;
use crate::telemetry::{DriveWear, SmartSource, WearSpan};

/// A span's start: the reading before it and the bytes moved since.
struct Edge {
    before: SmartReading,
    written: u64,
    read: u64,
}

impl Edge {
    fn span(self, step: Option<usize>, after: &SmartReading) -> Option<WearSpan> {
        let drive = DriveWear::between(&self.before, after);
        (!drive.is_empty()).then_some(WearSpan {
            step,
            drivescope_written_bytes: self.written,
            drivescope_read_bytes: self.read,
            drive,
        })
    }
}

/// The run's and the current step's edges.
pub(super) struct WearWatch {
    source: SmartSource,
    disk: Option<Disk>,
    /// The latest reading a sample brought (a drive on another host).
    latest: Option<SmartReading>,
    run: Option<Edge>,
    step: Option<(usize, Edge)>,
}

impl WearWatch {
    /// Reads `disk` at each edge; `None`: the samples' latest reading is taken.
    pub(super) fn new(disk: Option<Disk>) -> Self {
        WearWatch {
            source: SmartSource::default(),
            disk,
            latest: None,
            run: None,
            step: None,
        }
    }

    /// A reading a telemetry sample brought.
    pub(super) fn saw(&mut self, r: &SmartReading) {
        if self.disk.is_none() {
            self.latest = Some(r.clone());
        }
    }

    /// A reading now (`None`: no source answered).
    fn now(&mut self) -> Option<SmartReading> {
        let r = match &self.disk {
            Some(d) => self.source.read(&SysRoot::real(), d),
            None => self.latest.clone()?,
        };
        r.source.is_some().then_some(r)
    }

    fn edge(&mut self) -> Option<Edge> {
        Some(Edge {
            before: self.now()?,
            written: 0,
            read: 0,
        })
    }

    /// Before the plan's first I/O.
    pub(super) fn run_started(&mut self) {
        self.run = self.edge();
    }

    /// Before step `index`'s first I/O.
    pub(super) fn step_started(&mut self, index: usize) {
        self.step = self.edge().map(|e| (index, e));
    }

    /// The bytes of an interval, ramp included (the drive counts them all).
    pub(super) fn interval(&mut self, r: &IntervalReport) {
        let edges = self
            .run
            .iter_mut()
            .chain(self.step.as_mut().map(|(_, e)| e));
        for e in edges {
            e.written = e.written.saturating_add(r.write.bytes);
            e.read = e.read.saturating_add(r.read.bytes);
        }
    }

    /// After the step's last I/O: what it did, where the drive says.
    pub(super) fn step_finished(&mut self) -> Option<WearSpan> {
        let (index, edge) = self.step.take()?;
        let after = self.now()?;
        edge.span(Some(index), &after)
    }

    /// After the plan's last I/O: what the run did, where the drive says.
    pub(super) fn run_finished(&mut self) -> Option<WearSpan> {
        let edge = self.run.take()?;
        let after = self.now()?;
        edge.span(None, &after)
    }
}
