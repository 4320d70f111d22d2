//! The report's SNIA PTS pages, shaped like the method's report pages: Host Idle Recovery's
//! IOPS per wait state against the steady-state baseline, Cross Stimulus Recovery's
//! throughput through the access groups and its recovery time, and Demand Intensity's
//! thread × queue depth tables with the demand-intensity curve and its operating points.
//! The rows come from the session's steps and the per-phase run rows of
//! [`crate::session::run_series`] (the headless run's end table).

use std::fmt::Write;

use super::page::{grid, lat, para, seconds};
use super::pts_test::PtsTest;
use super::svg::{colour, esc, Chart, Series, Style, Unit};
use crate::session::{phase_name, phase_of, run_series, RunSeries, Session, StepRecord};

/// Writes the session's PTS page, if its preset is one, under `heading` (`h2`, or `h3` in
/// a drive's part of the page).
pub fn section(o: &mut String, s: &Session, heading: &str) {
    match PtsTest::of(s) {
        Some(PtsTest::Hir) => hir(o, s, heading),
        Some(PtsTest::Xsr) => xsr(o, s, heading),
        Some(PtsTest::Dirth) => dirth(o, s, heading),
        _ => {}
    }
}

/// The steps of phase `i` in the order they ran (idle ones too).
fn steps_of(s: &Session, i: u64) -> Vec<&StepRecord> {
    s.steps.iter().filter(|r| phase_of(r) == Some(i)).collect()
}

/// The index of the phase named `name`.
fn phase_index(s: &Session, name: &str) -> Option<u64> {
    s.steps
        .iter()
        .filter_map(phase_of)
        .find(|&i| phase_name(s, i) == name)
}

/// A chart of the page, its axes linear.
fn chart(id: &str, title: &str, x: (&str, Unit), y: (&str, Unit), series: Vec<Series>) -> Chart {
    Chart::new(id, title, x, y, series, "no step finished")
}

/// HIR's baseline: the mean IOPS of the preconditioning's last rounds (its steady-state
/// window, 5 unless the preset says otherwise), and how many rounds that is.
fn hir_baseline(s: &Session) -> Option<(f64, usize)> {
    let window = s
        .preset_info()
        .phase(0)
        .and_then(|p| p.rounds.as_ref()?.window)
        .unwrap_or(5) as usize;
    let pre: Vec<f64> = steps_of(s, 0)
        .iter()
        .filter(|r| r.summary.ios > 0)
        .map(|r| r.summary.iops)
        .collect();
    let last = &pre[pre.len().saturating_sub(window)..];
    (!last.is_empty()).then(|| (last.iter().sum::<f64>() / last.len() as f64, last.len()))
}

/// One wait state's row: its runs' figures, the waits measured, and the return to baseline
/// after it.
fn hir_row(s: &Session, rs: &RunSeries, base: Option<f64>) -> Vec<String> {
    let i = phase_index(s, &rs.phase);
    let steps = i.map(|i| steps_of(s, i)).unwrap_or_default();
    let waits: Vec<f64> = steps
        .iter()
        .filter(|r| r.summary.ios == 0)
        .map(|r| r.end_s - r.start_s)
        .collect();
    let wait = (!waits.is_empty()).then(|| waits.iter().sum::<f64>() / waits.len() as f64);
    let back = i
        .map(|i| steps_of(s, i + 1))
        .and_then(|b| (b.len() == 1 && b[0].summary.ios > 0).then(|| b[0].summary.iops));
    let pct = |v: f64| match base {
        Some(b) if b > 0.0 => format!("{:.1}%", v / b * 100.0),
        _ => "-".into(),
    };
    vec![
        rs.phase.clone(),
        wait.map_or_else(|| "-".into(), seconds),
        format!("{}/{}", rs.runs, rs.of),
        format!("{:.0}", rs.mean_iops),
        pct(rs.mean_iops),
        format!("{:.0}", rs.first_iops),
        format!("{:.0}", rs.last_iops),
        lat(rs.worst_p99_us),
        back.map_or_else(|| "-".into(), |v| format!("{v:.0}")),
    ]
}

