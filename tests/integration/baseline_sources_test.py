#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The three sources of baselines give the same fingerprint for the same machine (one recipe,
report/baseline_recorder.h). One running jitterd (CPU 1 sampled, posture and clock probes on) is
scraped by a real Prometheus (Debian's `prometheus`, 1 s scrapes); then, from that one machine:
  - a `jitterd baseline` file,
  - the live download of the daemon's /baseline.json,
  - Prometheus history: `jitterd compare --prometheus` of two short ranges, whose HTML page lists
    every fingerprint and configuration field of each side,
and checks that the file and the download hold every field of the recipe with the same values,
and that history holds the same fields and values but the hostname and the isolation, which no
exported metric carries: it leaves them out and names them in configuration.fingerprint_unknown
(docs/DESIGN.md). The
file and the download have the same sub-window.

Usage: baseline_sources_test.py --jitterd BINARY; exit 77 (skip) without the prometheus package or
with fewer than 2 CPUs.
"""

import html.parser
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import harness  # noqa: E402
import prometheus_harness  # noqa: E402

RECIPE = ["kernel", "cmdline", "microcode", "bios_vendor", "bios_version", "bios_date", "cpu_model", "hypervisor",
          "hostname", "governor", "clocksource", "isolation"]
# The fields no exported metric carries, which history leaves out and names as unknown.
NOT_EXPORTED = ("hostname", "isolation")
RANGE = 3
CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 10us
  window: 10s
web:
  listen_address: "127.0.0.1:0"
probes:
  clock: {interval: 10s, calibration_window: 20ms, sleep_requests: [10us], sleep_samples: 5}
  posture: {interval: 10s}
  pacing: {enabled: false}
  kernel_cost: {enabled: false}
  pinning: {enabled: false}
  c2c: {enabled: false}
  attribution: {enabled: false}
"""


class FieldTables(html.parser.HTMLParser):
    """The (field, value) rows of each table on a page, by caption, in page order."""

    def __init__(self):
        super().__init__()
        self.tables = []  # [(caption, [[cell, ...], ...])]
        self._text = None
        self._row = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append(["", []])
        elif tag == "caption" or tag == "td":
            self._text = ""
        elif tag == "tr":
            self._row = []

    def handle_endtag(self, tag):
        if tag == "caption" and self.tables:
            self.tables[-1][0] = self._text
            self._text = None
        elif tag == "td" and self._row is not None:
            self._row.append(self._text)
            self._text = None
        elif tag == "tr" and self._row is not None:
            if self._row and self.tables:
                self.tables[-1][1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._text is not None:
            self._text += data

    def first(self, caption):
        return next(dict((row[0], row[1]) for row in rows if len(row) == 2)
                    for c, rows in self.tables if c == caption)


class BaselineSources(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd_baseline_sources_")
        cls.workdir = cls._tmp.name
        cls.daemon = harness.Daemon(cls.workdir, CONFIG)
        cls.daemon.start(timeout=20)
        rules = os.path.join(cls.workdir, "rules.yml")
        with open(rules, "w") as f:
            f.write("groups: []\n")
        cls.prometheus = prometheus_harness.Prometheus(cls.workdir, cls.daemon.address, cls.daemon.telemetry_path,
                                                       rules)
        try:
            cls.prometheus.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.daemon.kill()
        cls._tmp.cleanup()

    def last_scrape(self):
        return self.prometheus.newest_scrape(
            f'jitterd_sampler_sampled_seconds_total{{instance="{self.daemon.address}",cpu="1"}}')

    def history_fields(self):
        """The before side's fingerprint and configuration, as compare --prometheus shows them."""
        instance = f'instance="{self.daemon.address}"'
        for info in ("jitterd_fingerprint_info", "jitterd_clocksource_current_info"):
            harness.wait_until(lambda: self.prometheus.values(f"{info}{{{instance}}}"), 40, interval=0.2,
                               what=f"{info} in Prometheus")
        start = harness.wait_until(self.last_scrape, 30, interval=0.2, what="a scrape of jitterd ingested")
        middle, end = start + RANGE, start + 2 * RANGE
        harness.wait_until(lambda: self.last_scrape() >= end, 2 * RANGE + 30, interval=0.2,
                           what=f"a scrape at or after {end:.3f} ingested")
        result = harness.run(["compare", "--prometheus", self.prometheus.url(""), "--instance", self.daemon.address,
                              "--before", f"{start:.3f}/{middle:.3f}", "--after", f"{middle:.3f}/{end:.3f}",
                              "--sub-window", "1s", "--format", "html"], timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        tables = FieldTables()
        tables.feed(result.stdout)
        return (tables.first("fingerprint: what the machine was"),
                tables.first("configuration: how jitterd measured"))

    def test_three_sources_one_fingerprint(self):
        # The live download once the posture probe has run (its typed reading is the fingerprint).
        def live():
            status, body = harness.http_get(self.daemon.url("/baseline.json"))
            self.assertEqual(status, 200)
            document = json.loads(body)
            return document if "fingerprint_unknown" not in document["configuration"] else None
        download = harness.wait_until(live, 30, interval=0.2, what="a download with the posture probe's fingerprint")

        path = os.path.join(self.workdir, "file.json")
        result = harness.run(["baseline", "--config", self.daemon.config_path, "--duration", "1s", "-o", path],
                             timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as f:
            document = json.load(f)

        history, history_configuration = self.history_fields()

        self.assertEqual(list(document["fingerprint"]), RECIPE)
        self.assertNotIn("fingerprint_unknown", document["configuration"])
        self.assertEqual(download["fingerprint"], document["fingerprint"])
        self.assertEqual(download["sub_window_seconds"], document["sub_window_seconds"])
        self.assertEqual(download["configuration"]["sub_window"], document["configuration"]["sub_window"])
        expected = {k: v for k, v in document["fingerprint"].items() if k not in NOT_EXPORTED}
        self.assertEqual(history, expected)
        unknown = history_configuration.get("fingerprint_unknown", "")
        self.assertTrue(unknown.startswith(", ".join(NOT_EXPORTED) + ": "), history_configuration)
        self.assertEqual(document["fingerprint"]["hypervisor"], "yes" if harness.under_hypervisor() else "no")


if __name__ == "__main__":
    harness.main([harness.require_two_cpus, prometheus_harness.missing])
