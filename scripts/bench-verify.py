#!/usr/bin/env python3
"""What --verify costs: drivescope 4k randrw with and without --verify, and fio's
verify=crc32c as the reference, on a loop device over /dev/shm (the fast target, where an
engine's cost per I/O shows), runs alternating so load hits every side alike.

Rows: drivescope plain, drivescope --verify (every read checked against the generation
map, every sector written with a CRC32C header, map flush epochs every 250 ms), fio
randrw plain, fio randrw verify=crc32c (fio checks its reads of blocks it wrote). Prints
the median IOPS of each and the ratios verify / plain. Needs root (losetup).

fio's verify=crc32c in a time-based job checksums its writes but never reaches its verify
phase (fio issue #740): --fio-backlog N adds --verify_backlog=N, with which fio reads back
and checks what it wrote while it runs (those reads count in its IOPS).

Usage: scripts/bench-verify.py [--reps 3] [--duration 5] [--size 1G] [--bin PATH]
                               [--fio-backlog N]
A benchmark, not a test: it asserts nothing.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env=None):
    """Runs cmd; its output and the CPU seconds (user + system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def loop_device(size):
    d = tempfile.mkdtemp(dir="/dev/shm")
    img = os.path.join(d, "backing.img")
    with open(img, "wb") as f:
        f.truncate(size)
    dev = subprocess.run(["losetup", "-f", "--show", img], check=True,
                         capture_output=True, text=True).stdout.strip()
    return dev, img


def drivescope(bin_, dev, duration, verify, home):
    cmd = [bin_, "run", "--target", dev, "--destroy-data", dev, "--rw", "randrw",
           "--bs", "4k", "--iodepth", "32", "--jobs", "1", "--duration", f"{duration}s",
           "--json", "--force", "--session", os.path.join(home, "s.yaml")]
    if verify:
        # A new state each run: the other rows overwrite the device behind its back.
        cmd += ["--verify", "--verify-state", os.path.join(home, "state"), "--verify-reset"]
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"))
    out, cpu = timed(cmd, env)
    s = [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]
    summ = [x for x in s if x.get("type") == "summary"][-1]
    os.remove(os.path.join(home, "s.yaml"))
    return summ["iops"], cpu * 1e6 / summ["ios"], summ.get("verify")


def fio(dev, duration, verify, backlog=None):
    cmd = ["fio", "--name=v", f"--filename={dev}", "--ioengine=io_uring", "--direct=1",
           "--rw=randrw", "--bs=4k", "--iodepth=32", "--numjobs=1", "--time_based",
           f"--runtime={duration}", "--refill_buffers", "--output-format=json"]
    if verify:
        # fio saves a verify state in its working directory unless told not to.
        cmd += ["--verify=crc32c", "--do_verify=1", "--verify_state_save=0"]
        if backlog:
            # A time-based job never reaches fio's verify phase: with a backlog fio reads
            # back and checks every N blocks it wrote while it runs.
            cmd += [f"--verify_backlog={backlog}"]
    out, cpu = timed(cmd)
    j = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
    ios = j["read"]["total_ios"] + j["write"]["total_ios"]
    return j["read"]["iops"] + j["write"]["iops"], cpu * 1e6 / max(ios, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--size", type=int, default=1 << 30)
    ap.add_argument("--fio-backlog", type=int, default=None,
                    help="fio verify row with --verify_backlog=N (checks while it runs)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "drivescope"))
    a = ap.parse_args()
    dev, img = loop_device(a.size)
    home = tempfile.mkdtemp(dir="/dev/shm")
    res = {k: [] for k in ("ds", "ds_verify", "fio", "fio_verify")}
    cpu = {k: [] for k in res}
    try:
        for r in range(a.reps):
            order = ["ds", "ds_verify", "fio", "fio_verify"]
            if r % 2:
                order.reverse()
            for k in order:
                if k.startswith("ds"):
                    iops, c, v = drivescope(a.bin, dev, a.duration, k == "ds_verify", home)
                    if v:
                        print(f"  verify: {v}")
                else:
                    iops, c = fio(dev, a.duration, k == "fio_verify", a.fio_backlog)
                res[k].append(iops)
                cpu[k].append(c)
                print(f"rep {r + 1} {k}: {iops:,.0f} IOPS, {c:.2f} CPU µs per I/O", flush=True)
    finally:
        subprocess.run(["losetup", "-d", dev])
        shutil.rmtree(os.path.dirname(img))
        shutil.rmtree(home)
    med = {k: statistics.median(v) for k, v in res.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    print("\n| row | median IOPS | CPU µs per I/O | runs (IOPS) |")
    print("|---|---:|---:|---|")
    for k, v in res.items():
        print(f"| {k} | {med[k]:,.0f} | {mcpu[k]:.2f} | {', '.join(f'{x:,.0f}' for x in v)} |")
    print(f"\ndrivescope CPU per I/O, --verify / plain: {mcpu['ds_verify'] / mcpu['ds']:.3f}")
    print(f"\ndrivescope --verify / plain: {med['ds_verify'] / med['ds']:.3f}")
    print(f"fio verify=crc32c / plain: {med['fio_verify'] / med['fio']:.3f}")
    print(f"drivescope --verify / fio verify=crc32c: {med['ds_verify'] / med['fio_verify']:.3f}")


if __name__ == "__main__":
    main()
