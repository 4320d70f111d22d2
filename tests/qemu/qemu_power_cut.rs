//! Power-loss testing on a drive whose volatile cache really loses what was not flushed:
//! boots the QEMU guest with scripts/qemu-nvme/guest-powercut.sh, where
//! examples/nbd_cache serves /dev/nbd0 (honest) and /dev/nbd1 (lying: it drops some
//! blocks it acknowledged as flushed and tears others) to the guest kernel's nbd driver.
//! `run --verify --power-cut` cuts each (the cache dropped, every request failed until the
//! restore). The honest drive: 20 cuts at random moments, no finding, the blocks in flight
//! counted, unflushed writes lost (not durable, not a finding). The lying drive: every
//! block reported lost after flush or torn is one the drive itself says it dropped or
//! tore at that cut, nothing else is found, and the verdict fails. Skipped, with the
//! reason, where QEMU cannot run (a failure under CI: tests/common/skip.rs).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common;
use common::qemu::{boot, json_lines, rc, section, skip_reason};

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("no {k} in {v}"))
}

fn cycles(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|v| v["type"] == "power_cut_cycle")
        .collect()
}

fn offsets(out: &std::path::Path, name: &str) -> BTreeSet<u64> {
    section(out, name)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn power_cuts_on_a_drive_with_a_volatile_cache_honest_and_lying() {
    if let Some(why) = skip_reason() {
        skip!(Qemu, "{why}");
    }
    let helper = env!("CARGO_MANIFEST_DIR").to_string() + "/target/debug/examples/nbd_cache";
    if !std::path::Path::new(&helper).exists() {
        skip!(
            Tool,
            "{helper} is not built: cargo build --example nbd_cache"
        );
    }
    let out = boot(
        "scripts/qemu-nvme/guest-powercut.sh",
        "qemu-powercut",
        &[
            ("GUEST_MODULES", "nbd"),
            ("GUEST_BINS", helper.as_str()),
            ("NVME_SIZE", "64M"),
        ],
    );

    // The honest drive.
    let lines = json_lines(&out, "pc_honest");
    assert_eq!(rc(&out, "pc_honest"), 0, "{}", section(&out, "pc_honest"));
    let cs = cycles(&lines);
    assert_eq!(cs.len(), 20);
    let (mut in_flight, mut not_durable, mut checked) = (0, 0, 0);
    for c in &cs {
        for k in [
            "lost_after_flush",
            "torn",
            "not_durable_findings",
            "corrupt",
            "misdirected",
            "unexpected",
        ] {
            assert_eq!(n(c, k), 0, "{k} in {c}");
        }
        checked += n(c, "blocks_checked");
        in_flight += n(c, "in_flight");
        not_durable += n(c, "not_durable");
    }
    // A cycle cut before its first write completed (a slow guest) has nothing to check.
    assert!(checked > 0, "blocks were read back and judged");
    assert!(in_flight > 0, "writes in flight at the cuts are counted");
    assert!(
        not_durable > 0,
        "the cache really drops what was acknowledged after the last flush"
    );
    let record = lines.iter().find(|v| v["type"] == "power_cut").unwrap();
    assert_eq!(record["verdict"], "pass");

    // The lying drive.
    let lines = json_lines(&out, "pc_lying");
    let cs = cycles(&lines);
    assert_eq!(cs.len(), 4, "{}", section(&out, "pc_lying"));
    let (mut lost_found, mut torn_found) = (0, 0);
    for (i, c) in cs.iter().enumerate() {
        let cut = ["a", "b", "c", "d"][i];
        let lost = offsets(&out, &format!("pc_lying_lost_{cut}"));
        let torn = offsets(&out, &format!("pc_lying_torn_{cut}"));
        for f in c["findings"].as_array().into_iter().flatten() {
            let at = n(&f["block"], "offset");
            // A block torn by one flush and dropped by a later one is both; the drive
            // lists it by its last broken promise.
            match f["kind"].as_str().unwrap() {
                "lost_after_flush" | "torn" => assert!(
                    lost.contains(&at) || torn.contains(&at),
                    "{at} neither dropped nor torn by the drive: {f}"
                ),
                k => panic!("{k} on the lying drive: {f}"),
            }
        }
        for k in [
            "corrupt",
            "misdirected",
            "unexpected",
            "not_durable_findings",
        ] {
            assert_eq!(n(c, k), 0, "{k} in {c}");
        }
        // Dropped blocks the check did not call lost after flush: the cut came before
        // drivescope saved the map of that flush (then they are not durable), or the
        // block was written again after the drop.
        assert!(
            n(c, "lost_after_flush") + n(c, "torn") <= (lost.len() + torn.len()) as u64,
            "{c}"
        );
        lost_found += n(c, "lost_after_flush");
        torn_found += n(c, "torn");
    }
    assert!(lost_found > 0, "blocks dropped after a flush are found");
    assert!(torn_found > 0, "torn blocks are found");
    assert_eq!(rc(&out, "pc_lying"), 3, "findings: exit 3");
    let record = lines.iter().find(|v| v["type"] == "power_cut").unwrap();
    assert_eq!(record["verdict"], "fail");
}
