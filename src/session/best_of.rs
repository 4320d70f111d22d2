//! The grid of a session whose steps ran several times to make one figure (a preset phase's
//! `runs` with a `pick`: CrystalDiskMark keeps each test's best run, KDiskMark's default
//! profile the mean of its runs): one cell per drive, test and direction, computed from the
//! saved steps, for the headless run's end, the report and compare.

use serde::Serialize;

use super::model::{Session, StepRecord};
use crate::stats::StepSummary;
use crate::workload::{RunOf, RunPick, Workload};

/// Which way a cell's I/O went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GridDir {
    Read,
    Write,
    /// A mixed workload's reads and writes together.
    Mix,
}

impl GridDir {
    /// The grid's columns, in order.
    pub const ALL: [GridDir; 3] = [GridDir::Read, GridDir::Write, GridDir::Mix];

    pub fn word(self) -> &'static str {
        match self {
            GridDir::Read => "read",
            GridDir::Write => "write",
            GridDir::Mix => "mix",
        }
    }

    fn of(w: &Workload) -> GridDir {
        match w.rwmixread {
            _ if w.rw.is_mixed() && !matches!(w.rwmixread, 0 | 100) => GridDir::Mix,
            0 => GridDir::Write,
            _ => GridDir::Read,
        }
    }
}

/// One test in one direction: the figure its runs made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GridCell {
    /// The drive's label, in a session of several drives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    /// The test as CrystalDiskMark names it: `SEQ1M Q8T1`, `RND4K Q32T16`.
    pub test: String,
    pub dir: GridDir,
    pub pick: RunPick,
    /// Runs that did I/O, of the runs planned.
    pub runs: u32,
    pub of: u32,
    /// The run (from 1) whose figures these are, when the best was picked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_run: Option<u32>,
    /// MB/s (10^6 bytes per second).
    pub mbps: f64,
    pub iops: f64,
    /// Mean and 99th percentile service latency (from submission) of every I/O of the
    /// run(s), µs.
    #[serde(rename = "service_mean_us")]
    pub mean_us: Option<f64>,
    #[serde(rename = "service_p99_us")]
    pub p99_us: Option<f64>,
}

/// The test's name in CrystalDiskMark's words: `SEQ` or `RND`, the block size (`1M`,
/// `128K`, `4K`), the queue depth and the threads (jobs).
pub fn test_name(w: &Workload) -> String {
    let kind = if w.rw.is_random() { "RND" } else { "SEQ" };
    let size = if w.bs.is_single() {
        let b = w.bs.max();
        match b {
            _ if b.is_multiple_of(1 << 20) => format!("{}M", b >> 20),
            _ if b.is_multiple_of(1 << 10) => format!("{}K", b >> 10),
            _ => format!("{b}B"),
        }
    } else {
        w.bs.to_string()
    };
    format!("{kind}{size} Q{}T{}", w.iodepth, w.jobs)
}

/// One run of a repeated step that picks a figure: its run, workload and figures (a saved
/// step's, or a live run's as its step finishes).
#[derive(Debug, Clone, Copy)]
pub struct GridRun<'a> {
    pub of: RunOf,
    pub pick: RunPick,
    pub w: &'a Workload,
    pub summary: &'a StepSummary,
    /// The drive (its index), in a session of several.
    pub drive: Option<u32>,
}

impl<'a> GridRun<'a> {
    /// The run, when `of` picks a figure and the run did I/O.
    pub fn new(
        of: RunOf,
        w: &'a Workload,
        summary: &'a StepSummary,
        drive: Option<u32>,
    ) -> Option<Self> {
        let pick = of.pick?;
        (summary.ios > 0).then_some(GridRun {
            of,
            pick,
            w,
            summary,
            drive,
        })
    }
}

fn run_of(r: &StepRecord) -> Option<GridRun<'_>> {
    if r.prepares() {
        return None;
    }
    GridRun::new(r.point?.run?, r.workload.as_ref()?, &r.summary, r.drive)
}

/// A figure of `r`'s service latency (from submission; a grid's steps are unpaced, so it is
/// also their response latency).
fn lat(r: &StepSummary, f: fn(&crate::stats::LatSummary) -> f64) -> Option<f64> {
    let l = r.service_lat();
    (!l.is_empty()).then(|| f(l))
}

