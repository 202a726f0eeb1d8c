#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What watching costs, side by side: the BPF program on the CPUs it does not watch and on the one
it does.

Alternating windows, --rounds times each way: without jitterd, with a daemon that samples
nothing and watches --watched by method counts, and by method bpf. In each window:

  - on --unwatched (a CPU with no role: the program looks its role up and returns), switch_bench
    bounces a byte between two threads over pipes: ns per context switch, one sched_switch run
    each;
  - on --watched, busy_app polls (the application): its turns per second, and the timer
    interrupts, IPIs and switches there run the program's full path.

Prints the medians per way and the ratios to the window without jitterd, then the program's own
figures from the bpf daemon's /metrics (jitterd_watch_bpf_runs_total and _run_seconds_total: ns
per run by handler on the watched CPU, runs on the others), and, with --bpf-stats, the kernel's
bpf_stats figures of a further bpf window (every CPU together, its own cost included: the
difference between that window's switch and the bpf windows' is stats' cost per run). bpf_stats
is turned on only for that window and restored after: turning it on or off patches kernel text,
which sends every CPU (the watched one too) IPIs, so the daemon never uses it.

Usage: python3 tests/bench/watch_cost_bench.py --jitterd build/jitterd --switcher build/switch_bench
           --app build/tests/fidelity/busy_app [--watched 1] [--unwatched 0] [--seconds 5] [--rounds 5]
           [--bpf-stats]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402  (PROBES_OFF)

CONFIG = """\
cpus: []
web: {{listen_address: "127.0.0.1:{port}"}}
application: {{tasks: ["busyapp*"], user: 0}}
watch: {{cpus: "{cpu}", method: {method}, interval: 1s}}
"""


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def window(args):
    """(ns per switch on the unwatched CPU, busy_app turns per second on the watched one)."""
    app = subprocess.Popen([args.app, "--cpu", str(args.watched), "--seconds", str(int(args.seconds))],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    switched = subprocess.run([args.switcher, "--cpu", str(args.unwatched), "--seconds", str(int(args.seconds))],
                              capture_output=True, text=True, check=True)
    turns = int(app.communicate(timeout=args.seconds + 30)[0].split()[0])
    return float(switched.stdout.split()[1]), turns / args.seconds


class Daemon:
    def __init__(self, args, method, tmp):
        self.port = free_port()
        config = os.path.join(tmp, f"{method}.yaml")
        with open(config, "w", encoding="ascii") as f:
            f.write(CONFIG.format(port=self.port, cpu=args.watched, method=method) + harness.PROBES_OFF)
        self.log = open(os.path.join(tmp, f"{method}.log"), "a", encoding="utf-8")
        self.process = subprocess.Popen([args.jitterd, "run", "--config", config], stdout=self.log,
                                        stderr=self.log)
        time.sleep(3)  # loaded, the first window read

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as r:
            return r.read().decode()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.log.close()


def program_costs(text):
    """{(program, role): [runs, seconds]} from the bpf daemon's own series."""
    out = {}
    for family, index in (("jitterd_watch_bpf_runs_total", 0), ("jitterd_watch_bpf_run_seconds_total", 1)):
        for m in re.finditer(rf'^{family}{{program="([^"]+)",role="([^"]+)"}} (\S+)$', text, re.M):
            out.setdefault((m.group(1), m.group(2)), [0.0, 0.0])[index] = float(m.group(3))
    return out


def bpf_stats_window(args, daemon_pid):
    """bpftool's run count and time of each of the daemon's programs over one window with
    kernel.bpf_stats_enabled on; and that window's figures."""
    ids = set()
    for fd in os.listdir(f"/proc/{daemon_pid}/fdinfo"):
        try:
            with open(f"/proc/{daemon_pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as f:
                ids.update(m.group(1) for m in re.finditer(r"^prog_id:\s*(\d+)", f.read(), re.M))
        except FileNotFoundError:
            continue

    def shown():
        import json
        out = {}
        for prog_id in ids:
            r = subprocess.run(["bpftool", "-j", "prog", "show", "id", prog_id], capture_output=True, text=True)
            if r.returncode == 0:
                p = json.loads(r.stdout)
                out[p.get("name", prog_id)] = (p.get("run_cnt", 0), p.get("run_time_ns", 0))
        return out

    with open("/proc/sys/kernel/bpf_stats_enabled", "r+", encoding="ascii") as f:
        saved = f.read().strip()
        f.seek(0)
        f.write("1")
    try:
        before = shown()
        figures = window(args)
        after = shown()
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w", encoding="ascii") as f:
            f.write(saved)
    return figures, {n: (after[n][0] - before.get(n, (0, 0))[0], after[n][1] - before.get(n, (0, 0))[1])
                     for n in after}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--switcher", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--watched", type=int, default=1)
    parser.add_argument("--unwatched", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bpf-stats", action="store_true")
    args = parser.parse_args()
    with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
        model = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M).group(1)
    results = {"without": [], "counts": [], "bpf": []}
    own, stats = {}, None
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for way in results:
                daemon = Daemon(args, way, tmp) if way != "without" else None
                try:
                    results[way].append(window(args))
                    if way == "bpf":
                        own = program_costs(daemon.scrape())
                finally:
                    if daemon:
                        daemon.stop()
        if args.bpf_stats:
            daemon = Daemon(args, "bpf", tmp)
            try:
                stats = bpf_stats_window(args, daemon.process.pid)
            finally:
                daemon.stop()
    print(f"{model}, {os.cpu_count()} CPUs; {args.rounds} x {args.seconds:g} s windows each way; switches on "
          f"cpu {args.unwatched} (not watched), busy_app on cpu {args.watched} (watched)")
    print(f"{'way':<10}{'ns/switch':>12}{'ratio':>8}{'turns/s':>16}{'ratio':>8}")
    base = [statistics.median(x[i] for x in results["without"]) for i in (0, 1)]
    for way, windows in results.items():
        med = [statistics.median(x[i] for x in windows) for i in (0, 1)]
        print(f"{way:<10}{med[0]:>12.1f}{med[0] / base[0]:>8.3f}{med[1]:>16.0f}{med[1] / base[1]:>8.3f}")
    print("the program's own figures (the bpf daemon's /metrics, since its load): runs, ns per run")
    for (program, role), (runs, seconds) in sorted(own.items(), key=lambda item: -item[1][0]):
        per_run = f"{seconds * 1e9 / runs:>10.1f}" if role != "none" and runs else f"{'-':>10}"
        print(f"  {program:<28}{role:<9}{runs:>12.0f}{per_run}")
    if stats:
        (switch_ns, _), programs = stats
        print(f"bpf_stats on (every CPU together, its own cost in each run): {switch_ns:.1f} ns per switch")
        for name, (runs, ns) in sorted(programs.items(), key=lambda item: -item[1][0]):
            if runs:
                print(f"  {name:<28}{runs:>12}{ns / runs:>10.1f}")


if __name__ == "__main__":
    main()
