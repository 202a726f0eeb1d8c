#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet end to end at 1,000 hosts x 16 sampled CPUs against a real Prometheus (Debian's,
on 127.0.0.1, its default query limits): OpenMetrics shaped like jitterd's scrape (the gap
histogram's 23 buckets and 3 counters per CPU, jitterd_fingerprint_info per host; 416,000
series), SCRAPES scrapes INTERVAL seconds apart, built into blocks by `promtool tsdb
create-blocks-from openmetrics`; then `jitterd fleet --by kernel` timed, with its peak RSS
(/usr/bin/time). Prints figures for docs/benchmarks.md; asserts only that fleet exits 0.

Usage: fleet_prometheus_bench.py --jitterd BINARY [--hosts 1000] [--cpus 16] [--scrapes 10] [--interval 60]
"""

import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import prometheus_harness  # noqa: E402

BOUNDS = [b * 10 ** e for e in range(-8, -1) for b in (1, 2.5, 5)] + [0.1]


def write_fleet(path, hosts, cpus, scrapes, start, interval):
    rng = random.Random(1)
    times = [start + interval * i for i in range(scrapes)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("# TYPE jitterd_fingerprint_info gauge\n")
        for h in range(hosts):
            labels = (f'instance="host-{h:04d}:9978",job="jitterd",kernel="{"6.6" if h % 2 else "6.1"}",'
                      f'cpu_model="{"X" if h % 3 else "Y"}",bios_version="1.4",hypervisor="no"')
            f.writelines(f"jitterd_fingerprint_info{{{labels}}} 1 {t}\n" for t in times)
        tails = {(h, c): math.exp(rng.gauss(0, 0.3)) for h in range(hosts) for c in range(cpus)}
        f.write("# TYPE jitterd_sampler_gap_seconds histogram\n")
        for (h, c), tail in tails.items():
            for le in BOUNDS + [math.inf]:
                share = 1.0 if math.isinf(le) else 1 - min(1.0, 0.5 * (1e-7 / le) ** 1.3 * tail if le >= 1e-7 else 1)
                label = "+Inf" if math.isinf(le) else repr(le)
                f.writelines(f'jitterd_sampler_gap_seconds_bucket{{instance="host-{h:04d}:9978",job="jitterd",'
                             f'cpu="{c}",le="{label}"}} {round(share * 6e7 * i)} {t}\n' for i, t in enumerate(times))
        for name, per in (("sampled_seconds", 59.4), ("interruptions", 6000), ("stolen_seconds", 0.03)):
            f.write(f"# TYPE jitterd_sampler_{name} counter\n")
            for (h, c) in tails:
                f.writelines(f'jitterd_sampler_{name}_total{{instance="host-{h:04d}:9978",job="jitterd",cpu="{c}"}} '
                             f'{per * i:.6g} {t}\n' for i, t in enumerate(times))
        f.write("# EOF\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--cpus", type=int, default=16)
    parser.add_argument("--scrapes", type=int, default=10)
    parser.add_argument("--interval", type=int, default=60, help="seconds between scrapes")
    args = parser.parse_args()
    if prometheus_harness.missing() or not shutil.which("promtool"):
        print("SKIP: prometheus or promtool not installed")
        return 77
    with tempfile.TemporaryDirectory(prefix="jitterd-fleet-bench-") as workdir:
        span = args.interval * (args.scrapes - 1)
        start = (int(time.time()) - 7200 - span) // 60 * 60
        source = os.path.join(workdir, "fleet.om")
        began = time.monotonic()
        write_fleet(source, args.hosts, args.cpus, args.scrapes, start, args.interval)
        size = os.path.getsize(source)
        print(f"openmetrics: {size / 2**20:.0f} MiB in {time.monotonic() - began:.0f} s")
        data = os.path.join(workdir, "data")
        os.makedirs(data)
        began = time.monotonic()
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", source, data], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"promtool: {time.monotonic() - began:.0f} s")
        os.remove(source)
        rules = os.path.join(workdir, "rules.yml")
        with open(rules, "w") as f:
            f.write("groups: []\n")
        prometheus = prometheus_harness.Prometheus(workdir, "127.0.0.1:1", "/metrics", rules,
                                                   args=["--storage.tsdb.retention.time=30d"])
        prometheus.start(timeout=120)
        try:
            command = ["/usr/bin/time", "-f", "%e s wall, %M KiB peak RSS", args.jitterd, "fleet", "--prometheus",
                       prometheus.url(""), "--range", f"{start}/{start + span}", "--by", "kernel",
                       "--format", "json"]
            result = subprocess.run(command, capture_output=True, text=True, timeout=600)
            print(f"jitterd fleet, {args.hosts} hosts x {args.cpus} CPUs, {args.scrapes} scrapes {args.interval} s "
                  f"apart ({span / 3600:.1f} h): exit "
                  f"{result.returncode}; {result.stderr.strip().splitlines()[-1]}")
            if result.returncode != 0:
                print(result.stderr)
                return 1
            print(result.stdout[result.stdout.find('"queries"'):].strip())
        finally:
            prometheus.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
