#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet's false alarm rate on VictoriaMetrics (Debian 12's `victoria-metrics`, on
127.0.0.1): fleet_null_prometheus_test.py's 50 seeds of a fleet with no effect, the same hosts and
the same OpenMetrics, imported through VictoriaMetrics' Prometheus import API instead of
promtool's blocks. Required, as there: the share of seeds with any verdict at or below alpha
(0.05). MetricsQL's increase() does not extrapolate; the null rate must not depend on it.

Usage: fleet_null_victoriametrics_test.py --jitterd BINARY; exit 77 (skip) without
victoria-metrics.
"""

import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import fleet_null_prometheus_test as null  # noqa: E402
import harness  # noqa: E402
import victoria_harness  # noqa: E402


class FleetNullVictoriaMetrics(null.FleetNull):
    """The Prometheus test's case; only the server differs (its url() is all the case uses)."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-fleet-null-vm-")
        cls.start = (int(time.time()) - 7200) // null.fleet.INTERVAL * null.fleet.INTERVAL
        cls.prometheus = victoria_harness.VictoriaMetrics(cls._tmp.name).start()
        print(f"engine: {victoria_harness.version()}", file=sys.stderr, flush=True)
        hosts = [h for seed in range(1, null.SEEDS + 1) for h in null.null_fleet(seed)]
        cls.prometheus.import_openmetrics(null.fleet.openmetrics(hosts, cls.start, random.Random(3)),
                                          "jitterd_fingerprint_info", len(hosts))


if __name__ == "__main__":
    harness.main([victoria_harness.missing])
