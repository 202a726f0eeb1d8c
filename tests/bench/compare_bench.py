#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Figures for docs/before-and-after.md (not a ctest test: it takes minutes).

false-alarms: N pairs of back-to-back baselines of the configured CPUs on this machine, each pair
              compared; counts pairs with any CPU figure judged "worse" or "better", and estimates
              each figure's run-to-run spread cv from the pairs' log ratios (E[log^2] = 2 cv^2 for
              two independent runs), the figure `compare` assumes as 0.20.
probe-spread: R baselines of the probes (kernel_cost and pacing on CPU 0, c2c pairing CPUs 0 and
              1) back to back (--config: another probes: section, e.g. the integration test's), or
              the given files: per probe quantile with samples, its run-to-run spread (standard
              deviation of the log of its value over the runs, ~ the relative spread) and the
              largest ratio between consecutive runs, the largest per probe; then the R-1
              consecutive pairs compared (with --allowance, if given): how many pairs and tested
              figures had a verdict "worse" or "better", which, and how many figures each pair
              tested or left "not tested" and why.
application-spread: R back-to-back baselines of the application's side (needs root): the example
              loop (examples/loop_probe/poll_loop) on CPU 1 at SCHED_FIFO 10 as the application,
              watched by --method (counts or bpf) and read as loop `app`; the R-1 consecutive pairs
              compared: each watched and loop figure's run-to-run spread (cv from the pairs' log
              ratios, as false-alarms) and the verdicts other than no significant change.
compare-time: two synthetic baselines of C CPUs and S seconds (0.5 s sub-windows, gap histograms
              of ~150 buckets with a heavy tail), then times `jitterd compare` on them, as JSON and
              as HTML (and the size of each output).

Usage: compare_bench.py --jitterd BINARY false-alarms [--pairs 10] [--seconds 10] [--realtime-priority 10]
       compare_bench.py --jitterd BINARY probe-spread [--runs 20] [--config YAML] [--allowance A] [FILE ...]
       compare_bench.py --jitterd BINARY application-spread --poll-loop POLL_LOOP [--runs 10] [--seconds 10]
                        [--method counts]
       compare_bench.py --jitterd BINARY compare-time [--cpus 64] [--seconds 60]
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 10us
"""


def false_alarms(jitterd, pairs, seconds, realtime_priority):
    workdir = tempfile.mkdtemp(prefix="jitterd_compare_bench_")
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(CONFIG + (f"  realtime_priority: {realtime_priority}\n" if realtime_priority else ""))
    alarms = 0
    log_ratios = {}  # figure -> log(after / before) of each pair and CPU where both are above 0
    for pair in range(pairs):
        paths = []
        for side in ("before", "after"):
            path = os.path.join(workdir, f"{pair}_{side}.json")
            subprocess.run([jitterd, "baseline", "--config", config, "--duration", f"{seconds}s", "--probes", "none",
                            "-o", path], check=True, capture_output=True)
            paths.append(path)
        result = subprocess.run([jitterd, "compare", *paths, "--format", "json"], check=True, capture_output=True,
                                text=True)
        figures = [f for f in json.loads(result.stdout)["figures"] if f["scope"].startswith("cpu ")]
        flagged = [f"{f['scope']} {f['figure']} {f['verdict']} ({f['before']:.4g} -> {f['after']:.4g})"
                   for f in figures if f["verdict"] in ("worse", "better")]
        alarms += bool(flagged)
        for f in figures:
            if f["before"] > 0 and f["after"] > 0:
                log_ratios.setdefault(f["figure"], []).append(math.log(f["after"] / f["before"]))
        print(f"pair {pair + 1}: {len(figures)} figures, " + ("; ".join(flagged) if flagged else "no change"),
              flush=True)
    print(f"{alarms} of {pairs} pairs of {seconds} s baselines had a verdict other than no significant change")
    print_run_to_run_spread(log_ratios)


def print_run_to_run_spread(log_ratios):
    """cv of each figure from the log ratios of pairs of runs: sqrt(mean(log^2) / 2), and the largest
    |log ratio| seen; figures that were 0 in either run of a pair leave that pair out."""
    print("run-to-run spread (cv = sqrt(mean(log(after/before)^2) / 2); compare assumes 0.20):")
    spreads = []
    for figure, values in sorted(log_ratios.items()):
        cv = math.sqrt(sum(v * v for v in values) / len(values) / 2)
        spreads.append(cv)
        print(f"  {figure:28s} cv {cv:.3f} over {len(values)} pairs, largest ratio "
              f"{math.exp(max(abs(v) for v in values)):.2f}x")
    if spreads:
        print(f"  largest cv {max(spreads):.3f}, median cv {sorted(spreads)[len(spreads) // 2]:.3f}")


APPLICATION_CONFIG = """\
cpus: []
application:
  tasks: ["poll_loop"]