/// Host Idle Recovery: per wait state, its bursts' mean IOPS against the baseline (a table)
/// and each burst's IOPS over the wait state's time (a chart, the baseline beside).
fn hir(o: &mut String, s: &Session, h: &str) {
    let runs = run_series(s);
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(o, "<{h}>{}</{h}>", PtsTest::Hir.title());
    let base = hir_baseline(s);
    let note = match base {
        Some((b, n)) => format!("Baseline: {b:.0} IOPS, the mean of the preconditioning's last {n} rounds (its steady state). Each wait state's bursts of writes alternate with a wait of no I/O; 'vs baseline' is their mean IOPS over it."),
        None => "No preconditioning round finished: no baseline.".into(),
    };
    let _ = writeln!(o, "<p>{}</p>", esc(&note));
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|rs| hir_row(s, rs, base.map(|b| b.0)))
        .collect();
    let head = [
        "wait state",
        "wait",
        "bursts",
        "mean IOPS",
        "vs baseline",
        "first burst",
        "last burst",
        "worst service p99",
        "return to baseline IOPS",
    ];
    grid(o, "steps pts-hir", &head, &rows);
    let mut all: Vec<Series> = Vec::new();
    let mut x_max: f64 = 0.0;
    for (k, rs) in runs.iter().enumerate() {
        let Some(i) = phase_index(s, &rs.phase) else {
            continue;
        };
        let steps = steps_of(s, i);
        let t0 = steps.first().map_or(0.0, |r| r.start_s);
        let points: Vec<(f64, f64)> = steps
            .iter()
            .filter(|r| r.summary.ios > 0)
            .map(|r| (r.start_s - t0, r.summary.iops))
            .collect();
        x_max = points.iter().fold(x_max, |m, p| m.max(p.0));
        let line = Series::new(&rs.phase, colour(k), Style::LineMarkers, points);
        all.push(line);
    }
    if let Some((b, _)) = base {
        let n = all.len();
        let line = vec![(0.0, b), (x_max, b)];
        all.push(Series::new("baseline", colour(n), Style::Line, line));
    }
    let c = chart(
        "pts-hir",
        "IOPS v time, all wait states (each burst a point, from its wait state's start)",
        ("time since the wait state began", Unit::Seconds),
        ("IOPS", Unit::Plain),
        all,
    );
    o.push_str(&c.figure());
}

/// When the last access group's throughput (its tests `steps`, that did I/O) came back to
/// the first group's mean: the run (from 1) and the seconds from the group's start to that
/// run's end.
fn xsr_recovery(first: &RunSeries, steps: &[&StepRecord]) -> Option<(usize, f64)> {
    let t0 = steps.first()?.start_s;
    steps
        .iter()
        .position(|r| r.summary.bw_bytes() / 1e6 >= first.mean_mbps)
        .map(|n| (n + 1, steps[n].end_s - t0))
}

/// Cross Stimulus Recovery: per access group, its tests' throughput and response times (a
/// table), throughput over time through the groups (a chart), and the recovery time.
fn xsr(o: &mut String, s: &Session, h: &str) {
    let runs = run_series(s);
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        return;
    };
    let _ = writeln!(o, "<{h}>{}</{h}>", PtsTest::Xsr.title());
    let steps_by: Vec<Vec<&StepRecord>> = runs
        .iter()
        .map(|rs| {
            phase_index(s, &rs.phase)
                .map(|i| steps_of(s, i))
                .unwrap_or_default()
                .into_iter()
                .filter(|r| r.summary.ios > 0)
                .collect()
        })
        .collect();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .zip(&steps_by)
        .map(|(rs, steps)| {
            let peak_art = steps.iter().map(|r| r.summary.lat_us.mean).reduce(f64::max);
            let mrt = steps.iter().map(|r| r.summary.lat_us.max).reduce(f64::max);
            vec![
                rs.phase.clone(),
                format!("{}/{}", rs.runs, rs.of),
                format!("{:.2}", rs.mean_mbps),
                steps.last().map_or_else(
                    || "-".into(),
                    |r| format!("{:.2}", r.summary.bw_bytes() / 1e6),
                ),
                lat(peak_art),
                lat(mrt),
                lat(rs.worst_p99_us),
            ]
        })
        .collect();
    let head = [
        "access group",
        "tests",
        "mean MB/s",
        "last test MB/s",
        "peak mean response",
        "max response",
        "worst service p99",
    ];
    grid(o, "steps pts-xsr", &head, &rows);
    let text = match xsr_recovery(first, steps_by.last().map_or(&[], Vec::as_slice)) {
        _ if runs.len() < 2 => "One access group: no recovery to measure.".to_string(),
        Some((n, t)) => format!(
            "Recovery: {} reached {}'s mean throughput ({:.2} MB/s) in its test {n}, {} after it began.",
            last.phase, first.phase, first.mean_mbps, seconds(t)
        ),
        None => format!(
            "Recovery: {} did not reach {}'s mean throughput ({:.2} MB/s) in its {} tests.",
            last.phase, first.phase, first.mean_mbps, last.runs
        ),
    };
    para(o, "pts-recovery", &text);
    let t0 = steps_by.iter().flatten().next().map_or(0.0, |r| r.start_s);
    let all: Vec<Series> = runs
        .iter()
        .zip(&steps_by)
        .enumerate()
        .map(|(k, (rs, steps))| {
            let points = steps
                .iter()
                .map(|r| (r.start_s - t0, r.summary.bw_bytes() / 1e6))
                .collect();
            Series::new(&rs.phase, colour(k), Style::LineMarkers, points)
        })
        .collect();
    let c = chart(
        "pts-xsr",
        "Throughput v time, all access groups (each test a point)",
        ("time since the first group began", Unit::Seconds),
        ("MB/s", Unit::Plain),
        all,
    );
    o.push_str(&c.figure());
}

