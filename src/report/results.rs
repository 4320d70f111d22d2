//! The results a review prints, from the step results ([`crate::session::step_results`]):
//! one summary row per workload, the four corners (peak 4K random read and write IOPS,
//! sequential read and write MB/s, each with its latency) where the session holds them,
//! a results table per workload (target against achieved IOPS, MB/s, latency), and the QoS
//! table (p99 to p99.999 and max per step, as SNIA PTS and OCP report).

use std::fmt::Write;

use super::page::{count, grid, iops, lat, mbps};
use super::svg::esc;
use crate::session::results::MISSED_BELOW;
use crate::session::{step_results, Direction, Session, StepRecord, StepResult};
use crate::workload::{RwMode, Workload};

/// A step's result beside its record (its workload, none where the session did not
/// record one).
pub struct Step<'a> {
    pub result: StepResult,
    pub record: &'a StepRecord,
}

impl Step<'_> {
    fn workload(&self) -> Option<&Workload> {
        self.record.workload.as_ref()
    }
}

/// The steps of a one-drive session (a drive's view), with their workloads.
pub fn steps(s: &Session) -> Vec<Step<'_>> {
    step_results(s)
        .into_iter()
        .zip(&s.steps)
        .map(|(result, record)| Step { result, record })
        .collect()
}

/// The steps grouped by workload shape, in the order each shape first ran.
pub fn by_workload<'s, 'a, S: std::borrow::Borrow<Step<'a>> + 's>(
    steps: &'s [S],
) -> Vec<(String, Vec<&'s Step<'a>>)> {
    let mut groups: Vec<(String, Vec<&Step>)> = Vec::new();
    for st in steps {
        let st: &Step = st.borrow();
        match groups.iter_mut().find(|(w, _)| *w == st.result.workload) {
            Some((_, g)) => g.push(st),
            None => groups.push((st.result.workload.clone(), vec![st])),
        }
    }
    groups
}

/// The directions a step did I/O in.
pub fn dirs(r: &StepResult) -> Vec<Direction> {
    Direction::ALL
        .into_iter()
        .filter(|d| !r.dir(*d).is_empty())
        .collect()
}

/// Its step with the most IOPS.
fn peak<'s, 'a>(g: &[&'s Step<'a>]) -> Option<&'s Step<'a>> {
    g.iter()
        .copied()
        .max_by(|a, b| a.result.iops().total_cmp(&b.result.iops()))
}

fn step_name(r: &StepResult) -> String {
    format!("{}: {}", r.step, r.label)
}

/// The steps of the test itself: none that prepared the drive ([`StepRecord::prepares`]).
fn tested<'s, 'a>(steps: &'s [Step<'a>]) -> Vec<&'s Step<'a>> {
    steps.iter().filter(|st| !st.record.prepares()).collect()
}

/// One summary row per workload of the test's steps (none that prepared the drive): its
/// steps, its peak, the latency there.
pub fn summary_section(o: &mut String, steps: &[Step]) {
    let tested: Vec<&Step> = tested(steps);
    let groups = by_workload(&tested);
    if groups.is_empty() {
        return;
    }
    let rows: Vec<Vec<String>> = groups
        .iter()
        .filter_map(|(w, g)| {
            let p = &peak(g)?.result;
            Some(vec![
                w.clone(),
                count(g.len(), "step"),
                iops(p.iops()),
                mbps(p.mbps()),
                lat(p.mean_us()),
                lat(p.p99_us()),
                step_name(p),
            ])
        })
        .collect();
    grid(
        o,
        "workloads",
        &[
            "workload",
            "steps",
            "peak IOPS",
            "MB/s there",
            "response mean there",
            "response p99 there",
            "at step",
        ],
        &rows,
    );
}

/// Which corner a workload is, if it is one: 4K random reads or writes, sequential reads or
/// writes (128 KiB and up).
fn corner(w: &Workload) -> Option<usize> {
    let single = match w.bs.split.as_slice() {
        [(bs, _)] => Some(*bs),
        _ => None,
    }?;
    match w.rw {
        RwMode::RandRead if single == 4096 => Some(0),
        RwMode::RandWrite if single == 4096 => Some(1),
        RwMode::Read if single >= 65536 => Some(2),
        RwMode::Write if single >= 65536 => Some(3),
        _ => None,
    }
}

const CORNERS: [(&str, bool); 4] = [
    ("4K random read", false),
    ("4K random write", false),
    ("sequential read", true),
    ("sequential write", true),
];

/// The four corners, when the session holds at least two of them: each corner's best step
/// of the test (IOPS for the random ones, MB/s for the sequential; no step that prepared
/// the drive), with its latency.
pub fn corners_section(o: &mut String, steps: &[Step], heading: &str) {
    let mut best: [Option<&Step>; 4] = [None; 4];
    for st in tested(steps) {
        let Some(c) = st.workload().and_then(corner) else {
            continue;
        };
        let key = |x: &Step| {
            if CORNERS[c].1 {
                x.result.mbps()
            } else {
                x.result.iops()
            }
        };
        if best[c].is_none_or(|b| key(st) > key(b)) {
            best[c] = Some(st);
        }
    }
    if best.iter().flatten().count() < 2 {
        return;
    }
    let _ = writeln!(o, "<{heading}>Four corners</{heading}>");
    let rows: Vec<Vec<String>> = CORNERS
        .iter()
        .zip(best)
        .map(|((name, seq), b)| match b {
            None => [*name, "not in this session", "", "", "", ""]
                .map(String::from)
                .to_vec(),
            Some(st) => {
                let r = &st.result;
                vec![
                    name.to_string(),
                    if *seq { mbps(r.mbps()) } else { iops(r.iops()) },
                    if *seq { iops(r.iops()) } else { mbps(r.mbps()) },
                    lat(r.mean_us()),
                    lat(r.p99_us()),
                    format!("{}, {}", step_name(r), r.workload),
                ]
            }
        })
        .collect();
    grid(
        o,
        "corners",
        &[
            "corner",
            "peak",
            "and",
            "response mean",
            "response p99",
            "step, workload",
        ],
        &rows,
    );
}

