//! Steps: the picked drive's finished steps with their results (label, workload, target
//! and achieved IOPS with the share of the target reached, MB/s, mean and p99 service
//! latency, from submission, as the curve's), a step the user skipped marked `skipped`,
//! the running one marked, a step that missed its target in the warning colour, and the
//! plan's steps still to come, dimmed.

use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::app::App;
use crate::outcome::EndedBy;
use crate::session::StepResult;
use crate::ui::format;
use crate::ui::widgets::{bold, empty, panel_block};

/// A column of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Number,
    Label,
    Workload,
    Target,
    Iops,
    Reached,
    Mbps,
    Mean,
    P99,
}

impl Col {
    const ALL: [Col; 9] = [
        Col::Number,
        Col::Label,
        Col::Workload,
        Col::Target,
        Col::Iops,
        Col::Reached,
        Col::Mbps,
        Col::Mean,
        Col::P99,
    ];
    /// What goes when the panel is narrow, first to last (a missed target still shows in
    /// its row's colour).
    const DROPPED: [Col; 5] = [
        Col::Workload,
        Col::Target,
        Col::Mbps,
        Col::Mean,
        Col::Reached,
    ];

    fn head(self) -> &'static str {
        match self {
            Col::Number => "#",
            Col::Label => "step",
            Col::Workload => "workload",
            Col::Target => "target",
            Col::Iops => "IOPS",
            Col::Reached => "reached",
            Col::Mbps => "MB/s",
            Col::Mean => "svc mean",
            Col::P99 => "svc p99",
        }
    }

    /// Its width; the label's and the workload's are worked out from the room left.
    fn width(self) -> usize {
        match self {
            Col::Number => 3,
            Col::Target | Col::Iops => 7,
            Col::Reached => 10,
            Col::Mbps => 9,
            Col::Mean | Col::P99 => 9,
            Col::Label | Col::Workload => 0,
        }
    }

    fn left(self) -> bool {
        matches!(self, Col::Label | Col::Workload)
    }
}

/// The label column gets at least this much before other columns go.
const MIN_LABEL: usize = 12;
/// The workload column's widest (a mixed shape: `randrw 70%read 4KiB QD32×1`).
const MAX_WORKLOAD: usize = 26;

/// The columns shown in `width` and the label's and workload's widths.
fn columns(width: usize, longest_label: usize) -> (Vec<Col>, usize, usize) {
    let mut cols = Col::ALL.to_vec();
    let fixed = |cols: &[Col]| -> usize {
        cols.iter().map(|c| c.width()).sum::<usize>() + cols.len().saturating_sub(1)
    };
    for drop in Col::DROPPED {
        let room = width.saturating_sub(fixed(&cols));
        let need = MIN_LABEL + if cols.contains(&Col::Workload) { 12 } else { 0 };
        if room >= need {
            break;
        }
        cols.retain(|c| *c != drop);
    }
    let room = width.saturating_sub(fixed(&cols));
    if !cols.contains(&Col::Workload) {
        return (cols, room, 0);
    }
    // Kept only with room for both: the label as long as the longest, the workload the rest.
    let label = longest_label.max(MIN_LABEL).min(room.saturating_sub(12));
    let workload = room.saturating_sub(label).min(MAX_WORKLOAD);
    (cols, room - workload, workload)
}

/// Where a row's step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stand {
    Done,
    /// Ended by the user's skip key: its figures cover only the part that ran.
    Skipped,
    Running,
    ToCome,
}

/// One row: where it stands, whether it missed its target, and its cells by column.
struct Row {
    stand: Stand,
    missed: bool,
    cells: Vec<(Col, String)>,
}

use format::lat;

fn target(t: Option<f64>) -> String {
    t.map(format::iops).unwrap_or_else(|| "max".into())
}

/// The mark before a skipped step's label (kept first, so no width cuts it).
const SKIPPED: &str = "skipped ·";

fn done_row(r: &StepResult) -> Row {
    let skipped = r.ended_by == EndedBy::Skipped;
    let label = format::shown(&r.label);
    let svc = r.service_lat_us;
    Row {
        stand: if skipped { Stand::Skipped } else { Stand::Done },
        missed: r.missed_target,
        cells: vec![
            (Col::Number, r.step.to_string()),
            (
                Col::Label,
                if skipped {
                    format!("{SKIPPED} {label}")
                } else {
                    label
                },
            ),
            (Col::Workload, format::shown(&r.workload)),
            (Col::Target, target(r.target_iops)),
            (Col::Iops, format::iops(r.iops())),
            (Col::Reached, r.reached()),
            (Col::Mbps, format::bw(r.mbps() * 1e6)),
            (Col::Mean, lat(svc.map(|l| l.mean))),
            (Col::P99, lat(svc.map(|l| l.p99))),
        ],
    }
}

