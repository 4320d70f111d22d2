#!/usr/bin/env python3
"""Several drives at once: drivescope against fio, and drivescope's cost as drives are added.

Part 1 (issue 13's first goal): N loop devices over files in /dev/shm, 4k randread QD32,
one job per device. fio runs one job per device (--name per device, --numjobs=1 each, same
depth), drivescope runs `--target` once per device; the tools alternate, and each row prints
the median aggregate IOPS and CPU seconds per million I/Os (getrusage of the child).

Part 2 (the second goal): the same per-drive load on 1 and on M drives -- each drive paced
at RATE IOPS -- and drivescope's CPU per I/O with M drives over that with 1: what the
collector, the pipeline's hub and the session cost as drives are added (1.00 = nothing).
The dashboard is not attached here (see scripts/bench-dashboard.py for its own cost).

Part 3 (--dashboard): the same paced read on 1 and on M targets run from the dashboard (in
tmux, redrawing live, from a targets file): the dashboard process's CPU per I/O with M
targets over that with 1 -- the collector, the session and the dashboard together. The
targets are test files on one disk (made and filled once before), since the dashboard asks
for a device's typed name before any preset.

Usage: scripts/bench-many-drives.py [--reps 3] [--duration 5] [--drives 4] [--many 16]
                                    [--rate 2000] [--bin target/release/drivescope]
                                    [--dashboard]
Needs root (losetup). A benchmark, not a test: it reports ratios and asserts nothing.
"""
import argparse
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

# The plan's rates are tagged values (`!iops 2000`); this script reads only the summary.
yaml.add_multi_constructor("!", lambda loader, suffix, node: None, Loader=yaml.SafeLoader)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out.stdout, cpu


def loops(n, size_mb, shm):
    devs = []
    for i in range(n):
        img = os.path.join(shm, f"img{i}")
        with open(img, "wb") as f:
            f.truncate(size_mb << 20)
        dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True,
                             text=True, check=True).stdout.strip()
        # Written once, so reads hit real pages.
        subprocess.run(["dd", "if=/dev/urandom", f"of={dev}", "bs=1M", f"count={size_mb}",
                        "oflag=direct", "status=none"], check=True)
        devs.append(dev)
    return devs


def fio(devs, qd, dur, rate=None):
    cmd = ["fio", "--ioengine=io_uring", "--direct=1", "--rw=randread", "--bs=4k",
           f"--iodepth={qd}", f"--runtime={dur}", "--time_based", "--randrepeat=0",
           "--output-format=json"]
    for i, d in enumerate(devs):
        cmd += [f"--name=d{i}", f"--filename={d}", "--numjobs=1"]
        if rate:
            cmd.append(f"--rate_iops={rate}")
    out, cpu = timed(cmd)
    jobs = json.loads(out[out.index("{"):])["jobs"]
    iops = sum(j["read"]["iops"] for j in jobs)
    ios = sum(j["read"]["total_ios"] for j in jobs)
    return iops, cpu, ios


def ds(binary, devs, qd, dur, rate=None):
    cmd = [binary, "run", "--rw", "randread", "--bs", "4k", "--iodepth", str(qd),
           "--duration", f"{dur}s", "--json", "--force", "--session", "/dev/shm/ds-bench-many.yaml"]
    for d in devs:
        cmd += ["--target", d]
    if rate:
        cmd += ["--rate-iops", str(rate)]
    out, cpu = timed(cmd)
    sums = [j for j in (json.loads(l) for l in out.splitlines() if l.startswith("{"))
            if j.get("type") == "summary"]
    if len(devs) == 1:
        s = sums[-1]
        return s["iops"], cpu, s["ios"]
    s = [x for x in sums if x.get("target") == "all"][-1]
    return s["iops"], cpu, s["ios"]