/// A results table per workload: one row per step and direction.
pub fn workload_sections(o: &mut String, steps: &[Step], heading: &str) {
    for (w, g) in by_workload(steps) {
        let _ = writeln!(o, "<{heading} class=\"workload\">{}</{heading}>", esc(&w));
        // A paced step: its figures are from each I/O's scheduled time (response, backlog
        // and all, as steps.csv has them); its mean from submission (service, the curve's)
        // beside them.
        let paced = g
            .iter()
            .any(|st| st.record.summary.response_from_schedule().is_some());
        let mut rows = Vec::new();
        for st in &g {
            let r = &st.result;
            // Unpaced: its service latency is its response latency, shown here too.
            let service = r.service_lat_us.map(|l| l.mean);
            let ds = dirs(r);
            // A step of no I/O: one row saying so.
            let each = ds.iter().map(Some).chain(ds.is_empty().then_some(None));
            for (i, d) in each.enumerate() {
                // The step's own cells, on its first row only.
                let once = |cell: String| if i == 0 { cell } else { String::new() };
                let x = d.map(|d| r.dir(*d));
                let l = x.and_then(|x| x.lat_us);
                let mut row = vec![
                    once(r.step.to_string()),
                    once(r.label.clone()),
                    d.map_or_else(|| "-".into(), |d| d.word().to_string()),
                    once(target(r)),
                    once(r.reached()),
                ];
                match x {
                    Some(x) => row.extend([
                        iops(x.iops),
                        mbps(x.mbps),
                        lat(l.map(|l| l.mean)),
                        lat(l.map(|l| l.p50)),
                        lat(l.map(|l| l.p99)),
                        lat(l.map(|l| l.p99_9)),
                    ]),
                    None => row.extend(["no I/O".into()].into_iter().chain(vec![String::new(); 5])),
                }
                row.extend([once(r.errors.to_string()), once(r.ended_by.to_string())]);
                if paced {
                    row.push(once(lat(service)));
                }
                rows.push(row);
            }
        }
        let mut head = vec![
            "#",
            "step",
            "I/O",
            "target IOPS",
            "reached",
            "IOPS",
            "MB/s",
            "response mean",
            "response p50",
            "response p99",
            "response p99.9",
            "errors",
            "ended by",
        ];
        if paced {
            head.push("service mean");
        }
        // No step with a target: no share of one to show.
        if g.iter().all(|st| st.result.achieved_share.is_none()) {
            let at = REACHED_COLUMN;
            head.remove(at);
            rows.iter_mut().for_each(|r| {
                r.remove(at);
            });
        }
        grid(o, "results", &head, &rows);
        if paced {
            let _ = writeln!(
                o,
                "<p class=\"note\">A paced step's response latency counts from each I/O's \
                 scheduled time (a drive that falls behind its rate is charged its backlog); \
                 its service mean, from submission, is beside it, as the curve plots it. \
                 'reached' is the achieved IOPS over the target; under {:.0}% of it, the step \
                 MISSED its target.</p>",
                MISSED_BELOW * 100.0
            );
        } else {
            o.push_str(
                "<p class=\"note\">No step here was paced: with no schedule, each I/O's \
                 response latency is its service latency (from submission).</p>\n",
            );
        }
    }
}

/// Where the results table's `reached` column is (after the step's target).
const REACHED_COLUMN: usize = 4;

fn target(r: &StepResult) -> String {
    r.target_iops.map_or_else(|| "max".to_string(), iops)
}

/// The QoS table: per step and direction, the latency nines and the maximum.
pub fn qos_section(o: &mut String, steps: &[Step], heading: &str) {
    let rows: Vec<Vec<String>> = steps
        .iter()
        .flat_map(|st| {
            let r = &st.result;
            dirs(r).into_iter().filter_map(move |d| {
                let l = r.dir(d).lat_us?;
                Some(vec![
                    r.step.to_string(),
                    r.label.clone(),
                    d.word().to_string(),
                    iops(r.dir(d).iops),
                    lat(Some(l.p99)),
                    lat(Some(l.p99_9)),
                    lat(Some(l.p99_99)),
                    lat(l.p99_999),
                    lat(Some(l.max)),
                ])
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<{heading}>Quality of service (response latency nines)</{heading}>"
    );
    grid(
        o,
        "qos",
        &[
            "#",
            "step",
            "I/O",
            "IOPS",
            "response p99",
            "response p99.9",
            "response p99.99",
            "response p99.999",
            "response max",
        ],
        &rows,
    );
    o.push_str(
        "<p class=\"note\">The response latency under which that share of the step's I/Os \
         completed, as SNIA PTS and OCP report it (from the schedule in a paced step; from \
         submission, the service latency, in an unpaced one).</p>\n",
    );
}
