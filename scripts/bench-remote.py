#!/usr/bin/env python3
"""Remote hosts and fio as an engine: what they cost.

Part 1: the same 4k randread QD32 on one loop device (over /dev/shm), run by drivescope here
and by drivescope over ssh (`--host`, a real sshd this script starts on 127.0.0.1 with keys it
makes; the agent is the same binary), alternating. Prints the median IOPS of each and their
ratio (the issue asks remote >= 0.99 of local), and how late each interval reaches the
controller: its arrival (the --json line read here) after the run's start line, less its own
end time in the step; the remote median less the local one is what the link adds (the issue
asks <= 1.5 s).

Part 2: `--engine fio` on the same device: drivescope's own CPU (its /proc/PID/stat utime +
stime, fio's not counted) over the run's wall time, as a share of one core (the issue asks
< 2%).

Usage: scripts/bench-remote.py [--reps 3] [--duration 10] [--bin target/release/drivescope]
Needs root (losetup, sshd). A benchmark, not a test: it reports figures and asserts nothing.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_sshd(d):
    os.makedirs("/run/sshd", exist_ok=True)
    for k in ["host_key", "user_key"]:
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{k}"], check=True)
    os.rename(f"{d}/user_key.pub", f"{d}/authorized_keys")
    port = free_port()
    with open(f"{d}/sshd_config", "w") as f:
        f.write(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\n"
                f"AuthorizedKeysFile {d}/authorized_keys\nPidFile none\nStrictModes no\n"
                "UsePAM no\nPermitRootLogin yes\nPasswordAuthentication no\n")
    with open(f"{d}/ssh_config", "w") as f:
        f.write(f"Host bench\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
                f"  IdentityFile {d}/user_key\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
                "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n")
    p = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{d}/sshd_config"],
                         stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return p, f"ssh -F {d}/ssh_config"


def run_timed(cmd):
    """Runs cmd; returns (summary, lags of its intervals in s, own CPU s, wall s)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cpu = [0.0]

    def watch():
        while p.poll() is None:
            try:
                f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
                cpu[0] = (int(f[11]) + int(f[12])) / TICK
            except (OSError, IndexError):
                pass
            time.sleep(0.1)

    w = threading.Thread(target=watch)
    w.start()
    start = None
    lags = []
    summary = None
    for line in p.stdout:
        now = time.monotonic()
        if not line.startswith("{"):
            continue
        v = json.loads(line)
        if v.get("type") == "start":
            start = now
        elif v.get("type") == "interval" and start is not None:
            lags.append(now - start - v["end_s"])
        elif v.get("type") == "summary":
            summary = v
    err = p.stderr.read()
    p.wait()
    w.join()
    if p.returncode != 0 or summary is None:
        sys.exit(f"failed: {' '.join(cmd)}\n{err[-2000:]}")
    return summary, lags, cpu[0], time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/drivescope"))
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    d = tempfile.mkdtemp(prefix="ds-bench-remote-")
    shm = tempfile.mkdtemp(dir="/dev/shm")
    img = os.path.join(shm, "img")
    with open(img, "wb") as f:
        f.truncate(512 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", img], capture_output=True, text=True,
                         check=True).stdout.strip()
    sshd, ssh = start_sshd(d)
    try:
        base = [binary, "run", "--target", dev, "--rw", "randread", "--iodepth", "32",
                "--duration", f"{a.duration}s", "--json", "--force", "--session", f"{d}/s.yaml"]
        remote = base[:2] + ["--host", "bench", "--ssh-command", ssh,
                             "--remote-drivescope", binary] + base[2:]
        res = {"local": [], "remote": []}
        lag = {"local": [], "remote": []}
        for _ in range(a.reps):
            for name, cmd in [("local", base), ("remote", remote)]:
                s, lags, _, _ = run_timed(cmd)
                res[name].append(s["iops"])
                lag[name].extend(lags)
        lo, re_ = statistics.median(res["local"]), statistics.median(res["remote"])
        print(f"part 1: {dev} 4k randread QD32, {a.duration}s x {a.reps}")
        print(f"  local  IOPS median {lo:,.0f}  {[round(x) for x in res['local']]}")
        print(f"  remote IOPS median {re_:,.0f}  {[round(x) for x in res['remote']]}")
        print(f"  remote / local = {re_ / lo:.3f}")
        for name in ["local", "remote"]:
            l = sorted(lag[name])
            print(f"  {name:6} interval lag: median {statistics.median(l) * 1e3:.1f} ms, "
                  f"max {l[-1] * 1e3:.1f} ms ({len(l)} intervals)")
        fio = base[:2] + ["--engine", "fio"] + base[2:]
        shares = []
        for _ in range(a.reps):
            s, _, cpu, wall = run_timed(fio)
            shares.append(cpu / wall)
            print(f"part 2: --engine fio {s['iops']:,.0f} IOPS; drivescope's own CPU "
                  f"{cpu:.2f} s over {wall:.1f} s = {100 * cpu / wall:.2f}% of a core")
        print(f"  median {100 * statistics.median(shares):.2f}% of a core")
    finally:
        sshd.terminate()
        subprocess.run(["losetup", "-d", dev])
        os.unlink(img)


if __name__ == "__main__":
    main()
