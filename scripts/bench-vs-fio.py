#!/usr/bin/env python3
"""drivescope against fio (ioengine=io_uring, direct=1) on the same targets, alternately.

For each row it prints the median IOPS of each tool, the IOPS ratio drivescope/fio and the
ratio of CPU seconds per million I/Os (drivescope/fio; lower is better), measured with
getrusage of the child process. Then rate-limited runs at 10/50/90% of drivescope's
measured maximum, with the achieved rate's deviation from the target.

Targets: (a) a 1 GiB file on the root filesystem, (b) a loop device over a file in
/dev/shm (needs root) -- the fast target where engine overhead shows.

Order: the tools swap places every repetition (fio first, then drivescope first, ...), so a
disk that bursts after a pause or slows over a run does not favour one tool; the spread
column is the lowest and highest ratio of the pairs. drivescope's session goes to /dev/shm
so its autosaves do not add flushes to the disk under test. fio's write rows use
--refill_buffers (fresh random data per write, as drivescope writes); --fio-default-buffers
lets fio reuse one buffer, its default.

--side-by-side runs both tools at once on the same target instead (each job count as given):
where the device is the bottleneck and swings from minute to minute, the share each tool
gets of the same device at the same moment compares how well each keeps its queue full.

Usage: scripts/bench-vs-fio.py [--reps 3] [--duration 5] [--dir /var/tmp] [--quick]
                               [--targets file,loop] [--rows 1,2,3,4] [--side-by-side]
                               [--no-rate]
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
FIO_DEFAULT_BUFFERS = False

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


def fio_cmd(target, rw, bs, qd, jobs, dur, size, rate=None):
    cmd = ["fio", "--name=bench", f"--filename={target}", "--ioengine=io_uring", "--direct=1",
           f"--rw={rw}", f"--bs={bs}", f"--iodepth={qd}", f"--numjobs={jobs}",
           f"--runtime={dur}", "--time_based", "--group_reporting", "--output-format=json",
           f"--size={size}", "--randrepeat=0"]
    if rate:
        cmd.append(f"--rate_iops={int(rate / jobs)}")
    if "write" in rw and not FIO_DEFAULT_BUFFERS:
        # Fresh random data in every write, as drivescope writes: fio's default reuses one
        # buffer, which a disk that deduplicates or compresses (this virtio disk's host
        # does) serves faster than data a real workload writes.
        cmd.append("--refill_buffers")
    return cmd


def ds_cmd(target, rw, bs, qd, jobs, dur, size, rate=None, destroy=False):
    cmd = [BIN, "run", "--target", target, "--rw", rw, "--bs", bs, "--iodepth", str(qd),
           "--jobs", str(jobs), "--duration", f"{dur}s", "--size", size, "--json",
           "--force", "--session", "/dev/shm/drivescope-bench-session.yaml"]
    if rate:
        cmd += ["--rate-iops", str(rate)]
    if destroy:
        cmd += ["--destroy-data", target]
    return cmd


def fio_result(out):
    j = json.loads(out[out.index("{"):])["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    d = j["read"] if j["read"]["total_ios"] else j["write"]
    pct = d["clat_ns"].get("percentile", {})
    lat = (pct.get("50.000000", 0) / 1000, pct.get("99.000000", 0) / 1000)
    return j["read"]["iops"] + j["write"]["iops"], ios, lat


def ds_result(out):
    s = [j for j in (json.loads(l) for l in out.splitlines() if l.startswith("{"))
         if j.get("type") == "summary"][-1]
    return s["iops"], s["ios"], (s["lat_us"]["p50"], s["lat_us"]["p99"])


def side_by_side(path, rw, bs, qd, jobs, dur, size, dev):
    """Both tools at once on the same target: (fio IOPS, drivescope IOPS)."""
    f = subprocess.Popen(fio_cmd(path, rw, bs, qd, jobs, dur, size), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    d = subprocess.Popen(ds_cmd(path, rw, bs, qd, jobs, dur, size, destroy=dev),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fo, fe = f.communicate()
    do, de = d.communicate()
    if f.returncode != 0 or d.returncode != 0:
        sys.exit(f"side-by-side run failed:\n{fe}\n{de}")
    return fio_result(fo)[0], ds_result(do)[0]


def run_fio(target, rw, bs, qd, jobs, dur, size, rate=None):
    out, cpu = timed(fio_cmd(target, rw, bs, qd, jobs, dur, size, rate))
    iops, ios, lat = fio_result(out)
    return iops, cpu, ios, lat


def run_ds(target, rw, bs, qd, jobs, dur, size, rate=None, destroy=False):
    out, cpu = timed(ds_cmd(target, rw, bs, qd, jobs, dur, size, rate, destroy))
    iops, ios, lat = ds_result(out)
    return iops, cpu, ios, lat


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--quick", action="store_true", help="one rep, 3 s, fast target only")
    ap.add_argument("--targets", default="file,loop", help="file, loop or both (comma-separated)")
    ap.add_argument("--rows", default="1,2,3,4", help="which rows (1-4, comma-separated)")
    ap.add_argument("--side-by-side", action="store_true",
                    help="run both tools at once on the same target (see the module doc)")
    ap.add_argument("--no-rate", action="store_true", help="skip the rate-limited runs")
    ap.add_argument("--fio-default-buffers", action="store_true",
                    help="let fio reuse its write buffer (its default) instead of --refill_buffers")
    a = ap.parse_args()
    global FIO_DEFAULT_BUFFERS
    FIO_DEFAULT_BUFFERS = a.fio_default_buffers
    want_targets = set(a.targets.split(","))
    rows = [ROWS[int(i) - 1] for i in a.rows.split(",")]
    if a.quick:
        a.reps, a.duration = 1, 3
    if not os.path.exists(BIN):
        subprocess.run(["cargo", "build", "--release"], cwd=ROOT, check=True)
    targets = []
    f = os.path.join(a.dir, "drivescope-bench.bin")
    if not a.quick and "file" in want_targets:
        # drivescope creates and fills the file once (a read run on a new file fills it).
        run_ds(f, "randread", "4k", 1, 1, 1, "1g")  # noqa: the fill
        targets.append(("file on /", f, "1g", False))
    loopdev = None
    if os.geteuid() == 0 and "loop" in want_targets:
        img = "/dev/shm/drivescope-bench.img"
        subprocess.run(["truncate", "-s", "2G", img], check=True)
        loopdev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                                 text=True, check=True).stdout.strip()
        targets.append((f"loop over /dev/shm ({loopdev})", loopdev, "2g", True))
    try:
        if a.side_by_side:
            print(f"{'target':34} {'row':22} {'fio IOPS':>10} {'ds IOPS':>10} {'ratio':>7}  spread")
        else:
            print(f"{'target':34} {'row':22} {'fio IOPS':>10} {'ds IOPS':>10} {'IOPS ratio':>10}"
                  f" {'CPU ratio':>9}  {'p50 fio/ds µs':>15} {'p99 fio/ds µs':>15}  pair spread")
        for tname, path, size, dev in targets:
            for name, rw, bs, qd, jobs in rows:
                if a.side_by_side:
                    pairs = [side_by_side(path, rw, bs, qd, jobs, a.duration, size, dev)
                             for _ in range(a.reps)]
                    ratios = [d / f for f, d in pairs]
                    fi = statistics.median(p[0] for p in pairs)
                    di = statistics.median(p[1] for p in pairs)
                    print(f"{tname:34} {name:22} {fi:10.0f} {di:10.0f} {statistics.median(ratios):7.2f}"
                          f"  {min(ratios):.2f}-{max(ratios):.2f}", flush=True)
                    continue
                fio_r, ds_r = [], []
                for rep in range(a.reps):
                    # Swap the order every repetition.
                    if rep % 2 == 0:
                        fio_r.append(run_fio(path, rw, bs, qd, jobs, a.duration, size))
                        ds_r.append(run_ds(path, rw, bs, qd, jobs, a.duration, size, destroy=dev))
                    else:
                        ds_r.append(run_ds(path, rw, bs, qd, jobs, a.duration, size, destroy=dev))
                        fio_r.append(run_fio(path, rw, bs, qd, jobs, a.duration, size))
                ratios = [d[0] / f[0] for f, d in zip(fio_r, ds_r)]
                fi = statistics.median(r[0] for r in fio_r)
                di = statistics.median(r[0] for r in ds_r)
                fcpu = sum(r[1] for r in fio_r) / max(1, sum(r[2] for r in fio_r)) * 1e6
                dcpu = sum(r[1] for r in ds_r) / max(1, sum(r[2] for r in ds_r)) * 1e6
                fl = statistics.median(r[3][0] for r in fio_r), statistics.median(r[3][1] for r in fio_r)
                dl = statistics.median(r[3][0] for r in ds_r), statistics.median(r[3][1] for r in ds_r)
                print(f"{tname:34} {name:22} {fi:10.0f} {di:10.0f} {di / fi:10.2f} {dcpu / fcpu:9.2f}"
                      f"  {fl[0]:7.0f}/{dl[0]:<7.0f} {fl[1]:7.0f}/{dl[1]:<7.0f}"
                      f"  {min(ratios):.2f}-{max(ratios):.2f}", flush=True)
        if a.no_rate or a.side_by_side or not targets:
            return
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
