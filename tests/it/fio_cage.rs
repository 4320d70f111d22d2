//! fio's cage (src/fio/cage.rs): fio run as drivescope runs it may write the
//! targets named for writing and read the others, and the kernel refuses it everything
//! else. Every fio option that takes a string (`fio --cmdhelp`) is given the path of a
//! file, a folder and (as root) a loop device that are not targets; afterwards each is as
//! it was. The guard is not in the way here: these are fio's own runs, uncaged by nothing
//! but the cage.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use drivescope::fio::cage::cage;
use drivescope::workload::FioTarget;

use crate::common::{self, LoopDev};

fn fio_installed() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn sha(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A folder's names and contents, all the way down, for telling that nothing in it
/// changed (nothing written, made or removed).
fn tree(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.push((p.clone(), String::new()));
            v.extend(tree(&p));
        } else {
            v.push((p.clone(), sha(&p)));
        }
    }
    v.sort();
    v
}

/// fio's string options, by name (`fio --cmdhelp=all`, then each one's type).
fn string_options() -> Vec<String> {
    let all = Command::new("fio").arg("--cmdhelp=all").output().unwrap();
    let names: Vec<String> = String::from_utf8_lossy(&all.stdout)
        .lines()
        .filter_map(|l| l.split(':').next())
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty() && !n.contains(' '))
        .collect();
    names
        .into_iter()
        .filter(|n| {
            let h = Command::new("fio")
                .arg(format!("--cmdhelp={n}"))
                .output()
                .unwrap();
            String::from_utf8_lossy(&h.stdout)
                .lines()
                .any(|l| l.trim_start().starts_with("type: string"))
        })
        .collect()
}

/// The values an option is tried with for `path`: the path, and the forms that name a
/// file after a prefix (`mem=mmap:FILE`) or run a command.
fn values(option: &str, path: &Path) -> Vec<String> {
    let p = path.display().to_string();
    let mut v = vec![p.clone()];
    if matches!(option, "mem" | "iomem") {
        v.extend(["mmap", "mmapshared", "mmaphuge"].map(|m| format!("{m}:{p}")));
    }
    if option.contains("exec") || option.contains("trigger") {
        v.push(format!("sh -c 'echo caged >> {p}; echo x > {p}/x'"));
    }
    v
}

/// Runs a caged fio on `job` (its text on stdin) and waits for it to end: fio's exit
/// status, or none when it ran past `limit` (it is killed then, the group with it).
fn caged_fio(job: &str, targets: &[FioTarget], limit: Duration) -> Option<bool> {
    let mut cmd = Command::new("fio");
    let _scratch = cage(&mut cmd, targets, None).expect("the cage is built");
    cmd.args(["--output-format=json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().expect("caged fio starts");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(job.as_bytes());
    }
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status.success());
        }
        if started.elapsed() > limit {
            // SAFETY: kill(2) on the process group our own, unreaped child leads.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn job(target: &Path, rw: &str, extra: &str) -> String {
    format!(
        "[cage]\nfilename={}\nrw={rw}\nsize=256k\nbs=4k\nioengine=psync\n{extra}\n",
        target.display()
    )
}

/// A user's data beside the run: a file and a folder in a folder of their own (whose
/// whole tree is checked: fio makes logs beside the name it is given), and a device.
struct Sentinels {
    home: PathBuf,
    file: PathBuf,
    dir: PathBuf,
    dev: Option<LoopDev>,
    home_tree: Vec<(PathBuf, String)>,
    dev_sha: Option<String>,
}

impl Sentinels {
    fn new(root: &Path) -> Sentinels {
        let home = root.join("user");
        std::fs::create_dir(&home).unwrap();
        let file = home.join("sentinel.bin");
        let data: Vec<u8> = (0..2u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
        std::fs::write(&file, &data).unwrap();
        let dir = home.join("sentinel-dir");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("inside.txt"), b"user data").unwrap();
        let dev = LoopDev::new(8 << 20);
        if let Some(d) = &dev {
            std::fs::write(&d.dev, &data[..1 << 20]).unwrap();
        }
        Sentinels {
            home_tree: tree(&home),
            dev_sha: dev.as_ref().map(LoopDev::sha256),
            home,
            file,
            dir,
            dev,
        }
    }

    fn paths(&self) -> Vec<PathBuf> {
        let mut v = vec![self.file.clone(), self.dir.clone()];
        v.extend(self.dev.as_ref().map(|d| d.dev.clone()));
        v
    }

    fn assert_unchanged(&self, what: &str) {
        assert_eq!(
            tree(&self.home),
            self.home_tree,
            "{what}: the user's folder changed"
        );
        if let (Some(d), Some(h)) = (&self.dev, &self.dev_sha) {
            assert_eq!(&d.sha256(), h, "{what}: the sentinel device changed");
        }
    }
}

