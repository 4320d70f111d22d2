//! `run --fio-job FILE`: an fio job file run live through the one pipeline. Stonewalled jobs
//! are steps; on a real loop device the intervals add up to fio's totals and their
//! percentiles are those of fio's own per-I/O latency log (within the json+ bins'
//! resolution); a job file fio rejects, or one that writes a device without
//! `--destroy-data`, is refused with exit code 2 before anything is written.

use std::path::{Path, PathBuf};

use crate::common;
use common::{json_lines, of_type, run, LoopDev};

fn write_job(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `job` (with `extra` arguments), half-second intervals as JSON lines; it must
/// succeed.
fn run_job(home: &Path, job: &Path, extra: &[&str]) -> std::process::Output {
    run_job_with(&mut common::command(home), job, extra)
}

/// [`run_job`] with a command of the caller's (its environment).
fn run_job_with(
    cmd: &mut std::process::Command,
    job: &Path,
    extra: &[&str],
) -> std::process::Output {
    let out = job_output(cmd, job, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// [`run_job_with`], whatever its end.
fn job_output(cmd: &mut std::process::Command, job: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--fio-job",
        job.to_str().unwrap(),
        "--interval",
        "500ms",
        "--json",
    ];
    args.extend_from_slice(extra);
    cmd.args(&args).output().expect("run drivescope")
}

/// Each fio job's (or group's) own figures, as the step's summary carries them: per step,
/// its series as (name, read I/Os, write I/Os, the summary's JSON).
fn job_series(step: &serde_json::Value) -> Vec<(&str, u64, u64, &serde_json::Value)> {
    step["summary"]["fio_series"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|x| {
                    (
                        x["name"].as_str().unwrap(),
                        x["read"]["ios"].as_u64().unwrap(),
                        x["write"]["ios"].as_u64().unwrap(),
                        x,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `job` with `cmd` (its environment and folder) and `extra` arguments, which must
/// refuse it with exit code 2: what it said.
fn refused_with(cmd: &mut std::process::Command, job: &Path, extra: &[&str]) -> String {
    let out = cmd
        .args(["run", "--fio-job", job.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .expect("run drivescope");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

/// Every step's reads and writes added up.
fn total_counts(steps: &[&serde_json::Value]) -> (u64, u64) {
    step_counts(steps)
        .iter()
        .fold((0, 0), |(r, w), (sr, sw)| (r + sr, w + sw))
}

/// Each step's (reads, writes), as its summary says.
fn step_counts(steps: &[&serde_json::Value]) -> Vec<(u64, u64)> {
    steps
        .iter()
        .map(|s| {
            let s = &s["summary"];
            (
                s["read_ios"].as_u64().unwrap_or(0),
                s["write_ios"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// Files in the sessions folder of `home` (a run that was refused writes none).
fn sessions_in(home: &Path) -> usize {
    std::fs::read_dir(home.join("data/drivescope/sessions"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn two_stonewalled_jobs_run_as_two_steps_and_the_session_loads_and_reports() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    let text = format!(
        "[global]\nioengine=io_uring\ndirect=1\nfilename={d}\nsize=32m\ntime_based=1\nruntime=2s\n\n\
         [seqw]\nrw=write\nbs=64k\niodepth=4\n\n\
         [randr]\nstonewall\nrw=randread\nbs=4k\niodepth=4\n\n\
         [randr2]\nrw=randread\nbs=8k\niodepth=2\n"
    );
    let job = write_job(home.path(), "two.fio", &text);
    let session = home.path().join("two.yaml");
    let before = dev.stat();
    let out = run_job(
        home.path(),
        &job,
        &["--destroy-data", d, "--session", session.to_str().unwrap()],
    );
    let after = dev.stat();
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    // Each step named by its jobs as fio ran them: two shapes, listed.
    let two_shapes = "2 jobs: randread 4KiB QD4×1, randread 8KiB QD2×1";
    assert_eq!(names, ["write 64KiB QD4×1", two_shapes]);
    let s1 = &steps[0]["summary"];
    let s2 = &steps[1]["summary"];
    assert_eq!(
        (s1["engine"].as_str(), s2["engine"].as_str()),
        (Some("fio"), Some("fio"))
    );
    assert!(
        s1["write_ios"].as_u64().unwrap() > 100 && s1["read_ios"] == 0,
        "{s1}"
    );
    assert!(
        s2["read_ios"].as_u64().unwrap() > 1000 && s2["write_ios"] == 0,
        "{s2}"
    );
    // What fio counted is what the kernel saw, both steps together.
    let (r, w) = (
        s2["read_ios"].as_u64().unwrap(),
        s1["write_ios"].as_u64().unwrap(),
    );
    common::assert_kernel_counts(before, after, r, w);
    // Each job's own figures are in its step's summary, adding up to the step's.
    let (one, two) = (job_series(steps[0]), job_series(steps[1]));
    let names = |l: &[(&str, u64, u64, &serde_json::Value)]| -> Vec<String> {
        l.iter().map(|x| x.0.to_string()).collect()
    };
    assert_eq!(names(&one), ["seqw"]);
    assert_eq!(names(&two), ["randr", "randr2"]);
    assert_eq!((one[0].1, one[0].2), (0, w));
    assert_eq!(two.iter().map(|x| x.1).sum::<u64>(), r);
    for (name, reads, writes, x) in one.iter().chain(&two) {
        let d = if *writes > 0 { &x["write"] } else { &x["read"] };
        assert!(reads + writes > 100, "{name}: {x}");
        assert!(d["iops"].as_f64().unwrap() > 0.0, "{name}: {x}");
        assert_eq!(d["lat_us"]["samples"].as_u64(), Some(reads + writes), "{x}");
        let (p50, p99) = (
            d["lat_us"]["p50"].as_f64().unwrap(),
            d["lat_us"]["p99"].as_f64().unwrap(),
        );
        assert!(p50 > 0.0 && p99 >= p50, "{name}: {x}");
        let runtime = x["runtime_s"].as_f64().unwrap();
        // runtime=2s: never short of it; a busy machine makes fio's last turn later.
        assert!((1.9..3.0).contains(&runtime), "{name}: {runtime}");
    }

    let yaml = std::fs::read_to_string(&session).unwrap();
    // The figures' keys (`trim_ios`, a series' `trim:`), not the word: the command line
    // holds the binary's path, which may (a worktree named `trim`).
    assert!(
        !yaml.contains("trim_") && !yaml.contains("trim:"),
        "a session of reads and writes has no trim figures"
    );
    let loaded = drivescope::session::load(&session).expect("the session loads");
    let s = &loaded.session;
    assert_eq!(s.steps.len(), 2);
    assert_eq!(s.steps[1].label, two_shapes);
    assert_eq!(
        s.steps[1].series(),
        two_shapes,
        "the workload column says the same"
    );
    for (i, step) in s.steps.iter().enumerate() {
        let n = s
            .intervals
            .iter()
            .filter(|iv| iv.step as usize == i)
            .count();
        assert!(n >= 3, "step {i} has {n} intervals");
        assert_eq!(step.summary.engine.as_str(), "fio");
    }
    let plan: serde_yaml::Value = s.plan_as().expect("a plan");
    let fio = &plan["fio_job"];
    assert_eq!(
        fio["text"].as_str(),
        Some(text.as_str()),
        "the job text fio ran"
    );
    assert!(fio["fio"].as_str().unwrap().starts_with("fio-3"), "{fio:?}");
    let saved: Vec<(&str, u64)> = s.steps[1]
        .summary
        .fio_series
        .iter()
        .map(|x| (x.name.as_str(), x.read.ios))
        .collect();
    assert_eq!(
        saved,
        two.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
        "the session keeps each job's figures"
    );

    let report = home.path().join("report");
    let out = run(
        home.path(),
        &[
            "report",
            session.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(html.contains(two_shapes), "the report names the steps");
    assert!(
        html.contains("<h3>fio jobs</h3>")
            && html.contains("<td>randr2</td>")
            && html.contains("randread 8KiB QD2×1 (io_uring)"),
        "the report shows each job's figures"
    );
}

/// fio's json+ latency bins (stat.h: FIO_IO_U_PLAT_BITS = 6): a value v of 2^e ≤ v < 2^(e+1)
/// (e ≥ 7) falls in one of 64 buckets of width 2^(e-6) ≤ v/64, reported as its midpoint: at
/// most v/128 away. drivescope records that midpoint m in its HdrHistogram (stats/hist.rs:
/// lowest discernible 1 µs, so a unit of 512 ns, and 3 significant digits, 2048 sub-buckets),
/// which reads a value back as the highest of its bucket: at most max(511, m/1024) ns higher.
/// So a percentile read from the bins is within v/128 + max(511, (v + v/128)/1024) ns of the
/// exact one, when both take the same sample (rank ⌈q·n⌉, HdrHistogram's).
fn bins_bound_ns(exact_ns: f64) -> f64 {
    let fio_half_bucket = exact_ns / 128.0;
    let hdr = (511.0f64).max((exact_ns + fio_half_bucket) / 1024.0);
    fio_half_bucket + hdr + 1.0
}

fn rank_value(sorted: &[u64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1] as f64
}

#[test]
fn intervals_add_up_to_fios_totals_and_their_percentiles_to_its_latency_log() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    let logs = home.path().join("logs");
    // One job: its log is in completion order, so each interval is a run of its lines.
    let text = format!(
        "[global]\nioengine=io_uring\ndirect=1\nfilename={d}\ntime_based=1\nruntime=3s\n\
         [mixed]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=4\n\
         write_lat_log=lat\nlog_avg_msec=0\n"
    );
    let job = write_job(home.path(), "mixed.fio", &text);
    let before = dev.stat();
    let out = run_job(
        home.path(),
        &job,
        &["--destroy-data", d, "--fio-logs", logs.to_str().unwrap()],
    );
    let after = dev.stat();
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let sum = &steps[0]["summary"];
    let (r, w) = (
        sum["read_ios"].as_u64().unwrap(),
        sum["write_ios"].as_u64().unwrap(),
    );
    assert!(r > 1000 && w > 300, "{r} {w}");
    let intervals = of_type(&lines, "interval");
    assert!(intervals.len() >= 5, "{}", intervals.len());
    let add = |k: &str| -> u64 {
        intervals
            .iter()
            .map(|i| i[k]["ios"].as_u64().unwrap())
            .sum()
    };
    let (ir, iw) = (add("read"), add("write"));
    eprintln!(
        "intervals: {ir} reads {iw} writes; fio: {r} reads {w} writes; kernel: {} reads {} writes",
        after.0 - before.0,
        after.1 - before.1
    );
    for (got, fio) in [(ir, r), (iw, w)] {
        assert!(
            (got as f64 - fio as f64).abs() <= 0.005 * fio as f64,
            "the intervals' {got} vs fio's total {fio}"
        );
    }
    common::assert_kernel_counts(before, after, r, w);

    // fio's own log: one line per completed I/O (time ms, clat ns, dir, bs, …).
    let log_text = std::fs::read_to_string(logs.join("lat_clat.1.log"))
        .expect("fio wrote its completion-latency log");
    let lat: Vec<u64> = log_text
        .lines()
        .map(|l| l.split(',').nth(1).unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(lat.len() as u64, r + w, "one log line per I/O");
    let mut at = 0usize;
    let (mut worst, mut worst_ns, mut worst_rel) = (0.0f64, 0.0f64, 0.0f64);
    for i in &intervals {
        let n = i["lat_us"]["samples"].as_u64().unwrap() as usize;
        let mut mine = lat[at..at + n].to_vec();
        at += n;
        mine.sort_unstable();
        for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)] {
            let got = i["lat_us"][key].as_f64().unwrap() * 1000.0;
            let exact = rank_value(&mine, q);
            let bound = bins_bound_ns(exact);
            worst = worst.max((got - exact).abs() / bound);
            worst_ns = worst_ns.max((got - exact).abs());
            worst_rel = worst_rel.max((got - exact).abs() / exact);
            assert!(
                (got - exact).abs() <= bound,
                "interval {} {key}: {got} ns from the bins, {exact} ns in fio's log (bound {bound:.1} ns)",
                i["index"]
            );
        }
    }
    assert_eq!(at, lat.len(), "the intervals' samples are the log's lines");
    // The step's percentiles against the whole log, the tail too.
    let mut all = lat.clone();
    all.sort_unstable();
    for (key, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let got = sum["lat_us"][key].as_f64().unwrap() * 1000.0;
        let exact = rank_value(&all, q);
        assert!(
            (got - exact).abs() <= bins_bound_ns(exact),
            "step {key}: {got} vs {exact}"
        );
    }
    eprintln!(
        "largest interval percentile difference: {:.0}% of its bound; {worst_ns:.0} ns; {:.2}% of the value",
        worst * 100.0,
        worst_rel * 100.0
    );
}

#[test]
fn job_files_fio_rejects_are_refused_in_fios_words_and_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("never.bin");
    let t = target.display();
    let cases = [
        (
            "syntax.fio",
            format!("rw=read\nfilename={t}\nsize=1m\n[a]\n"),
            "outside of [] job section",
        ),
        (
            "unknown.fio",
            format!("[a]\nrw=read\nbogus_option=1\nfilename={t}\nsize=1m\n"),
            "Bad option <bogus_option=1>",
        ),
        (
            "value.fio",
            format!("[a]\nrw=sideways\nfilename={t}\nsize=1m\n"),
            "failed parsing rw=sideways",
        ),
    ];
    let session = home.path().join("s.yaml");
    let s = session.to_str().unwrap();
    for (name, text, words) in &cases {
        let job = write_job(home.path(), name, text);
        let out = run(
            home.path(),
            &["run", "--fio-job", job.to_str().unwrap(), "--session", s],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains("fio refused the job file") && err.contains(words),
            "{name}: fio's own words ({words}) in: {err}"
        );
    }
    let missing = home.path().join("no-such.fio");
    let out = run(
        home.path(),
        &[
            "run",
            "--fio-job",
            missing.to_str().unwrap(),
            "--session",
            s,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot read the fio job file") && err.contains("No such file"),
        "{err}"
    );
    // A FIFO is refused by its kind, never opened to wait for a writer.
    let fifo = home.path().join("pipe.fio");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = run(
        home.path(),
        &["run", "--fio-job", fifo.to_str().unwrap(), "--session", s],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is a FIFO"), "{err}");
    // A job drivescope cannot guard (opendir: every file under a folder).
    let job = write_job(
        home.path(),
        "nofile.fio",
        &format!(
            "[a]\nrw=write\nsize=1m\nopendir={}\n",
            home.path().display()
        ),
    );
    // Run from `home`, where fio would make its own file (a.0.0) were the job run.
    let out = common::command(home.path())
        .args(["run", "--fio-job", job.to_str().unwrap(), "--session", s])
        .current_dir(home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("every file under opendir"), "{err}");
    assert!(!session.exists(), "no session");
    assert_eq!(sessions_in(home.path()), 0, "no dated session either");
    assert!(!target.exists(), "no test file");
    assert!(
        !home.path().join("a.0.0").exists(),
        "fio made no file of its own"
    );
}

/// A stand-in for an fio this machine does not have (an old one, or one whose JSON lacks the
/// latency bins): a script named `fio` first on PATH.
fn fake_fio(dir: &Path, version: &str, json: &str) -> std::path::PathBuf {
    fio_script(
        dir,
        &format!("case \"$1\" in --version) echo {version};; *) echo '{json}';; esac"),
    )
}

/// A shell script named `fio` (its body given) in a folder of `dir`, which is returned for
/// PATH.
/// Gives `cmd` (and the processes it starts, fio in its cage among them) `file` open for
/// appending as descriptor 3: a wrapper writes its log there (`>&3`), as the cage lets
/// fio write no file it was not given.
pub(crate) fn log_on_fd_3(cmd: &mut std::process::Command, file: &Path) {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    // SAFETY: dup2 and fcntl are async-signal-safe; `f` lives in the closure, so its
    // descriptor is open until the child execs. dup2's copy has no close-on-exec flag;
    // where `f` is 3 already, the flag is cleared.
    unsafe {
        cmd.pre_exec(move || {
            let fd = f.as_raw_fd();
            let r = if fd == 3 {
                libc::fcntl(3, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, 3)
            };
            if r < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

pub(crate) fn fio_script(dir: &Path, body: &str) -> std::path::PathBuf {
    let bin = dir.join("fakebin");
    common::script(&bin.join("fio"), body);
    bin
}

#[test]
fn an_old_fio_or_one_whose_json_lacks_the_bins_is_refused_before_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("never.bin");
    let job = write_job(
        home.path(),
        "a.fio",
        &format!("[a]\nrw=read\nfilename={}\nsize=1m\n", target.display()),
    );
    let session = home.path().join("s.yaml");
    let no_bins = r#"{"timestamp_ms": 1, "jobs": [{"jobname": "p", "job_runtime": 1, "read": {"total_ios": 16, "io_bytes": 65536, "iops": 1.0, "bw_bytes": 1, "runtime": 1, "clat_ns": {"percentile": {}}}}]}"#;
    for (version, json, words) in [
        ("fio-2.2.10", "{}", "fio-2.2.10 is too old"),
        (
            "fio-3.33",
            no_bins,
            "json+ output has no /jobs/0/read/clat_ns/bins",
        ),
    ] {
        let bin = fake_fio(home.path(), version, json);
        let out = std::process::Command::new(common::bin())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .arg("run")
            .arg("--fio-job")
            .arg(&job)
            .arg("--session")
            .arg(&session)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(words), "{words}: {err}");
    }
    assert!(!session.exists() && !target.exists());
    assert_eq!(sessions_in(home.path()), 0);
}

#[test]
fn a_job_that_writes_a_device_needs_destroy_data_and_the_device_is_left_as_it_was() {
    let Some(dev) = LoopDev::new(16 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    // The first job only reads; the second (its own step) writes the device.
    let job = write_job(
        home.path(),
        "w.fio",
        &format!(
            "[global]\nfilename={d}\ndirect=1\nsize=8m\n[look]\nrw=read\n[wipe]\nstonewall\nrw=write\nbs=1m\n"
        ),
    );
    let session = home.path().join("s.yaml");
    let before = dev.sha256();
    let out = run(
        home.path(),
        &[
            "run",
            "--fio-job",
            job.to_str().unwrap(),
            "--session",
            session.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("refusing to write to") && err.contains(&format!("--destroy-data {d}")),
        "{err}"
    );
    // A confirmation naming something else confirms nothing.
    let other = home.path().join("other.bin");
    let out = run(
        home.path(),
        &[
            "run",
            "--fio-job",
            job.to_str().unwrap(),
            "--destroy-data",
            other.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names no file or device"));
    // Confirmed or not, a job that would delete the device node at its end is refused.
    let unlink = write_job(
        home.path(),
        "u.fio",
        &format!(
            "[u]
filename={d}
rw=write
size=1m
unlink=1
"
        ),
    );
    let out = run(
        home.path(),
        &[
            "run",
            "--fio-job",
            unlink.to_str().unwrap(),
            "--destroy-data",
            d,
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unlink would delete"), "{err}");
    assert!(dev.dev.exists());
    assert_eq!(dev.sha256(), before, "the device is unchanged");
    assert!(!session.exists());
    assert_eq!(sessions_in(home.path()), 0);
}

#[test]
fn an_fio_job_file_in_the_preset_folder_runs_from_the_dashboards_picker() {
    use crate::dashboard_tmux::{the_saved_session, wait_until, Tmux};
    let home = tempfile::tempdir().unwrap();
    let presets = home.path().join("config/drivescope/presets");
    std::fs::create_dir_all(&presets).unwrap();
    let target = home.path().join("fj.bin");
    let text = format!(
        "[global]\nfilename={}\nsize=16m\ntime_based=1\nruntime=1s\nioengine=io_uring\n\
         [fill]\nrw=write\nbs=64k\n[look]\nstonewall\nrw=randread\nbs=4k\n",
        target.display()
    );
    std::fs::write(presets.join("two.fio"), &text).unwrap();
    let cmd = format!("{} --preset two.fio", common::bin().display());
    let Some(t) = Tmux::start_with("fiojob", &cmd, home.path(), 120, 40) else {
        return;
    };
    // The picker whole: a capture may catch it half drawn.
    wait_until(&t, "the job file in the picker", |s| {
        s.contains("fio: two.fio")
            && s.contains("writes")
            && s.contains("targets the job file's own")
    });
    t.tmux(&["send-keys", "Enter"]);
    let end = wait_until(&t, "the run's end", |s| s.contains("completed"));
    // The last step's job, with its own figures, in the events.
    assert!(end.contains("fio job look: randread 4KiB QD1×1"), "{end}");
    t.tmux(&["send-keys", "q"]);
    t.wait_for("EXIT=0");
    let (_, loaded) = the_saved_session(home.path());
    let s = &loaded.session;
    let labels: Vec<&str> = s.steps.iter().map(|st| st.label.as_str()).collect();
    assert_eq!(labels, ["write 64KiB QD1×1", "randread 4KiB QD1×1"]);
    assert!(s.steps.iter().all(|st| st.summary.ios > 0), "{labels:?}");
    for st in &s.steps {
        let series: Vec<(&str, u64)> = st
            .summary
            .fio_series
            .iter()
            .map(|x| (x.name.as_str(), x.read.ios + x.write.ios))
            .collect();
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].1, st.summary.ios);
        assert_eq!(
            st.summary.fio_series[0].jobs[0].workload(),
            st.label.replace("×1", "")
        );
    }
    let plan: serde_yaml::Value = s.plan_as().expect("a plan");
    assert_eq!(plan["fio_job"]["text"].as_str(), Some(text.as_str()));
    assert!(
        target.exists(),
        "the job's file, created as drivescope's test file"
    );
}

#[test]
fn groups_are_series_and_a_ramp_is_marked_and_left_out_of_fios_totals() {
    let home = common::disk_tempdir();
    let target = home.path().join("ramp.bin");
    // Two reporting groups (new_group) run together in one step; two jobs in the first.
    let job = write_job(
        home.path(),
        "ramp.fio",
        &format!(
            "[global]\nioengine=io_uring\nfilename={}\nsize=16m\ntime_based=1\nruntime=2s\n\
             ramp_time=1s\ngroup_reporting=1\n[r]\nrw=randread\nnumjobs=2\n[w]\nnew_group\nrw=randwrite\n",
            target.display()
        ),
    );
    let out = run_job(home.path(), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1, "new_group is no stonewall");
    let series = job_series(steps[0]);
    let names: Vec<&str> = series.iter().map(|x| x.0).collect();
    assert_eq!(names, ["r", "w"], "one series per group");
    let intervals = of_type(&lines, "interval");
    let ramp = intervals.iter().filter(|i| i["ramp"] == true).count();
    let measured: Vec<_> = intervals.iter().filter(|i| i["ramp"] == false).collect();
    assert!(ramp >= 1 && measured.len() >= 3, "{intervals:?}");
    // The measured intervals start where the ramp ended, after every ramp interval, and
    // run on in order. fio ends each job's ramp at its first turn past 1 s of that job's
    // I/O, on its own clock: on drivescope's axis that was seen from 0.938 s (a job that
    // started before the first status line) to past 1.5 s (a busy machine), so the bound
    // is half the ramp to the end of the runtime after it.
    let first = measured[0]["start_s"].as_f64().unwrap();
    assert!((0.5..3.0).contains(&first), "{first}");
    for r in intervals.iter().filter(|i| i["ramp"] == true) {
        assert!(
            r["start_s"].as_f64().unwrap() < first,
            "a ramp after the measure: {r}"
        );
    }
    for w in measured.windows(2) {
        let (start, end) = (
            w[1]["start_s"].as_f64().unwrap(),
            w[0]["end_s"].as_f64().unwrap(),
        );
        assert!(start >= end - 1e-6, "{start} after {end}");
    }
    let sum = &steps[0]["summary"];
    for dir in ["read", "write"] {
        let added: u64 = measured
            .iter()
            .map(|i| i[dir]["ios"].as_u64().unwrap())
            .sum();
        let total = sum[format!("{dir}_ios")].as_u64().unwrap();
        assert!(total > 100, "{dir}: {total}");
        assert_eq!(
            added, total,
            "{dir}: the measured intervals are fio's totals"
        );
    }
    // Each group's own counts are its direction's totals (r reads, w writes).
    assert_eq!(series[0].1, sum["read_ios"].as_u64().unwrap());
    assert_eq!(series[1].2, sum["write_ios"].as_u64().unwrap());
    assert_eq!((series[0].2, series[1].1), (0, 0));
}

#[test]
fn ctrl_c_stops_fio_saves_the_session_as_stopped_and_leaves_no_fio() {
    use std::io::BufRead;
    let home = common::disk_tempdir();
    let target = home.path().join("long.bin");
    let job = write_job(
        home.path(),
        "long.fio",
        &format!(
            "[global]\nioengine=io_uring\nfilename={}\nsize=16m\ntime_based=1\nruntime=60s\n\
             [a]\nrw=randread\n[b]\nstonewall\nrw=randread\n",
            target.display()
        ),
    );
    let session = home.path().join("s.yaml");
    let mut child = std::process::Command::new(common::bin())
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .arg("run")
        .arg("--fio-job")
        .arg(&job)
        .args(["--interval", "250ms", "--json", "--session"])
        .arg(&session)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // Running: an interval came, and fio is drivescope's child.
    let first = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("\"type\":\"interval\""));
    assert!(first.is_some(), "no interval before the end");
    let fios = common::fios_of(child.id());
    assert_eq!(fios.len(), 1, "one fio for the step: {fios:?}");
    // SAFETY: kill(2) on our own child, which has not been waited for.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    for _ in lines.by_ref() {}
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        !Path::new(&format!("/proc/{}", fios[0])).exists(),
        "fio was ended and reaped"
    );
    let loaded = drivescope::session::load(&session).expect("the session loads");
    assert_eq!(
        loaded.session.state,
        drivescope::session::SessionState::Stopped
    );
    assert_eq!(loaded.session.steps.len(), 1, "stopped in the first step");
}

/// Each of these job files could make fio write a file that is not its target, or lay out an
/// existing user file anew (even to read it): each is refused with exit 2 naming the option,
/// and the user's file is left byte for byte.
#[test]
fn job_files_that_would_write_user_files_beside_their_targets_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let victim = dir.join("victim.bin");
    let bytes: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    let v = victim.display();
    // An I/O log naming the victim (fio would open and write the file it names).
    let iolog = dir.join("replay.log");
    std::fs::write(
        &iolog,
        format!("fio version 2 iolog\n{v} add\n{v} open\n{v} write 0 4096\n{v} close\n"),
    )
    .unwrap();
    let cases = [
        (
            "iolog",
            format!(
                "[a]\nrw=read\nfilename={v}\nread_iolog={}\n",
                iolog.display()
            ),
            "read_iolog",
        ),
        (
            "filesize",
            format!("[a]\nrw=read\nfilename={v}\nfilesize=1m\n"),
            "filesize",
        ),
        (
            "offset",
            format!("[a]\nrw=read\nfilename={v}\noffset=4k\nsize=8k\n"),
            "runs past the end of the file",
        ),
        (
            "exprsize",
            format!("[a]\nrw=read\nfilename={v}\nsize=(1024*1024)\n"),
            "size=(1024*1024)",
        ),
        (
            "verify",
            format!("[a]\nrw=read\nfilename={v}\nsize=4k\nverify=crc32c\n"),
            "verify_state_save=0",
        ),
    ];
    for (name, text, words) in &cases {
        std::fs::write(&victim, &bytes).unwrap();
        let job = write_job(dir, &format!("{name}.fio"), text);
        let out = common::command(dir)
            .args(["run", "--fio-job", job.to_str().unwrap()])
            .current_dir(dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(words), "{name}: {words} in: {err}");
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            bytes,
            "{name}: the user's file is unchanged"
        );
    }
    assert_eq!(sessions_in(dir), 0);
    let strays: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".state") || n.starts_with("a."))
        .collect();
    assert!(
        strays.is_empty(),
        "fio wrote nothing of its own: {strays:?}"
    );
}

/// A time fio reads otherwise than it looks (`1m30s` is 1 µs to fio, `1.5s` is 1 s) would
/// misplace the step's ramp or end: refused, exit 2, nothing written; `2S` and `0` (no
/// limit) are read as fio reads them.
#[test]
fn job_file_times_are_read_as_fio_reads_them_or_refused() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let file = dir.join("t.bin");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    for (key, value) in [("runtime", "1m30s"), ("ramp_time", "1.5s")] {
        let job = write_job(
            dir,
            "t.fio",
            &format!("[a]\nrw=read\nfilename={}\n{key}={value}\n", file.display()),
        );
        let out = common::command(dir)
            .args(["run", "--fio-job", job.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("{key}={value}")), "{err}");
        assert_eq!(sessions_in(dir), 0);
    }
    // runtime=0 is no limit: the job reads its 1 MiB and the step ends on its data.
    let job = write_job(
        dir,
        "t.fio",
        &format!(
            "[a]\nrw=read\nbs=4k\nfilename={}\nruntime=0\nramp_time=0S\n",
            file.display()
        ),
    );
    let out = run_job(dir, &job, &[]);
    let step = common::json_lines(&out)
        .into_iter()
        .find(|l| l["type"] == "step")
        .expect("a step line");
    assert_eq!(step["summary"]["ios"], 256, "{step}");
    assert_eq!(step["summary"]["ended_by"], "bytes", "{step}");
}

/// A step in which no job writes reads the user's file and leaves it byte for byte: fio's
/// cage holds the file read-only (no `--readonly`, which refused a job whose `[global]`
/// says `rw=randrw` even where the job itself only reads).
#[test]
fn a_read_only_step_runs_fio_read_only_and_the_file_is_unchanged() {
    let home = common::disk_tempdir();
    let target = home.path().join("mine.bin");
    let bytes: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 253) as u8).collect();
    std::fs::write(&target, &bytes).unwrap();
    let job = write_job(
        home.path(),
        "ro.fio",
        &format!(
            "[global]\nrw=randrw\n[r]\nrw=randread\nbs=4k\nfilename={}\nsize=1m\ntime_based=1\nruntime=1s\n",
            target.display()
        ),
    );
    let out = run_job(home.path(), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let sum = &steps[0]["summary"];
    assert!(sum["read_ios"].as_u64().unwrap() > 100, "{sum}");
    assert!(
        !sum["engine_note"].as_str().unwrap().contains("--readonly"),
        "{sum}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
    // As text, the job's own figures are said below its step.
    let out = run(home.path(), &["run", "--fio-job", job.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with("fio job r: randread 4KiB QD1×1 (psync) (")
        })
        .unwrap_or_else(|| panic!("a line for job r in: {text}"));
    assert!(
        line.contains("): read ") && line.contains(" IOPS, clat p50 ") && !line.contains("write"),
        "{line}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), bytes);
}

/// fio's version is asked once, when the job file is read: each step's summary says the
/// version found then, and no step starts `fio --version` again. A wrapper named `fio`,
/// first on PATH, logs each call's first argument and runs the real fio.
#[test]
fn fios_version_is_asked_once_whatever_the_number_of_steps() {
    let home = common::disk_tempdir();
    let real = common::real_fio();
    let calls = home.path().join("calls.log");
    let bin = fio_script(home.path(), &format!("echo \"$1\" >&3\nexec {real} \"$@\""));
    let target = home.path().join("three.bin");
    let job = write_job(
        home.path(),
        "three.fio",
        &format!(
            "[global]\nfilename={}\nsize=1m\nbs=64k\n[a]\nrw=write\n[b]\nstonewall\nrw=read\n\
             [c]\nstonewall\nrw=randread\n",
            target.display()
        ),
    );
    let mut cmd = common::command(home.path());
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin.display()));
    log_on_fd_3(&mut cmd, &calls);
    let out = run_job_with(&mut cmd, &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 3);
    let log = std::fs::read_to_string(&calls).unwrap();
    let versions = log.lines().filter(|l| *l == "--version").count();
    assert_eq!(versions, 1, "fio was asked its version once: {log}");
    // Each step started fio, and each says the version found when the file was read.
    // (A step after the first starts with the job that takes the earlier threads' numbers.)
    let runs = log
        .lines()
        .filter(|l| l.starts_with("--section=") || *l == "--name=drivescope-thread-numbering")
        .count();
    assert_eq!(runs, 3, "{log}");
    for s in &steps {
        let note = s["summary"]["engine_note"].as_str().unwrap();
        assert!(note.starts_with("fio-3"), "{note}");
    }
}

/// Every new file a job reads is filled before fio measures it, not only the first: a
/// read of a file only fallocated reaches no device (and gives numbers no drive gives).
#[test]
fn every_new_file_a_job_reads_is_filled_first() {
    let home = common::disk_tempdir();
    let a = home.path().join("a.bin");
    let b = home.path().join("b.bin");
    let job = write_job(
        home.path(),
        "two.fio",
        &format!(
            "[r]\nrw=read\nbs=64k\nsize=2m\nfilename={}:{}\n",
            a.display(),
            b.display()
        ),
    );
    let out = run_job(home.path(), &job, &[]);
    let lines = json_lines(&out);
    let fills: Vec<&str> = of_type(&lines, "note")
        .iter()
        .filter_map(|l| l["message"].as_str())
        .filter(|m| m.contains("has never been written: filling"))
        .collect();
    assert_eq!(fills.len(), 2, "{lines:?}");
    for f in [&a, &b] {
        let data = std::fs::read(f).unwrap();
        assert!(
            data.chunks(4096).all(|c| c.iter().any(|x| *x != 0)),
            "{} has blocks the fill did not write",
            f.display()
        );
    }
}

#[test]
fn a_fio_that_exits_non_zero_after_printing_json_is_a_failed_step_in_fios_words() {
    let home = tempfile::tempdir().unwrap();
    let target = home.path().join("plain.bin");
    let text = format!(
        "[j]\nioengine=io_uring_cmd\nfilename={}\nsize=1m\nrw=read\n",
        target.display()
    );
    let job = write_job(home.path(), "cmd.fio", &text);
    let out = run(
        home.path(),
        &["run", "--fio-job", job.to_str().unwrap(), "--json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fio failed") && err.contains("only works with nvme ns generic char devices"),
        "fio's own words in: {err}"
    );
    assert!(!err.contains("device fault"), "{err}");
    for line in json_lines(&out) {
        assert_ne!(
            line["summary"]["ended_by"].as_str(),
            Some("completed"),
            "no completed step: {stdout}"
        );
    }
}

/// fio's `trim` total of its JSON output (`--output-format=json`) for `job`, run plainly.
fn plain_fio_trims(job: &Path) -> u64 {
    let out = std::process::Command::new("fio")
        .args(["--output-format=json", job.to_str().unwrap()])
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fio's JSON");
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["trim"]["total_ios"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_trim_jobs_trims_are_fios_and_the_kernels_discards_in_every_figure() {
    let _timing = common::timing_lock();
    let Some(dev) = LoopDev::new(64 << 20) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let d = dev.dev.to_str().unwrap();
    // A sync engine: one discard at a time, so the block layer merges none of them.
    let text = format!("[trims]\nfilename={d}\nioengine=psync\nrw=randtrim\nbs=4k\nsize=32m\n");
    let job = write_job(home.path(), "trim.fio", &text);
    let session = home.path().join("trim.yaml");
    let before = dev.discards();
    let out = run_job(
        home.path(),
        &job,
        &["--destroy-data", d, "--session", session.to_str().unwrap()],
    );
    let kernel = dev.discards() - before;
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let s = &steps[0]["summary"];
    let trims = s["trim_ios"].as_u64().unwrap_or(0);
    assert_eq!(trims, 8192, "32 MiB in 4 KiB trims: {s}");
    assert_eq!(s["trim_bytes"].as_u64(), Some(32 << 20), "{s}");
    assert_eq!(s["ios"].as_u64(), Some(trims), "{s}");
    assert!(s["trim_iops"].as_f64().unwrap() > 0.0, "{s}");
    assert!(s["iops"].as_f64().unwrap() > 0.0, "not 0 IOPS: {s}");
    assert_eq!(s["trim_lat_us"]["samples"].as_u64(), Some(trims), "{s}");
    assert_eq!(
        (s["read_ios"].as_u64(), s["write_ios"].as_u64()),
        (Some(0), Some(0))
    );
    let series = &s["fio_series"][0];
    assert_eq!(series["trim"]["ios"].as_u64(), Some(trims), "{series}");
    // The kernel's discard count, within 1%.
    assert!(
        kernel.abs_diff(trims) as f64 <= trims as f64 * 0.01,
        "trims {trims} vs the kernel's discards {kernel}"
    );
    // The intervals add up to the step's trims.
    let intervals = of_type(&lines, "interval");
    let summed: u64 = intervals
        .iter()
        .map(|r| r["trim"]["ios"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(summed, trims);

    // The session keeps them: the step, the intervals, the run's summary.
    let loaded = drivescope::session::load(&session).expect("the session loads");
    let sn = &loaded.session;
    assert_eq!(sn.steps[0].summary.trim_ios, trims);
    // A step of trim jobs is a trim step, not a write one.
    let w = sn.steps[0].workload.as_ref().expect("workload");
    assert_eq!(w.rw, drivescope::workload::RwMode::RandTrim);
    assert!(sn.intervals.iter().any(|r| r.trim_iops > 0.0));
    let sum = sn.summary.as_ref().unwrap();
    assert_eq!(sum.trim_bytes, 32 << 20);
    assert!(sum.trim_iops > 0.0 && sum.read_iops == 0.0, "{sum:?}");

    // The report's CSV has the trim columns, its page the job's trims.
    let report = home.path().join("report");
    let out = run(
        home.path(),
        &[
            "report",
            session.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(report.join("intervals.csv")).unwrap();
    let mut rows = csv.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "trim_iops").unwrap();
    assert!(
        rows.any(|r| r.split(',').nth(col).unwrap().parse::<f64>().unwrap() > 0.0),
        "{csv}"
    );
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    assert!(
        html.contains("<th>trim</th>"),
        "the fio jobs table has trims"
    );

    // Plain fio counts the same trims on the same job.
    assert_eq!(plain_fio_trims(&job), trims);

    // The text printer says them.
    let out = common::command(home.path())
        .args([
            "run",
            "--fio-job",
            job.to_str().unwrap(),
            "--destroy-data",
            d,
        ])
        .output()
        .unwrap();
    let text_out = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text_out}");
    assert!(
        text_out.contains("): trim 8192 I/Os, ") && !text_out.contains("achieved 0 IOPS"),
        "the job's trims and the step's rate: {text_out}"
    );
    assert!(
        text_out.contains("       0  trim "),
        "an interval's trims: {text_out}"
    );
}

/// Every file under `dir` with its length (apparent: a sparse file counts whole).
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(e.path());
            } else {
                out.push((e.path(), m.len()));
            }
        }
    }
    out
}

/// fio's own totals (reads, writes) of `job` run plainly in `dir`.
fn plain_fio_counts(job: &Path, dir: &Path) -> (u64, u64) {
    plain_fio_counts_env(job, dir, &[])
}

/// [`plain_fio_counts`] with these environment variables set.
fn plain_fio_counts_env(job: &Path, dir: &Path, env: &[(&str, &str)]) -> (u64, u64) {
    let v = plain_fio_json(job, dir, env);
    let sum = |dir: &str| -> u64 {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j[dir]["total_ios"].as_u64().unwrap())
            .sum()
    };
    (sum("read"), sum("write"))
}

/// Plain fio's JSON report of `job`, run in `dir` with these environment variables set;
/// it must succeed.
pub(crate) fn plain_fio_json(job: &Path, dir: &Path, env: &[(&str, &str)]) -> serde_json::Value {
    let out = std::process::Command::new("fio")
        .args(["--output-format=json", job.to_str().unwrap()])
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // fio prints its notes (a depth capped at 1) on stdout before the JSON.
    let json = String::from_utf8_lossy(&out.stdout);
    let json = json.find("\n{").map_or(&json[..], |i| &json[i + 1..]);
    serde_json::from_str(json).expect("fio's JSON")
}

#[test]
fn a_null_engine_job_needs_no_filename_and_makes_no_file() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // 100 GiB through fio's null engine: 102,400 I/Os that touch nothing.
    let text = "[nulls]\nioengine=null\nrw=write\nbs=1m\nsize=100g\n";
    let job = write_job(home.path(), "null.fio", text);
    let session = home.path().join("null.yaml");
    let out = run_job_with(
        common::command(home.path()).current_dir(work.path()),
        &job,
        &["--session", session.to_str().unwrap()],
    );
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let s = &steps[0]["summary"];
    let fio = plain_fio_counts(&job, work.path());
    assert_eq!(fio, (0, 102_400), "fio's own count");
    assert_eq!(
        (s["read_ios"].as_u64(), s["write_ios"].as_u64()),
        (Some(fio.0), Some(fio.1)),
        "{s}"
    );
    assert_eq!(s["write_bytes"].as_u64(), Some(100 << 30), "{s}");
    // No file: none where it ran, none beside the session, none of 100 GiB anywhere.
    assert!(
        files_under(work.path()).is_empty(),
        "{:?}",
        files_under(work.path())
    );
    let big: Vec<_> = files_under(home.path())
        .into_iter()
        .filter(|(_, len)| *len > 16 << 20)
        .collect();
    assert!(big.is_empty(), "{big:?}");
    let sessions = home.path().join("data/drivescope/sessions");
    let made: Vec<_> = files_under(&sessions)
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().contains("nulls"))
        .collect();
    assert!(made.is_empty(), "{made:?}");
    let loaded = drivescope::session::load(&session).expect("the session loads");
    assert_eq!(loaded.session.target.kind.to_string(), "none");
}

#[test]
fn dev_zero_and_dev_null_run_without_destroy_data_and_other_devices_keep_the_device_rules() {
    let home = tempfile::tempdir().unwrap();
    let text = "[zeros]\nfilename=/dev/zero\nrw=read\nbs=64k\nsize=64m\n\n\
                [nulls]\nfilename=/dev/null\nrw=write\nbs=64k\nsize=64m\n";
    let job = write_job(home.path(), "dev.fio", text);
    // No --destroy-data: they hold no data.
    let out = run_job(home.path(), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 1);
    let s = &steps[0]["summary"];
    let fio = plain_fio_counts(&job, home.path());
    assert_eq!(fio, (1024, 1024), "fio's own count");
    assert_eq!(
        (s["read_ios"].as_u64(), s["write_ios"].as_u64()),
        (Some(fio.0), Some(fio.1)),
        "{s}"
    );
    let series: Vec<(&str, u64, u64)> = job_series(steps[0])
        .iter()
        .map(|x| (x.0, x.1, x.2))
        .collect();
    assert_eq!(series, [("zeros", 1024, 0), ("nulls", 0, 1024)]);

    // /dev/full is a device like any other: a write of it is refused before fio starts.
    let full = write_job(
        home.path(),
        "full.fio",
        "[full]\nfilename=/dev/full\nrw=write\nbs=64k\nsize=1m\n",
    );
    let out = run(
        home.path(),
        &["run", "--fio-job", full.to_str().unwrap(), "--json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full"), "{err}");
}

#[test]
fn dollar_expansions_are_fios_from_the_environment_fio_gets_and_the_guard_sees_them() {
    let home = common::disk_tempdir();
    let work = home.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let target = home.path().join("target.bin");
    let target_s = target.to_str().unwrap();
    // drivescope's own exports name their target `filename=${TARGET}`; an unset `${NOPE}`
    // is nothing, as in fio; `$pagesize` and `$ncpus` are this machine's, bc's arithmetic.
    let text = "[global]\nfilename=${TARGET}${NOPE}\nbs=4k\n\n\
                [w]\nrw=write\nsize=$pagesize*64\nnumjobs=$ncpus\n\n\
                [r]\nstonewall\nrw=read\nsize=${SZ}\n";
    let job = write_job(home.path(), "env.fio", text);
    let env = [("TARGET", target_s), ("SZ", "128k")];
    let mut cmd = common::command(home.path());
    cmd.current_dir(&work).envs(env.iter().copied());
    let out = run_job_with(&mut cmd, &job, &["--destroy-data", target_s]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 2, "{lines:?}");
    let got = step_counts(&steps);
    // The same file made by fio itself, with the same environment.
    let plain = home.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let plain_target = plain.join("target.bin");
    let fio = plain_fio_counts_env(
        &job,
        &plain,
        &[("TARGET", plain_target.to_str().unwrap()), ("SZ", "128k")],
    );
    // Each of the $ncpus jobs writes 64 pages of 4k.
    let ncpus = got[0].1 / 64;
    assert!(ncpus >= 1 && got[0].1 == ncpus * 64, "{got:?}");
    assert_eq!(total_counts(&steps), fio, "fio's own");
    assert_eq!(got[1], (32, 0), "size=${{SZ}} is 128k: 32 reads of 4k");
    // The file is the expanded name, made the size fio reaches: nothing else was made.
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 256 << 10);
    assert!(files_under(&work).is_empty(), "{:?}", files_under(&work));

    // The guard judges the expanded name: a device is a device, whatever its spelling.
    let dev = write_job(
        home.path(),
        "dev.fio",
        "[d]\nfilename=${DEV}\nrw=write\nbs=4k\nsize=1m\n",
    );
    let err = refused_with(
        common::command(home.path()).env("DEV", "/dev/full"),
        &dev,
        &[],
    );
    assert!(err.contains("/dev/full"), "{err}");
    // fio's TMPDIR is drivescope's scratch folder, a new one for each fio: refused.
    let tmp = write_job(
        home.path(),
        "tmp.fio",
        "[t]\nfilename=${TMPDIR}/f\nrw=write\nbs=4k\nsize=1m\n",
    );
    let err = refused_with(&mut common::command(home.path()), &tmp, &[]);
    assert!(err.contains("TMPDIR") && err.contains("line 2"), "{err}");
    assert_eq!(
        sessions_in(home.path()),
        1,
        "only the first run saved a session"
    );
}

#[test]
fn a_job_without_filename_runs_on_the_files_fio_names_itself() {
    let home = common::disk_tempdir();
    // Two copies of a job, two files each, the copies taking the directories in turn; a
    // job reading a file fio names it, in the working directory, made and filled first.
    let text = "[global]\nbs=4k\n\n\
                [w]\nrw=write\nsize=64k\nnumjobs=2\nnrfiles=2\ndirectory=d1:d2\n\n\
                [r]\nstonewall\nrw=read\nsize=128k\n";
    let job = write_job(home.path(), "names.fio", text);
    let (ours, plain) = (home.path().join("ours"), home.path().join("plain"));
    for w in [&ours, &plain] {
        for d in ["d1", "d2"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
    }
    let out = run_job_with(common::command(home.path()).current_dir(&ours), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 2, "{lines:?}");
    let fio = plain_fio_counts(&job, &plain);
    assert_eq!(fio, (32, 32), "fio's own count");
    assert_eq!(total_counts(&steps), fio);
    // The same files as fio's own, of the same sizes.
    let listing = |w: &Path| {
        let mut l: Vec<(String, u64)> = files_under(w)
            .into_iter()
            .map(|(p, n)| (p.strip_prefix(w).unwrap().display().to_string(), n))
            .collect();
        l.sort();
        l
    };
    let want: Vec<(String, u64)> = [
        ("d1/w.0.0", 32 << 10),
        ("d1/w.0.1", 32 << 10),
        ("d2/w.1.0", 32 << 10),
        ("d2/w.1.1", 32 << 10),
        ("r.0.0", 128 << 10),
    ]
    .iter()
    .map(|(p, n)| (p.to_string(), *n))
    .collect();
    assert_eq!(listing(&plain), want, "fio's own files");
    assert_eq!(listing(&ours), want);
    // The file read was filled before fio read it.
    let data = std::fs::read(ours.join("r.0.0")).unwrap();
    assert!(data.chunks(4096).all(|c| c.iter().any(|x| *x != 0)));
}

#[test]
fn zone_and_percentage_sizes_are_read_as_fio_reads_them() {
    let home = common::disk_tempdir();
    let (ours, plain) = (home.path().join("ours"), home.path().join("plain"));
    for w in [&ours, &plain] {
        std::fs::create_dir(w).unwrap();
        // An existing 1 MiB file, of data.
        let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 1) as u8).collect();
        std::fs::write(w.join("old.bin"), data).unwrap();
    }
    // Half the existing file; three zones of 64k of a new one; 64k from three quarters in.
    let text = "[half]\nfilename=old.bin\nrw=read\nbs=4k\nsize=50%\n\n\
                [zones]\nstonewall\nfilename=zoned.bin\nrw=write\nbs=4k\n\
                zonemode=strided\nzonesize=64k\nsize=3z\n\n\
                [tail]\nstonewall\nfilename=old.bin\nrw=read\nbs=4k\noffset=75%\nsize=64k\n";
    let job = write_job(home.path(), "shares.fio", text);
    let out = run_job_with(common::command(home.path()).current_dir(&ours), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    assert_eq!(steps.len(), 3, "{lines:?}");
    let got = step_counts(&steps);
    let fio = plain_fio_counts(&job, &plain);
    assert_eq!(fio, (128 + 16, 48), "fio's own count");
    assert_eq!(got, [(128, 0), (0, 48), (16, 0)]);
    // The new file is as large as fio makes it: three zones.
    for w in [&ours, &plain] {
        assert_eq!(
            std::fs::metadata(w.join("zoned.bin")).unwrap().len(),
            3 << 16
        );
        assert_eq!(std::fs::metadata(w.join("old.bin")).unwrap().len(), 1 << 20);
    }

    // A percentage of a file that is not there yet is of nothing: refused, and said so.
    let new = write_job(
        home.path(),
        "newshare.fio",
        "[p]\nfilename=none.bin\nrw=write\nbs=4k\nsize=50%\n",
    );
    let err = refused_with(common::command(home.path()).current_dir(&ours), &new, &[]);
    assert!(err.contains("percentage of the file's size"), "{err}");
    assert!(!ours.join("none.bin").exists());
    // From half way, 1 MiB would grow the user's 1 MiB file to 1.5 MiB, as fio would: the
    // guard sees that reach and refuses it.
    let grow = write_job(
        home.path(),
        "grow.fio",
        "[grow]\nfilename=old.bin\nrw=write\nbs=4k\noffset=50%\nsize=1m\n",
    );
    let err = refused_with(
        common::command(home.path()).current_dir(&ours),
        &grow,
        &["--destroy-data", "old.bin"],
    );
    assert!(err.contains("1.50MiB of 1MiB"), "{err}");
    assert_eq!(
        std::fs::metadata(ours.join("old.bin")).unwrap().len(),
        1 << 20
    );
}

/// fio reads a size as C does (parse.c `str_to_decimal`): under its default `kb_base=1024`
/// the IEC prefixes are decimal (`4KiB` is 4000 bytes), `kb_base=1000` swaps them, `0x`
/// is hexadecimal and `bs=A,B` reads A and writes B. Each step is labelled with the block
/// size fio used (its bytes over its I/Os) and counts what plain fio counts.
#[test]
fn sizes_are_read_with_fios_prefixes_and_bases() {
    let home = common::disk_tempdir();
    let (ours, plain) = (home.path().join("ours"), home.path().join("plain"));
    for w in [&ours, &plain] {
        std::fs::create_dir(w).unwrap();
        std::fs::write(w.join("old.bin"), vec![7u8; 2 << 20]).unwrap();
    }
    let text = "[iec]\nfilename=old.bin\nrw=read\nbs=4KiB\nsize=1MiB\niodepth=16\n\n\
                [si]\nstonewall\nfilename=old.bin\nrw=read\nkb_base=1000\nbs=4k\nsize=1m\n\n\
                [hex]\nstonewall\nfilename=old.bin\nrw=read\nbs=0x1000\nsize=0x10000\n\n\
                [split]\nstonewall\nfilename=old.bin\nrw=read\nbs=8k,64k\nsize=64k\n\
                ioengine=io_uring\niodepth=4\n\n\
                [splitw]\nstonewall\nfilename=old.bin\nrw=write\nbs=8k:64k\nsize=128k\n\n\
                [mixed]\nstonewall\nfilename=old.bin\nrw=read\nbssplit=4k/50:64k/50\n\
                size=1m\nrate_iops=1000000\n";
    let job = write_job(home.path(), "prefixes.fio", text);
    let out = run_job_with(
        common::command(home.path()).current_dir(&ours),
        &job,
        &["--destroy-data", "old.bin"],
    );
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    // 1,000,000 bytes in blocks of 4000, twice; 64 KiB in 4 KiB; 64 KiB in 8 KiB reads;
    // 128 KiB in 64 KiB writes.
    let got = step_counts(&steps);
    assert_eq!(got[..5], [(250, 0), (250, 0), (16, 0), (8, 0), (0, 2)]);
    let fio = plain_fio_counts(&job, &plain);
    assert_eq!(fio.1, 2);
    // The bssplit step draws its sizes at random: its count is fio's own, whatever it is.
    let mixed = fio.0 - (250 + 250 + 16 + 8);
    assert!(
        got[5].0 > 16 && got[5].0 < 256,
        "1 MiB in 4k and 64k reads: {got:?}"
    );
    assert!(mixed > 16 && mixed < 256, "plain fio: {fio:?}");
    let (_, loaded) = crate::dashboard_tmux::the_saved_session(home.path());
    let bs: Vec<u64> = loaded
        .session
        .steps
        .iter()
        .map(|s| s.workload.as_ref().expect("workload").bs.max())
        .collect();
    assert_eq!(bs, [4000, 4000, 4096, 8192, 65536, 65536]);
    // The bssplit step is labelled with its split, and held to its rate_iops.
    let mixed = &loaded.session.steps[5];
    let split = &mixed.workload.as_ref().expect("workload").bs.split;
    assert_eq!(split, &[(4096, 50), (65536, 50)]);
    assert_eq!(steps[5]["target_iops"], 1_000_000.0, "{}", steps[5]);
    // fio caps a synchronous engine's depth at 1 (psync, its default, here).
    let depth: Vec<u32> = loaded
        .session
        .steps
        .iter()
        .map(|s| s.workload.as_ref().expect("workload").iodepth)
        .collect();
    assert_eq!(depth, [1, 1, 1, 4, 1, 1]);
    for (s, bs) in steps.iter().zip(bs).take(5) {
        let sum = &s["summary"];
        let dir = if sum["read_ios"] == 0 {
            "write"
        } else {
            "read"
        };
        let bytes = sum[format!("{dir}_bytes")].as_u64().expect("bytes");
        let ios = sum[format!("{dir}_ios")].as_u64().expect("ios");
        assert_eq!(bytes / ios, bs, "{s}");
    }
}

/// Where Debian's fio-examples package puts fio's example job files.
const FIO_EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// One of fio's examples made runnable as tests/fixtures/fio-examples/corpus.txt says: its
/// `replace` edits in the whole text, its `set` options at the end of every job's section
/// (after the job's own, so they win), `@SCRATCH@` the run's folder.
fn made_runnable(text: &str, edits: &str, scratch: &Path) -> String {
    let scratch = scratch.to_str().unwrap();
    let mut sets: Vec<String> = Vec::new();
    let mut text = text.to_string();
    for e in edits.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let e = e.replace("@SCRATCH@", scratch);
        if let Some(kv) = e.strip_prefix("set ") {
            sets.push(kv.to_string());
        } else if let Some(r) = e.strip_prefix("replace ") {
            let (from, to) = r.split_once(" => ").expect("replace OLD => NEW");
            assert!(text.contains(from), "{from} is not in the example");
            text = text.replace(from, to);
        } else {
            panic!("corpus.txt: unknown edit {e}");
        }
    }
    let mut out = String::new();
    let mut in_job = false;
    let flush = |out: &mut String, in_job: bool| {
        if in_job {
            for s in &sets {
                out.push_str(s);
                out.push('\n');
            }
        }
    };
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            flush(&mut out, in_job);
            in_job = !t.starts_with("[global");
        }
        out.push_str(line);
        out.push('\n');
    }
    flush(&mut out, in_job);
    out
}

/// The words that say a refusal is of its kind (corpus.txt's fixed list).
fn refusal_words(kind: &str) -> &'static [&'static str] {
    match kind {
        "writes-beside" => &["verify_state_save=0", "could overwrite", "would overwrite"],
        "fills-fs" => &["fill_device without size="],
        "engine" => &["drivescope guards only file and block device I/O", "engine"],
        "fio-hangs" => &["deadlocks on", "fio 3.42 or later"],
        k => panic!("corpus.txt: unknown refusal kind {k}"),
    }
}

/// A job's (or group's) name and its reads, writes and trims.
type JobCounts = (String, u64, u64, u64);

/// Each job of plain fio's JSON (`jobs[]`): its counts and its rates (IOPS, every
/// direction) added.
fn fio_jobs_of(stdout: &[u8]) -> Vec<(JobCounts, f64)> {
    let text = String::from_utf8_lossy(stdout);
    let at = text.find('{').expect("fio's JSON");
    let v: serde_json::Value = serde_json::Deserializer::from_str(&text[at..])
        .into_iter()
        .next()
        .expect("fio's JSON")
        .expect("fio's JSON");
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let n = |d: &str| j[d]["total_ios"].as_u64().unwrap_or(0);
            let iops: f64 = ["read", "write", "trim"]
                .iter()
                .map(|d| j[d]["iops"].as_f64().unwrap_or(0.0))
                .sum();
            let name = j["jobname"].as_str().unwrap().to_string();
            ((name, n("read"), n("write"), n("trim")), iops)
        })
        .collect()
}

/// Each step's series (drivescope's per-job figures), every step's.
fn series_of_steps(steps: &[&serde_json::Value]) -> Vec<JobCounts> {
    steps
        .iter()
        .flat_map(|s| s["summary"]["fio_series"].as_array().unwrap())
        .map(|x| {
            let n = |d: &str| x[d]["ios"].as_u64().unwrap_or(0);
            let name = x["name"].as_str().unwrap().to_string();
            (name, n("read"), n("write"), n("trim"))
        })
        .collect()
}

/// Whether the installed fio is 3.42 or later (it has the fixes of the deadlocks
/// corpus.txt's `fio-hangs` lines are refused for); none when it says no version.
fn fio_has_the_deadlock_fixes() -> Option<bool> {
    let out = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .ok()?;
    let v = String::from_utf8_lossy(&out.stdout);
    let mut parts = v.trim().strip_prefix("fio-")?.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()?;
    Some((major, minor) >= (3, 42))
}

#[test]
fn fios_own_examples_run_with_fios_totals_or_are_refused_for_a_listed_reason() {
    if !Path::new(FIO_EXAMPLES).is_dir() {
        skip!(
            Tool,
            "{FIO_EXAMPLES} is missing (apt-get install fio-examples)"
        );
    }
    let corpus = include_str!("../fixtures/fio-examples/corpus.txt");
    let entries: Vec<&str> = corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    // Every example fio ships is listed, once.
    let listed: Vec<&str> = entries
        .iter()
        .map(|e| e.split('|').next().unwrap().trim())
        .collect();
    let mut shipped: Vec<String> = std::fs::read_dir(FIO_EXAMPLES)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fio"))
        .collect();
    shipped.sort();
    let unlisted: Vec<&String> = shipped
        .iter()
        .filter(|n| !listed.contains(&n.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "corpus.txt lists no outcome for {unlisted:?}"
    );
    let mut once = listed.clone();
    once.sort();
    once.dedup();
    assert_eq!(
        once.len(),
        listed.len(),
        "corpus.txt lists an example twice"
    );
    let home = common::disk_tempdir();
    let mut ran = Vec::new();
    for entry in entries {
        let mut parts = entry.splitn(3, '|').map(str::trim);
        let (name, outcome, edits) = (
            parts.next().unwrap(),
            parts.next().unwrap(),
            parts.next().unwrap_or(""),
        );
        if outcome == "refused fio-hangs" && fio_has_the_deadlock_fixes() == Some(true) {
            ran.push((name, "not refused: this fio has the deadlock fixes".into()));
            continue;
        }
        let original = std::fs::read_to_string(Path::new(FIO_EXAMPLES).join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let stem = name.trim_end_matches(".fio");
        let (ours, plain) = (
            home.path().join(stem),
            home.path().join(format!("{stem}-fio")),
        );
        std::fs::create_dir(&ours).unwrap();
        std::fs::create_dir(&plain).unwrap();
        let job = write_job(&ours, name, &made_runnable(&original, edits, &ours));
        // Plain fio (a refusal needs none): for counts on a copy of its own at the same
        // time, for rates after drivescope's run (two fios share the CPUs unevenly).
        // Rates on the same target: drivescope's files, after its run.
        let same_target = outcome.starts_with("timed");
        let plain_fio = || {
            let (dir, fio_job) = if same_target {
                (&ours, job.clone())
            } else {
                let j = write_job(&plain, name, &made_runnable(&original, edits, &plain));
                (&plain, j)
            };
            std::process::Command::new("fio")
                .args(["--output-format=json", fio_job.to_str().unwrap()])
                .current_dir(dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run fio")
        };
        let mut plain = matches!(outcome, "sized" | "fio-cannot").then(plain_fio);
        let started = std::time::Instant::now();
        let out = job_output(common::command(home.path()).current_dir(&ours), &job, &[]);
        let took = started.elapsed();
        if outcome.starts_with("timed") {
            plain = Some(plain_fio());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(kind) = outcome.strip_prefix("refused ") {
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(
                refusal_words(kind).iter().any(|w| err.contains(w)),
                "{name}: refused, but not for {kind}: {err}"
            );
            ran.push((name, format!("{outcome} in {took:.1?}")));
            continue;
        }
        let Some(fio) = plain else {
            panic!("corpus.txt: unknown outcome {outcome}");
        };
        let fio = fio.wait_with_output().expect("plain fio ends");
        let fio_said = String::from_utf8_lossy(&fio.stderr).into_owned()
            + &String::from_utf8_lossy(&fio.stdout);
        if outcome == "fio-cannot" {
            assert!(!fio.status.success(), "{name}: plain fio ran it here");
            let stdout = String::from_utf8_lossy(&out.stdout);
            // fio's own words: drivescope's account of fio's refusal or failure, or a line
            // fio itself said.
            let fios_words = err.contains("fio refused")
                || err.contains("fio failed")
                || fio_said
                    .lines()
                    .map(str::trim)
                    .filter(|l| l.starts_with("fio: ") && l.len() > 10)
                    .any(|l| err.contains(l));
            assert!(
                !out.status.success() && fios_words && !stdout.contains("completed"),
                "{name}: fio cannot run it ({fio_said}), but drivescope said: {err}{stdout}"
            );
            ran.push((name, format!("{outcome} in {took:.1?}")));
            continue;
        }
        assert!(out.status.success(), "{name}: {err}");
        assert!(fio.status.success(), "{name}: plain fio: {fio_said}");
        let lines = json_lines(&out);
        let steps = of_type(&lines, "step");
        let got = total_counts(&steps);
        let fio_jobs = fio_jobs_of(&fio.stdout);
        let mut ours = series_of_steps(&steps);
        match outcome {
            "sized" => {
                // Each job (or group) against plain fio's: reads, writes and trims.
                let mut theirs: Vec<JobCounts> = fio_jobs.iter().map(|j| j.0.clone()).collect();
                theirs.sort();
                ours.sort();
                assert_eq!(
                    ours, theirs,
                    "{name}: drivescope's jobs against plain fio's"
                );
                assert!(
                    theirs.iter().any(|j| j.1 + j.2 + j.3 > 0),
                    "{name}: fio did no I/O"
                );
            }
            "timed" | "timed-syscalls" => {
                // What holds whatever else the machine runs: the same jobs ran as plain
                // fio runs from the same file (each one's name in fio's own series), and
                // the step's totals are its jobs' counts as fio gave them. How fast a
                // timed job ran is the machine's at that second: a flow.fio of 1 s gave
                // plain fio 242, 467 and 8523 IOPS in three runs back to back under load,
                // drivescope's 3428, so the rates are printed here, not compared (a
                // benchmark's figure: scripts/bench-vs-fio.py compares the two tools'
                // rates, alternately, on a quiet machine).
                assert!(!steps.is_empty(), "{name}: {lines:?}");
                let mut mine_names: Vec<&str> = ours.iter().map(|j| j.0.as_str()).collect();
                let mut their_names: Vec<&str> = fio_jobs.iter().map(|j| j.0 .0.as_str()).collect();
                mine_names.sort();
                their_names.sort();
                assert_eq!(
                    mine_names, their_names,
                    "{name}: drivescope's jobs against plain fio's"
                );
                let series_total = ours.iter().fold((0, 0), |(r, w), j| (r + j.1, w + j.2));
                assert_eq!(got, series_total, "{name}: the steps' totals are fio's");
                let mine: f64 = steps
                    .iter()
                    .flat_map(|s| s["summary"]["fio_series"].as_array().unwrap())
                    .map(|x| {
                        ["read", "write", "trim"]
                            .iter()
                            .map(|d| x[d]["iops"].as_f64().unwrap_or(0.0))
                            .sum::<f64>()
                    })
                    .sum();
                let plain: f64 = fio_jobs.iter().map(|j| j.1).sum();
                // cpuio does no I/O, under fio or drivescope; every other timed job does.
                assert_eq!(
                    mine == 0.0,
                    plain == 0.0,
                    "{name}: {mine:.0} IOPS against plain fio's {plain:.0}"
                );
                ran.push((
                    name,
                    format!("{outcome} {mine:.0} IOPS vs fio {plain:.0} in {took:.1?}"),
                ));
                continue;
            }
            o => panic!("corpus.txt: unknown outcome {o}"),
        }
        ran.push((name, format!("{outcome} {got:?} in {took:.1?}")));
    }
    eprintln!("{ran:#?}");
}

#[test]
fn drivescopes_own_exported_job_runs_with_its_target_set_and_fio_refuses_it_without() {
    let home = common::disk_tempdir();
    // quick-look, at a twentieth of its times: four steps of 0.4 s on 16 MiB.
    let out = run(
        home.path(),
        &[
            "presets",
            "fio",
            "quick-look",
            "--capacity",
            "16MiB",
            "--time-scale",
            "0.05",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("filename=${TARGET}\n"), "{text}");
    let job = write_job(home.path(), "quick-look.fio", &text);
    let target = home.path().join("target.bin");
    let t = target.to_str().unwrap();
    let out = run_job_with(
        common::command(home.path()).env("TARGET", t),
        &job,
        &["--destroy-data", t],
    );
    let lines = json_lines(&out);
    assert_eq!(of_type(&lines, "step").len(), 4, "{lines:?}");
    assert!(
        step_counts(&of_type(&lines, "step"))
            .iter()
            .all(|(r, w)| r + w > 0),
        "{lines:?}"
    );
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 16 << 20);
    // Unset, ${TARGET} is nothing, as in fio, which then refuses `filename=`: in its words.
    let err = refused_with(
        common::command(home.path())
            .env_remove("TARGET")
            .current_dir(home.path()),
        &job,
        &[],
    );
    assert!(
        err.contains("fio refused the job file")
            && err.contains("failed parsing filename=${TARGET}"),
        "{err}"
    );
}

/// A folder's entries, sorted (none when it is not there).
fn listing(dir: &Path) -> Vec<String> {
    let mut l: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    l.sort();
    l
}

/// The logs of a job file that names folders of its own for them (a system folder, one
/// under /tmp, one up from where the run is, its working folder) all land in the folder
/// drivescope makes beside the session, under the names fio gives them, with fio's
/// content; nothing appears in any folder the job named. Two steps: the second's log is
/// fio's thread 2 (`lat_clat.2.log`), as in a whole-file run.
#[test]
fn logs_go_to_a_folder_of_drivescopes_never_one_the_job_names() {
    let home = common::disk_tempdir();
    let h = home.path();
    let work = h.join("work");
    std::fs::create_dir(&work).unwrap();
    let somewhere = tempfile::tempdir().unwrap();
    let target = h.join("t.bin");
    let named = [
        PathBuf::from("/etc/cron.d"),
        somewhere.path().to_path_buf(),
        h.to_path_buf(),
        work.clone(),
    ];
    let before: Vec<Vec<String>> = named.iter().map(|d| listing(d)).collect();
    let job = write_job(
        h,
        "logs.fio",
        &format!(
            "[global]\nfilename={}\nsize=64k\nbs=4k\nwrite_lat_log=lat\nlog_avg_msec=0\n\
             [a]\nrw=write\nwrite_bw_log=/etc/cron.d/x\nwrite_iolog={}/log\n\
             [b]\nstonewall\nrw=read\nwrite_iops_log=../up\n",
            target.display(),
            somewhere.path().display()
        ),
    );
    let session = h.join("s.yaml");
    let out = run_job_with(
        common::command(h).current_dir(&work),
        &job,
        &["--session", session.to_str().unwrap()],
    );
    // The session and its log folder are new in `h`; nothing else appeared anywhere.
    let mut expected = before.clone();
    expected[2].extend(["logs.fio", "s-fio-logs", "s.yaml", "t.bin"].map(String::from));
    expected[2].sort();
    let after: Vec<Vec<String>> = named.iter().map(|d| listing(d)).collect();
    assert_eq!(
        after, expected,
        "only the session and its log folder are new"
    );
    let logs = h.join("s-fio-logs");
    let lines = |name: &str| -> Vec<String> {
        std::fs::read_to_string(logs.join(name))
            .unwrap_or_else(|e| panic!("{name} is not in {}: {e}", logs.display()))
            .lines()
            .map(String::from)
            .collect()
    };
    for n in [1, 2] {
        assert_eq!(
            lines(&format!("lat_clat.{n}.log")).len(),
            16,
            "one line per 4 KiB of 64 KiB"
        );
    }
    assert_eq!(lines("x_bw.1.log").len(), 16);
    assert_eq!(lines("up_iops.2.log").len(), 16);
    let iolog = lines("log");
    assert_eq!(iolog[0], "fio version 3 iolog");
    let writes = iolog.iter().filter(|l| l.contains(" write ")).count();
    assert_eq!(writes, 16, "each write in fio's I/O log: {iolog:?}");
    assert!(iolog.iter().all(|l| !l.contains("/dev/fio-logs")));
    // The run says where they went, and the session records it.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fio's logs go to"), "{text}");
    let loaded = drivescope::session::load(&session).unwrap().session;
    assert!(loaded
        .events
        .iter()
        .any(|e| e.message.contains("s-fio-logs")));
    // Again with the same session name (--force): a new folder, the first one kept.
    run_job_with(
        common::command(h).current_dir(&work),
        &job,
        &["--session", session.to_str().unwrap(), "--force"],
    );
    assert_eq!(lines("x_bw.1.log").len(), 16);
    assert_eq!(listing(&h.join("s-fio-logs-2")).len(), listing(&logs).len());
}

/// `--fio-logs DIR`: a folder that is not there is made, an empty one of the user's is
/// used, and one that holds anything is refused before anything is made or run.
#[test]
fn fio_logs_names_the_folder_made_or_an_empty_one() {
    let home = common::disk_tempdir();
    let h = home.path();
    let job = write_job(
        h,
        "l.fio",
        &format!(
            "[a]\nfilename={}\nsize=64k\nbs=4k\nrw=write\nwrite_bw_log=bw\n",
            h.join("t.bin").display()
        ),
    );
    let dir = h.join("logs");
    run_job(h, &job, &["--fio-logs", dir.to_str().unwrap()]);
    assert_eq!(listing(&dir), ["bw_bw.1.log"]);
    let empty = h.join("empty");
    std::fs::create_dir(&empty).unwrap();
    run_job(h, &job, &["--fio-logs", empty.to_str().unwrap()]);
    assert_eq!(listing(&empty), ["bw_bw.1.log"]);
    let sessions = sessions_in(h);
    let err = refused_with(
        &mut common::command(h),
        &job,
        &["--fio-logs", dir.to_str().unwrap()],
    );
    assert!(
        err.contains("is not empty") && err.contains("logs"),
        "{err}"
    );
    assert_eq!(sessions_in(h), sessions, "refused before the session");
    assert_eq!(listing(&dir), ["bw_bw.1.log"]);
}

/// A job file's `include`s are found where fio finds them (from the current folder, else
/// beside the including file), in a job and in `[global]`; what they hold is read, guarded
/// and caged as the rest of the job (here the target's name); `offset=0%` starts at the
/// file's start. The counts are plain fio's, run from another folder on the same file.
#[test]
fn includes_beside_the_job_file_and_offset_0_percent_run_as_under_plain_fio() {
    let home = common::disk_tempdir();
    let (ours, plain, jobs) = (
        home.path().join("ours"),
        home.path().join("plain"),
        home.path().join("jobs"),
    );
    for w in [&ours, &plain, &jobs, &jobs.join("inc")] {
        std::fs::create_dir(w).unwrap();
    }
    write_job(
        &jobs,
        "common.inc",
        "bs=4k ; every job\nsize=256k\ninclude inc/depth.inc\n",
    );
    // Beside the file that includes it: inc/, not jobs/.
    write_job(&jobs.join("inc"), "depth.inc", "iodepth=1\n");
    write_job(&jobs, "target.inc", "filename=data.bin\nrw=randwrite\n");
    let job = write_job(
        &jobs,
        "main.fio",
        "[global]\ninclude common.inc\n\n[fill]\ninclude target.inc\n\n\
         [back]\nstonewall\nfilename=data.bin\nrw=read\noffset=0%\nsize=128k\n",
    );
    let out = run_job_with(common::command(home.path()).current_dir(&ours), &job, &[]);
    let lines = json_lines(&out);
    let steps = of_type(&lines, "step");
    let fio = plain_fio_counts(&job, &plain);
    assert_eq!(fio, (32, 64), "fio's own counts");
    assert_eq!(step_counts(&steps), [(0, 64), (32, 0)]);
    // The included name was the target: made where fio makes it, as large as fio makes it.
    for w in [&ours, &plain] {
        assert_eq!(
            std::fs::metadata(w.join("data.bin")).unwrap().len(),
            256 << 10
        );
    }

    // An included name is guarded as any other: writing a file that is there needs
    // --destroy-data, and it is left as it was.
    std::fs::write(ours.join("keep.bin"), vec![7u8; 256 << 10]).unwrap();
    write_job(&jobs, "keep.inc", "filename=keep.bin\nrw=write\n");
    let keep = write_job(
        &jobs,
        "keep.fio",
        "[global]\ninclude common.inc\n[k]\ninclude keep.inc\n",
    );
    let err = refused_with(common::command(home.path()).current_dir(&ours), &keep, &[]);
    assert!(err.contains("--destroy-data"), "{err}");
    assert_eq!(
        std::fs::read(ours.join("keep.bin")).unwrap(),
        vec![7u8; 256 << 10]
    );

    // A missing include is drivescope's refusal, at its line, naming where fio looks; fio is
    // not blamed.
    let missing = write_job(
        &jobs,
        "missing.fio",
        "[m]\nfilename=data.bin\ninclude nothere.inc\n",
    );
    let err = refused_with(
        common::command(home.path()).current_dir(&ours),
        &missing,
        &[],
    );
    assert!(
        err.contains("line 3")
            && err.contains("include nothere.inc: no such file")
            && err.contains(&jobs.join("nothere.inc").display().to_string())
            && !err.contains("fio refused"),
        "{err}"
    );
}
