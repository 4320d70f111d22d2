//! Names that fit (issue 43): at 80, 100 and 120 columns every row of the preset picker
//! (every built-in preset) and of the target picker shows a text of its own, a long name
//! losing the words it shares with its neighbours, not the words that tell it apart.

use drivescope::app::{App, TargetEntry, TargetKind};
use drivescope::ui::overlays::{preset_names, target_names};
use ratatui::crossterm::event::KeyCode;

use super::fixtures::*;

const WIDTHS: [u16; 3] = [80, 100, 120];

/// Targets whose names differ only at their ends, as identical drives and test files do.
fn lookalike_targets() -> Vec<TargetEntry> {
    let device = |n: u32, label: &str| TargetEntry {
        path: format!("/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_2TB_S7HENJ0W{n:06}").into(),
        label: label.into(),
        kind: TargetKind::BlockDevice,
        size: Some(2_000_398_934_016),
        safety: None,
        creates: false,
    };
    let mut all = targets();
    all.extend([
        device(1, "nvme0n1 Samsung SSD 990 PRO 2TB namespace 1"),
        device(2, "nvme0n1 Samsung SSD 990 PRO 2TB namespace 2"),
        device(3, "nvme1n1 Samsung SSD 990 PRO 2TB namespace 1"),
    ]);
    all
}

fn unique<T: Ord + Clone + std::fmt::Debug>(rows: &[T], what: &str) {
    let mut seen = rows.to_vec();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), rows.len(), "{what}: rows alike in {rows:#?}");
}

#[test]
fn every_preset_row_is_its_own_at_80_100_and_120_columns() {
    for w in WIDTHS {
        let mut app = with_builtins((w, 40));
        let names = preset_names(&app, w);
        assert_eq!(names.len(), app.presets.len());
        unique(&names, &format!("presets at {w} columns"));
        for (n, p) in names.iter().zip(&app.presets) {
            // What the row keeps is the end of the name (or its start, when nothing is
            // shared with another): never a middle that drops the words that differ.
            let kept = n.trim_start_matches('…').trim_end_matches('…');
            assert!(p.name.contains(kept), "{w}: '{n}' of '{}'", p.name);
        }
        // What the screen shows is what was checked: the highlighted row, for each preset.
        send(&mut app, [key('p')]);
        for (i, name) in names.iter().enumerate() {
            let s = screen(&app);
            let line = s.lines().find(|l| l.contains('▶')).unwrap_or_default();
            assert!(
                line.contains(&format!("▶ {name}")),
                "{w}: row {i} '{name}'\n{s}"
            );
            send(&mut app, [code(KeyCode::Down)]);
        }
    }
}

#[test]
fn storagereview_read_and_write_stay_apart_at_80_columns() {
    let app = with_builtins((80, 24));
    let names = preset_names(&app, 80);
    let of = |id: &str| {
        let i = app.presets.iter().position(|p| p.id == id).expect(id);
        names[i].clone()
    };
    assert!(of("storagereview-4k-randread").ends_with("random read"));
    assert!(of("storagereview-4k-randwrite").ends_with("random write"));
    assert!(of("storagereview-16k-seqread").ends_with("sequential read"));
}

#[test]
fn every_target_row_is_its_own_at_80_100_and_120_columns() {
    for w in WIDTHS {
        let mut cfg = config((w, 40));
        cfg.targets = lookalike_targets();
        let app = App::new(cfg);
        let rows = target_names(&app, w);
        assert_eq!(rows.len(), app.targets.len());
        unique(&rows, &format!("targets at {w} columns"));
        let labels: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        unique(&labels, &format!("target names at {w} columns"));
    }
}

/// The picker's estimate is the one `presets list` prints (tests/it/presets.rs compares
/// them); its `*` is explained beside it.
#[test]
fn the_estimates_star_is_explained_where_it_is_shown() {
    let mut app = with_builtins((120, 40));
    send(&mut app, [key('p')]);
    send(&mut app, "snia-write".chars().map(key));
    let p = app.selected_preset().expect("a preset kept").clone();
    assert!(p.estimate.ends_with('*'), "{}", p.estimate);
    let s = screen(&app);
    assert!(s.contains(&format!("estimated time {}", p.estimate)), "{s}");
    assert!(s.contains("* phases that end on an amount of data"), "{s}");
    assert!(s.contains("1GiB/s"), "{s}");
}