#[test]
fn every_string_option_naming_another_path_leaves_it_as_it_was() {
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    let tmp = common::disk_tempdir();
    let target = tmp.path().join("target.bin");
    std::fs::write(&target, vec![0u8; 256 << 10]).unwrap();
    let sentinels = Sentinels::new(tmp.path());
    let targets = [FioTarget {
        path: target.clone(),
        writes: true,
    }];
    // The cage lets fio write its target.
    assert_eq!(
        caged_fio(
            &job(&target, "write", "buffer_pattern=0x5a"),
            &targets,
            Duration::from_secs(120)
        ),
        Some(true),
        "a caged fio writes its target"
    );
    assert!(std::fs::read(&target).unwrap().iter().all(|b| *b == 0x5a));
    let options = string_options();
    assert!(
        options.len() > 30 && options.iter().any(|o| o == "write_bw_log"),
        "fio --cmdhelp lists its string options: {options:?}"
    );
    let mut tried = 0;
    for option in &options {
        for path in sentinels.paths() {
            for value in values(option, &path) {
                // A writing job (a read job's own options are the next test's).
                let text = job(&target, "write", &format!("{option}={value}"));
                let _ = caged_fio(&text, &targets, Duration::from_secs(60));
                sentinels.assert_unchanged(&format!("{option}={value}"));
                tried += 1;
            }
        }
    }
    assert!(tried > 100, "{tried} runs");
    // The same checks see a change: an uncaged fio given a sentinel's name as its
    // buffers' backing file writes it.
    let text = job(
        &target,
        "read",
        &format!("mem=mmapshared:{}", sentinels.file.display()),
    );
    let uncaged = Command::new("fio")
        .args(["--output-format=json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait()
        });
    assert!(uncaged.is_ok());
    assert_ne!(
        tree(&sentinels.home),
        sentinels.home_tree,
        "the check could not fail"
    );
}

#[test]
fn a_read_jobs_fill_and_append_options_cannot_lay_out_the_file_it_reads() {
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    let tmp = common::disk_tempdir();
    let sentinels = Sentinels::new(tmp.path());
    let writer = tmp.path().join("written.bin");
    std::fs::write(&writer, vec![0u8; 256 << 10]).unwrap();
    let targets = [
        FioTarget {
            path: sentinels.file.clone(),
            writes: false,
        },
        FioTarget {
            path: writer.clone(),
            writes: true,
        },
    ];
    for extra in [
        "fill_device=1",
        "fill_fs=1",
        "file_append=1",
        "unlink=1",
        "unlink_each_loop=1",
        "create_on_open=1",
        "overwrite=1",
        "allow_file_create=1",
        "size=4m",
        "mem=mmapshared:SENTINEL",
        "iomem=mmap:SENTINEL",
    ] {
        let extra = extra.replace("SENTINEL", &sentinels.file.display().to_string());
        // The file read, beside a job that writes in the same run.
        let text = format!(
            "{}\n{}",
            job(&sentinels.file, "read", &extra),
            job(&writer, "write", "").replace("[cage]", "[writer]")
        );
        let _ = caged_fio(&text, &targets, Duration::from_secs(60));
        sentinels.assert_unchanged(&extra);
    }
}

#[test]
fn a_device_only_read_cannot_be_written_and_one_named_for_writing_can() {
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    let (Some(ro), Some(rw)) = (LoopDev::new(4 << 20), LoopDev::new(4 << 20)) else {
        return;
    };
    let before = ro.sha256();
    let read_only = [FioTarget {
        path: ro.dev.clone(),
        writes: false,
    }];
    // A job that writes a device the cage holds read-only: fio cannot open it to write.
    assert_eq!(
        caged_fio(
            &job(&ro.dev, "write", "direct=1"),
            &read_only,
            Duration::from_secs(60)
        ),
        Some(false)
    );
    assert_eq!(ro.sha256(), before, "the read-only device was written");
    // Reading it works.
    assert_eq!(
        caged_fio(
            &job(&ro.dev, "read", "direct=1"),
            &read_only,
            Duration::from_secs(60)
        ),
        Some(true)
    );
    let writable = [FioTarget {
        path: rw.dev.clone(),
        writes: true,
    }];
    let before = rw.sha256();
    assert_eq!(
        caged_fio(
            &job(&rw.dev, "write", "direct=1\nbuffer_pattern=0x77"),
            &writable,
            Duration::from_secs(60)
        ),
        Some(true)
    );
    assert_ne!(rw.sha256(), before, "the writable device was not written");
    // Another device is not there at all.
    assert_eq!(
        caged_fio(
            &job(&ro.dev, "read", "direct=1"),
            &writable,
            Duration::from_secs(60)
        ),
        Some(false)
    );
}

