#!/usr/bin/env python3
"""drivescope against fio (ioengine=io_uring, direct=1) on the same targets, alternately.

For each row it prints the median IOPS of each tool, the IOPS ratio drivescope/fio and the
ratio of CPU seconds per million I/Os (drivescope/fio; lower is better), measured with
getrusage of the child process. Then rate-limited runs at 10/50/90% of drivescope's
measured maximum, with the achieved rate's deviation from the target.

Targets: (a) a 1 GiB file on the root filesystem, (b) a loop device over a file in
/dev/shm (needs root) -- the fast target where engine overhead shows.

Usage: scripts/bench-vs-fio.py [--reps 3] [--duration 5] [--dir /var/tmp] [--quick]
A benchmark, not a test: it asserts nothing; it reports ratios.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "drivescope")

ROWS = [
    ("4k randread QD32 x1", "randread", "4k", 32, 1),
    ("4k randread QD32 x2", "randread", "4k", 32, 2),
    ("4k randwrite QD32 x1", "randwrite", "4k", 32, 1),
    ("128k read QD32 x1", "read", "128k", 32, 1),
]


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def run_fio(target, rw, bs, qd, jobs, dur, size, rate=None):
    cmd = ["fio", "--name=bench", f"--filename={target}", "--ioengine=io_uring", "--direct=1",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--numjobs={jobs}",
           f"--runtime={dur}", "--time_based", "--group_reporting", "--output-format=json",
           f"--size={size}", "--randrepeat=0"]
    if rate:
        cmd.append(f"--rate_iops={int(rate / jobs)}")
    out, cpu = timed(cmd)
    j = json.loads(out[out.index("{"):])["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    d = j["read"] if j["read"]["total_ios"] else j["write"]
    pct = d["clat_ns"].get("percentile", {})
    lat = (pct.get("50.000000", 0) / 1000, pct.get("99.000000", 0) / 1000)
    return j["read"]["iops"] + j["write"]["iops"], cpu, ios, lat


def run_ds(target, rw, bs, qd, jobs, dur, size, rate=None, destroy=False):
    cmd = [BIN, "run", "--target", target, "--rw", rw, "--bs", bs, "--iodepth", str(qd),
           "--jobs", str(jobs), "--duration", f"{dur}s", "--size", size, "--json",
           "--session", "/tmp/drivescope-bench-session.yaml"]
    if rate:
        cmd += ["--rate-iops", str(rate)]
    if destroy:
        cmd += ["--destroy-data", target]
    out, cpu = timed(cmd)
    s = [j for j in (json.loads(l) for l in out.splitlines() if l.startswith("{"))
         if j.get("type") == "summary"][-1]
    return s["iops"], cpu, s["ios"], (s["lat_us"]["p50"], s["lat_us"]["p99"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--quick", action="store_true", help="one rep, 3 s, fast target only")
    a = ap.parse_args()
    if a.quick:
        a.reps, a.duration = 1, 3
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    targets = []
    f = os.path.join(a.dir, "drivescope-bench.bin")
    if not a.quick:
        # drivescope creates and fills the file once (a read run on a new file fills it).
        run_ds(f, "randread", "4k", 1, 1, 1, "1g")  # noqa: the fill
        targets.append(("file on /", f, "1g", False))
    loopdev = None
    if os.geteuid() == 0:
        img = "/dev/shm/drivescope-bench.img"
        subprocess.run(["truncate", "-s", "2G", img], check=True)
        loopdev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                                 text=True, check=True).stdout.strip()
        targets.append((f"loop over /dev/shm ({loopdev})", loopdev, "2g", True))
    try:
        print(f"{'target':34} {'row':22} {'fio IOPS':>10} {'ds IOPS':>10} {'IOPS ratio':>10} {'CPU ratio':>9}"
              f"  {'p50 fio/ds µs':>15} {'p99 fio/ds µs':>15}")
        for tname, path, size, dev in targets:
            for name, rw, bs, qd, jobs in ROWS:
                fio_r, ds_r = [], []
                for _ in range(a.reps):
                    fio_r.append(run_fio(path, rw, bs, qd, jobs, a.duration, size))
                    ds_r.append(run_ds(path, rw, bs, qd, jobs, a.duration, size, destroy=dev))
                fi = statistics.median(r[0] for r in fio_r)
                di = statistics.median(r[0] for r in ds_r)
                fcpu = sum(r[1] for r in fio_r) / max(1, sum(r[2] for r in fio_r)) * 1e6
                dcpu = sum(r[1] for r in ds_r) / max(1, sum(r[2] for r in ds_r)) * 1e6
                fl = statistics.median(r[3][0] for r in fio_r), statistics.median(r[3][1] for r in fio_r)
                dl = statistics.median(r[3][0] for r in ds_r), statistics.median(r[3][1] for r in ds_r)
                print(f"{tname:34} {name:22} {fi:10.0f} {di:10.0f} {di / fi:10.2f} {dcpu / fcpu:9.2f}"
                      f"  {fl[0]:7.0f}/{dl[0]:<7.0f} {fl[1]:7.0f}/{dl[1]:<7.0f}", flush=True)
        # Rate accuracy on the last target.
        tname, path, size, dev = targets[-1]
        mx, _, _, _ = run_ds(path, "randread", "4k", 32, 1, a.duration, size, destroy=dev)
        print(f"\nrate-limited 4k randread QD32 on {tname}: measured max {mx:.0f} IOPS")
        for pct in (10, 50, 90):
            tgt = round(mx * pct / 100, -2)
            got, _, _, _ = run_ds(path, "randread", "4k", 32, 1, a.duration, size, rate=tgt, destroy=dev)
            fgot, _, _, _ = run_fio(path, "randread", "4k", 32, 1, a.duration, size, rate=tgt)
            print(f"  {pct:3d}%: target {tgt:9.0f}  drivescope {got:9.0f} ({100 * (got / tgt - 1):+.3f}%)"
                  f"  fio {fgot:9.0f} ({100 * (fgot / tgt - 1):+.3f}%)", flush=True)
    finally:
        if loopdev:
            subprocess.run(["losetup", "-d", loopdev])


if __name__ == "__main__":
    main()