/// One thread count × queue depth combination of DIRTH's last round.
#[derive(Debug, Clone, Copy)]
struct Cell<'a> {
    jobs: u32,
    qd: u32,
    r: &'a StepRecord,
}

/// The demand-intensity phase's last round: its steps over more than one combination.
fn dirth_cells(s: &Session) -> Vec<Cell<'_>> {
    let round = |r: &StepRecord| r.point.and_then(|p| p.round);
    // A round's pre-write is none of its combinations.
    let prewrite = |r: &StepRecord| r.point.is_some_and(|p| p.prewrite);
    let cell = |r: &StepRecord| {
        let w = r.workload.as_ref()?;
        (r.summary.ios > 0 && !prewrite(r)).then_some((w.jobs, w.iodepth))
    };
    let mut phases: Vec<u64> = s.steps.iter().filter_map(phase_of).collect();
    phases.dedup();
    for i in phases {
        let steps = steps_of(s, i);
        let mut combos: Vec<(u32, u32)> = steps.iter().filter_map(|r| cell(r)).collect();
        combos.sort_unstable();
        combos.dedup();
        if combos.len() < 2 {
            continue;
        }
        let last = steps.iter().filter_map(|r| round(r)).max();
        return steps
            .into_iter()
            .filter(|r| round(r) == last)
            .filter_map(|r| cell(r).map(|(jobs, qd)| Cell { jobs, qd, r }))
            .collect();
    }
    Vec::new()
}

/// DIRTH's operating points from the curve, by the one rule the runner picks them with
/// ([`crate::plan::operating::pick`], ADATA's Test Flow 5): max, min and mid, each the
/// cell of its threads x queue depth.
fn dirth_points<'a>(cells: &[Cell<'a>]) -> Vec<(&'static str, Cell<'a>)> {
    use crate::plan::operating::{pick, OperatingPoint, ShapePoint};
    let points: Vec<ShapePoint> = cells
        .iter()
        .map(|c| ShapePoint {
            jobs: c.jobs,
            iodepth: c.qd,
            iops: c.r.summary.iops,
            mean_us: c.r.summary.service_lat().mean,
        })
        .collect();
    [
        ("max", OperatingPoint::Max),
        ("mid", OperatingPoint::Mid),
        ("min", OperatingPoint::Min),
    ]
    .into_iter()
    .filter_map(|(name, which)| {
        let (jobs, qd) = pick(&points, which)?;
        let c = cells.iter().find(|c| (c.jobs, c.qd) == (jobs, qd))?;
        Some((name, *c))
    })
    .collect()
}

/// A table of one figure of every combination: a row per thread count, a column per queue
/// depth, both from high to low as the method runs them.
fn dirth_table(o: &mut String, class: &str, cells: &[Cell<'_>], f: &dyn Fn(&Cell<'_>) -> String) {
    let mut jobs: Vec<u32> = cells.iter().map(|c| c.jobs).collect();
    let mut qds: Vec<u32> = cells.iter().map(|c| c.qd).collect();
    for v in [&mut jobs, &mut qds] {
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.dedup();
    }
    let head: Vec<String> = std::iter::once("threads".to_string())
        .chain(qds.iter().map(|q| format!("QD {q}")))
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = jobs
        .iter()
        .map(|&j| {
            std::iter::once(j.to_string())
                .chain(qds.iter().map(|&q| {
                    cells
                        .iter()
                        .find(|c| c.jobs == j && c.qd == q)
                        .map_or_else(|| "-".into(), f)
                }))
                .collect()
        })
        .collect();
    grid(o, class, &head, &rows);
}

