//! `run --fio-job`: the step's intervals add up to fio's own totals in every reporting shape
//! (`group_reporting` with `wait_for` or `startdelay` inside a group, delayed jobs of their
//! own, stonewalls, `numjobs`), and a step whose jobs run one after another has the rate of
//! its I/Os over the time they took, not the sum of its jobs' rates. fio's null engine at a
//! fixed rate: counts known in advance, times long enough for several status dumps.

use std::path::Path;

use crate::common;
use common::{json_lines, of_type};

/// A job file: its name, its text, each step's (reads, writes) as fio counts them.
type Shape = (&'static str, String, &'static [(u64, u64)]);

/// Runs `text` as a job file with 200 ms intervals, JSON lines; it must succeed.
fn run_text(home: &Path, name: &str, text: &str) -> Vec<serde_json::Value> {
    let job = home.join(name);
    std::fs::write(&job, text).unwrap();
    let out = common::command(home)
        .current_dir(home)
        .args(["run", "--fio-job", job.to_str().unwrap()])
        .args(["--interval", "200ms", "--json"])
        .output()
        .expect("run drivescope");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
}

/// Each step's summary with the intervals that came before it (and after the step before).
fn steps_with_intervals(
    lines: &[serde_json::Value],
) -> Vec<(&serde_json::Value, Vec<&serde_json::Value>)> {
    let mut out = Vec::new();
    let mut intervals = Vec::new();
    for l in lines {
        if l["type"] == "interval" && l.get("index").is_some() {
            intervals.push(l);
        } else if l["type"] == "step" {
            out.push((&l["summary"], std::mem::take(&mut intervals)));
        }
    }
    out
}

/// A direction's I/Os in the intervals that are not a ramp's.
fn measured(intervals: &[&serde_json::Value], dir: &str) -> u64 {
    intervals
        .iter()
        .filter(|i| i["ramp"] != true)
        .map(|i| i[dir]["ios"].as_u64().unwrap())
        .sum()
}

#[test]
fn intervals_add_up_to_fios_totals_in_every_reporting_shape() {
    let home = tempfile::tempdir().unwrap();
    let g = "[global]\nioengine=null\nbs=4k\nrate_iops=400\n";
    // Each step's counts are size / bs.
    let shapes: [Shape; 5] = [
        (
            "wait-for-in-a-group.fio",
            format!("{g}group_reporting\n[a]\nrw=read\nsize=800k\n[b]\nwait_for=a\nrw=read\nsize=800k\n"),
            &[(400, 0)],
        ),
        (
            "startdelay-in-a-group.fio",
            format!("{g}group_reporting\n[a]\nrw=read\nsize=400k\n[b]\nstartdelay=1\nrw=read\nsize=400k\n"),
            &[(200, 0)],
        ),
        (
            "startdelay-alone.fio",
            format!("{g}[a]\nrw=read\nsize=1600k\n[b]\nstartdelay=1\nrw=write\nsize=400k\n"),
            &[(400, 100)],
        ),
        (
            "stonewall.fio",
            format!("{g}[a]\nrw=read\nsize=400k\n[b]\nstonewall\nrw=write\nsize=800k\n"),
            &[(100, 0), (0, 200)],
        ),
        (
            "numjobs-then-a-group.fio",
            format!(
                "{g}group_reporting\n[a]\nrw=read\nsize=800k\nnumjobs=2\n\
                 [b]\nnew_group\nwait_for=a\nrw=write\nsize=800k\n"
            ),
            &[(400, 200)],
        ),
    ];
    for (name, text, want) in &shapes {
        let lines = run_text(home.path(), name, text);
        let steps = steps_with_intervals(&lines);
        assert_eq!(steps.len(), want.len(), "{name}: {lines:?}");
        for ((sum, intervals), (r, w)) in steps.iter().zip(want.iter()) {
            let fio = (
                sum["read_ios"].as_u64().unwrap(),
                sum["write_ios"].as_u64().unwrap(),
            );
            assert_eq!(fio, (*r, *w), "{name}: fio's totals");
            assert!(intervals.len() >= 2, "{name}: {intervals:?}");
            let got = (measured(intervals, "read"), measured(intervals, "write"));
            eprintln!(
                "{name}: intervals {got:?}, fio {fio:?}, {} intervals",
                intervals.len()
            );
            assert_eq!(got, fio, "{name}: the intervals' sum is fio's totals");
            // No interval's rate is more than the job file's rates together (a delayed
            // job's start is no shorter interval).
            for i in intervals {
                let iops = i["read_iops"].as_f64().unwrap() + i["write_iops"].as_f64().unwrap();
                assert!(iops < 2.0 * 800.0 * 1.5, "{name}: {i}");
            }
        }
    }
}

