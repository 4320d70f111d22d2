//! The plan and the preset in the report: the plan as a table of its steps in words (phase,
//! step, workload, arrivals, rate, what ends it; numbered from 1 as the run counts them),
//! with the rate each step ran at, and the preset's name and text, wrapped to the page.

use std::fmt::Write;

use super::page::{count, grid, iops, kv_table, para};
use super::svg::esc;
use crate::plan::{plan_rows, planned_steps, Plan, PLAN_COLUMNS};
use crate::session::method::time_scale;
use crate::session::{step_results, Session};

/// The Plan section: a table, or the plan's text where it is not one this release reads.
pub fn plan_section(o: &mut String, s: &Session) {
    let Some(doc) = &s.plan else {
        return;
    };
    o.push_str("<h2>Plan</h2>\n");
    let Some(plan) = doc.read::<Plan>() else {
        let _ = writeln!(
            o,
            "<p class=\"note\">A plan this release does not read as a table:</p><pre>{}</pre>",
            esc(&doc.to_yaml())
        );
        return;
    };
    let (steps, phases) = (
        count(plan.steps.len(), "step"),
        count(plan.phases.len(), "phase"),
    );
    para(o, "note", &format!("{steps} in {phases}."));
    let steps = planned_steps(&plan, None);
    // The rate each step ran at, by its label (the first drive's, in a run of several).
    let results = step_results(s);
    let first = results.first().and_then(|r| r.drive.clone());
    let ran = |label: &str| {
        results
            .iter()
            .filter(|r| r.drive == first)
            .find(|r| r.label == label)
            .map(|r| match r.target_iops {
                Some(t) => format!("{} IOPS", iops(t)),
                None => "closed loop".into(),
            })
            .unwrap_or_else(|| "did not run".into())
    };
    let rows: Vec<Vec<String>> = plan_rows(&plan, &steps)
        .into_iter()
        .map(|r| {
            let mut row: Vec<String> = r.to_vec();
            let label = row[2].clone();
            row.insert(6, ran(&label));
            row
        })
        .collect();
    let mut head: Vec<String> = PLAN_COLUMNS.iter().map(|c| c.to_lowercase()).collect();
    head.insert(6, "ran at".into());
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    grid(o, "plan", &head, &rows);
    for n in &plan.notes {
        para(o, "note", n);
    }
}

/// The Preset section: its name and description, its text folded away.
pub fn preset_section(o: &mut String, s: &Session) {
    let Some(doc) = &s.preset else {
        return;
    };
    o.push_str("<h2>Preset</h2>\n");
    let p = s.preset_info();
    let rows: Vec<(String, String)> = [
        ("id", p.id),
        ("name", p.name),
        ("description", p.description),
        ("source", p.source),
    ]
    .into_iter()
    .filter_map(|(k, v)| {
        let t = v?.trim().to_string();
        // Its durations are the method's: a scaled run's were not.
        let t = match (k, crate::session::OffMethod::of_scale(time_scale(s))) {
            ("description", Some(m)) => format!(
                "[This run: {m}; each duration below was multiplied by {}.] {t}",
                time_scale(s)
            ),
            _ => t,
        };
        Some((k.to_string(), t))
    })
    .collect();
    kv_table(o, "preset", &rows);
    let _ = writeln!(
        o,
        "<details><summary>The preset as run</summary><pre class=\"preset\">{}</pre></details>",
        esc(&doc.to_yaml())
    );
}
