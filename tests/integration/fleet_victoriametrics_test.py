#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet against a real VictoriaMetrics (Debian 12's `victoria-metrics`, single-node, on
127.0.0.1): the ground truth of fleet_prometheus_test.py, every one of its cases, on the other
engine. The same synthetic fleet (the same seeds: the effect on kernel 6.6, the three planted
drifted hosts, the host that changes kernel, the lone 7.0 host) goes in through VictoriaMetrics'
Prometheus import API instead of promtool's blocks, and fleet asks it through the same
Prometheus-compatible query API. What differs between the engines, and is checked here:

  - MetricsQL's increase() does not extrapolate to the range's ends, Prometheus' does: the
    verdicts and the planted hosts must not depend on it;
  - its refusal of a query too big is worded differently ("the number of matching timeseries
    exceeds N" for -search.maxUniqueTimeseries): the server runs with a limit that refuses the
    first batch (every host's bucket series, 9,292) but not half of it, and fleet must halve the
    batch as it does for Prometheus' "too many samples".

Usage: fleet_victoriametrics_test.py --jitterd BINARY; exit 77 (skip) without victoria-metrics.
"""

import argparse
import os
import random
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import fleet_prometheus_test as ground_truth  # noqa: E402
import harness  # noqa: E402
import victoria_harness  # noqa: E402

# The bucket query of all 202 hosts selects 9,292 series; one of half the hosts, about 4,650.
MAX_SERIES = 5000


class FleetVictoriaMetrics(ground_truth.FleetPrometheus):
    """fleet_prometheus_test's cases; only the server they ask differs (self.prometheus is a
    VictoriaMetrics here: the cases use nothing but its url())."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-fleet-vm-")
        cls.start = (int(time.time()) - 7200) // ground_truth.INTERVAL * ground_truth.INTERVAL
        cls.range = f"{cls.start}/{cls.start + (ground_truth.SCRAPES - 1) * ground_truth.INTERVAL}"
        cls.prometheus = victoria_harness.VictoriaMetrics(
            cls._tmp.name, args=[f"-search.maxUniqueTimeseries={MAX_SERIES}"]).start()
        print(f"engine: {victoria_harness.version()}", flush=True)
        fleet = ground_truth.hosts()
        hosts = sum(len(h["kernel"]) for h in fleet)  # a host that changed kernel has two series
        cls.prometheus.import_openmetrics(ground_truth.openmetrics(fleet, cls.start, random.Random(9)),
                                          "jitterd_fingerprint_info", hosts)
        cls.answer = cls.fleet("--format", "json")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    args, rest = parser.parse_known_args()
    ground_truth.JITTERD = harness.JITTERD = args.jitterd
    missing = victoria_harness.missing()
    if missing:
        print(f"SKIP: {missing}")
        return 77
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