/// The cell that `runs` (of one test and direction) make.
fn cell(drive: Option<String>, test: String, dir: GridDir, runs: &[GridRun<'_>]) -> GridCell {
    let first = &runs[0];
    let mut c = GridCell {
        drive,
        test,
        dir,
        pick: first.pick,
        runs: runs.len() as u32,
        of: first.of.of,
        best_run: None,
        mbps: 0.0,
        iops: 0.0,
        mean_us: None,
        p99_us: None,
    };
    match first.pick {
        RunPick::Best => {
            let best = runs.iter().fold(first, |b, x| {
                if x.summary.bw_bytes() > b.summary.bw_bytes() {
                    x
                } else {
                    b
                }
            });
            c.best_run = Some(best.of.n);
            c.mbps = best.summary.bw_bytes() / 1e6;
            c.iops = best.summary.iops;
            c.mean_us = lat(best.summary, |l| l.mean);
            c.p99_us = lat(best.summary, |l| l.p99);
        }
        RunPick::Mean => {
            let n = runs.len() as f64;
            let mean = |f: &dyn Fn(&GridRun<'_>) -> Option<f64>| {
                let v: Vec<f64> = runs.iter().filter_map(f).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            c.mbps = runs.iter().map(|x| x.summary.bw_bytes()).sum::<f64>() / n / 1e6;
            c.iops = runs.iter().map(|x| x.summary.iops).sum::<f64>() / n;
            c.mean_us = mean(&|x| lat(x.summary, |l| l.mean));
            c.p99_us = mean(&|x| lat(x.summary, |l| l.p99));
        }
    }
    c
}

/// The grid of `s`: a cell per drive, test and direction whose steps ran several times
/// with a pick, tests in the order they first ran; empty when no step picks.
pub fn grid(s: &Session) -> Vec<GridCell> {
    let label = |d: Option<u32>| {
        d.and_then(|i| s.drives.get(i as usize))
            .map(|e| e.label.clone())
    };
    grid_of(s.steps.iter().filter_map(run_of), label)
}

/// The grid of `runs` (a session's, or a live run's so far: the best so far), the drives
/// named by `label`.
pub fn grid_of<'a>(
    runs: impl IntoIterator<Item = GridRun<'a>>,
    label: impl Fn(Option<u32>) -> Option<String>,
) -> Vec<GridCell> {
    let groups = grouped(runs, |r| (r.drive, test_name(r.w), GridDir::of(r.w)));
    let cells = groups
        .into_iter()
        .map(|((d, test, dir), runs)| cell(label(d), test, dir, &runs));
    // Tests in the order they first ran (CrystalDiskMark reads every test, then writes),
    // each test's directions in the grid's order.
    grouped(cells, |c| (c.drive.clone(), c.test.clone()))
        .into_iter()
        .flat_map(|(_, mut row)| {
            row.sort_by_key(|c| GridDir::ALL.iter().position(|d| *d == c.dir));
            row
        })
        .collect()
}

/// `items` in groups of equal `key`, the groups in the order their keys first came.
fn grouped<T, K: PartialEq>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let k = key(&item);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, g)) => g.push(item),
            None => groups.push((k, vec![item])),
        }
    }
    groups
}

/// A phase whose steps ran several times with no figure picked (SNIA HIR's bursts, XSR's
/// one-minute tests): each run is its own point; these are the runs' figures together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSeries {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drive: Option<String>,
    pub phase: String,
    /// Runs that did I/O, of the runs planned.
    pub runs: u32,
    pub of: u32,
    pub mean_iops: f64,
    /// MB/s (10^6 bytes per second), the runs' mean.
    pub mean_mbps: f64,
    pub first_iops: f64,
    pub last_iops: f64,
    /// The worst 99th percentile service latency (from submission) of the runs, µs.
    #[serde(rename = "worst_service_p99_us")]
    pub worst_p99_us: Option<f64>,
}

/// The name of phase `i` (from 0) of the session's plan; `phase N` where the plan has none.
pub fn phase_name(s: &Session, i: u64) -> String {
    s.plan_info()
        .phase(i)
        .and_then(|p| p.name.clone())
        .unwrap_or_else(|| format!("phase {}", i + 1))
}

/// The phase (from 0) a preset's step ran in; none for a step of no preset.
pub fn phase_of(r: &StepRecord) -> Option<u64> {
    r.point?.phase
}

/// The phases of `s` whose steps ran several times with no pick, in the order they ran;
/// empty when none.
pub fn run_series(s: &Session) -> Vec<RunSeries> {
    let unpicked = s.steps.iter().filter_map(|r| {
        let run = r.point.and_then(|p| p.run)?;
        let phase = phase_of(r)?;
        (run.pick.is_none() && r.summary.ios > 0).then_some((r, phase))
    });
    let phase_name = |i: u64| phase_name(s, i);
    grouped(unpicked, |(r, phase)| (r.drive, *phase))
        .into_iter()
        .map(|((drive, phase), runs)| {
            let runs: Vec<&StepRecord> = runs.into_iter().map(|(r, _)| r).collect();
            let n = runs.len() as f64;
            let of = runs.first().and_then(|r| r.point?.run).map_or(0, |r| r.of);
            RunSeries {
                drive: drive
                    .and_then(|i| s.drives.get(i as usize))
                    .map(|d| d.label.clone()),
                phase: phase_name(phase),
                runs: runs.len() as u32,
                of,
                mean_iops: runs.iter().map(|r| r.summary.iops).sum::<f64>() / n,
                mean_mbps: runs.iter().map(|r| r.summary.bw_bytes()).sum::<f64>() / n / 1e6,
                first_iops: runs.first().map_or(0.0, |r| r.summary.iops),
                last_iops: runs.last().map_or(0.0, |r| r.summary.iops),
                worst_p99_us: runs
                    .iter()
                    .filter_map(|r| lat(&r.summary, |l| l.p99))
                    .reduce(f64::max),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{BlockSizes, Region, RwMode};

    fn w(rw: RwMode, bs: u64, iodepth: u32, jobs: u32, rwmixread: u8) -> Workload {
        Workload {
            rwmixread,
            jobs,
            ..Workload::new(
                rw,
                BlockSizes::single(bs),
                iodepth,
                Region {
                    offset: 0,
                    len: 1 << 30,
                },
                1,
            )
        }
    }

    #[test]
    fn tests_are_named_as_crystaldiskmark_names_them() {
        let cases = [
            (
                w(RwMode::Read, 1 << 20, 8, 1, 100),
                "SEQ1M Q8T1",
                GridDir::Read,
            ),
            (
                w(RwMode::Write, 128 << 10, 32, 1, 0),
                "SEQ128K Q32T1",
                GridDir::Write,
            ),
            (
                w(RwMode::RandRead, 4096, 32, 16, 100),
                "RND4K Q32T16",
                GridDir::Read,
            ),
            (
                w(RwMode::RandRw, 512, 1, 1, 70),
                "RND512B Q1T1",
                GridDir::Mix,
            ),
        ];
        for (wl, name, dir) in cases {
            assert_eq!(test_name(&wl), name);
            assert_eq!(GridDir::of(&wl), dir, "{name}");
        }
    }
}