watch:
  cpus: "1"
  method: {method}
loops:
  directory: {loops}
"""


def application_spread(jitterd, poll_loop, runs, seconds, method):
    workdir = tempfile.mkdtemp(prefix="jitterd_application_spread_")
    loops = os.path.join(workdir, "loops")
    os.mkdir(loops)
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(APPLICATION_CONFIG.format(method=method, loops=loops))
    loop = subprocess.Popen(["chrt", "-f", "10", poll_loop, "app", "1", "0"], env=dict(os.environ,
                            JITTERD_LOOP_DIR=loops), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(2)
        paths = []
        for run in range(runs):
            path = os.path.join(workdir, f"{run}.json")
            subprocess.run([jitterd, "baseline", "--config", config, "--duration", f"{seconds}s", "--probes", "none",
                            "-o", path], check=True, capture_output=True)
            paths.append(path)
    finally:
        loop.kill()
        loop.wait()
    log_ratios, flagged_pairs = {}, 0
    for before, after in zip(paths, paths[1:]):
        result = subprocess.run([jitterd, "compare", before, after, "--format", "json"], check=True,
                                capture_output=True, text=True)
        figures = [f for f in json.loads(result.stdout)["figures"]
                   if f["scope"].startswith("watched cpu") or f["scope"].startswith("loop ")]
        flagged = [f"{f['scope']} {f['figure']} {f['verdict']} ({f['before']:.4g} -> {f['after']:.4g})"
                   for f in figures if f["verdict"] in ("worse", "better")]
        flagged_pairs += bool(flagged)
        for f in figures:
            if f["before"] > 0 and f["after"] > 0:
                kind = "watch" if f["scope"].startswith("watched") else "loop"
                log_ratios.setdefault(f"{kind}.{f['figure']}", []).append(math.log(f["after"] / f["before"]))
        print(f"{os.path.basename(before)} -> {os.path.basename(after)}: {len(figures)} figures, "
              + ("; ".join(flagged) if flagged else "no change"), flush=True)
    print(f"{flagged_pairs} of {len(paths) - 1} consecutive pairs of {seconds} s baselines (method {method}) had a "
          f"verdict other than no significant change")
    print_run_to_run_spread(log_ratios)


PROBE_CONFIG = CONFIG + """probes:
  c2c: {allow_unsampled: true}
