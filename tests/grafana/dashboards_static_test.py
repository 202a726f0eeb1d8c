#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Static check of grafana/dashboards/*.json against real scrapes of the real jitterd.

The metric names and types come from real scrapes, taken once every probe has run: the
daemon on this machine with every probe and detail option on, the daemon reading the
tuned-server fixture tree (--path.sysfs/--path.procfs), which has the cpufreq and idle-state
files a VM lacks, a daemon watching cpu 1, and a daemon reading an application loop (the
poll_loop example, for the jitterd_loop_ families). A dashboard fails on: invalid JSON, duplicate panel ids, not exactly one
datasource variable, a target or annotation not using it, a rate/increase without
$__rate_interval, a counter outside rate/increase, a panel without unit or description, a
metric name neither scrape exports nor the rules record, missing job/instance variables, a
heatmap that calculates. The second half feeds the checker broken copies of a real dashboard
and expects each defect to be reported, so the checker itself cannot pass vacuously.

Usage: dashboards_static_test.py --jitterd BINARY --poll-loop BINARY [unittest args]; exit 77 (skip) with fewer
than 2 CPUs.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dashboard_lint  # noqa: E402
import grafana_common as common  # noqa: E402
from grafana_common import harness  # noqa: E402

EXPOSITION = None  # built once in setUpModule


def scrape_when_ready(workdir, args=(), also=()):
    daemon = harness.Daemon(workdir, common.full_config(), args=args)
    daemon.start(timeout=20)
    try:
        return harness.wait_until(lambda: common.probes_have_run(daemon, also), timeout=60, interval=0.5,
                                  what=f"every probe's first run{' and ' + ', '.join(also) if also else ''}")
    finally:
        if daemon.stop() != 0:
            print(f"warning: jitterd did not stop cleanly; log:\n{daemon.log()}", file=sys.stderr)
        daemon.kill()


def scrape_watching(workdir):
    """A scrape of a daemon that watches cpu 1 (the jitterd_watch_ families), once its watch
    probe has read two windows."""
    daemon = harness.Daemon(workdir, common.WATCH_CONFIG)
    daemon.start(timeout=20)
    try:
        return harness.wait_until(
            lambda: (lambda t: t if "jitterd_watch_timer_interrupt_rate_hertz" in t else None)(daemon.scrape_text()),
            timeout=30, interval=0.5, what="the watch probe's first window")
    finally:
        if daemon.stop() != 0:
            print(f"warning: jitterd did not stop cleanly; log:\n{daemon.log()}", file=sys.stderr)
        daemon.kill()


def scrape_looping(workdir):
    """A scrape of a daemon that reads an application loop (the jitterd_loop_ families), once the
    loop has warmed up and its window has two readings."""
    directory = os.path.join(workdir, "loops")
    os.mkdir(directory)
    loop = common.ExampleLoop(directory)
    daemon = harness.Daemon(workdir, "cpus: []\nweb:\n  listen_address: \"127.0.0.1:0\"\n" +
                            common.LOOPS_SECTION.format(directory=directory) + harness.PROBES_OFF)
    try:
        daemon.start(timeout=20)
        wanted = ("jitterd_loop_window_max_gap_seconds", "jitterd_loop_floor_seconds")
        return harness.wait_until(
            lambda: (lambda t: t if all(n in t for n in wanted) else None)(daemon.scrape_text()),
            timeout=30, interval=0.5, what="the loop's window and floor")
    finally:
        if daemon.stop() != 0:
            print(f"warning: jitterd did not stop cleanly; log:\n{daemon.log()}", file=sys.stderr)
        daemon.kill()
        loop.stop()