#[test]
fn a_step_whose_jobs_run_one_after_another_has_its_ios_over_the_time_they_took() {
    // Its bounds are on time: not while another timing test runs.
    let _timing = common::timing_lock();
    let home = tempfile::tempdir().unwrap();
    // Two reporting groups in one step, the second waiting for the first: 200 reads at
    // 400 IOPS, then 200 writes at 400 IOPS.
    let text = "[global]\nioengine=null\nbs=4k\nrate_iops=400\ngroup_reporting\n\
                [a]\nrw=read\nsize=800k\n[b]\nnew_group\nwait_for=a\nrw=write\nsize=800k\n";
    let lines = run_text(home.path(), "sequence.fio", text);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let sum = &steps[0]["summary"];
    let series = sum["fio_series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    let runtimes: f64 = series
        .iter()
        .map(|s| s["runtime_s"].as_f64().unwrap())
        .sum();
    let rates: f64 = series
        .iter()
        .map(|s| s["read"]["iops"].as_f64().unwrap() + s["write"]["iops"].as_f64().unwrap())
        .sum();
    let ios = sum["ios"].as_u64().unwrap() as f64;
    assert_eq!(ios, 400.0);
    let iops = sum["iops"].as_f64().unwrap();
    let runtime = sum["runtime_s"].as_f64().unwrap();
    eprintln!("step: {iops:.1} IOPS over {runtime:.3} s; jobs' runtimes {runtimes:.3} s, rates added {rates:.1}");
    // The jobs' own measured times, one after the other, are the least the step took; the
    // second's start (fio creates its thread when the first ends) adds a little, more on a
    // loaded machine, never as much as the jobs' own time.
    assert!(
        runtime >= runtimes * 0.99 && runtime <= runtimes * 2.0,
        "{runtime} vs {runtimes}"
    );
    assert!(
        (iops - ios / runtime).abs() < 1e-6 * iops,
        "{iops} vs {ios} / {runtime}"
    );
    assert!(
        iops < 0.6 * rates,
        "not the jobs' rates added: {iops} vs {rates}"
    );
    // 400 IOPS one job at a time, never more (the time between the jobs takes some off).
    assert!(
        iops > 0.0 && iops <= 420.0,
        "400 IOPS, one job at a time: {iops}"
    );
    // Each direction is one job's: its own rate, never its I/Os over the other's time.
    for (dir, s) in [("read", &series[0]), ("write", &series[1])] {
        let (ours, fios) = (
            sum[format!("{dir}_iops")].as_f64().unwrap(),
            s[dir]["iops"].as_f64().unwrap(),
        );
        assert!(
            (ours - fios).abs() <= 0.05 * fios,
            "{dir}: {ours} vs fio's {fios}"
        );
    }
}

/// A write job, then a read job waiting for it (`wait_for`, no group): the step's write
/// and read IOPS are each fio's own rate of the job that did them, as plain fio reports
/// them for the same file, not one job's I/Os over the other's time.
#[test]
fn a_write_job_then_a_read_job_keep_their_own_rates() {
    let _timing = common::timing_lock();
    let home = tempfile::tempdir().unwrap();
    let text = "[global]\nioengine=null\nbs=4k\n\
                [w]\nrw=write\nrate_iops=400\nsize=1600k\n\
                [r]\nwait_for=w\nrw=randread\nrate_iops=200\nsize=800k\n";
    let lines = run_text(home.path(), "then.fio", text);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let sum = &steps[0]["summary"];
    let series = sum["fio_series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    // Plain fio's own report of the same file.
    let job = home.path().join("then.fio");
    let plain = crate::fio_job_file::plain_fio_json(&job, home.path(), &[]);
    for (dir, i) in [("write", 0), ("read", 1)] {
        let ours = sum[format!("{dir}_iops")].as_f64().unwrap();
        let this_run = series[i][dir]["iops"].as_f64().unwrap();
        let plain_rate = plain["jobs"][i][dir]["iops"].as_f64().unwrap();
        eprintln!("{dir}: step {ours:.1}, fio's job {this_run:.1}, plain fio {plain_rate:.1}");
        // fio's own rate of that job in this run (its time is the job's, its start
        // placed by the dumps: within a few %).
        assert!(
            (ours - this_run).abs() <= 0.03 * this_run,
            "{dir}: {ours} vs fio's {this_run}"
        );
        // Plain fio's run of the same file paces the job alike (a loaded machine costs a
        // paced job a little of its rate, in either run).
        assert!(
            (ours - plain_rate).abs() <= 0.15 * plain_rate,
            "{dir}: {ours} vs plain fio's {plain_rate}"
        );
    }
    // The step's own rate: all its I/Os over its time, less than either job's rate added.
    let iops = sum["iops"].as_f64().unwrap();
    let runtime = sum["runtime_s"].as_f64().unwrap();
    assert!(
        (iops - 600.0 / runtime).abs() < 1e-6 * iops,
        "{iops} {runtime}"
    );
    assert!(iops < 400.0, "{iops}");
}

#[test]
fn each_job_ends_by_what_fio_stopped_it_on_and_the_step_by_its_jobs() {
    let home = tempfile::tempdir().unwrap();
    // One step of three jobs together (a size under a runtime cap it does not reach, a
    // time, an io_size), then one of a size under a cap with time_based=0.
    let text = "[global]\nioengine=null\nbs=4k\nrate_iops=400\n\
                [sized]\nrw=read\nsize=400k\nruntime=30\n\
                [timed]\nrw=read\nsize=400k\ntime_based\nruntime=1\n\
                [limited]\nrw=write\nsize=4m\nio_size=200k\n\
                [capped]\nstonewall\nrw=read\nsize=200k\ntime_based=0\nruntime=30\n";
    let lines = run_text(home.path(), "ends.fio", text);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 2);
    let ends = |step: &serde_json::Value| -> Vec<(String, String)> {
        step["summary"]["fio_series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["name"].as_str().unwrap().to_string(),
                    s["ended_by"].as_str().unwrap_or("-").to_string(),
                )
            })
            .collect()
    };
    let named = |l: &[(&str, &str)]| -> Vec<(String, String)> {
        l.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        ends(steps[0]),
        named(&[
            ("sized", "size"),
            ("timed", "runtime"),
            ("limited", "io_size")
        ])
    );
    assert_eq!(steps[0]["summary"]["ended_by"], "duration");
    // fio's own counts: 100 reads; 50 writes of the 200k io_size.
    let series = steps[0]["summary"]["fio_series"].as_array().unwrap();
    assert_eq!(series[0]["read"]["ios"], 100);
    assert_eq!(series[2]["write"]["ios"], 50);
    assert_eq!(ends(steps[1]), named(&[("capped", "size")]));
    assert_eq!(
        steps[1]["summary"]["ended_by"], "bytes",
        "time_based=0 is not timed"
    );
}

