//! [`SessionRecorder`]: the one object a run (headless or dashboard) feeds. It holds the
//! session in memory, appends what is new to the file every autosave period on the
//! [`Appender`](super::writer::Appender) thread, exports snapshots on another thread, and
//! rewrites the file as one document at the end, on every exit path (an explicit
//! [`finalize`](SessionRecorder::finalize), or `Drop` for the paths that forgot).

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Instant;

use hdrhistogram::Histogram;
use serde::Serialize;

mod snapshot;

use super::options::{RecorderOptions, SessionStart};

use super::error::SessionError;
use super::histlog;
use super::host::Host;
use super::kind::EventKind;
use super::legacy::Document;
use super::model::{
    Event, IntervalRecord, RunEnd, Session, SessionState, SessionSummary, StepRecord,
    ONE_DRIVE_SCHEMA_VERSION, SCHEMA_VERSION,
};
use super::point::StepPoint;
use super::sample::Sample;
use super::text::{self, Chunk};
use super::time::now_rfc3339;
use super::writer::{ensure_parent, write_atomic, Appender, Written};
use crate::stats::{new_histogram, DirCounts, IntervalReport, LatSummary, StepSummary};
use crate::workload::Workload;

struct OpenStep {
    index: u32,
    label: String,
    point: Option<StepPoint>,
    workload: Option<Workload>,
    start_s: f64,
}

#[derive(Default, Clone, Copy)]
struct Saved {
    intervals: usize,
    steps: usize,
    telemetry: usize,
    events: usize,
}

#[derive(Default)]
struct Totals {
    measured_s: f64,
    read: DirCounts,
    write: DirCounts,
    trim: DirCounts,
    errors: u64,
}

/// Failed I/Os kept as `io_error` events per session (with offset and errno); the rest
/// are only counted, per interval and in the summaries.
pub const MAX_IO_ERROR_EVENTS: usize = 200;

/// Records one session. See the module documentation.
pub struct SessionRecorder {
    path: PathBuf,
    session: Session,
    /// The session file of ours, rewritten at the end.
    file: Written,
    appender: Option<Appender>,
    /// The interval log's writer and the lines not yet handed to it.
    hlog: Option<(Appender, Vec<u8>)>,
    saved: Saved,
    /// The state to append with the next records, once it changed (the final save).
    state_changed: Option<SessionState>,
    opts: RecorderOptions,
    t0: Instant,
    last_autosave: Instant,
    last_snapshot: Instant,
    snapshot_job: Option<JoinHandle<SnapshotDone>>,
    /// The snapshot folders written so far, held open.
    snapshot_folders: std::collections::BTreeMap<PathBuf, super::OutFolder>,
    /// A snapshot asked for by hand while another was being written: its folder, taken
    /// as soon as that one is done.
    queued_snapshots: std::collections::VecDeque<PathBuf>,
    /// Messages for the next [`tick`](Self::tick).
    pending_notes: Vec<String>,
    /// The drive the next records are of (a session of several), or none.
    current: Option<u32>,
    /// Each drive's open step (one drive: the first).
    open: Vec<Option<OpenStep>>,
    /// Each drive's totals and latency (one drive: the first).
    totals: Vec<Totals>,
    lats: Vec<Histogram<u64>>,
    /// Each drive's own end ("completed", "device gone …"), when it ended on its own.
    drive_ended: Vec<Option<RunEnd>>,
    /// Every I/O of every drive.
    lat: Histogram<u64>,
    /// `io_error` events recorded so far (at most [`MAX_IO_ERROR_EVENTS`]).
    error_events: usize,
    /// Each drive's last recorded ATA attribute table and when (session seconds).
    ata_tables: Vec<Option<(f64, Sample)>>,
    finalized: bool,
}

/// An ATA attribute table (a few KB) is kept in a telemetry sample at most this often per
/// drive (seconds), and only when it changed: the report's before and after are the first
/// and the last samples holding one.
pub const ATA_TABLE_EVERY_S: f64 = 60.0;

/// What a snapshot's thread gives back: its folder, the folder held open (when it could
/// be opened), and how the writing went.
type SnapshotDone = (PathBuf, Option<super::OutFolder>, Result<(), String>);

