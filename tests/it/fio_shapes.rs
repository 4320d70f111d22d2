//! `run --fio-job`: a step of jobs of several shapes is described job by job as fio ran
//! them. Job files generated from shapes (mixes, a `bsrange`, a `bssplit`, trims, several
//! `name=`s, `group_reporting`) run on a loop device, then under plain fio on the same
//! device: each job's pattern, mix, block sizes and depth in drivescope's step summary are
//! those fio's JSON reports, its counts are fio's, and the step's label lists no mix that
//! did not run.

use crate::common;
use common::{json_lines, of_type, LoopDev};

/// A job's own lines: its pattern, sizes, engine and depth.
const SHAPES: &[&str] = &[
    "rw=randread\nbs=4k\nioengine=libaio\niodepth=16\ndirect=1\n",
    "rw=write\nbs=32k\n",
    "rw=randrw\nrwmixread=70\nbs=4k,64k\n",
    "rw=randwrite\nblocksize_range=4k-128k\n",
    "rw=randread\nbssplit=4k/50:64k/50\nioengine=io_uring\niodepth=8\n",
    "rw=randtrim\nbs=64k\n",
    "rw=rw\nrwmixwrite=20\nbs=16k\nioengine=libaio\niodepth=4\ndirect=1\n",
];

/// fio's `iodepth_level` buckets, the deepest one with any share (1, 2, 4, ... 64).
fn deepest_level(job: &serde_json::Value) -> u32 {
    let levels = job["iodepth_level"].as_object().unwrap();
    levels
        .iter()
        .filter(|(_, v)| v.as_f64().unwrap_or(0.0) > 0.0)
        .map(|(k, _)| k.trim_start_matches(">=").parse::<u32>().unwrap())
        .max()
        .unwrap_or(1)
}

#[test]
fn each_job_of_a_step_is_described_as_fios_json_reports_it() {
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = common::disk_tempdir();
    let d = dev.dev.to_str().unwrap();
    let n = SHAPES.len();
    // Each file: three or four jobs of rotating shapes; some with name=, one grouped.
    for file in 0..n {
        let count = 3 + file % 2;
        let named = file % 2 == 0;
        let grouped = file == 3;
        let mut text = format!("[global]\nfilename={d}\nsize=2m\n");
        if grouped {
            text.push_str("group_reporting\n");
        }
        let mut sections = Vec::new();
        for j in 0..count {
            let shape = SHAPES[(file + j * 2) % n];
            text.push_str(&format!("[s{file}j{j}]\noffset={}m\n{shape}", j * 4));
            if named {
                text.push_str(&format!("name=job {file}.{j}\n"));
            }
            sections.push(shape);
        }
        let job = home.path().join(format!("shapes{file}.fio"));
        std::fs::write(&job, &text).unwrap();
        let out = common::command(home.path())
            .args(["run", "--fio-job", job.to_str().unwrap(), "--json"])
            .args(["--destroy-data", d])
            .output()
            .expect("run drivescope");
        assert!(
            out.status.success(),
            "{text}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = json_lines(&out);
        let steps = of_type(&lines, "step");
        assert_eq!(steps.len(), 1, "{text}");
        let step = steps[0];
        let series = step["summary"]["fio_series"].as_array().unwrap();
        let plain = crate::fio_job_file::plain_fio_json(&job, home.path(), &[]);
        let fio = plain["jobs"].as_array().unwrap();
        assert_eq!(series.len(), fio.len(), "{text}");

        // The label: one shape, each shape listed, or how many; never a mix not run.
        let label = step["name"].as_str().unwrap();
        let patterns: Vec<&str> = sections
            .iter()
            .map(|s| s.lines().next().unwrap().trim_start_matches("rw="))
            .collect();
        assert!(
            label.starts_with("mixed: ")
                || patterns.iter().all(|p| label.contains(&format!("{p} "))),
            "{label}: {patterns:?}"
        );
        if !patterns.iter().any(|p| p.contains("rw")) {
            assert!(!label.contains("%read"), "a mix that did not run: {label}");
        }

        for f in fio {
            let name = f["jobname"].as_str().unwrap();
            let ours = series
                .iter()
                .find(|s| s["name"] == name)
                .unwrap_or_else(|| panic!("{text}: no series {name} in {series:?}"));
            let jobs = ours["jobs"].as_array().unwrap();
            // A group holds every job of the step; a job, itself.
            assert_eq!(jobs.len(), if grouped { count } else { 1 }, "{name}");
            let shape = &jobs[0];
            assert_eq!(shape["name"], name);
            let opts = &f["job options"];
            if !grouped {
                assert_eq!(shape["rw"], opts["rw"], "{name}");
                match (opts.get("rwmixread"), opts.get("rwmixwrite")) {
                    (Some(r), _) => {
                        assert_eq!(shape["rwmixread"].to_string(), r.as_str().unwrap())
                    }
                    (None, Some(w)) => assert_eq!(
                        shape["rwmixread"].as_u64().unwrap(),
                        100 - w.as_str().unwrap().parse::<u64>().unwrap()
                    ),
                    (None, None) => assert!(shape.get("rwmixread").is_none(), "{name}"),
                }
                // The depth fio ran it at: no level deeper than said, and said 1 only
                // where fio never went deeper.
                let qd = shape["iodepth"].as_u64().unwrap() as u32;
                assert!(
                    deepest_level(f) <= qd.max(1),
                    "{name}: {qd} {}",
                    deepest_level(f)
                );
            }
            // Each direction: fio's counts, and its bytes per I/O within the sizes said;
            // trims only where a job trims.
            let (lo, hi) = jobs.iter().fold((u64::MAX, 0), |(l, h), j| {
                (
                    l.min(j["bs_min"].as_u64().unwrap()),
                    h.max(j["bs_max"].as_u64().unwrap()),
                )
            });
            for dir in ["read", "write", "trim"] {
                let (ios, bytes) = (
                    f[dir]["total_ios"].as_u64().unwrap(),
                    f[dir]["io_bytes"].as_u64().unwrap(),
                );
                assert_eq!(ours[dir]["ios"].as_u64().unwrap_or(0), ios, "{name} {dir}");
                if ios > 0 {
                    assert!(
                        bytes >= ios * lo && bytes <= ios * hi,
                        "{name} {dir}: {} per I/O outside {lo}-{hi}",
                        bytes / ios
                    );
                }
                let trims = jobs
                    .iter()
                    .any(|j| j["rw"].as_str().unwrap().contains("trim"));
                if dir == "trim" {
                    assert_eq!(ios > 0, trims, "{name}: trims shown as trims");
                }
            }
        }
    }
}
