#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The real daemon's /metrics: valid for promtool, every documented series present for the first
sampled CPU, histograms and summaries consistent, counters moving, the status page, a custom
telemetry path, and a clear failure when the port is taken.

Usage: metrics_test.py --jitterd BINARY [unittest args]; exit 77 (skip) without promtool or
with fewer than 2 CPUs.
"""

import math
import os
import re
import shutil
import socket
import subprocess
import time
import unittest

import harness
from harness import select

GLOBAL_METRICS = [
    "jitterd_build_info",
    "jitterd_config_last_reload_successful",
    "jitterd_config_last_reload_success_timestamp_seconds",
    "jitterd_tick_info",
    "jitterd_tick_frequency_hertz",
    "jitterd_tick_frequency_uncertainty_ratio",
    "jitterd_tick_resolution_seconds",
    "jitterd_sampler_window_seconds",
]

PER_CPU_METRICS = [
    "jitterd_sampler_gap_seconds_bucket",
    "jitterd_sampler_gap_seconds_sum",
    "jitterd_sampler_gap_seconds_count",
    "jitterd_sampler_interruptions_total",
    "jitterd_sampler_stolen_seconds_total",
    "jitterd_sampler_sampled_seconds_total",
    "jitterd_sampler_window_gap_seconds",
    "jitterd_sampler_window_gap_seconds_sum",
    "jitterd_sampler_window_gap_seconds_count",
    "jitterd_sampler_window_max_gap_seconds",
    "jitterd_sampler_loop_floor_seconds",
    "jitterd_sampler_interruption_threshold_seconds",
    "jitterd_sampler_duty_cycle_ratio",
    "jitterd_sampler_pinned",
    "jitterd_sampler_memory_locked",
    "jitterd_sampler_realtime_priority",
    "jitterd_sampler_context_switches_total",
    "jitterd_sampler_up",
]

QUANTILES = ["0.5", "0.99", "0.999", "0.9999"]

PROBES = ["posture", "attribution", "clock", "kernel_cost", "pinning", "pacing", "c2c"]
PROBE_METRICS = [
    "jitterd_probe_duration_seconds",
    "jitterd_probe_last_run_timestamp_seconds",
    "jitterd_clock_frequency_hertz",
    "jitterd_clock_frequency_disagreement_ratio",
    "jitterd_clocksource_current_info",
    "jitterd_clocksource_available_info",
    "jitterd_clock_sleep_overshoot_seconds",
    "jitterd_clock_sleep_overshoot_seconds_count",
    "jitterd_kernel_cost_seconds",
    "jitterd_kernel_cost_seconds_count",
    "jitterd_pinning_gap_seconds",
    "jitterd_pinning_last_window_migrations",
    "jitterd_pacing_achieved_ratio",
    "jitterd_pacing_max_lateness_seconds",
    "jitterd_pacing_lateness_seconds_bucket",
    "jitterd_pacing_unthrottled_sends_per_second",
    "jitterd_c2c_planned_pairs",
    "jitterd_c2c_measured_pairs",
    "jitterd_c2c_last_run_attempted_pairs",
    "jitterd_posture_cpu_online",
    "jitterd_posture_cpu_isolated",
    "jitterd_posture_cpu_device_irqs",
    "jitterd_posture_warnings",
    "jitterd_posture_unreadable_files",
    "jitterd_fingerprint_info",
    "jitterd_fingerprint_changes_total",
    "jitterd_fingerprint_since_timestamp_seconds",
    "jitterd_attribution_method_info",
]

# Counters that grow whenever the sampler spins; with a 200 ms burst period two scrapes a
# little over one period apart always see growth.
GROWING_COUNTERS = [
    "jitterd_sampler_gap_seconds_count",
    "jitterd_sampler_gap_seconds_sum",
    "jitterd_sampler_sampled_seconds_total",
    "jitterd_sampler_window_gap_seconds_count",
]
# Counters that may stand still on a quiet CPU but must never go down.
MONOTONIC_COUNTERS = GROWING_COUNTERS + [
    "jitterd_sampler_interruptions_total",
    "jitterd_sampler_stolen_seconds_total",
    "jitterd_sampler_context_switches_total",
]


def promtool_missing():
    if shutil.which("promtool") is None:
        return "promtool not found (install the prometheus package)"
    return None


class ScrapeTest(unittest.TestCase):
    """One daemon shared by the read-only checks of a scrape."""

    @classmethod
    def setUpClass(cls):
        cls.case = harness.DaemonTestCase()
        cls.case.setUp()
        cls.addClassCleanup(cls.case.doCleanups)
        cls.daemon = cls.case.daemon()
        cls.cpu = str(cls.daemon.sampled_cpus()[0])
        # The window quantiles appear once the first window snapshots exist (~2 s).
        harness.wait_until(
            lambda: len(select(cls.daemon.scrape(), "jitterd_sampler_window_gap_seconds",
                               cpu=cls.cpu)) == len(QUANTILES),
            timeout=8, interval=0.2, what=f"window quantiles of cpu {cls.cpu}")
        # Every probe has run once (the first round starts 2 s after start-up), so the scrape
        # that promtool checks holds the probe families too.
        harness.wait_until(
            lambda: len(select(cls.daemon.scrape(), "jitterd_probe_success")) == len(PROBES),
            timeout=20, interval=0.2, what="a first run of every probe")

    def test_promtool_accepts_the_scrape(self):
        text = self.daemon.scrape_text()
        result = subprocess.run(["promtool", "check", "metrics"], input=text,
                                capture_output=True, text=True, timeout=30)
        output = (result.stdout + result.stderr).strip()
        self.assertEqual((result.returncode, output), (0, ""),
                         f"promtool check metrics complained:\n{output}")

    def test_every_probe_ran_and_exported(self):
        samples = self.daemon.scrape()
        for probe in PROBES:
            with self.subTest(probe=probe):
                self.assertEqual(self.daemon.value("jitterd_probe_success", probe=probe), 1)
        for name in PROBE_METRICS:
            with self.subTest(metric=name):
                self.assertTrue(select(samples, name), f"{name} missing")
        # No send is early, but due times are rounded to the nearest unit of the schedule's clock,
        # so the span may be up to one unit short: the ratio may exceed 1 by one unit of a span of at
        # least half the shortest pacing duration allowed (10 ms), on the slower of the two clocks.
        (tick_hz,) = select(samples, "jitterd_tick_frequency_hertz").values()
        one_unit = 1 / (0.005 * min(1e9, tick_hz))
        for value in select(samples, "jitterd_pacing_achieved_ratio").values():
            self.assertTrue(0 < value <= 1.0 + one_unit, value)

    def test_c2c_pairs_the_sampled_cpu_with_the_housekeeping_one(self):
        samples = self.daemon.scrape()
        online = len(os.sched_getaffinity(0))
        if online < 2:
            self.skipTest("one CPU: nothing to pair")
        # allow_unsampled: the sampled CPU (through its paused sampler) with CPU 0 (a pinned thread).
        pair = {"cpu_a": "0", "cpu_b": self.cpu}
        median = select(samples, "jitterd_c2c_latency_seconds", quantile="0.5", **pair)
        self.assertEqual(len(median), 1, median)
        value = next(iter(median.values()))
        self.assertTrue(1e-9 < value < 100e-6, f"one-way median {value} s")
        quantile = {dict(k)["quantile"]: v for k, v in
                    select(samples, "jitterd_c2c_latency_seconds", **pair).items()}
        self.assertEqual(set(quantile), {"0", "0.1", "0.5", "0.9"})
        self.assertTrue(quantile["0"] <= quantile["0.1"] <= value <= quantile["0.9"], quantile)
        count = next(iter(select(samples, "jitterd_c2c_latency_seconds_count", **pair).values()))
        mean = next(iter(select(samples, "jitterd_c2c_latency_seconds_sum", **pair).values())) / count
        self.assertTrue(quantile["0"] <= mean, (quantile, mean))
        self.assertEqual(len(select(samples, "jitterd_c2c_pair_info", **pair)), 1)
        self.assertAlmostEqual(
            next(iter(select(samples, "jitterd_c2c_pair_last_measured_timestamp_seconds",
                             **pair).values())),
            time.time(), delta=120)
        self.assertEqual(self.daemon.value("jitterd_c2c_pair_failures_total", **pair), 0)
        self.assertGreaterEqual(self.daemon.value("jitterd_c2c_measured_pairs"), 1)

    def test_attribution_explains_the_sampled_cpu(self):
        # The first run is the baseline (its series are exported at 0 from there, the SMI and steal
        # counts read); the second (10 s later) closes the first window, whose interrupts (the
        # tick's at least) are counted.
        def window_closed():
            scraped = self.daemon.scrape()
            return scraped if sum(select(scraped, "jitterd_attribution_events_total", cpu=self.cpu).values()) else None

        samples = harness.wait_until(window_closed, timeout=25, interval=0.5, what="a first attribution window")
        methods = select(samples, "jitterd_attribution_method_info")
        self.assertEqual(len(methods), 1, methods)
        method = dict(next(iter(methods)))["method"]
        self.assertIn(method, ("bpf", "tracepoints", "window_deltas"))
        by_cause = {dict(k)["cause"]: v for k, v in
                    select(samples, "jitterd_attribution_interruptions_total", cpu=self.cpu).items()}
        self.assertIn("unexplained", by_cause)
        self.assertIn("timer", by_cause)
        # What the kernel explains: not the gaps below it (smi, hypervisor: no kernel event there).
        explained = sum(v for c, v in by_cause.items() if c not in ("unexplained", "not_kept", "smi", "hypervisor"))
        self.assertEqual(explained,
                         self.daemon.value("jitterd_attribution_coincident_interruptions_total", cpu=self.cpu))
        # The window's interrupts on the sampled CPU are counted by category, every category
        # exported; by source only when probes.attribution.source_detail asks for it.
        events = select(samples, "jitterd_attribution_events_total", cpu=self.cpu)
        self.assertEqual(len(events), 10, events)
        self.assertGreater(sum(events.values()), 0, "no interrupt counted on the sampled cpu")
        self.assertFalse(select(samples, "jitterd_attribution_source_events_total"))

    def test_every_documented_metric_is_present(self):
        samples = self.daemon.scrape()
        names = {name for name, _ in samples}
        for name in GLOBAL_METRICS:
            self.assertIn(name, names)
        for name in PER_CPU_METRICS:
            self.assertTrue(select(samples, name, cpu=self.cpu), f"{name}{{cpu=\"{self.cpu}\"}}")
        for quantile in QUANTILES:
            self.assertTrue(select(samples, "jitterd_sampler_window_gap_seconds",
                                   cpu=self.cpu, quantile=quantile), f"quantile {quantile}")
        for kind in ("voluntary", "involuntary"):
            self.assertTrue(select(samples, "jitterd_sampler_context_switches_total",
                                   cpu=self.cpu, kind=kind), f"context switches {kind}")
        frequency = select(samples, "jitterd_tick_frequency_hertz")
        self.assertEqual(len(frequency), 1, frequency)
        self.assertEqual(next(iter(frequency)), ())
        info = select(samples, "jitterd_tick_info")
        self.assertEqual(len(info), 1, info)
        self.assertEqual({k for k, _ in next(iter(info))}, {"method", "frequency_source"})
        self.assertEqual(next(iter(info.values())), 1)

    def test_every_scraped_family_is_in_the_metrics_reference(self):
        # docs/metrics.md names every family a real scrape holds (first column of its tables).
        reference = open(os.path.join(harness.SOURCE_DIR, "docs", "metrics.md"), encoding="utf-8").read()
        documented = set()
        for line in reference.splitlines():
            if line.startswith("| `jitterd_"):
                documented |= set(re.findall(r"`(jitterd_[a-z0-9_]+)`", line.split("|")[1]))
        families = set(re.findall(r"^# TYPE (\S+)", self.daemon.scrape_text(), re.M))
        self.assertTrue(families)
        self.assertEqual(sorted(families - documented), [],
                         "families of a real scrape that docs/metrics.md does not document")

    def test_values_are_sane(self):
        samples = self.daemon.scrape()

        def one(name, **pairs):
            found = select(samples, name, **pairs)
            self.assertEqual(len(found), 1, f"{name}{pairs}: {found}")
            return next(iter(found.values()))

        self.assertEqual(one("jitterd_build_info"), 1)
        self.assertEqual(one("jitterd_config_last_reload_successful"), 1)
        self.assertAlmostEqual(one("jitterd_config_last_reload_success_timestamp_seconds"),
                               time.time(), delta=120)
        hertz = one("jitterd_tick_frequency_hertz")
        self.assertGreater(hertz, 1e6)
        self.assertAlmostEqual(one("jitterd_tick_resolution_seconds") * hertz, 1.0, places=6)
        self.assertGreaterEqual(one("jitterd_tick_frequency_uncertainty_ratio"), 0)
        self.assertLess(one("jitterd_tick_frequency_uncertainty_ratio"), 0.01)
        self.assertEqual(one("jitterd_sampler_window_seconds"), 10)
        cpu = self.cpu
        self.assertEqual(one("jitterd_sampler_up", cpu=cpu), 1)
        self.assertEqual(one("jitterd_sampler_pinned", cpu=cpu), 1)
        self.assertIn(one("jitterd_sampler_memory_locked", cpu=cpu), (0, 1))
        self.assertEqual(one("jitterd_sampler_realtime_priority", cpu=cpu), 0)
        self.assertAlmostEqual(one("jitterd_sampler_duty_cycle_ratio", cpu=cpu), 0.1, places=6)
        self.assertAlmostEqual(one("jitterd_sampler_interruption_threshold_seconds", cpu=cpu),
                               20e-6, delta=20e-6 * 0.01)
        floor = one("jitterd_sampler_loop_floor_seconds", cpu=cpu)
        self.assertGreater(floor, 0)
        self.assertLess(floor, 20e-6)
        stolen = one("jitterd_sampler_stolen_seconds_total", cpu=cpu)
        sampled = one("jitterd_sampler_sampled_seconds_total", cpu=cpu)
        self.assertGreater(sampled, 0)
        self.assertLessEqual(stolen, sampled)
        self.assertAlmostEqual(one("jitterd_sampler_gap_seconds_sum", cpu=cpu), sampled,
                               delta=sampled * 1e-6 + 1e-3)

    def test_histogram_is_consistent(self):
        samples = self.daemon.scrape()
        buckets = select(samples, "jitterd_sampler_gap_seconds_bucket", cpu=self.cpu)
        by_le = sorted((float(dict(l)["le"]), v) for l, v in buckets.items())
        self.assertGreaterEqual(len(by_le), 2)
        self.assertEqual(by_le[-1][0], math.inf, "no +Inf bucket")
        counts = [v for _, v in by_le]
        self.assertEqual(counts, sorted(counts), f"buckets decrease: {by_le}")
        count = select(samples, "jitterd_sampler_gap_seconds_count", cpu=self.cpu)
        self.assertEqual(list(count.values()), [by_le[-1][1]], "+Inf bucket != _count")
        self.assertGreater(by_le[-1][1], 0)

    def test_quantiles_are_ordered_and_at_most_the_window_max(self):
        samples = self.daemon.scrape()
        maximum = select(samples, "jitterd_sampler_window_max_gap_seconds", cpu=self.cpu)
        self.assertEqual(len(maximum), 1, maximum)
        maximum = next(iter(maximum.values()))
        values = []
        for quantile in QUANTILES:
            found = select(samples, "jitterd_sampler_window_gap_seconds", cpu=self.cpu,
                           quantile=quantile)
            self.assertEqual(len(found), 1, f"quantile {quantile}: {found}")
            values.append(next(iter(found.values())))
        self.assertGreater(values[0], 0)
        self.assertEqual(values, sorted(values), f"quantiles {QUANTILES} not ordered: {values}")
        self.assertLessEqual(values[-1], maximum, f"p99.99 {values[-1]} > max {maximum}")

    def test_counters_grow_between_scrapes(self):
        first = self.daemon.scrape()
        time.sleep(0.5)  # more than two burst periods

        def grown():
            second = self.daemon.scrape()
            return second if all(
                sum(select(second, n, cpu=self.cpu).values())
                > sum(select(first, n, cpu=self.cpu).values()) for n in GROWING_COUNTERS) else None
        second = harness.wait_until(grown, timeout=5, interval=0.2, what="counters to grow")
        for name in MONOTONIC_COUNTERS:
            before = select(first, name, cpu=self.cpu)
            after = select(second, name, cpu=self.cpu)
            self.assertEqual(before.keys(), after.keys(), name)
            for key, value in before.items():
                self.assertGreaterEqual(after[key], value, f"{name}{key} went down")

    def test_landing_page_links_the_telemetry_path(self):
        status, body = harness.http_get(self.daemon.url("/"))
        self.assertEqual(status, 200)
        self.assertIn('href="/metrics"', body)


class WebTest(harness.DaemonTestCase):
    def test_custom_telemetry_path(self):
        daemon = self.daemon(args=["--web.telemetry-path", "/custom"])
        self.assertEqual(daemon.telemetry_path, "/custom")
        samples = daemon.scrape("/custom")
        self.assertIn(("jitterd_build_info", ()), {(n, ()) for n, _ in samples})
        status, body = harness.http_get(daemon.url("/"))
        self.assertEqual(status, 200)
        self.assertIn('href="/custom"', body)
        status, _ = harness.http_get(daemon.url("/metrics"))
        self.assertEqual(status, 404, "/metrics should not serve when the path is /custom")
        self.stop_ok(daemon)

    def test_port_in_use_is_a_clear_error(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            address = f"127.0.0.1:{taken.getsockname()[1]}"
            daemon = self.daemon(args=["--web.listen-address", address], start=False)
            daemon.start(wait_listening=False)
            try:
                code = daemon.process.wait(15)
            except subprocess.TimeoutExpired:
                self.fail(f"jitterd still running 15 s after failing to bind {address}; "
                          f"log:\n{daemon.log()}")
        self.assertNotEqual(code, 0)
        self.assertIn(f"cannot listen on {address}", daemon.log())


if __name__ == "__main__":
    harness.main([promtool_missing, harness.require_two_cpus])
