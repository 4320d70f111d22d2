#!/usr/bin/env python3
"""Does the dashboard steal I/O throughput? Runs the same preset headless and in the
dashboard (in a real terminal, tmux, redrawing live), alternately, on the same target, and
prints each step's IOPS ratio dashboard/headless (goal: at least 0.97). Then measures the
idle dashboard's CPU use over 20 s (goal: under 2% of a core).

--preset-file PATH installs a preset file as a user preset in each run's home (its id is
then given as --preset), e.g. one whose phases run `engine: nop`.

Usage: scripts/bench-dashboard.py [--target /dev/shm/ds-dash.bin] [--preset quick-look]
       [--preset-file PATH] [--reps 2] [--time-scale 1]
A benchmark, not a test: it reports ratios. Needs tmux and PyYAML.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "drivescope")


def steps_iops(session_path):
    with open(session_path) as f:
        s = yaml.safe_load(f)
    return [(st["label"], st["summary"]["iops"]) for st in s["steps"]]


def install_preset(a, home):
    """The --preset-file as a user preset of this home (XDG_CONFIG_HOME unset: ~/.config)."""
    if a.preset_file:
        d = os.path.join(home, ".config", "drivescope", "presets")
        os.makedirs(d, exist_ok=True)
        shutil.copy(a.preset_file, d)


def headless(a, home):
    install_preset(a, home)
    path = os.path.join(home, "headless.yaml")
    extra = ["--destroy-data", a.target] if a.target.startswith("/dev/") and not a.target.startswith("/dev/shm") else []
    subprocess.run([BIN, "run", "--preset", a.preset, "--target", a.target, "--time-scale",
                    str(a.time_scale), "--force", "--session", path, *extra], check=True,
                   capture_output=True, env=dict(os.environ, HOME=home))
    return steps_iops(path)


def tmux(sock, *args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout


def dashboard(a, home):
    install_preset(a, home)
    sock = f"ds-bench-{os.getpid()}"
    cmd = (f"env HOME={home} XDG_DATA_HOME={home}/data TERM=xterm-256color {BIN} --target "
           f"{a.target} --preset {a.preset} --time-scale {a.time_scale}")
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160",
                    "-y", "50", cmd], check=True)
    try:
        time.sleep(2)
        tmux(sock, "send-keys", "Enter")
        time.sleep(1)
        if "type" in tmux(sock, "capture-pane", "-p").lower() and a.target.startswith("/dev/loop"):
            # A block device is written only after its name is typed.
            tmux(sock, "send-keys", os.path.basename(a.target), "Enter")
            time.sleep(1)
            tmux(sock, "send-keys", "Enter")
        sessions = os.path.join(home, "data", "drivescope", "sessions")
        deadline = time.time() + 3600
        while time.time() < deadline:
            time.sleep(1)
            if "run completed" in tmux(sock, "capture-pane", "-p"):
                break
        files = glob.glob(os.path.join(sessions, "*.yaml"))
        time.sleep(1)
        tmux(sock, "send-keys", "q")
        time.sleep(1)
        return steps_iops(files[0])
    finally:
        tmux(sock, "kill-server")


def idle_cpu(home):
    sock = f"ds-idle-{os.getpid()}"
    cmd = f"env HOME={home} XDG_DATA_HOME={home}/data TERM=xterm-256color {BIN}"
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160",
                    "-y", "50", cmd], check=True)
    try:
        time.sleep(3)
        pane = tmux(sock, "display", "-p", "#{pane_pid}").strip()
        pid = subprocess.run(["pgrep", "-P", pane], capture_output=True, text=True).stdout.split()
        pid = pid[0] if pid else pane
        tick = os.sysconf("SC_CLK_TCK")

        def cpu():
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        c0, t0 = cpu(), time.time()
        time.sleep(20)
        return 100 * (cpu() - c0) / (time.time() - t0)
    finally:
        tmux(sock, "kill-server")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="/dev/shm/ds-dash.bin")
    ap.add_argument("--preset", default="quick-look")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--preset-file")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("tmux is needed")
    home = tempfile.mkdtemp(prefix="ds-bench-")
    # A test file is created and filled once (a short read run on a new file fills it);
    # a loop device is used as it is.
    if not a.target.startswith("/dev/loop"):
        subprocess.run([BIN, "run", "--target", a.target, "--size", "1GiB", "--duration", "1s",
                        "--force", "--session", os.path.join(home, "fill.yaml")], check=True,
                       capture_output=True, env=dict(os.environ, HOME=home))
    runs = {"headless": [], "dashboard": []}
    for _ in range(a.reps):
        runs["headless"].append(headless(a, home))
        h2 = tempfile.mkdtemp(prefix="ds-bench-ui-")
        runs["dashboard"].append(dashboard(a, h2))
    labels = [l for l, _ in runs["headless"][0]]
    print(f"preset {a.preset} on {a.target}, {a.reps} runs each, alternating")
    print(f"{'step':28} {'headless IOPS':>14} {'dashboard IOPS':>15} {'ratio':>7}")
    for i, label in enumerate(labels):
        h = statistics.median(r[i][1] for r in runs["headless"])
        d = statistics.median(r[i][1] for r in runs["dashboard"] if i < len(r))
        print(f"{label:28} {h:14.0f} {d:15.0f} {d / h:7.3f}")
    print(f"idle dashboard CPU: {idle_cpu(tempfile.mkdtemp(prefix='ds-idle-')):.2f}% of a core")


if __name__ == "__main__":
    main()
