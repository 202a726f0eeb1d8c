#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet's cost against a real Prometheus (Debian's, on 127.0.0.1, its default query limits)
on synthetic fleets shaped like jitterd's scrape (the gap histogram's 23 buckets and 3 counters per
CPU, jitterd_sampler_start_time_seconds and jitterd_fingerprint_info per host), built into blocks
by `promtool tsdb create-blocks-from openmetrics`. Per run: `jitterd fleet --by kernel` timed with
its peak RSS and CPU time (/usr/bin/time), Prometheus's CPU time over the run
(process_cpu_seconds_total: on a loaded machine the CPU times, not the wall, tell the cost), and the samples Prometheus loaded for it (every query passed through
a small proxy that adds stats=all and sums data.stats.samples.totalQueryableSamples; the wall time
and RSS are of a run without the proxy). Prints figures for docs/benchmarks.md; asserts only that
fleet exits 0.

  densities: the same fleet (--hosts x --cpus) at 10, 100 and 1,000 scrapes a series, 60 s apart, read
    by this jitterd (ends) and, with --old BINARY, by a jitterd that reads every scrape (increase
    over the range), side by side.
  large: --hosts x --cpus over 24 h at 15 s, with only the scrapes fleet's reads touch in the TSDB
    (every scrape within the lookback, 45 s, of each end, the fingerprint and start time at each of the 100
    instants fleet reads the fingerprints at, every scrape of three hosts' fingerprint series for the
    interval): what a full TSDB holds in between is never read.

Usage: fleet_prometheus_bench.py --jitterd BINARY [--old BINARY] [--mode densities|large|both]
       [--hosts N] [--cpus N]
"""

import argparse
import http.client
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import prometheus_harness  # noqa: E402

DENSITIES = (10, 100, 1000)  # scrapes a series, 60 s apart
BOUNDS = [b * 10 ** e for e in range(-8, -1) for b in (1, 2.5, 5)] + [0.1]


def instance(h):
    return f"host-{h:04d}:9978"


def write_application(f, hosts, cpus, times, counted):
    """The application's side (--application): per host `cpus` watched CPUs (hard interrupts by two
    causes, preemptions, preempted time, the application's run time) and one loop, rx0 (a sampled
    CPU's families), counting as the sampler counters do."""
    families = {"jitterd_watch_irqs_total": [("timer", 100), ("device_irq", 5)],
                "jitterd_watch_preemptions_total": [(None, 2)],
                "jitterd_watch_stolen_seconds_total": [("preempted", 4e-5)],
                "jitterd_watch_application_run_seconds_total": [(None, 0.98)]}
    for name, parts in families.items():
        f.write(f"# TYPE {name[:-len('_total')]} counter\n")
        for h in range(hosts):
            for c in range(cpus):
                for cause, per_s in parts:
                    labels = f'instance="{instance(h)}",job="jitterd",cpu="{100 + c}"' + (
                        f',cause="{cause}"' if cause else "")
                    f.writelines(f"{name}{{{labels}}} {per_s * 60 * counted(t):.6g} {t}\n" for t in times)
    f.write("# TYPE jitterd_loop_gap_seconds histogram\n")
    for h in range(hosts):
        for le in BOUNDS + [math.inf]:
            share = 1.0 if math.isinf(le) else 1 - min(1.0, 0.5 * (1e-7 / le) ** 1.3 if le >= 1e-7 else 1)
            label = "+Inf" if math.isinf(le) else repr(le)
            f.writelines(f'jitterd_loop_gap_seconds_bucket{{instance="{instance(h)}",job="jitterd",loop="rx0",'
                         f'cpu="3",le="{label}"}} {round(share * 6e7 * counted(t))} {t}\n' for t in times)
    for name, per in (("sampled_seconds", 59.4), ("interruptions", 6000), ("stolen_seconds", 0.03)):
        f.write(f"# TYPE jitterd_loop_{name} counter\n")
        for h in range(hosts):
            f.writelines(f'jitterd_loop_{name}_total{{instance="{instance(h)}",job="jitterd",loop="rx0",cpu="3"}} '
                         f'{per * counted(t):.6g} {t}\n' for t in times)


