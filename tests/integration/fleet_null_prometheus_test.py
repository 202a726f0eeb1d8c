#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet's false alarm rate through the whole pipeline: 50 seeds of a fleet with no effect,
each 40 hosts (20 on each of two kernels, two CPU models, host-to-host spread as in
fleet_prometheus_test.py, 2 sampled CPUs; the application's side too: 2 watched CPUs on every
host, a quarter of them by bpf, the loop rx0 on two thirds, each with host-to-host spread),
written as OpenMetrics shaped like jitterd's scrape into one real Prometheus's TSDB (promtool tsdb create-blocks-from openmetrics; the seeds told apart by
their instance names), then `jitterd fleet --by kernel --where 'instance=~"sNN-.*"'` per seed.
Required: the share of seeds with any verdict at or below alpha (0.05), every seed's A/A line
printed; the seeds are fixed (random.Random(seed)), so the test cannot flake.

Usage: fleet_null_prometheus_test.py --jitterd BINARY; exit 77 (skip) without prometheus or
promtool.
"""

import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import fleet_prometheus_test as fleet  # noqa: E402  (its OpenMetrics writer)
import harness  # noqa: E402
import prometheus_harness  # noqa: E402

SEEDS, HOSTS, ALPHA = 50, 40, 0.05


def null_fleet(seed):
    rng, app = random.Random(seed), random.Random(seed + 1000)
    out = []
    for h in range(HOSTS):
        model = "Intel Xeon X" if h % 3 else "Intel Xeon Y"
        out.append({"instance": f"s{seed:02d}-host-{h:02d}:9100",
                    "kernel": ["6.1.0-13-amd64" if h % 2 else "6.6.0-1-amd64"], "model": model,
                    "tail": math.exp(rng.gauss(0, 0.25)) * (1.5 if model.endswith("Y") else 1),
                    "rate": 100 * math.exp(rng.gauss(0, 0.2)), "bios": "1.4",
                    # The application's side, with host-to-host spread and no effect: every host
                    # watched (a quarter by bpf), the loop rx0 on two thirds of them.
                    "watch": "bpf" if h % 4 == 0 else "counts", "watch_rate": math.exp(app.gauss(0, 0.2)),
                    "loops": {"rx0": {"tail": math.exp(app.gauss(0, 0.25)), "rate": 50 * math.exp(app.gauss(0, 0.2))}}
                    if h % 3 != 2 else {}})
    return out


class FleetNull(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-fleet-null-")
        workdir = cls._tmp.name
        cls.start = (int(time.time()) - 7200) // fleet.INTERVAL * fleet.INTERVAL
        hosts = [h for seed in range(1, SEEDS + 1) for h in null_fleet(seed)]
        prometheus_harness.build_tsdb(workdir, lambda path: harness.write_file(
            path, fleet.openmetrics(hosts, cls.start, random.Random(3))))
        cls.prometheus = prometheus_harness.serving_tsdb(workdir)

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls._tmp.cleanup()

    def test_verdict_rate_at_or_below_alpha(self):
        range_ = f"{self.start}/{self.start + (fleet.SCRAPES - 1) * fleet.INTERVAL}"
        with_verdict = []
        for seed in range(1, SEEDS + 1):
            result = harness.run(["fleet", "--prometheus", self.prometheus.url(""), "--range", range_, "--by",
                                  "kernel", "--where", f'instance=~"s{seed:02d}-.*"', "--alpha", str(ALPHA),
                                  "--format", "json"], timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            answer = json.loads(result.stdout)
            self.assertEqual(sum(c["hosts"] for c in answer["cohorts"]), HOSTS)
            verdicts = [r for r in answer["comparisons"] if r["verdict"] in ("worse", "better")]
            figures = {r["figure"] for r in answer["comparisons"]}
            self.assertTrue([f for f in figures if f.startswith("watched ")], figures)  # the new rows are tested
            self.assertTrue([f for f in figures if f.startswith("loop rx0: ")], figures)
            print(f"seed {seed}: {len(verdicts)} verdicts; A/A {answer['aa']['with_verdict']} of "
                  f"{answer['aa']['splits']}", file=sys.stderr)
            if verdicts:
                with_verdict.append((seed, verdicts))
        self.assertLessEqual(len(with_verdict), ALPHA * SEEDS, with_verdict)


if __name__ == "__main__":
    harness.main([prometheus_harness.missing, lambda: None if shutil.which("promtool") else "promtool not installed"])
