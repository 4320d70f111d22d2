#!/usr/bin/env python3
"""The engine's own ceiling: drivescope's nop engine against fio's null engine, alternately.

drivescope runs `run --engine nop` (every I/O an io_uring NOP through its rings, per-I/O
latency recorded into its histograms, the collector and the session as in any run); fio runs
`--ioengine=null` (no kernel at all: fio's own cost per I/O) at the same depth, jobs and
duration. The tools swap order every repetition; medians of each side, the ratio
drivescope/fio per pair (spread = lowest and highest), CPU microseconds per I/O (getrusage
of each child), and whether drivescope delivered every interval (count = duration/interval).

--minnop BINARY also runs scripts/minnop.c (built with gcc -O2 ... -luring) each repetition
for 1 job: the kernel's own NOP ceiling on this CPU, as fio's `t/io_uring -N1 -t1` measures
it, without histograms or anything else.

--paced R1,R2,... instead paces one job at each rate (IOPS), drivescope and then fio's null
engine (`--rate_iops`), and prints each one's CPU microseconds per I/O at each, with
drivescope's response latency (from each I/O's intended time) and service latency and fio's
completion latency: how the cost per I/O moves with the paced rate.

Usage: scripts/bench-nop.py [--reps 5] [--duration 5] [--iodepth 128] [--jobs 1,2]
                            [--minnop /tmp/minnop] [--paced 1000000,5000000,9000000]
A benchmark, not a test: it asserts nothing; it reports.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("DRIVESCOPE_BIN", os.path.join(ROOT, "target", "release", "drivescope"))


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def fio(qd, jobs, dur):
    cmd = ["fio", "--name=null", "--ioengine=null", "--rw=randread", "--bs=4k",
           f"--iodepth={qd}", f"--numjobs={jobs}", "--size=1T", "--time_based",
           f"--runtime={dur}", "--group_reporting", "--output-format=json"]
    out, cpu = timed(cmd)
    j = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return j["iops"], j["total_ios"], cpu, None


def drivescope(qd, jobs, dur):
    cmd = [BIN, "run", "--engine", "nop", f"--iodepth={qd}", f"--jobs={jobs}",
           f"--duration={dur}s", "--json", "--force", "--session", "/dev/shm/bench-nop.yaml"]
    out, cpu = timed(cmd)
    lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    s = [l for l in lines if l["type"] == "summary"][0]
    intervals = sum(1 for l in lines if l["type"] == "interval")
    return s["iops"], s["ios"], cpu, intervals


def paced(rates, qd, dur, reps):
    print("| paced IOPS | achieved | CPU µs/I/O | response p50 / p99 µs | service p50 µs "
          "| fio null: achieved | CPU µs/I/O | clat p50 µs |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rate in rates:
        rows, frows = [], []
        for _ in range(reps):
            cmd = [BIN, "run", "--engine", "nop", f"--iodepth={qd}", f"--duration={dur}s",
                   f"--rate-iops={rate}", "--json", "--force", "--session", "/dev/shm/bench-nop.yaml"]
            out, cpu = timed(cmd)
            s = [json.loads(l) for l in out.splitlines() if '"summary"' in l][0]
            rows.append((s["iops"], cpu / s["ios"] * 1e6, s["lat_us"]["p50"], s["lat_us"]["p99"],
                         (s.get("service_lat_us") or s["lat_us"])["p50"]))
            cmd = ["fio", "--name=null", "--ioengine=null", "--rw=randread", "--bs=4k",
                   f"--iodepth={qd}", "--size=1T", "--time_based", f"--runtime={dur}",
                   f"--rate_iops={rate}", "--output-format=json"]
            out, cpu = timed(cmd)
            j = json.loads(out[out.index("{"):])["jobs"][0]["read"]
            frows.append((j["iops"], cpu / j["total_ios"] * 1e6,
                          j["clat_ns"]["percentile"]["50.000000"] / 1000))
        med = lambda rs, i: statistics.median(r[i] for r in rs)
        print(f"| {rate:,} | {med(rows, 0):,.0f} | {med(rows, 1):.2f} | {med(rows, 2):.1f} / "
              f"{med(rows, 3):.1f} | {med(rows, 4):.1f} | {med(frows, 0):,.0f} | "
              f"{med(frows, 1):.2f} | {med(frows, 2):.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--iodepth", type=int, default=128)
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--minnop")
    ap.add_argument("--paced")
    a = ap.parse_args()
    if a.paced:
        paced([int(r) for r in a.paced.split(",")], a.iodepth, a.duration, a.reps)
        return
    mins = []
    print(f"fio: {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}")
    print("| jobs | fio null IOPS | drivescope nop IOPS | ratio | spread | CPU µs/I/O fio / ds | intervals |")
    print("|---:|---:|---:|---:|---|---|---|")
    for jobs in [int(j) for j in a.jobs.split(",")]:
        f_iops, d_iops, ratios, f_cpu, d_cpu, ivs = [], [], [], [], [], []
        for rep in range(a.reps):
            order = [("fio", fio), ("ds", drivescope)]
            if rep % 2:
                order.reverse()
            got = {}
            if a.minnop and jobs == 1:
                out = subprocess.run([a.minnop, str(a.iodepth), str(a.duration)],
                                     capture_output=True, text=True).stdout
                mins.append(float(out.split()[0]))
                print(f"  minnop rep {rep + 1}: {mins[-1]:,.0f} NOPs/s", file=sys.stderr)
            for name, fn in order:
                got[name] = fn(a.iodepth, jobs, a.duration)
                print(f"  jobs {jobs} rep {rep + 1} {name}: {got[name][0]:,.0f} IOPS", file=sys.stderr)
            f_iops.append(got["fio"][0])
            d_iops.append(got["ds"][0])
            ratios.append(got["ds"][0] / got["fio"][0])
            f_cpu.append(got["fio"][2] / got["fio"][1] * 1e6)
            d_cpu.append(got["ds"][2] / got["ds"][1] * 1e6)
            ivs.append(got["ds"][3])
        med = statistics.median
        print(f"| {jobs} | {med(f_iops):,.0f} | {med(d_iops):,.0f} | {med(ratios):.2f} | "
              f"{min(ratios):.2f}–{max(ratios):.2f} | {med(f_cpu):.3f} / {med(d_cpu):.3f} | "
              f"{min(ivs)}–{max(ivs)} of {a.duration} |")
    if mins:
        print(f"\nminimal liburing NOP loop (1 job, QD{a.iodepth}): median "
              f"{statistics.median(mins):,.0f} NOPs/s ({min(mins):,.0f}–{max(mins):,.0f})")


if __name__ == "__main__":
    main()