/// Demand Intensity: the last round's IOPS, mean and p99 response time per thread count ×
/// queue depth (three tables), the demand-intensity curve (mean response time against
/// IOPS, a line per thread count) with the max, mid and min points marked, and those points.
fn dirth(o: &mut String, s: &Session, h: &str) {
    let cells = dirth_cells(s);
    if cells.is_empty() {
        return;
    }
    let _ = writeln!(o, "<{h}>{}</{h}>", PtsTest::Dirth.title());
    let round = cells[0].r.point.and_then(|p| p.round);
    let note = format!(
        "The last demand-intensity round{}: each thread count × queue depth combination's IOPS, mean and 99th percentile response time (all I/Os).",
        round.map_or_else(String::new, |n| format!(" (round {n})"))
    );
    let _ = writeln!(o, "<p>{}</p>", esc(&note));
    o.push_str("<h4>IOPS</h4>\n");
    dirth_table(o, "pts-dirth-iops", &cells, &|c| {
        format!("{:.0}", c.r.summary.iops)
    });
    o.push_str("<h4>Mean response time</h4>\n");
    dirth_table(o, "pts-dirth-mean", &cells, &|c| {
        lat(Some(c.r.summary.lat_us.mean))
    });
    o.push_str("<h4>99th percentile response time</h4>\n");
    dirth_table(o, "pts-dirth-p99", &cells, &|c| {
        lat(Some(c.r.summary.lat_us.p99))
    });
    let points = dirth_points(&cells);
    o.push_str("<h4>Operating points</h4>\n<p class=\"note\">Picked from this round's curve as the run picked them: among the combinations with a mean response time under 5 ms, max has the most IOPS and mid the IOPS closest to the mean of their most and least; min is the fewest outstanding I/Os (one thread at QD 1). Each point's response-time histogram is run (its steps below).</p>\n");
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|(name, c)| {
            vec![
                (*name).to_string(),
                c.jobs.to_string(),
                c.qd.to_string(),
                format!("{:.0}", c.r.summary.iops),
                lat(Some(c.r.summary.lat_us.mean)),
                lat(Some(c.r.summary.lat_us.p99)),
            ]
        })
        .collect();
    grid(
        o,
        "pts-dirth-points",
        &[
            "point",
            "threads",
            "QD",
            "IOPS",
            "response mean",
            "response p99",
        ],
        &rows,
    );
    o.push_str(&dirth_curve(&cells, &points).figure());
}

/// The demand-intensity curve: a line per thread count through its queue depths, and a
/// marker per operating point.
fn dirth_curve(cells: &[Cell<'_>], points: &[(&'static str, Cell<'_>)]) -> Chart {
    let mut jobs: Vec<u32> = cells.iter().map(|c| c.jobs).collect();
    jobs.sort_unstable_by(|a, b| b.cmp(a));
    jobs.dedup();
    let pt = |c: &Cell<'_>| (c.r.summary.iops, c.r.summary.lat_us.mean);
    let mut all: Vec<Series> = jobs
        .iter()
        .enumerate()
        .map(|(k, &j)| {
            let mut mine: Vec<&Cell<'_>> = cells.iter().filter(|c| c.jobs == j).collect();
            mine.sort_by_key(|c| c.qd);
            let pts = mine.into_iter().map(pt).collect();
            Series::new(format!("{j} threads"), colour(k), Style::LineMarkers, pts)
        })
        .collect();
    for (name, c) in points {
        let (color, style) = (colour(all.len()), Style::DashedMarkers);
        all.push(Series {
            tips: vec![format!("{name}: {} threads, QD {}", c.jobs, c.qd)],
            ..Series::new(format!("{name} point"), color, style, vec![pt(c)])
        });
    }
    Chart {
        y_log: true,
        x_log: super::charts::spans_decades(cells.iter().map(|c| c.r.summary.iops)),
        ..chart(
            "pts-dirth",
            "Demand intensity: mean response time v IOPS (a line per thread count)",
            ("IOPS", Unit::Plain),
            ("mean response time", Unit::Micros),
            all,
        )
    }
}
