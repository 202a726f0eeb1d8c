#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End to end: a real Prometheus (1 s scrape and evaluation) scraping the real jitterd, with the
shipped grafana/prometheus/jitterd.rules.yml loaded.

Once every probe has run (the clock probe twice) and the rates have two samples:
  - every rule is healthy, and every recording rule (with each of its label sets) has series;
  - every dashboard variable resolves to values, as Grafana would query it;
  - every query of every panel and annotation of every dashboard, with the variables
    substituted as Grafana would ($__rate_interval: 15 s, what Grafana computes at a 1 s scrape
    interval when the panel's interval is 14 s, a few hours' range; at least 4 scrapes, and long
    enough to hold one 10 s attribution window), returns `success` from /api/v1/query_range, and every panel
    has a non-empty result except those listed in ALLOWED_EMPTY, each with its reason.

With an application loop (the poll_loop example on cpu 0) read by the daemon's loops: section,
so that the loops' panels and rules have data too.
Usage: prometheus_e2e_test.py --jitterd BINARY --poll-loop BINARY [unittest args]; exit 77 (skip) without the
prometheus package or with fewer than 2 CPUs.
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboard_lint  # noqa: E402
import grafana_common as common  # noqa: E402
import prometheus_harness  # noqa: E402
from grafana_common import harness  # noqa: E402

RATE_INTERVAL = "15s"
# The Prometheus is seconds old: a 1d offset would select nothing. The panels are the same for
# any offset; the shortest one with data here stands in for the user's choice.
COMPARE = "5s"


def _no_cpufreq(prometheus):
    if not os.path.isdir("/sys/devices/system/cpu/cpu1/cpufreq"):
        return "this machine has no cpufreq (a VM): governor and frequency are not exported"
    return None


def _no_cpuidle(prometheus):
    if not os.path.isdir("/sys/devices/system/cpu/cpu1/cpuidle"):
        return "this machine has no cpuidle states (a VM): no exit latency is exported"
    return None


def _no_device_irq_on_sampled_cpu(prometheus):
    # The daemon samples cpu 1 and nothing is isolated on a test machine.
    if not prometheus.values('jitterd_posture_cpu_device_irqs{cpu="1"} > 0'):
        return "no device IRQ's affinity includes the sampled CPU here, so none is named"
    return None


def _nothing_watched(prometheus):
    # Watching needs a CPU that is neither sampled nor housekeeping: this daemon samples cpu 1 of
    # a 2-CPU machine. The watch families are checked by the static test's watching daemon and by
    # tests/fidelity/watch_test.py.
    if not prometheus.values('jitterd_watch_method_info{job="jitterd"}'):
        return "this daemon watches no CPU (a watch: section needs a CPU neither sampled nor housekeeping)"
    return None


def _no_bpf(prometheus):
    reason = _nothing_watched(prometheus)
    if reason:
        return reason
    if not prometheus.values('jitterd_watch_method_info{job="jitterd",method="bpf"}'):
        return "the watch reads counts here (the BPF program did not load): the bpf panels have no series"
    return None


def _no_drifted_host(prometheus):
    # One daemon is one host: a class of one, never judged, so no host is drifted. The table's
    # query is checked on a planted fleet by grafana/prometheus/tests/jitterd_drift_test.yml.
    if not prometheus.values("instance:jitterd_drift_outside_class:bool == 1"):
        return "no host is outside its class (one daemon: a class of one host is not judged)"
    return None


# (dashboard uid, panel title) -> a function of the Prometheus returning the reason the panel
# may be empty on this machine, or None when it must have data here.
ALLOWED_EMPTY = {
    ("jitterd-posture", "Governors"): _no_cpufreq,
    ("jitterd-posture", "CPU frequency"): _no_cpufreq,
    ("jitterd-posture", "Idle state exit latency"): _no_cpuidle,
    ("jitterd-posture", "Device IRQs on sampled and isolated CPUs"): _no_device_irq_on_sampled_cpu,
    ("jitterd-host", "Time taken from the application"): _nothing_watched,
    ("jitterd-host", "Preemptions of the application/s"): _nothing_watched,
    ("jitterd-host", "Interrupts on watched CPUs"): _nothing_watched,
    ("jitterd-host", "Timer tick rate"): _nothing_watched,
    ("jitterd-host", "Watch method and the application"): _nothing_watched,
    ("jitterd-host", "Single interruptions on watched CPUs"): _no_bpf,
    ("jitterd-host", "Preemptions by who took the CPU/s"): _no_bpf,
    ("jitterd-host", "Tick-stop failures/s"): _no_bpf,
    ("jitterd-fleet", "Drifted hosts"): _no_drifted_host,
}


def prerequisites():
    return [harness.require_two_cpus, prometheus_harness.missing]


class PrometheusEndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-prom-")
        workdir = cls._tmp.name
        # An application loop on cpu 0 (cpu 1 is sampled): the loops' panels, rules and alerts.
        loops = os.path.join(workdir, "loops")
        os.mkdir(loops)
        cls.loop = common.ExampleLoop(loops, cpu=0)
        cls.daemon = harness.Daemon(workdir, common.full_config(loops=loops))
        cls.daemon.start(timeout=20)
        cls.prometheus = prometheus_harness.Prometheus(workdir, cls.daemon.address, cls.daemon.telemetry_path,
                                                       common.RULES_FILE)
        try:
            cls.prometheus.start()
            cls.wait_for_data()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.daemon.stop()
        cls.daemon.kill()
        cls.loop.stop()
        cls._tmp.cleanup()

    @classmethod
    def wait_for_data(cls):
        p = cls.prometheus

        def ready():
            # The configured probes of FULL_CONFIG (the loops probe runs too, every 500 ms).
            probes = p.values(f'count(jitterd_probe_last_run_timestamp_seconds{{job="jitterd", '
                              f'probe=~"{"|".join(common.PROBES)}"}})')
            drift = p.values('jitterd_clock_drift_ratio{job="jitterd"}')
            # Two scrapes after the first attribution window: every rate has two samples.
            rates = (p.values('instance_cpu:jitterd_sampler_interruptions:rate5m')
                     and p.values('instance_loop:jitterd_loop_stolen_share:ratio_rate5m')
                     and p.values('jitterd_loop_window_max_gap_seconds'))
            events = p.values('count_over_time(jitterd_attribution_events_total{job="jitterd"}[1m])')
            return (probes and float(probes[0]["value"][1]) == len(common.PROBES) and drift and rates
                    and events and min(float(e["value"][1]) for e in events) >= 16)
        harness.wait_until(ready, timeout=60, interval=0.5,
                           what="every probe's run, the clock probe's second run and 16 s of scrapes")

    def resolve_variables(self, board):
        """Values for every variable, as Grafana would query them: label_values(metric, label)
        through the series API; a multi-value becomes (a|b)."""
        values = {"__rate_interval": RATE_INTERVAL, "__interval": "1s", "__range": "1m",
                  "datasource": "prometheus", "compare": COMPARE}
        for name, metric, label, query in dashboard_lint.variable_queries(board):
            selector = dashboard_lint.substitute(metric, values)
            answer = self.prometheus.api("series", **{"match[]": selector})
            self.assertEqual(answer.get("status"), "success", f"{board['uid']} variable {name}: {answer}")
            found = sorted({s[label] for s in answer["data"] if label in s})
            self.assertTrue(found, f"{board['uid']} variable {name}: {query} found no values")
            # Regex-escaped, then escaped again for the PromQL string, as Grafana does.
            escaped = [re.escape(v).replace("\\", "\\\\") for v in found]
            values[name] = "(" + "|".join(escaped) + ")" if len(escaped) > 1 else escaped[0]
        return values

    def test_rules_healthy_and_recordings_have_series(self):
        groups = self.prometheus.api("rules")["data"]["groups"]
        rules = [r for g in groups for r in g["rules"]]
        self.assertEqual({g["file"] for g in groups}, {common.RULES_FILE})
        unhealthy = [f"{r['name']}: {r.get('health')} {r.get('lastError')}" for r in rules if r.get("health") != "ok"]
        self.assertEqual(unhealthy, [], "\n".join(unhealthy))
        recordings = [r for r in rules if r["type"] == "recording"]
        self.assertEqual({r["name"] for r in recordings}, common.recorded_names())
        empty = []
        for rule in recordings:
            matchers = ", ".join(f'{k}="{v}"' for k, v in sorted(rule.get("labels", {}).items()))
            selector = f"{rule['name']}{{{matchers}}}"
            if not self.prometheus.values(selector):
                # The drift rules' watched-CPU figures need a watch: section (nothing here to watch).
                reason = _nothing_watched(self.prometheus) if 'figure="watched_' in selector else None
                if reason:
                    print(f"allowed empty: {selector}: {reason}", file=sys.stderr)
                    continue
                empty.append(selector)
        self.assertEqual(empty, [], f"recording rules without series: {empty}")

    def test_every_panel_query_succeeds_with_data(self):
        failures, empty, allowed = [], [], []
        count = 0
        for name, board in common.dashboards().items():
            values = self.resolve_variables(board)
            for panel in dashboard_lint.panels_of(board):
                if panel.get("type") == "row":
                    continue
                has_data = False
                for target in panel["targets"]:
                    count += 1
                    expr = dashboard_lint.substitute(target["expr"], values)
                    answer = self.prometheus.query_range(expr, seconds=20, step=1)
                    if answer.get("status") != "success":
                        failures.append(f"{board['uid']} {panel['title']!r} {target['refId']}: {answer}\n  {expr}")
                    elif answer["data"]["result"]:
                        has_data = True
                if not has_data:
                    reason = ALLOWED_EMPTY.get((board["uid"], panel["title"]), lambda _: None)(self.prometheus)
                    (allowed if reason else empty).append(f"{board['uid']} {panel['title']!r}"
                                                          + (f": {reason}" if reason else ""))
            for annotation in board["annotations"]["list"]:
                if "expr" in annotation:
                    count += 1
                    answer = self.prometheus.query_range(dashboard_lint.substitute(annotation["expr"], values))
                    if answer.get("status") != "success":
                        failures.append(f"{board['uid']} annotation {annotation['name']!r}: {answer}")
        titles = {(b["uid"], p.get("title")) for b in common.dashboards().values() for p in dashboard_lint.panels_of(b)}
        self.assertEqual(set(ALLOWED_EMPTY) - titles, set(), "ALLOWED_EMPTY names panels that do not exist")
        print(f"\n{count} queries; empty here, as allowed:\n  " + "\n  ".join(allowed), file=sys.stderr)
        self.assertEqual(failures, [], "\n".join(failures))
        self.assertEqual(empty, [], "panels without data: " + ", ".join(empty))
        self.assertGreater(count, 100)


if __name__ == "__main__":
    common.take_poll_loop()
    harness.main(prerequisites())