impl SessionRecorder {
    /// Creates the session file (and its folder) and writes the header, so an unwritable
    /// path fails here, before the run starts. Every file the session will write is
    /// checked first ([`check_session_paths`](super::outputs::check_session_paths)): a
    /// path that holds anything but nothing or drivescope's own file is refused. Where
    /// `path` is a link to a session, the session it names is written.
    pub fn create(
        path: &Path,
        start: SessionStart,
        opts: RecorderOptions,
    ) -> Result<SessionRecorder, SessionError> {
        let paths = super::outputs::check_session_paths(path, &opts)?;
        let path = paths.session.as_path();
        ensure_parent(path)?;
        let drives = start.drives.len().max(1);
        let mut session = Session {
            schema_version: if drives > 1 {
                SCHEMA_VERSION
            } else {
                ONE_DRIVE_SCHEMA_VERSION
            },
            drivescope_version: env!("CARGO_PKG_VERSION").into(),
            started: now_rfc3339(),
            state: SessionState::Running,
            command: start.command,
            note: start.note,
            host: Host::detect(),
            drive: start.drive,
            target: start.target,
            preset: start.preset,
            plan: start.plan,
            drives: if drives > 1 { start.drives } else { Vec::new() },
            ..Session::default()
        };
        let mut taken = Vec::new();
        let hlog = if let Some(hlog_path) = &paths.histograms {
            let header = histlog::header(std::time::SystemTime::now());
            let mut written = write_atomic(hlog_path, super::outputs::HISTOGRAMS, &header)?;
            let appender = appender_or_beside(&mut written, &header, &mut taken)?;
            session.histograms = written
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            Some((appender, Vec::new()))
        } else {
            None
        };
        let head = text::header(&session).map_err(|e| SessionError::Encode {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut file = write_atomic(path, super::outputs::SESSION, head.as_bytes())?;
        let appender = appender_or_beside(&mut file, head.as_bytes(), &mut taken)?;
        let now = Instant::now();
        let mut recorder = SessionRecorder {
            path: path.to_path_buf(),
            file,
            session,
            appender: Some(appender),
            hlog,
            saved: Saved::default(),
            state_changed: None,
            opts,
            t0: now,
            last_autosave: now,
            last_snapshot: now,
            snapshot_job: None,
            snapshot_folders: std::collections::BTreeMap::new(),
            queued_snapshots: std::collections::VecDeque::new(),
            pending_notes: Vec::new(),
            current: None,
            open: (0..drives).map(|_| None).collect(),
            totals: (0..drives).map(|_| Totals::default()).collect(),
            lats: (0..drives).map(|_| new_histogram()).collect(),
            drive_ended: vec![None; drives],
            lat: new_histogram(),
            error_events: 0,
            ata_tables: vec![None; drives.max(1)],
            finalized: false,
        };
        for path in taken {
            recorder.push_event_of(None, EventKind::Saved, taken_message(&path), None);
        }
        Ok(recorder)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session so far (the dashboard can read its history from here).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The records pushed from now on are drive `drive`'s (its index in the session's
    /// `drives`); `None`: the run's own (events only). A session of one drive never
    /// tags its records.
    pub fn set_current_drive(&mut self, drive: Option<u32>) {
        self.current = drive.filter(|_| self.open.len() > 1);
    }

    /// Drive `drive` ended on its own (failed, or done while others go on): its summary's
    /// `ended_by`.
    pub fn set_drive_ended(&mut self, drive: usize, ended_by: RunEnd) {
        if let Some(e) = self.drive_ended.get_mut(drive) {
            *e = Some(ended_by);
        }
    }

    /// The current drive's slot (0 for one drive or the run's own records).
    fn slot(&self) -> usize {
        self.current
            .map_or(0, |d| d as usize)
            .min(self.open.len().saturating_sub(1))
    }

    /// Seconds since the session started: the time base of every record.
    pub fn elapsed_s(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// Starts a step: the intervals pushed until [`end_step`](Self::end_step) belong to
    /// it, timed from now. Returns its index in `steps`.
    pub fn begin_step(
        &mut self,
        label: impl Into<String>,
        point: Option<StepPoint>,
        workload: Option<Workload>,
    ) -> u32 {
        let index = self.session.steps.len() as u32 + self.open_steps();
        let slot = self.slot();
        self.open[slot] = Some(OpenStep {
            index,
            label: label.into(),
            point,
            workload,
            start_s: self.elapsed_s(),
        });
        index
    }

    /// Steps open on other drives than the current one: each has its index reserved.
    fn open_steps(&self) -> u32 {
        let slot = self.slot();
        self.open
            .iter()
            .enumerate()
            .filter(|(i, o)| *i != slot && o.is_some())
            .count() as u32
    }

    /// Records one interval of the current step (opening an unnamed step if none is).
    pub fn push_interval(&mut self, r: &IntervalReport) {
        self.push_interval_counted(r, true);
    }

    /// [`push_interval`](Self::push_interval); `counted: false` keeps it out of the
    /// session's totals (an idle step's intervals: no I/O, and no time of I/O either).
    /// The record made of it, as the session holds it.
    pub fn push_interval_counted(&mut self, r: &IntervalReport, counted: bool) -> &IntervalRecord {
        let slot = self.slot();
        if self.open[slot].is_none() {
            self.begin_step("", None, None);
        }
        let (index, start_s) = match &self.open[slot] {
            Some(s) => (s.index, s.start_s),
            None => (0, 0.0),
        };
        let mut rec = IntervalRecord::from_report(index, start_s, r);
        rec.drive = self.current;
        let at = self.session.intervals.len();
        self.session.intervals.push(rec);
        self.push_io_errors(r);
        if let (Some((_, pending)), Some(h)) = (&mut self.hlog, &r.hists) {
            pending.extend(histlog::encode_interval(
                start_s + r.start_s,
                r.end_s - r.start_s,
                h,
                self.current,
            ));
        }
        if counted && !r.excluded() {
            let t = &mut self.totals[slot];
            t.measured_s += r.end_s - r.start_s;
            t.read.add(&r.read);
            t.write.add(&r.write);
            t.trim.add(&r.trim);
            t.errors += r.errors;
            if let Some(h) = &r.hists {
                let _ = self.lat.add(h.response_all());
                let _ = self.lats[slot].add(h.response_all());
            }
        }
        &self.session.intervals[at]
    }

    /// The interval's failed I/Os as `io_error` events, up to [`MAX_IO_ERROR_EVENTS`].
    fn push_io_errors(&mut self, r: &IntervalReport) {
        for e in &r.error_records {
            if self.error_events == MAX_IO_ERROR_EVENTS {
                self.push_event(
                    EventKind::Note,
                    format!(
                        "{MAX_IO_ERROR_EVENTS} I/O errors recorded with their offsets; \
                         later ones are only counted"
                    ),
                );
            }
            self.error_events += 1;
            if self.error_events <= MAX_IO_ERROR_EVENTS {
                let data = super::event_data::IoErrorData::from(e);
                self.push_event_data(EventKind::IoError, e.message.clone(), data);
            }
        }
    }

    /// Ends the current step with the engine's summary; returns its record's index.
    pub fn end_step(&mut self, summary: StepSummary) -> u32 {
        let slot = self.slot();
        let next = self.session.steps.len() as u32 + self.open_steps();
        let open = self.open[slot].take().unwrap_or(OpenStep {
            index: next,
            label: String::new(),
            point: None,
            workload: None,
            start_s: self.elapsed_s(),
        });
        self.session.steps.push(StepRecord {
            index: open.index,
            label: open.label,
            point: open.point,
            workload: open.workload,
            start_s: open.start_s,
            end_s: self.elapsed_s(),
            summary,
            drive: self.current,
        });
        open.index
    }

    /// Adds a telemetry sample (the telemetry layer's, or any serializable mapping) as
    /// `{t, its keys, drive}`: `t` the current session time unless it has its own, `drive`
    /// the current drive's when there are several. What the report reads of it:
    /// `temperature_c` (°C) at the top level or in `smart`, and `smart: {…}` (the first and
    /// last such samples are its SMART before and after). Returns the sample as the
    /// session holds it (null when it is no mapping).
    pub fn push_telemetry(&mut self, sample: impl Serialize) -> &Sample {
        #[derive(Serialize)]
        struct Stored<T> {
            t: f64,
            #[serde(flatten)]
            sample: T,
            #[serde(skip_serializing_if = "Option::is_none")]
            drive: Option<u32>,
        }
        let t = super::model::round(self.elapsed_s(), 3);
        let drive = self.current;
        let stored = Sample::encode(Stored { t, sample, drive }).unwrap_or_default();
        self.session.telemetry.push(stored);
        &self.session.telemetry[self.session.telemetry.len() - 1]
    }

    /// Whether the current drive's sample now keeps its ATA attribute `table`: the first
    /// one, then one that changed since the last kept and that is [`ATA_TABLE_EVERY_S`]
    /// old; the caller leaves it out of the sample otherwise.
    pub fn keep_ata_table(&mut self, table: impl Serialize) -> bool {
        let t = super::model::round(self.elapsed_s(), 3);
        let slot = self.slot();
        match (Sample::encode(table), self.ata_tables.get_mut(slot)) {
            (Ok(table), Some(last)) => keep_table(table, t, last),
            _ => true,
        }
    }

    /// Records an event now.
    pub fn push_event(&mut self, kind: EventKind, message: impl Into<String>) {
        self.push_event_data(kind, message, ());
    }

    /// Records an event with data now; its time, as the session holds it.
    pub fn push_event_data(
        &mut self,
        kind: EventKind,
        message: impl Into<String>,
        data: impl Serialize,
    ) -> f64 {
        let data = Document::of(data);
        self.push_event_of(self.current, kind, message.into(), data)
    }

    /// Records an event of drive `drive` (none: the run's own) now; its time.
    fn push_event_of(
        &mut self,
        drive: Option<u32>,
        kind: EventKind,
        message: String,
        data: Option<Document>,
    ) -> f64 {
        let t = super::model::round(self.elapsed_s(), 3);
        self.session.events.push(Event {
            t,
            kind,
            message,
            data,
            drive,
        });
        t
    }

    /// Call often (every interval): autosaves when the period is up, starts a snapshot
    /// when one is due, and returns messages worth showing (failures, snapshot paths).
    pub fn tick(&mut self) -> Vec<String> {
        let mut notes = std::mem::take(&mut self.pending_notes);
        if self.last_autosave.elapsed() >= self.opts.autosave_every {
            if let Err(e) = self.autosave() {
                notes.push(e.to_string());
            }
        }
        if let Some(e) = self.appender.as_ref().and_then(Appender::take_error) {
            notes.push(e);
        }
        if let Some(Some(done)) = self.poll_snapshot() {
            notes.push(done);
        }
        if self.snapshot_job.is_none() {
            if let Some(dir) = self.queued_snapshots.pop_front() {
                self.snapshot(&dir);
            }
        }
        if let Some(every) = self.opts.snapshot_every {
            if self.last_snapshot.elapsed() >= every && self.snapshot_job.is_none() {
                let dir = self.snapshot_dir();
                self.snapshot(&dir);
            }
        }
        notes
    }

    /// Appends what is new since the last autosave as one document (O(new records)).
    pub fn autosave(&mut self) -> Result<(), SessionError> {
        self.last_autosave = Instant::now();
        self.append_new(None)
    }

    fn append_new(&mut self, summary: Option<&SessionSummary>) -> Result<(), SessionError> {
        if let Some((a, pending)) = &mut self.hlog {
            if !pending.is_empty() {
                a.append(std::mem::take(pending));
            }
        }
        let s = &self.session;
        let chunk = Chunk {
            state: self.state_changed,
            intervals: &s.intervals[self.saved.intervals..],
            steps: &s.steps[self.saved.steps..],
            telemetry: &s.telemetry[self.saved.telemetry..],
            events: &s.events[self.saved.events..],
            summary,
        };
        if chunk.is_empty() {
            return Ok(());
        }
        let doc = text::chunk(&chunk).map_err(|e| SessionError::Encode {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        if let Some(a) = &self.appender {
            a.append(doc.into_bytes());
        }
        self.saved = Saved {
            intervals: s.intervals.len(),
            steps: s.steps.len(),
            telemetry: s.telemetry.len(),
            events: s.events.len(),
        };
        self.state_changed = None;
        Ok(())
    }

    /// Waits until every autosave so far is on disk (tests, and before a crash test).
    pub fn flush(&self) {
        if let Some(a) = &self.appender {
            a.flush();
        }
        if let Some((a, _)) = &self.hlog {
            a.flush();
        }
    }

    pub(super) fn summary_now(&self, ended_by: &RunEnd) -> SessionSummary {
        let elapsed = super::model::round(self.elapsed_s(), 3);
        let one =
            |t: &Totals, lat: &Histogram<u64>, ended_by: &RunEnd, steps: u64, intervals: u64| {
                let per_s = |x: f64| {
                    if t.measured_s > 0.0 {
                        x / t.measured_s
                    } else {
                        0.0
                    }
                };
                SessionSummary {
                    ended: now_rfc3339(),
                    ended_by: ended_by.clone(),
                    elapsed_s: elapsed,
                    steps,
                    intervals,
                    measured_s: super::model::round(t.measured_s, 6),
                    read_bytes: t.read.bytes,
                    write_bytes: t.write.bytes,
                    read_iops: super::model::round(per_s(t.read.ios as f64), 2),
                    write_iops: super::model::round(per_s(t.write.ios as f64), 2),
                    read_mbps: super::model::round(per_s(t.read.bytes as f64) / 1e6, 4),
                    write_mbps: super::model::round(per_s(t.write.bytes as f64) / 1e6, 4),
                    trim_bytes: t.trim.bytes,
                    trim_iops: super::model::round(per_s(t.trim.ios as f64), 2),
                    trim_mbps: super::model::round(per_s(t.trim.bytes as f64) / 1e6, 4),
                    errors: t.errors,
                    lat_us: LatSummary::from_hist(lat),
                    drives: Vec::new(),
                }
            };
        let (steps, intervals) = (
            self.session.steps.len() as u64,
            self.session.intervals.len() as u64,
        );
        if self.totals.len() == 1 {
            return one(&self.totals[0], &self.lat, ended_by, steps, intervals);
        }
        let drives: Vec<SessionSummary> = self
            .totals
            .iter()
            .zip(&self.lats)
            .enumerate()
            .map(|(i, (t, lat))| {
                let d = Some(i as u32);
                let own = self.drive_ended[i].as_ref().unwrap_or(ended_by);
                let steps = self.session.steps.iter().filter(|s| s.drive == d).count();
                let n = self
                    .session
                    .intervals
                    .iter()
                    .filter(|r| r.drive == d)
                    .count();
                one(t, lat, own, steps as u64, n as u64)
            })
            .collect();
        // All drives together: amounts and rates added up, over the longest measured time.
        let mut all = Totals::default();
        for t in &self.totals {
            all.measured_s = all.measured_s.max(t.measured_s);
            all.read.bytes += t.read.bytes;
            all.write.bytes += t.write.bytes;
            all.trim.bytes += t.trim.bytes;
            all.errors += t.errors;
        }
        let mut s = one(&all, &self.lat, ended_by, steps, intervals);
        let sum = |f: fn(&SessionSummary) -> f64| {
            super::model::round(drives.iter().map(f).sum::<f64>(), 4)
        };
        s.read_iops = sum(|d| d.read_iops);
        s.write_iops = sum(|d| d.write_iops);
        s.read_mbps = sum(|d| d.read_mbps);
        s.write_mbps = sum(|d| d.write_mbps);
        s.trim_iops = sum(|d| d.trim_iops);
        s.trim_mbps = sum(|d| d.trim_mbps);
        s.drives = drives;
        s
    }

    /// The final save: appends the last records and the summary, then rewrites the file
    /// atomically as one document. When the rewrite fails the appended stream still holds
    /// everything, and the error says so.
    pub fn finalize(
        mut self,
        state: SessionState,
        ended_by: &RunEnd,
    ) -> Result<PathBuf, SessionError> {
        self.finish(state, ended_by)
    }

    /// [`SessionRecorder::finalize`], giving back the session as saved with its path.
    pub fn finalize_keeping(
        mut self,
        state: SessionState,
        ended_by: &RunEnd,
    ) -> Result<(PathBuf, Session), SessionError> {
        let p = self.finish(state, ended_by)?;
        Ok((p, std::mem::take(&mut self.session)))
    }

    fn finish(&mut self, state: SessionState, ended_by: &RunEnd) -> Result<PathBuf, SessionError> {
        self.finalized = true;
        let tagged = self.open.len() > 1;
        let open: Vec<Option<OpenStep>> = self.open.iter_mut().map(Option::take).collect();
        for (d, open) in open.into_iter().enumerate() {
            // A step that never got its summary (an error mid-step): keep its place.
            let Some(open) = open else { continue };
            let what = format!(
                "step {} ({}) ended without a summary",
                open.index, open.label
            );
            self.push_event_of(
                tagged.then_some(d as u32),
                EventKind::StepIncomplete,
                what,
                None,
            );
        }
        let summary = self.summary_now(ended_by);
        self.session.state = state;
        self.state_changed = Some(state);
        let _ = self.append_new(Some(&summary));
        self.session.summary = Some(summary);
        let append_error = self.appender.take().and_then(Appender::close);
        if let Some((a, _)) = self.hlog.take() {
            let _ = a.close();
        }
        let _ = self.join_snapshot();
        // The snapshots asked for by hand are taken, even as the run ends.
        while let Some(dir) = self.queued_snapshots.pop_front() {
            self.snapshot(&dir);
            let _ = self.join_snapshot();
        }
        // Saved where the session is, while its name still holds the file of ours; where a
        // file of the user's took its name meanwhile, beside it (the path returned), and
        // the session says so.
        let at = self.file.path();
        let first = {
            let session = &self.session;
            self.file.rewrite(|w| text::write_full(w, session))
        };
        let saved = match first {
            Ok(()) => Ok(at),
            Err(SessionError::Owned(crate::owned::OwnedError::NotOurs { path })) => {
                self.push_event_of(None, EventKind::Saved, taken_message(&path), None);
                let session = &self.session;
                self.file
                    .rewrite_or_beside(|w| text::write_full(w, session))
            }
            Err(e) => Err(e),
        };
        match saved {
            // Whatever an append lost, the rewrite holds it all.
            Ok(saved) => Ok(saved),
            Err(e) => Err(SessionError::FinalSave {
                path: self.path.clone(),
                source: Box::new(e),
                stream: match append_error {
                    None => "the autosaved stream there holds the whole session".into(),
                    Some(a) => format!("the autosaved stream there is incomplete too ({a})"),
                },
            }),
        }
    }
}

impl Drop for SessionRecorder {
    fn drop(&mut self) {
        if !self.finalized {
            let end = RunEnd::parse("ended without a final save call");
            let _ = self.finish(SessionState::Failed, &end);
        }
    }
}

/// What the session says where a file of the user's took the name of one of ours.
fn taken_message(path: &Path) -> String {
    format!(
        "{} now holds a file that is not drivescope's: the session was saved beside it",
        path.display()
    )
}

/// An appender to `written`, just made; where a file of the user's took its name before it
/// was opened again (a race with whoever put it there), `first` is written into a new file
/// beside it (as the final save does) and the name taken is added to `taken`.
fn appender_or_beside(
    written: &mut Written,
    first: &[u8],
    taken: &mut Vec<PathBuf>,
) -> Result<Appender, SessionError> {
    match Appender::open(written) {
        Err(SessionError::Owned(crate::owned::OwnedError::NotOurs { path })) => {
            written.rewrite_or_beside(|w| w.write_all(first))?;
            taken.push(path);
            Appender::open(written)
        }
        other => other,
    }
}

/// Whether `table` is kept at `t`, given the drive's `last` kept one (which it becomes).
fn keep_table(table: Sample, t: f64, last: &mut Option<(f64, Sample)>) -> bool {
    let keep = match last {
        None => true,
        Some((at, was)) => *was != table && t - *at >= ATA_TABLE_EVERY_S,
    };
    if keep {
        *last = Some((t, table));
    }
    keep
}

#[cfg(test)]
mod ata_table_tests {
    use super::*;

    fn table(raw: u64) -> Sample {
        Sample::encode(serde_json::json!([{"id": 5, "raw": raw}])).unwrap()
    }

    #[test]
    fn a_table_is_kept_first_then_only_when_changed_and_a_minute_old() {
        let mut last = None;
        assert!(keep_table(table(1), 0.0, &mut last), "the first");
        assert!(!keep_table(table(1), 120.0, &mut last), "unchanged");
        assert!(
            !keep_table(table(2), 30.0, &mut last),
            "changed, but under a minute since the last kept"
        );
        assert!(
            keep_table(table(2), 61.0, &mut last),
            "changed and a minute old"
        );
        assert_eq!(last, Some((61.0, table(2))));
    }
}

#[cfg(test)]
mod taken_name_tests {
    use super::*;

    /// The race the hostile-files test can lose on a loaded machine, made certain: a FIFO
    /// takes the session's name between its making and its opening for the autosaves.
    #[test]
    fn a_name_taken_before_the_autosaves_open_sends_the_session_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        let mut written = write_atomic(&p, crate::session::outputs::SESSION, b"head\n").unwrap();
        std::fs::remove_file(&p).unwrap();
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut taken = Vec::new();
        let a = appender_or_beside(&mut written, b"head\n", &mut taken).unwrap();
        a.append(b"more\n".to_vec());
        a.flush();
        assert_eq!(taken, vec![p.clone()]);
        let beside = dir.path().join("s-2.yaml");
        assert_eq!(written.path(), beside);
        assert_eq!(std::fs::read(&beside).unwrap(), b"head\nmore\n");
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
    }
}