/// Every interval of real fio runs on a file (4 KiB reads, a mix of two sizes, a range, a
/// split, several jobs; trims need a device, `fio_job_file`'s trim test has them) has, in each direction, bytes per I/O within that
/// direction's block sizes, and the intervals add up to fio's totals (its bytes nearly, where
/// a direction has several sizes): fio takes a dump's bytes before its counts, and
/// drivescope gives the interval's I/Os their sizes.
#[test]
fn every_intervals_bytes_per_io_lie_within_its_jobs_block_sizes() {
    let home = common::disk_tempdir();
    let data = home.path().join("data.bin");
    let g = "[global]\nfilename=data.bin\nsize=16m\ntime_based\nruntime=2\n";
    // Each job file with the (smallest, largest) I/O of its reads, writes and trims.
    type Sizes = [(u64, u64); 3];
    let shapes: [(&str, String, Sizes); 4] = [
        (
            "fourk.fio",
            format!("{g}[r]\nrw=randread\nbs=4k\n"),
            [(4096, 4096); 3],
        ),
        (
            "two-sizes.fio",
            format!("{g}[m]\nrw=randrw\nbs=4k,64k\nioengine=libaio\niodepth=8\n"),
            [(4096, 4096), (65536, 65536), (65536, 65536)],
        ),
        (
            "range.fio",
            format!("{g}[w]\nrw=randwrite\nbsrange=4k-64k\n[r]\nrw=read\nbs=8k\n"),
            [(4096, 65536); 3],
        ),
        (
            "split.fio",
            format!("{g}[s]\nrw=randrw\nbssplit=4k/50:16k/50,32k/100\n"),
            [(4096, 16384), (32768, 32768), (4096, 16384)],
        ),
    ];
    for (name, text, sizes) in &shapes {
        let job = home.path().join(name);
        std::fs::write(&job, text).unwrap();
        let out = common::command(home.path())
            .current_dir(home.path())
            .args(["run", "--fio-job", job.to_str().unwrap()])
            .args(["--interval", "200ms", "--json"])
            .args(
                (*name != "fourk.fio")
                    .then(|| ["--destroy-data".as_ref(), data.as_os_str()])
                    .into_iter()
                    .flatten(),
            )
            .output()
            .expect("run drivescope");
        // The file is made by the first run (which only reads); later ones write it.
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = json_lines(&out);
        let steps = steps_with_intervals(&lines);
        assert_eq!(steps.len(), 1, "{name}");
        let (summary, intervals) = &steps[0];
        assert!(intervals.len() >= 5, "{name}: {}", intervals.len());
        for (d, dir) in ["read", "write", "trim"].iter().enumerate() {
            let (lo, hi) = sizes[d];
            for i in intervals {
                let (ios, bytes) = (
                    i[dir]["ios"].as_u64().unwrap_or(0),
                    i[dir]["bytes"].as_u64().unwrap_or(0),
                );
                assert!(
                    bytes >= ios * lo && bytes <= ios * hi,
                    "{name} {dir}: {bytes} bytes in {ios} I/Os ({} per I/O) outside {lo}-{hi}: {i}",
                    bytes.checked_div(ios).unwrap_or(bytes)
                );
            }
            let sum = |k: &str| -> u64 {
                intervals
                    .iter()
                    .map(|i| i[dir][k].as_u64().unwrap_or(0))
                    .sum()
            };
            let key = |k: &str| format!("{}_{k}", dir);
            assert_eq!(
                sum("ios"),
                summary[key("ios")].as_u64().unwrap_or(0),
                "{name} {dir}"
            );
            // One size: exact. Several: fio's bytes held within the I/Os' sizes, all but
            // those its last status counted late, which the last interval's few I/Os
            // cannot hold (never more than fio's).
            let (got, fio) = (sum("bytes"), summary[key("bytes")].as_u64().unwrap_or(0));
            if lo == hi {
                assert_eq!(got, fio, "{name} {dir}");
            } else {
                assert!(
                    got <= fio && got * 100 >= fio * 80,
                    "{name} {dir}: {got} {fio}"
                );
            }
        }
    }
}