def write_fleet(path, hosts, cpus, times, fingerprint_times, probe_times, started, application=False):
    """OpenMetrics of the fleet: counters at `times` (each counts per scrape interval since
    `started`), the fingerprint at `fingerprint_times` (every probe_times for the first, middle and
    last host); the application's side too with `application`."""
    rng = random.Random(1)
    probes = {0, hosts // 2, hosts - 1}
    interval = times[1] - times[0] if len(times) > 1 else 60

    def counted(t):
        return (t - started) / interval

    with open(path, "w", encoding="utf-8") as f:
        f.write("# TYPE jitterd_fingerprint_info gauge\n")
        for h in range(hosts):
            labels = (f'instance="{instance(h)}",job="jitterd",kernel="{"6.6" if h % 2 else "6.1"}",'
                      f'cpu_model="{"X" if h % 3 else "Y"}",bios_version="1.4",hypervisor="no"')
            ts = sorted(set(fingerprint_times) | (set(probe_times) if h in probes else set()))
            f.writelines(f"jitterd_fingerprint_info{{{labels}}} 1 {t}\n" for t in ts)
        f.write("# TYPE jitterd_sampler_start_time_seconds gauge\n")
        for h in range(hosts):
            f.writelines(f'jitterd_sampler_start_time_seconds{{instance="{instance(h)}",job="jitterd"}} {started} {t}\n'
                         for t in sorted(set(times) | set(fingerprint_times)))
        tails = {(h, c): math.exp(rng.gauss(0, 0.3)) for h in range(hosts) for c in range(cpus)}
        f.write("# TYPE jitterd_sampler_gap_seconds histogram\n")
        for (h, c), tail in tails.items():
            for le in BOUNDS + [math.inf]:
                share = 1.0 if math.isinf(le) else 1 - min(1.0, 0.5 * (1e-7 / le) ** 1.3 * tail if le >= 1e-7 else 1)
                label = "+Inf" if math.isinf(le) else repr(le)
                f.writelines(f'jitterd_sampler_gap_seconds_bucket{{instance="{instance(h)}",job="jitterd",'
                             f'cpu="{c}",le="{label}"}} {round(share * 6e7 * counted(t))} {t}\n' for t in times)
        for name, per in (("sampled_seconds", 59.4), ("interruptions", 6000), ("stolen_seconds", 0.03)):
            f.write(f"# TYPE jitterd_sampler_{name} counter\n")
            for (h, c) in tails:
                f.writelines(f'jitterd_sampler_{name}_total{{instance="{instance(h)}",job="jitterd",cpu="{c}"}} '
                             f'{per * counted(t):.6g} {t}\n' for t in times)
        if application:
            write_application(f, hosts, cpus, times, counted)
        f.write("# EOF\n")


class StatsProxy(prometheus_harness.Answering):
    """Passes GETs to Prometheus with stats=all added to queries; sums the samples each loaded."""
    upstream = None
    samples = 0
    peak = 0
    lock = threading.Lock()

    def do_GET(self):
        path = self.path
        if path.startswith("/api/v1/query"):
            path += ("&" if "?" in path else "?") + "stats=all"
        connection = http.client.HTTPConnection(self.upstream, timeout=600)
        connection.request("GET", path)
        answer = connection.getresponse()
        body = answer.read()
        if path.startswith("/api/v1/query"):
            try:
                stats = json.loads(body)["data"]["stats"]["samples"]
                with StatsProxy.lock:
                    StatsProxy.samples += stats["totalQueryableSamples"]
                    StatsProxy.peak = max(StatsProxy.peak, stats["peakSamples"])
            except (KeyError, ValueError, TypeError):
                pass
        self.answer(answer.status, body)


def run_fleet(binary, url, start, end):
    command = ["/usr/bin/time", "-f", "%e %M %U %S", binary, "fleet", "--prometheus", url, "--range", f"{start}/{end}",
               "--by", "kernel", "--format", "json"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    if result.returncode != 0:
        raise SystemExit(f"fleet exited {result.returncode}: {result.stderr[-2000:]}")
    wall, rss, user, system = result.stderr.strip().splitlines()[-1].split()
    answer = json.loads(result.stdout)
    return float(wall), int(rss) / 1024, float(user) + float(system), answer


def prometheus_cpu(url):
    """Prometheus's own process_cpu_seconds_total."""
    with urllib.request.urlopen(url + "/metrics", timeout=30) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith("process_cpu_seconds_total "):
                return float(line.split()[1])
    return float("nan")


def measure(binary, prometheus):
    """(wall s, peak RSS MiB, samples loaded, peak samples, queries, hosts, read in full, fleet's CPU s,
    Prometheus's CPU s) of one fleet run."""
    before = prometheus_cpu(prometheus["url"])
    wall, rss, cpu, answer = run_fleet(binary, prometheus["url"], *prometheus["range"])
    server_cpu = prometheus_cpu(prometheus["url"]) - before
    StatsProxy.samples = StatsProxy.peak = 0
    run_fleet(binary, prometheus["proxy"], *prometheus["range"])
    reads = answer.get("reads", {})
    return (wall, rss, StatsProxy.samples, StatsProxy.peak, answer["queries"],
            sum(c["hosts"] for c in answer["cohorts"]), len(reads.get("in_full", [])) if reads else None, cpu,
            server_cpu)


def serve(times, fingerprint_times, probe_times, hosts, cpus, started, workdir, body, application=False):
    """Builds the TSDB, starts Prometheus and the proxy, and runs body(prometheus dict)."""
    began = time.monotonic()
    size = prometheus_harness.build_tsdb(workdir, lambda path: write_fleet(
        path, hosts, cpus, times, fingerprint_times, probe_times, started, application), timeout=None)
    print(f"  TSDB: {size / 2**20:.0f} MiB of OpenMetrics, built in {time.monotonic() - began:.0f} s", flush=True)
    prometheus = prometheus_harness.serving_tsdb(workdir, timeout=300)
    StatsProxy.upstream = f"127.0.0.1:{prometheus.port}"
    proxy = prometheus_harness.serving(StatsProxy)
    try:
        return body({"url": prometheus.url(""), "proxy": f"http://127.0.0.1:{proxy.server_address[1]}",
                     "range": (times[0], times[-1])})
    finally:
        proxy.shutdown()
        prometheus.stop()


def row(label, m):
    wall, rss, samples, peak, queries, hosts, in_full, cpu, server_cpu = m
    return (f"  {label:<22} {wall:7.2f} s wall, CPU {cpu:6.2f} s fleet + {server_cpu:6.2f} s Prometheus, "
            f"{rss:5.0f} MiB, {samples:>11,} samples (peak {peak:>9,}) {queries:>3} queries, {hosts} hosts"
            + ("" if in_full is None else f", {in_full} read in full"))


def densities(args, workdir):
    results = {}
    for scrapes in DENSITIES:
        end = (int(time.time()) - 7200) // 60 * 60
        times = [end - 60 * (scrapes - 1 - i) for i in range(scrapes)]
        print(f"{args.hosts} hosts x {args.cpus} CPUs, {scrapes} scrapes a series 60 s apart:", flush=True)

        def body(prometheus, scrapes=scrapes):
            for name, binary in (("ends", args.jitterd), ("every scrape (--old)", args.old)):
                if binary:
                    results[(scrapes, name)] = measure(binary, prometheus)
                    print(row(f"{name}", results[(scrapes, name)]), flush=True)

        serve(times, times, times, args.hosts, args.cpus, times[0] - 600, workdir, body, args.application)
    # Below 100 scrapes a series the members and the restarts are read at every scrape (fewer than
    # the 100 instants): the cost grows up to 100 and must not beyond.
    for low in (10, 100):
        print(f"ratios, 1,000 scrapes over {low} (1.0: flat):")
        for name in ("ends", "every scrape (--old)"):
            if (low, name) in results:
                a, b = results[(low, name)], results[(1000, name)]
                print(f"  {name:<22} wall {b[0] / a[0]:.2f}x, RSS {b[1] / a[1]:.2f}x, "
                      f"samples {b[2] / max(1, a[2]):.2f}x, queries {b[4] / max(1, a[4]):.2f}x, "
                      f"CPU (fleet + Prometheus) {(b[7] + b[8]) / max(0.01, a[7] + a[8]):.2f}x")


def large(args, workdir):
    interval, span = 15, 86400
    end = (int(time.time()) - 7200) // 864 * 864
    start = end - span
    near = [t for t in range(start - 45, start + 1, interval)] + [t for t in range(end - 45, end + 1, interval)]
    instants = [start + 864 * i for i in range(101)]
    every = list(range(start, end + 1, interval))
    print(f"{args.hosts} hosts x {args.cpus} CPUs, 24 h at {interval} s ({len(every)} scrapes a series; the TSDB "
          f"holds {len(near)} scrapes of each counter near the ends, the fingerprint and start time at "
          f"{len(instants)} instants, three hosts' fingerprints at every scrape):", flush=True)
    # The counters count from 10 minutes before START; the ends' scrapes alone are written.
    serve(near, instants, every, args.hosts, args.cpus, start - 600, workdir,
          lambda prometheus: print(row("ends", measure(args.jitterd, prometheus)), flush=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--old", help="a jitterd that reads every scrape (before the ends), for the side by side")
    parser.add_argument("--mode", choices=("densities", "large", "both"), default="both")
    parser.add_argument("--hosts", type=int, default=None, help="densities: 20; large: 1000")
    parser.add_argument("--cpus", type=int, default=None, help="densities: 4; large: 16")
    parser.add_argument("--application", action="store_true",
                        help="densities: each host also watches as many CPUs as it samples and runs a loop")
    args = parser.parse_args()
    if prometheus_harness.missing() or not shutil.which("promtool"):
        print("SKIP: prometheus or promtool not installed")
        return 77
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    for mode in (("densities", "large") if args.mode == "both" else (args.mode,)):
        hosts, cpus = args.hosts, args.cpus
        args.hosts = hosts or (20 if mode == "densities" else 1000)
        args.cpus = cpus or (4 if mode == "densities" else 16)
        with tempfile.TemporaryDirectory(prefix="jitterd-fleet-bench-") as workdir:
            (densities if mode == "densities" else large)(args, workdir)
        args.hosts, args.cpus = hosts, cpus
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