def tmux(sock, *args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout


def dashboard_cpu(binary, devs, rate, dur):
    """CPU seconds per million I/Os of the dashboard running a paced read on `devs`."""
    home = tempfile.mkdtemp()
    presets = os.path.join(home, ".config", "drivescope", "presets")
    os.makedirs(presets)
    with open(os.path.join(presets, "bench-paced.yaml"), "w") as f:
        f.write(f"""id: bench-paced
name: Bench paced read
description: a paced 4k random read for the many-drives benchmark
phases:
  - name: paced
    workload: {{rw: randread, bs: 4k, iodepth: 8}}
    rate: {rate}
    end: {{duration: {dur}s}}
""")
    shelf = os.path.join(home, "shelf.yaml")
    with open(shelf, "w") as f:
        for i, d in enumerate(devs):
            f.write(f"- path: {d}\n  label: d{i}\n")
    sock = f"ds-many-{os.getpid()}-{len(devs)}"
    args = ["--targets", shelf] if len(devs) > 1 else ["--target", devs[0]]
    cmd = (f"env HOME={home} XDG_DATA_HOME={home}/data XDG_CONFIG_HOME={home}/.config "
           f"TERM=xterm-256color {binary} {' '.join(args)} --preset bench-paced")
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160",
                    "-y", "50", cmd], check=True)
    try:
        time.sleep(2)
        pane = tmux(sock, "display", "-p", "#{pane_pid}").strip()
        pid = subprocess.run(["pgrep", "-P", pane], capture_output=True, text=True).stdout.split()
        pid = pid[0] if pid else pane
        tick = os.sysconf("SC_CLK_TCK")

        def cpu():
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        tmux(sock, "send-keys", "Enter")
        sessions = os.path.join(home, "data", "drivescope", "sessions")
        deadline = time.time() + dur + 120
        done = None
        while time.time() < deadline and not done:
            time.sleep(0.5)
            for p in glob.glob(os.path.join(sessions, "*.yaml")):
                with open(p) as f:
                    if "\nstate: complete" in f.read():
                        done = p
        used = cpu()
        tmux(sock, "send-keys", "q")
        if not done:
            sys.exit("the dashboard's run did not complete")
        with open(done) as f:
            s = yaml.safe_load(f)
        ios = s["summary"]["read_bytes"] / 4096
        return used / ios * 1e6
    finally:
        tmux(sock, "kill-server")
        subprocess.run(["rm", "-rf", home])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--drives", type=int, default=4)
    ap.add_argument("--many", type=int, default=16)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "drivescope"))
    ap.add_argument("--dashboard", action="store_true", help="part 3: the dashboard, 1 drive against M")
    a = ap.parse_args()
    shm = tempfile.mkdtemp(dir="/dev/shm")
    devs = loops(max(a.drives, a.many), 64, shm)
    try:
        print(f"part 1: {a.drives} loop devices over /dev/shm, 4k randread QD32, one job each, "
              f"{a.duration}s x {a.reps} (alternated)")
        f_iops, d_iops, f_cpu, d_cpu = [], [], [], []
        for r in range(a.reps):
            order = [0, 1] if r % 2 == 0 else [1, 0]
            for o in order:
                if o == 0:
                    iops, cpu, ios = fio(devs[:a.drives], 32, a.duration)
                    f_iops.append(iops)
                    f_cpu.append(cpu / ios * 1e6)
                else:
                    iops, cpu, ios = ds(a.bin, devs[:a.drives], 32, a.duration)
                    d_iops.append(iops)
                    d_cpu.append(cpu / ios * 1e6)
        fm, dm = statistics.median(f_iops), statistics.median(d_iops)
        fc, dc = statistics.median(f_cpu), statistics.median(d_cpu)
        print(f"  fio        {fm:>10.0f} IOPS  {fc:.2f} CPU s per M I/Os  (runs: "
              f"{', '.join(f'{x:.0f}' for x in f_iops)})")
        print(f"  drivescope {dm:>10.0f} IOPS  {dc:.2f} CPU s per M I/Os  (runs: "
              f"{', '.join(f'{x:.0f}' for x in d_iops)})")
        print(f"  IOPS ratio drivescope/fio {dm / fm:.3f}; CPU per I/O ratio {dc / fc:.3f}")

        print(f"part 2: each drive paced at {a.rate} IOPS, QD8: 1 drive against {a.many}")
        one, many = [], []
        for r in range(a.reps):
            for n in ([1, a.many] if r % 2 == 0 else [a.many, 1]):
                iops, cpu, ios = ds(a.bin, devs[:n], 8, a.duration, a.rate)
                (one if n == 1 else many).append(cpu / ios * 1e6)
        o, m = statistics.median(one), statistics.median(many)
        print(f"  1 drive:   {o:.2f} CPU s per M I/Os (runs {', '.join(f'{x:.2f}' for x in one)})")
        print(f"  {a.many} drives: {m:.2f} CPU s per M I/Os (runs {', '.join(f'{x:.2f}' for x in many)})")
        print(f"  CPU per I/O, {a.many} drives over 1: {m / o:.3f}")
        if a.dashboard:
            files_dir = tempfile.mkdtemp(dir="/var/tmp")
            files = [os.path.join(files_dir, f"t{i}.bin") for i in range(a.many)]
            fill = [a.bin, "run", "--rw", "randread", "--size", "64M", "--duration", "1s",
                    "--force", "--session", "/dev/shm/ds-bench-fill.yaml"]
            for f in files:
                fill += ["--target", f]
            subprocess.run(fill, check=True, capture_output=True)
            print(f"part 3: the dashboard, each drive paced at {a.rate} IOPS for {a.duration * 2}s: "
                  f"1 drive against {a.many}")
            one, many = [], []
            for r in range(a.reps):
                for n in ([1, a.many] if r % 2 == 0 else [a.many, 1]):
                    c = dashboard_cpu(a.bin, files[:n], a.rate, a.duration * 2)
                    (one if n == 1 else many).append(c)
            o, m = statistics.median(one), statistics.median(many)
            print(f"  1 drive:   {o:.2f} CPU s per M I/Os (runs {', '.join(f'{x:.2f}' for x in one)})")
            print(f"  {a.many} drives: {m:.2f} CPU s per M I/Os (runs {', '.join(f'{x:.2f}' for x in many)})")
            print(f"  CPU per I/O with the dashboard, {a.many} drives over 1: {m / o:.3f}")
            subprocess.run(["rm", "-rf", files_dir])
    finally:
        for d in devs:
            subprocess.run(["losetup", "-d", d])
        subprocess.run(["rm", "-rf", shm])


if __name__ == "__main__":
    main()
