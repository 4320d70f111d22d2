//! Zoned access ranges (fio's `random_distribution=zoned:`) on a real file: a preset's
//! random writes land on each range in its share, as the filesystem's own map of the
//! file's written blocks (SEEK_DATA / SEEK_HOLE) counts them, not drivescope's figures.

use crate::common;

use std::os::fd::AsRawFd;

/// Bytes of data (written blocks) of `f` in `[from, to)`, from the filesystem's extent map.
fn data_bytes(f: &std::fs::File, from: u64, to: u64) -> u64 {
    let mut at = from as libc::off_t;
    let mut n = 0;
    while (at as u64) < to {
        // SAFETY: lseek on an open fd with a valid whence; no memory is passed.
        let d = unsafe { libc::lseek(f.as_raw_fd(), at, libc::SEEK_DATA) };
        if d < 0 || d as u64 >= to {
            break;
        }
        // SAFETY: as above.
        let h = unsafe { libc::lseek(f.as_raw_fd(), d, libc::SEEK_HOLE) };
        assert!(h >= d, "SEEK_HOLE after {d}");
        n += (h as u64).min(to) - d as u64;
        at = h;
    }
    n
}

/// Runs the preset `yaml` headless on the test file `t.bin` of `size` in `home`.
fn run_preset(home: &std::path::Path, yaml: &str, size: &str) -> std::process::Output {
    let preset = home.join("p.yaml");
    std::fs::write(&preset, yaml).unwrap();
    let t = home.join("t.bin");
    common::run(
        home,
        &[
            "run",
            "--preset-file",
            preset.to_str().unwrap(),
            "--target",
            t.to_str().unwrap(),
            "--size",
            size,
            "--interval",
            "250ms",
        ],
    )
}

#[test]
fn zoned_random_writes_land_on_each_range_in_its_share() {
    let home = common::disk_tempdir();
    // 2048 writes of 4 KiB over 262144 blocks: few land twice on one block.
    let out = run_preset(
        home.path(),
        "id: zoned-access\nname: Zoned access\ndescription: random writes over zoned ranges\n\
         phases:\n  - name: w\n    workload: {rw: randwrite, bs: 4k, iodepth: 4, jobs: 1, \
         random_distribution: \"zoned:90/10:10/90\"}\n    end: {data: 8MiB}\n",
        "1GiB",
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let f = std::fs::File::open(home.path().join("t.bin")).unwrap();
    let size = f.metadata().unwrap().len();
    let hot = data_bytes(&f, 0, size / 10);
    let cold = data_bytes(&f, size / 10, size);
    let all = hot + cold;
    assert!(
        all > 7 << 20 && all <= 8 << 20,
        "{all} bytes written in all (8 MiB, less the blocks written twice)"
    );
    let share = hot as f64 / all as f64;
    assert!(
        (0.87..0.93).contains(&share),
        "{share:.3} of the written blocks in the first 10% ({hot} of {all} bytes), not 90%"
    );
}

/// A range too small to hold one block of the workload is refused before any I/O, naming
/// it: the engine would otherwise draw that range's share over the whole region, a
/// distribution other than the one asked for.
#[test]
fn a_range_under_one_block_is_refused_naming_it() {
    let home = common::disk_tempdir();
    // 1% of 1 MiB is 10 KiB: under the 64 KiB block.
    let yaml = "id: tiny-range\nname: Tiny range\ndescription: a range under a block\n\
         phases:\n  - name: w\n    workload: {rw: randread, bs: 64k, iodepth: 1, jobs: 1, \
         random_distribution: \"zoned:50/1:50/99\"}\n    end: {data: 1MiB}\n";
    let run = |size: &str| run_preset(home.path(), yaml, size);
    let out = run("1MiB");
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    let err = common::stderr(&out);
    assert!(
        err.contains("access range 1 of 2") && err.contains("under the block size 64KiB"),
        "{err}"
    );
    // The same ranges over 64 MiB hold a block each, and run.
    let out = run("64MiB");
    assert!(out.status.success(), "{}", common::stderr(&out));
}