/// The round's cases, through `drivescope run --fio-job`: each job names a user's file or
/// device in an option the guard does not read; whether the guard refuses the job or fio
/// fails in its cage, the data is as it was and the run does not say it completed.
#[test]
fn job_files_that_destroyed_data_leave_it_as_it_was() {
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    let tmp = common::disk_tempdir();
    let sentinels = Sentinels::new(tmp.path());
    let target = tmp.path().join("target.bin");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let file = sentinels.file.display().to_string();
    let mut cases = vec![
        format!(
            "[r]\nfilename={}\nrw=read\nsize=256k\nmem=mmap:{file}\n",
            target.display()
        ),
        format!(
            "[r]\nfilename={}\nrw=read\nsize=256k\niomem=mmapshared:{file}\n",
            target.display()
        ),
        format!(
            "[r]\nfilename={}\nrw=read\nsize=256k\nmem=mmapshared:{file}\n",
            target.display()
        ),
    ];
    for fill in ["fill_device=1", "fill_fs=1", "file_append=1"] {
        cases.push(format!(
            "[r]\nfilename={file}\nrw=read\nsize=256k\n{fill}\n\n[w]\nfilename={}\nrw=write\nsize=256k\n",
            target.display()
        ));
    }
    if let Some(dev) = &sentinels.dev {
        // A device holding a file system, named only as a read job's buffers' backing.
        cases.push(format!(
            "[r]\nfilename={}\nrw=read\nsize=256k\nmem=mmapshared:{}\n",
            target.display(),
            dev.dev.display()
        ));
    }
    for (i, text) in cases.iter().enumerate() {
        let job = tmp.path().join(format!("case{i}.fio"));
        std::fs::write(&job, text).unwrap();
        let mut args = vec!["run", "--fio-job", job.to_str().unwrap()];
        if text.contains("rw=write") {
            args.extend(["--destroy-data", target.to_str().unwrap()]);
        }
        let out = common::run(tmp.path(), &args);
        let said = format!(
            "{text}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        sentinels.assert_unchanged(text);
        // fio cannot map a file it may not write: its job fails, and the run says so.
        // (fio may read with a fill or append option and write nothing: that run is fine.)
        if text.contains("mem=") {
            assert!(
                !out.status.success(),
                "a run that could not do its job exited 0: {said}"
            );
            assert!(
                said.contains("fio failed") && !said.contains(": completed"),
                "{said}"
            );
        }
    }
}

/// A job's logs: the cage mounts the run's log folder where the job's log options are
/// made to point, and fio makes its logs there; a log named in any other folder fails
/// inside fio (the tree is read-only), leaving nothing there. A folder put in the place of
/// the one given is refused: fio does not start.
#[test]
fn logs_land_only_in_the_folder_the_cage_is_given() {
    use drivescope::fio::cage::LOGS_IN_CAGE;
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    let tmp = common::disk_tempdir();
    let target = tmp.path().join("target.bin");
    std::fs::write(&target, vec![0u8; 256 << 10]).unwrap();
    let logs = tmp.path().join("logs");
    let other = tmp.path().join("other");
    for d in [&logs, &other] {
        std::fs::create_dir(d).unwrap();
    }
    let targets = [FioTarget {
        path: target.clone(),
        writes: true,
    }];
    let mut cmd = Command::new("fio");
    let _scratch = cage(&mut cmd, &targets, Some(&logs)).unwrap();
    let job = job(
        &target,
        "write",
        &format!(
            "write_lat_log={LOGS_IN_CAGE}/x\nwrite_bw_log={}\nlog_avg_msec=0",
            other.join("y").display()
        ),
    );
    let status = cmd
        .args(["--output-format=json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(job.as_bytes())?;
            c.wait()
        })
        .unwrap();
    assert!(status.code().is_some(), "fio ran to its end: {status}");
    let lat = std::fs::read_to_string(logs.join("x_lat.1.log")).unwrap();
    assert_eq!(lat.lines().count(), 64, "one line per I/O");
    assert_eq!(
        std::fs::read_dir(&other).unwrap().count(),
        0,
        "nothing in a folder the job named"
    );
    // The folder given, replaced by another before fio starts: fio never runs.
    let mut cmd = Command::new("fio");
    let _scratch = cage(&mut cmd, &targets, Some(&logs)).unwrap();
    std::fs::rename(&logs, tmp.path().join("moved")).unwrap();
    std::fs::create_dir(&logs).unwrap();
    let e = cmd.arg("--version").status().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{e}");
}

/// Run as another user than root, the cage is a user namespace: fio still cannot write a
/// file the user may write but the job does not name as a target.
#[test]
fn as_another_user_the_cage_holds_too() {
    use std::os::unix::fs::PermissionsExt;
    if !fio_installed() {
        skip!(Tool, "fio is not installed");
    }
    if !common::is_root() {
        skip!(NotRoot, "the test becomes another user with setpriv");
    }
    // Under /tmp, not the checkout: the other user may not reach a checkout under /root.
    // The binary is copied there too, for the same reason.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let bin = tmp.path().join("drivescope");
    std::fs::copy(common::bin(), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = tmp.path().join("target.bin");
    let sentinel = tmp.path().join("sentinel.bin");
    for p in [&target, &sentinel] {
        std::fs::write(p, vec![7u8; 1 << 20]).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o666)).unwrap();
    }
    let before = sha(&sentinel);
    let job = tmp.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[r]\nfilename={}\nrw=read\nsize=256k\nmem=mmapshared:{}\n",
            target.display(),
            sentinel.display()
        ),
    )
    .unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["run", "--fio-job"])
        .arg(&job)
        .env("HOME", tmp.path())
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("setpriv runs");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(sha(&sentinel), before, "{said}");
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("fio failed"), "{said}");
}