/// The rows of the picked drive: done, running, to come.
fn rows(app: &App) -> Vec<Row> {
    let run = &app.picked_slot().run;
    let mut out: Vec<Row> = run.results.iter().map(done_row).collect();
    let next = run.results.len() + 1;
    let running = run.step.as_ref().filter(|_| run.step_open && active(app));
    let rest_from = match (&run.step, running) {
        (Some(s), Some(_)) => {
            let live = run.last.as_ref();
            out.push(Row {
                stand: Stand::Running,
                missed: false,
                cells: vec![
                    (Col::Number, format!("▶{next}")),
                    (Col::Label, format::shown(&s.name)),
                    (Col::Workload, "running".into()),
                    (Col::Target, target(s.target_iops)),
                    (
                        Col::Iops,
                        live.map_or("-".into(), |l| format::iops(l.iops())),
                    ),
                    (
                        Col::Mbps,
                        live.map_or("-".into(), |l| format::bw(l.bw_bytes())),
                    ),
                    (Col::Mean, "-".into()),
                    (Col::P99, "-".into()),
                ],
            });
            s.index + 1
        }
        (Some(s), None) => s.index + 1,
        (None, _) => 0,
    };
    // What remains only while the drive runs (or before its first step).
    if active(app) {
        let first = next + usize::from(running.is_some());
        for (k, label) in run.plan_steps.iter().skip(rest_from).enumerate() {
            out.push(Row {
                stand: Stand::ToCome,
                missed: false,
                cells: vec![
                    (Col::Number, (first + k).to_string()),
                    (Col::Label, format::shown(label)),
                ],
            });
        }
    }
    out
}

/// The picked drive's run is going.
fn active(app: &App) -> bool {
    if crate::app::drives::table(app) {
        app.picked_slot().state.is_active()
    } else {
        app.run.state.is_active()
    }
}

/// The rows shown in `height`: the running step (or the last done) kept in view with the
/// next steps after it.
fn window(rows: &[Row], height: usize) -> std::ops::Range<usize> {
    if rows.len() <= height {
        return 0..rows.len();
    }
    let focus = rows
        .iter()
        .position(|r| !matches!(r.stand, Stand::Done | Stand::Skipped))
        .unwrap_or(rows.len());
    let after = (height / 3).min(rows.len() - focus);
    let start = (focus + after).saturating_sub(height);
    let start = start.min(rows.len() - height);
    start..start + height
}

fn cell(c: Col, text: &str, label_w: usize, workload_w: usize) -> String {
    let w = match c {
        Col::Label => label_w,
        Col::Workload => workload_w,
        other => other.width(),
    };
    let text = format::cut_end(text, w);
    if c.left() {
        format!("{text:<w$}")
    } else {
        format!("{text:>w$}")
    }
}

pub fn render(app: &App, f: &mut Frame, area: Rect) {
    let t = app.theme();
    let rows = rows(app);
    let run = &app.picked_slot().run;
    let skipped = run
        .results
        .iter()
        .filter(|r| r.ended_by == EndedBy::Skipped)
        .count();
    let title = match (run.plan_steps.len(), skipped) {
        (0, _) => "Steps".to_string(),
        (n, 0) => format!("Steps: {} of {n} done", run.results.len()),
        (n, k) => format!("Steps: {} of {n} done, {k} skipped", run.results.len() - k),
    };
    let block = panel_block(title, t);
    if rows.is_empty() {
        let lines = vec![
            "no steps yet".to_string(),
            "each step's results show here as it finishes".to_string(),
        ];
        return empty(f, area, block, lines, t);
    }
    let inner = block.inner(area);
    f.render_widget(block, area);
    let longest = rows
        .iter()
        .filter_map(|r| r.cells.iter().find(|(c, _)| *c == Col::Label))
        .map(|(_, s)| s.chars().count())
        .max()
        .unwrap_or(0);
    let (cols, label_w, workload_w) = columns(usize::from(inner.width), longest);
    let line = |cells: &[(Col, String)]| -> String {
        cols.iter()
            .map(|c| {
                let text = cells
                    .iter()
                    .find(|(x, _)| x == c)
                    .map_or("", |(_, s)| s.as_str());
                cell(*c, text, label_w, workload_w)
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let head: Vec<(Col, String)> = Col::ALL.iter().map(|c| (*c, c.head().into())).collect();
    let mut lines = vec![Line::styled(
        line(&head),
        t.title_style().add_modifier(Modifier::BOLD),
    )];
    let shown = window(&rows, usize::from(inner.height.saturating_sub(1)));
    for r in &rows[shown] {
        let style = match r.stand {
            Stand::Done if r.missed => Style::default().fg(t.warning),
            Stand::Done => Style::default().fg(t.fg),
            Stand::Skipped => Style::default().fg(t.warning),
            Stand::Running => bold(t.accent),
            Stand::ToCome => t.dim_style(),
        };
        lines.push(Line::from(Span::styled(line(&r.cells), style)));
    }
    f.render_widget(Paragraph::new(lines).style(t.base()), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_panels_drop_the_workload_first_and_keep_iops_and_p99() {
        let (wide, label, workload) = columns(118, 20);
        assert_eq!(wide, Col::ALL.to_vec());
        assert!(label >= 20 && workload >= 20, "{label} {workload}");
        let (mid, label, _) = columns(58, 20);
        assert!(!mid.contains(&Col::Workload), "{mid:?}");
        assert!(mid.contains(&Col::Iops) && mid.contains(&Col::P99));
        assert!(label >= MIN_LABEL, "{label}");
        let (narrow, _, _) = columns(40, 20);
        assert_eq!(narrow, vec![Col::Number, Col::Label, Col::Iops, Col::P99]);
    }

    #[test]
    fn the_window_keeps_the_running_step_and_some_to_come_in_view() {
        let row = |stand| Row {
            stand,
            missed: false,
            cells: Vec::new(),
        };
        let mut rows: Vec<Row> = (0..20).map(|_| row(Stand::Done)).collect();
        rows.push(row(Stand::Running));
        rows.extend((0..10).map(|_| row(Stand::ToCome)));
        let w = window(&rows, 9);
        assert_eq!(w.len(), 9);
        assert!(w.contains(&20), "{w:?}");
        assert!(w.end > 21, "some to come shown: {w:?}");
        assert_eq!(window(&rows[..5], 9), 0..5);
    }
}
