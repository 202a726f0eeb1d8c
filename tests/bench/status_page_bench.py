#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cost of the status page against the real jitterd: N sequential GETs of each path over one
keep-alive loopback connection, once the window is full and every probe has run; prints the median
and p99 of the request time (render + loopback transfer: the render dominates) and the size.
Prints figures for docs/benchmarks.md, asserts nothing about time.

Usage: python3 tests/bench/status_page_bench.py --jitterd build/jitterd [--requests 300]
           [--cpus auto]
"""

import argparse
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time

CONFIG = """\
cpus: "{cpus}"
sampler: {{duty_cycle: continuous, warmup: 200ms, window: 60s}}
web: {{listen_address: "127.0.0.1:0"}}
probes:
  c2c: {{allow_unsampled: true}}
"""


def main():  # noqa: C901 (one linear script)
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--cpus", default="auto")
    parser.add_argument("--settle", type=float, default=15, help="seconds to let the window fill")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="jitterd_status_bench_")
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(cpus=args.cpus))
    log_path = os.path.join(workdir, "jitterd.log")
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([args.jitterd, "run", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        address = None
        deadline = time.monotonic() + 30
        while address is None:
            found = re.findall(r"listening on (127\.0\.0\.1):(\d+)", open(log_path).read())
            if found:
                address = (found[0][0], int(found[0][1]))
            elif time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit(f"jitterd did not start: {open(log_path).read()[-2000:]}")
            else:
                time.sleep(0.1)
        connection = None

        def get(path):
            nonlocal connection
            if connection is None:  # idle connections close after 2 s: one per phase
                connection = http.client.HTTPConnection(*address, timeout=30)
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            assert response.status == 200, (path, response.status)
            return body

        deadline = time.monotonic() + 120
        while not all(p["ran"] for p in json.loads(get("/status.json"))["probes"]):
            if time.monotonic() > deadline:
                raise SystemExit("the probes did not all run within 120 s")
            connection.close()
            connection = None
            time.sleep(0.5)
        connection.close()
        connection = None
        time.sleep(args.settle)
        status = json.loads(get("/status.json"))
        print(f"sampled cpus: {[c['cpu'] for c in status['cpus']]}, window "
              f"{[round(c['window']['seconds'], 1) for c in status['cpus'] if c['window']]} s, "
              f"{len(status['probes'])} probes")
        print(f"{'path':<16}{'requests':>9}{'median ms':>11}{'p99 ms':>9}{'bytes':>9}")
        for path in ("/metrics", "/", "/status.json", "/baseline.json"):
            times = []
            size = 0
            for _ in range(args.requests):
                start = time.perf_counter()
                size = len(get(path))
                times.append((time.perf_counter() - start) * 1e3)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"{path:<16}{len(times):>9}{statistics.median(times):>11.2f}{p99:>9.2f}{size:>9}")
        connection.close()
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()


if __name__ == "__main__":
    main()