"""


def probe_spread(jitterd, runs, files, config_path=None, allowance=None):
    workdir = tempfile.mkdtemp(prefix="jitterd_probe_spread_")
    config = config_path or os.path.join(workdir, "jitterd.yaml")
    if not config_path:
        with open(config, "w") as f:
            f.write(PROBE_CONFIG)
    paths = list(files)
    for run in range(len(paths), runs):
        path = os.path.join(workdir, f"{run}.json")
        subprocess.run([jitterd, "baseline", "--config", config, "--duration", "2s", "--probes",
                        "kernel_cost,pacing,c2c", "-o", path], check=True, capture_output=True)
        paths.append(path)
    print(f"{len(paths)} baselines in {workdir if len(paths) > len(files) else 'the files given'}")
    # Every probe quantile with samples, whatever compare does with it: the spread over the runs.
    values = {}
    for path in paths:
        with open(path) as f:
            document = json.load(f)
        for probe in document["probes"]:
            backed = {column for s in probe.get("samples", []) for column in s["quantiles"]}
            for table in probe["tables"]:
                keys = [c for c, name in enumerate(table["columns"])
                        if name in ("op", "cpu_a", "cpu_b", "relation", "method", "target_per_s")]
                for row in table["rows"]:
                    key = " ".join(f"{table['columns'][c]}={row[c]}" for c in keys)
                    for c, name in enumerate(table["columns"]):
                        if name in backed and isinstance(row[c], (int, float)) and row[c] > 0:
                            values.setdefault((probe["name"], f"{table['title'].split(' ')[0]}: {key} {name}"),
                                              []).append(row[c])
    largest = {}
    for (probe, figure), series in sorted(values.items()):
        if len(series) < 2:
            continue
        logs = [math.log(v) for v in series]
        mean = sum(logs) / len(logs)
        spread = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
        step = max(abs(logs[i] - logs[i - 1]) for i in range(1, len(logs)))
        print(f"{probe} {figure}: spread {spread:.3f} over {len(logs)} runs ({min(series):.4g} .. "
              f"{max(series):.4g}), consecutive runs up to {math.exp(step):.2f}x")
        largest[probe] = max(largest.get(probe, 0), spread)
    for probe, spread in sorted(largest.items()):
        print(f"{probe}: largest spread {spread:.3f}")
    alarms, tested_total, flagged_total, untested = 0, 0, 0, {}
    for i in range(1, len(paths)):
        command = [jitterd, "compare", paths[i - 1], paths[i], "--format", "json"]
        if allowance:
            command += ["--allowance", allowance]
        result = subprocess.run(command, check=True, capture_output=True, text=True)
        comparison = json.loads(result.stdout)
        probes = [f for f in comparison["figures"] if f["scope"].startswith("probe ")]
        figures = [f for f in probes if f["test"].startswith("quantile")]
        for f in probes:
            if f["verdict"].startswith("not tested (") and f["scope"] != "probe clock":
                reason = f["verdict"][:60]
                untested[reason] = untested.get(reason, 0) + 1
        flagged = [f"{f['figure']} {f['verdict']} ({f['before']:.4g} -> {f['after']:.4g}, allowance "
                   f"{f['allowance']})" for f in figures if f["verdict"] in ("worse", "better")]
        alarms += bool(flagged)
        tested_total += len(figures)
        flagged_total += len(flagged)
        vm = any("in a VM" in n for n in comparison["notes"])
        print(f"pair {i}: {len(figures)} tested{' (VM allowances)' if vm else ''}, "
              + ("; ".join(flagged) if flagged else "no change"), flush=True)
    print(f"{alarms} of {len(paths) - 1} pairs had a probe figure judged worse or better; "
          f"{flagged_total} of {tested_total} tested figures")
    for reason, count in sorted(untested.items()):
        print(f"  not tested: {count} x {reason}...")


def synthetic_baseline(rng, cpus, seconds, hertz=2.0e9):
    windows = int(seconds / 0.5)
    thresholds = [10_000, 20_000, 50_000, 100_000, 1_000_000]
    cpu_records = []
    for cpu in range(cpus):
        buckets = {}
        sub_windows = []
        for _ in range(windows):
            over = [rng.randrange(0, 400 // (i + 1)) for i in range(len(thresholds))]
            sub_windows.append({"seconds": 0.5, "samples": 1_000_000, "p50_ns": 30 + rng.random(),
                                "p99_ns": 60 + rng.random() * 5, "p99_9_ns": 400 + rng.random() * 50,
                                "p99_99_ns": 9000 + rng.random() * 2000, "interruptions": over[0],
                                "stolen_seconds": rng.random() * 0.01, "over_threshold": over})
        for index in range(60, 210):  # ~150 non-empty buckets, counts falling off into the tail
            buckets[index] = max(1, int(windows * 1_000_000 / 2 ** ((index - 60) / 8)) // 4)
        samples = sum(buckets.values())
        cpu_records.append({"cpu": cpu, "error": "", "samples": samples, "sampled_seconds": seconds,
                            "stolen_seconds": 0.3, "interruptions": 1000, "floor_ns": 10, "threshold_ns": 10000,
                            "max_ns": 5e6, "histogram_ticks": [[i, c] for i, c in sorted(buckets.items())],
                            "sub_windows": sub_windows})
    return {"format": "jitterd-baseline", "format_version": "1.0", "created": "2026-11-23T00:00:00Z",
            "jitterd_version": "synthetic", "fingerprint": {"hostname": "synthetic", "cpu_model": "synthetic"},
            "configuration": {"cpus": f"0-{cpus - 1}"}, "tick_method": "lfence_rdtsc", "counter_hertz": hertz,
            "duration_seconds": seconds, "sub_window_seconds": 0.5, "tail_thresholds_ns": thresholds,
            "cpus": cpu_records, "probes": []}


def compare_time(jitterd, cpus, seconds):
    workdir = tempfile.mkdtemp(prefix="jitterd_compare_bench_")
    rng = random.Random(13)
    paths = []
    for side in ("before", "after"):
        path = os.path.join(workdir, f"{side}.json")
        with open(path, "w") as f:
            json.dump(synthetic_baseline(rng, cpus, seconds), f)
        paths.append(path)
    size = os.path.getsize(paths[0]) / 1e6
    for form in ("json", "html"):
        times = []
        for _ in range(5):
            start = time.monotonic()
            result = subprocess.run([jitterd, "compare", *paths, "--format", form], check=True, capture_output=True)
            times.append(time.monotonic() - start)
        print(f"compare --format {form} of two {cpus}-CPU {seconds} s baselines ({size:.1f} MB each): "
              f"min {min(times):.3f} s, median {sorted(times)[2]:.3f} s, max {max(times):.3f} s over 5 runs; "
              f"output {len(result.stdout) / 1e6:.2f} MB")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    sub = parser.add_subparsers(dest="what", required=True)
    fa = sub.add_parser("false-alarms")
    fa.add_argument("--pairs", type=int, default=10)
    fa.add_argument("--seconds", type=int, default=10)
    fa.add_argument("--realtime-priority", type=int, default=0,
                    help="sample at SCHED_FIFO with this priority (needs root); 0: SCHED_OTHER")
    ps = sub.add_parser("probe-spread")
    ps.add_argument("--runs", type=int, default=20)
    ps.add_argument("--config", help="a jitterd config whose probes: section the baselines use")
    ps.add_argument("--allowance", help="passed to jitterd compare --allowance")
    ps.add_argument("files", nargs="*")
    ap = sub.add_parser("application-spread")
    ap.add_argument("--poll-loop", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--method", default="counts", choices=["counts", "bpf"])
    ct = sub.add_parser("compare-time")
    ct.add_argument("--cpus", type=int, default=64)
    ct.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    jitterd = os.path.realpath(args.jitterd)
    if args.what == "false-alarms":
        false_alarms(jitterd, args.pairs, args.seconds, args.realtime_priority)
    elif args.what == "application-spread":
        application_spread(jitterd, os.path.realpath(args.poll_loop), args.runs, args.seconds, args.method)
    elif args.what == "probe-spread":
        probe_spread(jitterd, args.runs, args.files, args.config, args.allowance)
    else:
        compare_time(jitterd, args.cpus, args.seconds)


if __name__ == "__main__":
    sys.exit(main())
