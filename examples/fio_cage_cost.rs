//! fio's cage start-up cost: the wall time of a tiny fio job (one 4k read of a 1 MiB file,
//! size-bound) run directly and run in drivescope's cage (`fio::cage::cage`: the scratch
//! folder made, the mount namespace laid out in the child before exec, the scratch folder
//! removed after), alternately, `--runs` times each; and the same for `/bin/true`, where
//! the cage is all there is to time. Prints each kind's median, lowest and highest, and the
//! cage's cost: the difference of the medians, and the median (lowest, highest) of the
//! differences within each pair (the two runs of a pair are next to each other, so a busy
//! machine weighs on both). Numbers go in docs/PERFORMANCE.md.
//!
//! `cargo run --example fio_cage_cost -- [--runs 20] [--dir /var/tmp]` (as root, as
//! drivescope runs fio: another user gets a user namespace instead);
//! `scripts/bench-fio-cage.sh` runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use drivescope::fio::cage;
use drivescope::workload::FioTarget;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The tiny job: one 4k read of `file` (1 MiB), done once its 4 KiB are read.
fn fio_args(file: &Path) -> Vec<String> {
    vec![
        "--name=tiny".into(),
        format!("--filename={}", file.display()),
        "--rw=read".into(),
        "--bs=4k".into(),
        "--size=1M".into(),
        "--io_size=4k".into(),
        "--ioengine=psync".into(),
        "--direct=1".into(),
        "--output-format=json".into(),
    ]
}

/// Runs `program args` to its end, in the cage when `caged` (the file a read target), and
/// returns the wall time from before the cage was built to after its scratch folder went.
fn once(program: &str, args: &[String], file: &Path, caged: bool) -> Res<Duration> {
    let t0 = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let scratch = if caged {
        let target = FioTarget {
            path: file.to_path_buf(),
            writes: false,
        };
        Some(cage::cage(&mut cmd, &[target], None)?)
    } else {
        None
    };
    let out = cmd.output()?;
    drop(scratch);
    let took = t0.elapsed();
    if !out.status.success() {
        return Err(format!(
            "{program} (caged: {caged}) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(took)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median, lowest and highest, in ms.
fn figures(v: &mut [Duration]) -> (f64, f64, f64) {
    v.sort();
    let n = v.len();
    let median = if n % 2 == 1 {
        ms(v[n / 2])
    } else {
        (ms(v[n / 2 - 1]) + ms(v[n / 2])) / 2.0
    };
    (median, ms(v[0]), ms(v[n - 1]))
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = arg(&args, "--runs").map_or(Ok(20), |r| r.parse())?;
    let dir = PathBuf::from(arg(&args, "--dir").unwrap_or_else(|| "/var/tmp".into()));
    let file = dir.join("drivescope-cage-bench.bin");
    let data: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&file, data)?;
    let fio = fio_args(&file);
    let rows: [(&str, &str, &[String]); 2] = [
        ("fio, one 4k read of a 1 MiB file", "fio", &fio),
        ("/bin/true", "/bin/true", &[]),
    ];
    println!("{runs} runs each, alternating which goes first; wall time in ms");
    println!("| program | direct median (min–max) | caged median (min–max) | cage's cost: medians | cage's cost: pairs, median (min–max) |");
    println!("|---|---:|---:|---:|---:|");
    for (label, program, a) in rows {
        // One of each first, untimed: the page cache holds the program and its libraries.
        once(program, a, &file, false)?;
        once(program, a, &file, true)?;
        let (mut direct, mut caged) = (Vec::new(), Vec::new());
        for i in 0..runs {
            for c in [i % 2 == 1, i % 2 == 0] {
                let t = once(program, a, &file, c)?;
                if c {
                    caged.push(t);
                } else {
                    direct.push(t);
                }
            }
        }
        let mut pairs: Vec<f64> = caged
            .iter()
            .zip(&direct)
            .map(|(c, d)| ms(*c) - ms(*d))
            .collect();
        pairs.sort_by(f64::total_cmp);
        let n = pairs.len();
        let pm = (pairs[(n - 1) / 2] + pairs[n / 2]) / 2.0;
        let (plo, phi) = (pairs[0], pairs[n - 1]);
        let (dm, dlo, dhi) = figures(&mut direct);
        let (cm, clo, chi) = figures(&mut caged);
        println!(
            "| {label} | {dm:.2} ({dlo:.2}–{dhi:.2}) | {cm:.2} ({clo:.2}–{chi:.2}) | {:+.2} | {pm:+.2} ({plo:+.2}–{phi:+.2}) |",
            cm - dm
        );
    }
    std::fs::remove_file(&file)?;
    Ok(())
}
