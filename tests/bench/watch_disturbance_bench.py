#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Does watching a CPU disturb it? The interrupts a watched CPU takes, with jitterd watching it
and without, side by side in one run.

busy_app polls on --cpu (as the application does; an idle CPU would not show what a running
one is sent). Then, alternately, windows of --seconds without jitterd and with a daemon that
samples nothing and watches that CPU once a second (method counts, bpf, then tracepoints): per window, the CPU's
/proc/interrupts deltas of the rows an observer could cause (CAL: function-call IPIs, as a
cross-CPU perf counter or MSR read would send; IWI: irq_work, as a perf ring wakeup would raise;
RES: rescheduling IPIs, as a wakeup there would; TLB; LOC, the local timer) per second, and the
daemon's threads allowed on that CPU (must be none). With bpf, kernel.bpf_stats_enabled is on for
the window (restored after), and bpftool's run count and run time of each of the daemon's BPF
programs give what the program costs per event (on every CPU: it returns at once on a CPU not
watched). Prints figures for docs/benchmarks.md, asserts nothing about them.

Usage: python3 tests/bench/watch_disturbance_bench.py --jitterd build/jitterd
           --app build/tests/fidelity/busy_app [--cpu 1] [--seconds 30] [--rounds 2]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROWS = ("LOC", "RES", "CAL", "TLB", "IWI")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402  (PROBES_OFF: the every-probe-off section the tests share)

CONFIG = """\
cpus: []
web: {{listen_address: "127.0.0.1:0"}}
application: {{tasks: ["busyapp*"]}}
watch: {{cpus: "{cpu}", method: {method}, interval: 1s}}
"""


def counts(cpu):
    """{row: count} of the CPU's column of /proc/interrupts."""
    with open("/proc/interrupts", encoding="ascii", errors="replace") as f:
        header = f.readline().split()
        column = header.index(f"CPU{cpu}")
        out = {}
        for line in f:
            name, _, rest = line.partition(":")
            name = name.strip()
            fields = rest.split()
            if name in ROWS and len(fields) > column:
                out[name] = int(fields[column])
        return out


def window(cpu, seconds):
    before = counts(cpu)
    time.sleep(seconds)
    after = counts(cpu)
    return {row: (after.get(row, 0) - before.get(row, 0)) / seconds for row in ROWS}


def threads_on(pid, cpu):
    """The daemon's threads whose allowed CPUs include cpu."""
    found = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status", encoding="ascii") as f:
                allowed = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M).group(1)
        except (FileNotFoundError, AttributeError):
            continue
        cpus = set()
        for part in allowed.split(","):
            first, _, last = part.partition("-")
            cpus.update(range(int(first), int(last or first) + 1))
        found += cpu in cpus
    return found


def bpf_programs(pid):
    """{program name: (run count, run time ns)} of the BPF programs the process holds: the ids
    its descriptors' fdinfo names (a program's or a link's prog_id), then bpftool's figures."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as f:
                ids.update(m.group(1) for m in re.finditer(r"^prog_id:\s*(\d+)", f.read(), re.M))
        except FileNotFoundError:
            continue
    out = {}
    for prog_id in ids:
        shown = subprocess.run(["bpftool", "-j", "prog", "show", "id", prog_id], capture_output=True, text=True)
        if shown.returncode == 0:
            prog = json.loads(shown.stdout)
            out[prog.get("name", prog_id)] = (prog.get("run_cnt", 0), prog.get("run_time_ns", 0))
    return out


def watched_window(args, method):
    """One window with a daemon watching by `method`: (rates, threads allowed on the CPU, BPF costs)."""
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "jitterd.yaml")
        with open(config, "w", encoding="ascii") as f:
            f.write(CONFIG.format(cpu=args.cpu, method=method) + harness.PROBES_OFF)
        log = open(os.path.join(tmp, "log"), "w", encoding="utf-8")
        daemon = subprocess.Popen([args.jitterd, "run", "--config", config], stdout=log, stderr=log)
        try:
            time.sleep(3)  # started, first window read
            before = bpf_programs(daemon.pid) if method == "bpf" else {}
            rates = window(args.cpu, args.seconds)
            after = bpf_programs(daemon.pid) if method == "bpf" else {}
            on_cpu = threads_on(daemon.pid, args.cpu)
        finally:
            daemon.terminate()
            daemon.wait(timeout=10)
            log.close()
    costs = {name: (after[name][0] - before.get(name, (0, 0))[0], after[name][1] - before.get(name, (0, 0))[1])
             for name in after}
    return rates, on_cpu, costs


def set_bpf_stats(value):
    with open("/proc/sys/kernel/bpf_stats_enabled", "r+", encoding="ascii") as f:
        old = f.read().strip()
        f.seek(0)
        f.write(value)
    return old


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    app = subprocess.Popen([args.app, "--cpu", str(args.cpu), "--seconds", str(int(args.seconds * args.rounds * 3 + 60))],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    saved_stats = set_bpf_stats("1")
    try:
        if app.stderr.readline().strip() != "busy_app: running":
            sys.exit("busy_app did not start")
        results = {"without": [], "counts": [], "bpf": [], "tracepoints": []}
        on_cpu = {}
        costs = {}
        for _ in range(args.rounds):
            results["without"].append(window(args.cpu, args.seconds))
            for method in ("counts", "bpf", "tracepoints"):
                rates, on_cpu[method], window_costs = watched_window(args, method)
                results[method].append(rates)
                for name, (runs, ns) in window_costs.items():
                    total = costs.get(name, (0, 0))
                    costs[name] = (total[0] + runs, total[1] + ns)
        print(f"cpu {args.cpu}, busy_app polling there; {args.rounds} x {args.seconds:g} s windows each way; "
              f"jitterd threads allowed on cpu {args.cpu}: {on_cpu}")
        print(f"{'per second':<12}" + "".join(f"{row:>12}" for row in ROWS))
        for name, windows in results.items():
            mean = {row: sum(w[row] for w in windows) / len(windows) for row in ROWS}
            print(f"{name:<12}" + "".join(f"{mean[row]:>12.3f}" for row in ROWS))
        print("bpf programs (every CPU's events; kernel.bpf_stats_enabled): runs, ns per run")
        for name, (runs, ns) in sorted(costs.items(), key=lambda item: -item[1][0]):
            if runs:
                print(f"  {name:<28}{runs:>10}{ns / runs:>10.0f}")
    finally:
        set_bpf_stats(saved_stats)
        app.kill()
        app.wait()


if __name__ == "__main__":
    main()
