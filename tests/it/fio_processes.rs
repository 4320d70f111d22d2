//! fio's processes under drivescope: every one (fio's main process and the job processes
//! it forks, which call `setsid`) stays in the one process group drivescope signals, and
//! none outlives drivescope, even SIGKILLed (the cage's PID namespace and keeper). Real
//! fio on a real file, the real binary.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;

/// The live processes whose command line holds `word`: (pid, process group, session).
fn holding(word: &str) -> Vec<(u32, u32, u32)> {
    common::processes()
        .into_iter()
        .filter(|p| p.state != "Z")
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.pid))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(word))
        })
        .map(|p| (p.pid, p.pgrp, p.sid))
        .collect()
}

fn job_file(dir: &Path, section: &str) -> std::path::PathBuf {
    let target = dir.join("t.dat");
    std::fs::write(&target, vec![7u8; 4 << 20]).unwrap();
    let job = dir.join("long.fio");
    std::fs::write(
        &job,
        format!(
            "[{section}]\nfilename={}\nrw=randread\nbs=4k\nioengine=psync\nnumjobs=2\ntime_based\nruntime=300\n",
            target.display()
        ),
    )
    .unwrap();
    job
}

#[test]
fn fios_job_processes_stay_in_its_group_and_die_with_a_killed_drivescope() {
    let home = tempfile::tempdir().unwrap();
    let section = format!("ds-orphans-{}", std::process::id());
    let job = job_file(home.path(), &section);
    let mut child = common::spawn(
        home.path(),
        &["run", "--fio-job", job.to_str().unwrap(), "--json"],
    );
    let rx = common::lines_of(&mut child);
    common::wait_for_line(&rx, "interval", Duration::from_secs(120));
    // fio's main process and its two job processes (numjobs=2), each a fork that called
    // setsid: refused, all three share fio's group, and none leads a session of its own.
    let word = format!("--section={section}");
    let fio = holding(&word);
    assert!(fio.len() >= 3, "fio's main and job processes: {fio:?}");
    let group = fio[0].1;
    for &(pid, pgrp, sid) in &fio {
        assert_eq!(pgrp, group, "fio process {pid} left fio's group: {fio:?}");
        assert_ne!(sid, pid, "fio process {pid} leads a session of its own");
    }
    // drivescope killed outright (no handler runs): fio, and the job processes it forked,
    // end with it, where they ran on for the job's 300 s before.
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = Instant::now();
    while !holding(&word).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "fio outlived a killed drivescope: {:?}",
            holding(&word)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
