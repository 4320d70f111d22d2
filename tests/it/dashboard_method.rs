//! The real dashboard in tmux running SNIA HIR, shortened (360 bursts to 3, 30-minute
//! rounds and baselines to 30 s, at most 6 rounds) and time-scaled: the curve's place
//! shows the recovery over time, and the wait states' bursts arrive there as points.
//! Skipped when tmux is missing (tests/common/skip.rs: a failure under CI).

use crate::common;
use crate::dashboard_tmux::{wait_until, Tmux};

#[test]
fn a_hir_run_shows_its_bursts_in_the_recovery_view() {
    let home = tempfile::tempdir().unwrap();
    let presets = home.path().join("config/drivescope/presets");
    std::fs::create_dir_all(&presets).unwrap();
    let text = std::fs::read_to_string("presets/snia-hir.yaml")
        .unwrap()
        .replace("id: snia-hir", "id: snia-hir-short")
        .replace("count: 360", "count: 3")
        .replace("duration: 30m", "duration: 30s")
        .replace("max: 25", "max: 6");
    std::fs::write(presets.join("snia-hir-short.yaml"), text).unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("dut.bin");
    let cmd = format!(
        "{} --target {} --size 64MiB --preset snia-hir-short --time-scale 0.02",
        common::bin().display(),
        target.display()
    );
    let Some(t) = Tmux::start_with("hir", &cmd, home.path(), 120, 40) else {
        return;
    };
    t.wait_for(" Presets ");
    t.tmux(&["send-keys", "Enter"]);
    let s = wait_until(&t, "the recovery view", |s| {
        s.contains("Recovery: IOPS over time")
    });
    assert!(!s.contains("Curve: latency vs IOPS"), "{s}");
    // The preconditioning rounds give the steady baseline; then the first wait state's
    // bursts are points of their own series.
    // The wait state's series stays in the legend once its first burst is a point (the
    // "last" line moves on with the next step).
    let s = wait_until(&t, "a wait-5s burst as a point", |s| {
        s.contains("● wait-5s")
    });
    assert!(
        s.contains("baseline ") && s.contains("(steady window)"),
        "{s}"
    );
    assert!(s.contains("● precondition"), "{s}");
    // Points are drawn in the plot: a dot right of the y axis.
    let dots = s
        .lines()
        .filter_map(|l| l.split_once("│").map(|(_, r)| r))
        .filter(|r| r.contains('•'))
        .count();
    assert!(dots > 0, "{s}");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("Stop it and quit?");
    t.tmux(&["send-keys", "y"]);
    t.wait_for("EXIT=0");
}
