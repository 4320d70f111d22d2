//! What a run and each of its steps did to the drive: a SMART reading at each edge (read
//! there and then where the drive is this machine's, else the latest streamed sample's),
//! the bytes drivescope moved in between, and their difference as a [`WearSpan`]. A read
//! at an edge waits at most [`EDGE_READ_LIMIT`] (on a thread of its own): a drive that does
//! not answer in time delays the run once, and then no more edges are read.

use std::sync::mpsc;
use std::time::Duration;

use crate::drive::{Disk, SysRoot};
use crate::telemetry::reading::SmartReading;
use crate::telemetry::{DriveWear, SmartSource, WearSpan};

/// The longest the run waits for the drive's counters at an edge.
pub(super) const EDGE_READ_LIMIT: Duration = Duration::from_secs(3);

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
#[derive(Default)]
pub(super) struct WearWatch {
    source: SmartSource,
    disk: Option<Disk>,
    /// The latest reading a sample brought (a drive on another host).
    latest: Option<SmartReading>,
    run: Option<Edge>,
    step: Option<(usize, Edge)>,
    /// An edge's read did not answer in time: no more are made.
    stalled: bool,
    /// Said once, when the reads stalled.
    note: Option<String>,
}

impl WearWatch {
    /// Reads `disk` at each edge; `None`: the samples' latest reading is taken.
    pub(super) fn new(disk: Option<Disk>) -> Self {
        WearWatch {
            disk,
            ..WearWatch::default()
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
            Some(d) => self.read(d.clone())?,
            None => self.latest.clone()?,
        };
        r.source.is_some().then_some(r)
    }

    /// Reads `disk` on a thread of its own, waiting at most [`EDGE_READ_LIMIT`].
    fn read(&mut self, disk: Disk) -> Option<SmartReading> {
        if self.stalled {
            return None;
        }
        let mut source = std::mem::take(&mut self.source);
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("wear-smart".into())
            .spawn(move || {
                let r = source.read(&SysRoot::real(), &disk);
                let _ = tx.send((source, r));
            })
            .ok()?;
        match rx.recv_timeout(EDGE_READ_LIMIT) {
            Ok((source, r)) => {
                self.source = source;
                Some(r)
            }
            Err(_) => {
                self.stalled = true;
                self.note = Some(format!(
                    "the drive's counters did not answer within {} s at a step's edge: \
                     what the run did to the drive is not recorded from here on",
                    EDGE_READ_LIMIT.as_secs()
                ));
                None
            }
        }
    }

    /// What to say once: the reads stalled.
    pub(super) fn take_note(&mut self) -> Option<String> {
        self.note.take()
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

    /// The bytes an interval moved, ramp included (the drive counts them all).
    pub(super) fn moved(&mut self, written: u64, read: u64) {
        let edges = self
            .run
            .iter_mut()
            .chain(self.step.as_mut().map(|(_, e)| e));
        for e in edges {
            e.written = e.written.saturating_add(written);
            e.read = e.read.saturating_add(read);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(units_written: u64) -> SmartReading {
        SmartReading {
            serial: Some("S1".into()),
            data_units_written: Some(units_written),
            data_units_read: Some(7),
            media_errors: Some(0),
            source: Some(crate::telemetry::Source::NvmeAdmin),
            ..SmartReading::default()
        }
    }

    #[test]
    fn a_streamed_drive_s_spans_from_its_latest_readings() {
        let mut w = WearWatch::new(None);
        w.run_started();
        assert!(w.run.is_none(), "no reading yet: no run span");
        w.saw(&reading(10));
        w.run_started();
        w.step_started(0);
        w.moved(1_024_000, 0);
        w.saw(&reading(12));
        let step = w.step_finished().expect("the step's span");
        assert_eq!(step.step, Some(0));
        assert_eq!(step.drivescope_written_bytes, 1_024_000);
        assert_eq!(step.drive.host_written_bytes, Some(1_024_000));
        assert_eq!(step.written_agrees(), Some(true));
        w.step_started(1);
        w.moved(512_000, 4096);
        w.saw(&reading(13));
        assert_eq!(
            w.step_finished().map(|s| s.drivescope_read_bytes),
            Some(4096)
        );
        let run = w.run_finished().expect("the run's span");
        assert_eq!(run.step, None);
        assert_eq!(run.drivescope_written_bytes, 1_536_000);
        assert_eq!(run.drive.host_written_bytes, Some(3 * 512_000));
        assert_eq!(
            run.read_agrees(),
            Some(true),
            "4096 B is within a data unit of 0"
        );
        assert!(w.run_finished().is_none(), "said once");
        assert!(w.take_note().is_none());
    }

    #[test]
    fn a_reading_without_a_source_is_no_edge() {
        let mut w = WearWatch::new(None);
        w.saw(&SmartReading::default());
        w.run_started();
        assert!(w.run.is_none());
    }
}