def setUpModule():
    global EXPOSITION
    EXPOSITION = dashboard_lint.Exposition()
    with tempfile.TemporaryDirectory(prefix="jitterd-dash-") as here, \
            tempfile.TemporaryDirectory(prefix="jitterd-dash-fixture-") as fixture, \
            tempfile.TemporaryDirectory(prefix="jitterd-dash-watch-") as watching, \
            tempfile.TemporaryDirectory(prefix="jitterd-dash-loops-") as looping:
        # Both daemons at once: the second run of the clock probe (drift) takes 10 s.
        root = common.FIXTURE_ROOT
        results = {}
        import threading
        threads = [
            threading.Thread(target=lambda: results.__setitem__(
                "machine", scrape_when_ready(here, also=("jitterd_clock_drift_ratio",)))),
            threading.Thread(target=lambda: results.__setitem__(
                "fixture", scrape_when_ready(fixture, args=("--path.sysfs", os.path.join(root, "sys"),
                                                            "--path.procfs", os.path.join(root, "proc"))))),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Then the watching daemon: cpu 1 is sampled by the first one while it runs.
        results["watch"] = scrape_watching(watching)
        results["loops"] = scrape_looping(looping)
        if set(results) != {"machine", "fixture", "watch", "loops"}:
            raise AssertionError(f"a scrape failed (got {sorted(results)}); see the errors above")
        for text in results.values():
            EXPOSITION.add(text)


class CommittedDashboards(unittest.TestCase):
    def test_every_dashboard_passes(self):
        boards = common.dashboards()
        self.assertEqual(len(boards), 5, f"expected the 5 dashboards, found {sorted(boards)}")
        recorded = common.recorded_names()
        problems = []
        for name, board in boards.items():
            problems += dashboard_lint.lint(board, EXPOSITION, recorded)
        self.assertEqual(problems, [], "\n" + "\n".join(problems))

    def test_uids_unique_and_dashboards_linked(self):
        boards = common.dashboards().values()
        uids = [b["uid"] for b in boards]
        self.assertEqual(len(uids), len(set(uids)), uids)
        for board in boards:
            links = [l for l in board.get("links", []) if l.get("type") == "dashboards"]
            self.assertTrue(links, f"{board['title']}: no link to the other dashboards")
            for link in links:
                self.assertTrue(link.get("includeVars") and link.get("keepTime"), f"{board['title']}: {link}")
                for other in boards:
                    self.assertTrue(set(link["tags"]) <= set(other["tags"]),
                                    f"{board['title']}'s link tags {link['tags']} miss {other['title']}")

    def test_required_variables(self):
        for name, board in common.dashboards().items():
            names = [v["name"] for v in board["templating"]["list"]]
            per_cpu = any("$cpu" in expr for _, expr in dashboard_lint.queries(board))
            self.assertEqual("cpu" in names, per_cpu, f"{name}: a cpu variable exactly where panels use $cpu")

    def test_counters_are_known(self):
        # The checker is only as good as its counter list: it must hold the sampler's counters
        # and histogram buckets, from the scrape's TYPE lines.
        for name in ("jitterd_sampler_interruptions_total", "jitterd_sampler_gap_seconds_bucket",
                     "jitterd_attribution_events_total", "jitterd_kernel_cost_seconds_count"):
            self.assertIn(name, EXPOSITION.counters)
        self.assertNotIn("jitterd_sampler_window_max_gap_seconds", EXPOSITION.counters)


class Rules(unittest.TestCase):
    def test_rules_use_exported_names(self):
        sys.path.insert(0, os.path.join(common.GRAFANA_DIR, "mixin"))
        import config
        import rules
        recorded = set(rules.recording_names(config.CONFIG))
        self.assertEqual(recorded, common.recorded_names())
        problems = []
        for rule in rules.recording_rules(config.CONFIG) + rules.alerting_rules(config.CONFIG):
            name = rule.get("record") or rule.get("alert")
            for metric in dashboard_lint.metric_names(rule["expr"]):
                if metric not in EXPOSITION.names and metric not in recorded and \
                        metric not in dashboard_lint.PROMETHEUS_SERIES:
                    problems.append(f"{name}: {metric} is neither exported nor recorded")
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


class CheckerCatchesDefects(unittest.TestCase):
    """Each defect, planted in a copy of a real dashboard, is reported."""

    def setUp(self):
        with open(os.path.join(common.DASHBOARDS_DIR, "jitterd-host.json"), encoding="utf-8") as f:
            self.board = json.load(f)
        self.recorded = common.recorded_names()
        self.assertEqual(dashboard_lint.lint(self.board, EXPOSITION, self.recorded), [])

    def panel(self, board, title):
        return next(p for p in dashboard_lint.panels_of(board) if p.get("title") == title)

    def expect(self, board, fragment):
        problems = dashboard_lint.lint(board, EXPOSITION, self.recorded)
        self.assertTrue(any(fragment in p for p in problems), f"no problem with {fragment!r} in {problems}")

    def test_invalid_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "broken.json")
            with open(path, "w") as f:
                f.write(json.dumps(self.board)[:-2])
            with self.assertRaises(json.JSONDecodeError):
                with open(path) as f:
                    json.load(f)

    def test_duplicate_panel_id(self):
        board = copy.deepcopy(self.board)
        board["panels"][3]["id"] = board["panels"][2]["id"]
        self.expect(board, "duplicate panel id")

    def test_two_datasource_variables(self):
        board = copy.deepcopy(self.board)
        board["templating"]["list"].append(copy.deepcopy(board["templating"]["list"][0]))
        self.expect(board, "2 datasource variables")

    def test_target_not_using_the_datasource_variable(self):
        board = copy.deepcopy(self.board)
        self.panel(board, "Window max")["targets"][0]["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
        self.expect(board, "target A: datasource is not the $datasource variable")

    def test_rate_without_rate_interval(self):
        board = copy.deepcopy(self.board)
        target = self.panel(board, "Interruptions/s")["targets"][0]
        target["expr"] = target["expr"].replace("$__rate_interval", "5m")
        self.expect(board, "rate without [$__rate_interval]")

    def test_counter_outside_rate(self):
        board = copy.deepcopy(self.board)
        self.panel(board, "Interruptions/s")["targets"][0]["expr"] = \
            'sum(jitterd_sampler_interruptions_total{job=~"$job"})'
        self.expect(board, "counter jitterd_sampler_interruptions_total outside rate/increase")
        self.panel(board, "Interruptions/s")["targets"][0]["expr"] = \
            'rate(jitterd_sampler_stolen_seconds_total[$__rate_interval]) / jitterd_sampler_sampled_seconds_total'
        self.expect(board, "counter jitterd_sampler_sampled_seconds_total outside rate/increase")

    def test_panel_without_unit_or_description(self):
        board = copy.deepcopy(self.board)
        del self.panel(board, "Window max")["fieldConfig"]["defaults"]["unit"]
        self.panel(board, "Stolen share")["description"] = " "
        self.expect(board, "'Window max': no unit")
        self.expect(board, "'Stolen share': no description")

    def test_unknown_metric(self):
        board = copy.deepcopy(self.board)
        target = self.panel(board, "Window max")["targets"][0]
        target["expr"] = target["expr"].replace("jitterd_sampler_window_max_gap_seconds",
                                                "jitterd_sampler_window_maximum_gap_seconds")
        self.expect(board, "metric jitterd_sampler_window_maximum_gap_seconds is not exported")

    def test_unknown_metric_in_variable(self):
        board = copy.deepcopy(self.board)
        var = next(v for v in board["templating"]["list"] if v["name"] == "cpu")
        var["query"]["query"] = var["query"]["query"].replace("jitterd_sampler_up", "jitterd_sampler_running")
        self.expect(board, "variable cpu: metric jitterd_sampler_running is not exported")

    def test_heatmap_that_calculates(self):
        board = copy.deepcopy(self.board)
        next(p for p in dashboard_lint.panels_of(board) if p["type"] == "heatmap")["options"]["calculate"] = True
        self.expect(board, "heatmap with calculate not false")


class Generator(unittest.TestCase):
    def test_overrides_reach_the_rules(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, common.GENERATOR, "--out", out, "--set", "jitterSpikeMaxGapSeconds=0.025",
                            "--set", "jitterSpikeFor=3s", "--set", 'jitterdSelector=job="x"'], check=True)
            with open(os.path.join(out, "prometheus", "jitterd.rules.yml")) as f:
                text = f.read()
            self.assertIn("expr: 'jitterd_sampler_window_max_gap_seconds{job=\"x\"} > 0.025'\n        for: '3s'", text)
            self.assertNotIn('job="jitterd"', text)
            self.assertEqual(common.recorded_names(text), common.recorded_names())


if __name__ == "__main__":
    common.take_poll_loop()
    harness.main([harness.require_two_cpus])
