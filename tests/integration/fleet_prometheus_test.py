#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet against a real Prometheus (Debian's, on 127.0.0.1) whose TSDB this test fills
with a synthetic fleet of known truth: OpenMetrics shaped like jitterd's own scrape (the gap
histogram at the exported le bounds, the sampled, interruptions and stolen-seconds counters per
CPU, jitterd_fingerprint_info), turned into blocks by `promtool tsdb create-blocks-from
openmetrics`, 31 scrapes a minute apart, 2 sampled CPUs per host.

The fleet: 200 hosts on two kernels (100 each), two CPU models mixed unevenly across the kernels
(model Y's tail 1.5x model X's, so hardware alone would look like an effect), host-to-host
spread (lognormal), and on kernel 6.6 a known effect: interruptions (and stolen time) 2x, the gap
tail above 1 us 3x; p50 untouched. Three planted drifted hosts (kernel 6.1, model X) have a tail
50x their class and an older bios_version. One more host changes kernel inside the range, and
one is alone on kernel 7.0.
  - the effect is found with its direction: interruptions_per_s and stolen_share `worse` on 6.6,
    nothing `better`, p50 no change;
  - the three planted hosts are listed as drifted, each differing in bios_version, and no other;
  - the host that changed kernel is left out and listed; the lone 7.0 host's cohort is "too few
    hosts", never a verdict; the A/A rate is printed;
  - Prometheus runs with --query.max-samples low enough to refuse the first batch: the batch is
    halved and asked again (a note says so), and the answer is the same;
  - the counters are read at the range's two ends; hosts whose ends cannot be trusted are read in
    full and listed with why: one restarts inside the range (its counters begin again at zero),
    one exports no jitterd_sampler_start_time_seconds, one's clock is 10 minutes ahead; one starts
    inside the range and is read from zero. Each keeps its planted figures;
  - the application's side (fleet_application_series.py: 2 watched CPUs on nine hosts in ten,
    half by bpf; the loop rx0 on two in three): microcode 0x2c (every other host, both kernels)
    triples its watched CPUs' preemptions and preempted time and leaves its sampled CPUs alone:
    `--by microcode` finds the watched rows `worse` and no sampled row; the hosts without a watch
    are absent from the watched rows (null, counted in "Not judged"); host-042's loop, 50x its
    class's tail, is listed as drifted by its loop rows alone; a host whose application restarts
    its loop inside the range (jitterd does not restart) is read in full naming the loop; the
    exact hosts keep their planted watched figures; a hostile loop name is escaped on the page and
    a 300-byte one passed over with a note;
  - bad input: an unknown --by (64), an unknown --reference (64), a range with no data (65),
    a port nothing listens on (69), a server answering Prometheus's own error (65), an engine
    without last_over_time (65), a range ending in the future (64).

Usage: fleet_prometheus_test.py --jitterd BINARY; exit 77 (skip) without prometheus or promtool.
"""

import argparse
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import fleet_application_series as application  # noqa: E402
import harness  # noqa: E402
import prometheus_harness  # noqa: E402

EXIT_USAGE, EXIT_DATA, EXIT_UNAVAILABLE = 64, 65, 69
SCRAPES, INTERVAL = 31, 60
BOUNDS_NS = [b * 10 ** e for e in range(1, 8) for b in (1, 2.5, 5)] + [1e8]  # 10 ns .. 100 ms, 1-2.5-5
PLANTED = {"host-004:9100", "host-023:9100", "host-061:9100"}
CHANGER = "host-changer:9100"
LONE = "host-lone:9100"
RESTARTED = "host-restarted:9100"  # its samplers restart at scrape 12: its counters begin again at zero
LATE = "host-late:9100"  # its first scrape is the 10th: its samplers started inside the range
OLD = "host-old:9100"  # exports no jitterd_sampler_start_time_seconds (jitterd 0.1.0)
AHEAD = "host-ahead:9100"  # its clock is 10 minutes ahead of Prometheus's
RELOOPED = "host-relooped:9100"  # its application restarts its loop at scrape 15; jitterd does not restart
BASE = 5  # intervals the counters hold at the range's start (the samplers started before it)
# The application's side: microcode 0x2c (every other host, on both kernels and both CPU models)
# triples its watched CPUs' preemptions and preempted time, and leaves its sampled CPUs alone;
# host-042's loop rx0 has a tail 50x its class's; every tenth host has no watch, a third no loop;
# a few hosts have a loop whose name is hostile, one a name too long to be read.
WATCH_EFFECT = 3
LOOP_DRIFTED = "host-042:9100"
HOSTILE_LOOP = '<b>odd "loop"\\ \u00e9'
LONG_LOOP = "L" * 300


def survival(le_ns, tail_factor):
    """Share of gaps above le: most near 100 ns, a power-law tail; above 1 us times tail_factor."""
    base = 1.0 if le_ns < 100 else 0.5 * (100 / le_ns) ** 1.3
    return min(1.0, base * (tail_factor if le_ns >= 1000 else 1.0))


def hosts(seed=5):
    rng = random.Random(seed)
    out = []
    for h in range(200):
        kernel = "6.1.0-13-amd64" if h < 100 else "6.6.0-1-amd64"
        model = "Intel Xeon X" if (h % 10 < 7 if h < 100 else h % 10 < 4) else "Intel Xeon Y"
        instance = f"host-{h:03d}:9100"
        tail = math.exp(rng.gauss(0, 0.25)) * (1.5 if model.endswith("Y") else 1) * (3 if h >= 100 else 1)
        rate = 100 * math.exp(rng.gauss(0, 0.2)) * (2 if h >= 100 else 1)
        if instance in PLANTED:
            tail *= 50
            assert kernel.startswith("6.1") and model.endswith("X")
        out.append({"instance": instance, "kernel": [kernel], "model": model, "tail": tail, "rate": rate,
                    "bios": "0.9" if instance in PLANTED else "1.4"})
    add_application(out, random.Random(seed + 1000))
    out.append({"instance": CHANGER, "kernel": ["6.1.0-13-amd64", "6.6.0-1-amd64"], "model": "Intel Xeon X",
                "tail": 1.0, "rate": 100.0, "bios": "1.4"})
    out.append({"instance": LONE, "kernel": ["7.0.0-1-amd64"], "model": "Intel Xeon X", "tail": 1.0, "rate": 100.0,
                "bios": "1.4"})
    for instance, how in ((RESTARTED, {"restart_at": 12}), (LATE, {"first_scrape": 10}), (OLD, {"no_start": True}),
                          (AHEAD, {"clock_ahead": 600}),
                          (RELOOPED, {"loops": {"rx0": {"tail": 1.0, "rate": 100.0, "restart_at": 15}}})):
        out.append({"instance": instance, "kernel": ["6.1.0-13-amd64"], "model": "Intel Xeon X", "tail": 1.0,
                    "rate": 100.0, "bios": "1.4", "exact": True, "watch": "counts", **how})
    return out


def add_application(fleet, rng):
    """The application's side of the 200 hosts (drawn from an RNG of its own: the sampled CPUs'
    figures stay those the test was sized on)."""
    for h, host in enumerate(fleet):
        host["microcode"] = "0x2c" if h % 2 else "0x2b"
        host["watch_rate"] = math.exp(rng.gauss(0, 0.2))
        host["watch_effect"] = WATCH_EFFECT if h % 2 else 1
        if h % 10 != 9:
            host["watch"] = "bpf" if h % 4 in (0, 1) else "counts"  # both microcodes, both kernels
        loops = {}
        if h % 3 != 2:
            loops["rx0"] = {"tail": math.exp(rng.gauss(0, 0.25)) * (50 if host["instance"] == LOOP_DRIFTED else 1),
                            "rate": 50 * math.exp(rng.gauss(0, 0.2))}
        if 10 <= h < 16:
            loops[HOSTILE_LOOP] = {"tail": 1.0, "rate": 50.0}
        if h == 16:
            loops[LONG_LOOP] = {"tail": 1.0, "rate": 50.0}
        host["loops"] = loops


def le_text(ns):
    return repr(ns / 1e9)


def elapsed(host, i):
    """Intervals a host's counters have counted at scrape i, or None where it has no scrape: BASE
    before the range (its samplers started earlier); from zero again after a restart at scrape
    host["restart_at"] (half an interval by its first scrape); from zero from host["first_scrape"]."""
    if "first_scrape" in host:
        return None if i < host["first_scrape"] else i - host["first_scrape"] + 0.5
    if "restart_at" in host and i >= host["restart_at"]:
        return i - host["restart_at"] + 0.5
    return BASE + i


def started(host, i, times):
    """The host's jitterd_sampler_start_time_seconds at scrape i."""
    k = host.get("first_scrape", host.get("restart_at"))
    t = times[k] - 30 if k is not None and i >= k else times[0] - BASE * INTERVAL - 10
    return t + host.get("clock_ahead", 0)


def openmetrics(fleet, start, rng):
    """The fleet's scrapes as one OpenMetrics text, family by family, series by series."""
    lines = ["# TYPE jitterd_fingerprint_info gauge"]
    times = [start + i * INTERVAL for i in range(SCRAPES)]
    for host in fleet:
        scraped = [t for i, t in enumerate(times) if elapsed(host, i) is not None]
        for k, kernel in enumerate(host["kernel"]):
            part = scraped if len(host["kernel"]) == 1 else (times[:SCRAPES // 2] if k == 0 else times[SCRAPES // 2:])
            labels = (f'instance="{host["instance"]}",job="jitterd",kernel="{kernel}",cmdline="quiet",'
                      f'microcode="{host.get("microcode", "0x2b")}",bios_vendor="Acme",bios_version="{host["bios"]}",bios_date="01/01/2025",'
                      f'cpu_model="{host["model"]}",hypervisor="no"')
            lines += [f"jitterd_fingerprint_info{{{labels}}} 1 {t}" for t in part]
    lines.append("# TYPE jitterd_sampler_start_time_seconds gauge")
    for host in (h for h in fleet if not h.get("no_start")):
        lines += [f'jitterd_sampler_start_time_seconds{{instance="{host["instance"]}",job="jitterd"}} '
                  f'{started(host, i, times)} {t}' for i, t in enumerate(times) if elapsed(host, i) is not None]
    per_cpu = {}
    for host in fleet:
        for cpu in (1, 2):
            spread = (lambda: 1.0) if host.get("exact") else (lambda: math.exp(rng.gauss(0, 0.1)))
            per_cpu[(host["instance"], cpu)] = (host, host["tail"] * spread(), host["rate"] * spread())
    gaps_per_interval = 6e7  # 1 us loops over a minute
    lines.append("# TYPE jitterd_sampler_gap_seconds histogram")
    for (instance, cpu), (host, tail, _) in per_cpu.items():
        running = 0.0
        for le in BOUNDS_NS + [math.inf]:
            share = 1.0 if math.isinf(le) else 1 - survival(le, tail)
            running = max(running, share)
            le_label = "+Inf" if math.isinf(le) else le_text(le)
            for i, t in enumerate(times):
                if elapsed(host, i) is not None:
                    lines.append(f'jitterd_sampler_gap_seconds_bucket{{instance="{instance}",job="jitterd",'
                                 f'cpu="{cpu}",le="{le_label}"}} {round(running * gaps_per_interval * elapsed(host, i))} '
                                 f'{t}')
    for name, per_interval in (("sampled_seconds", lambda r: 59.4), ("interruptions", lambda r: r * 60),
                               ("stolen_seconds", lambda r: r * 60 * 5e-6)):
        lines.append(f"# TYPE jitterd_sampler_{name} counter")
        for (instance, cpu), (host, _, rate) in per_cpu.items():
            for i, t in enumerate(times):
                if elapsed(host, i) is not None:
                    lines.append(f'jitterd_sampler_{name}_total{{instance="{instance}",job="jitterd",cpu="{cpu}"}} '
                                 f'{per_interval(rate) * elapsed(host, i):.9g} {t}')
    lines += application.watch_families(fleet, times, rng, elapsed, INTERVAL)
    lines += application.loop_families(fleet, times, elapsed, survival, BOUNDS_NS, gaps_per_interval)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


class ErrorServer(prometheus_harness.Answering):
    def do_GET(self):
        self.answer(422, {"status": "error", "errorType": "execution",
                          "error": "query processing would load too many samples into memory"})


class OldEngine(prometheus_harness.Answering):
    """An engine without last_over_time: the fleet's instances, the scrapes of one, and Prometheus's own
    bad_data error for the unknown function."""

    def do_GET(self):
        if "/api/v1/label/" in self.path:
            self.answer(200, {"status": "success", "data": ["a:9100"]})
        elif "last_over_time" in urllib.parse.unquote(self.path):
            self.answer(400, {"status": "error", "errorType": "bad_data",
                              "error": '1:17: parse error: unknown function with name "last_over_time"'})
        else:
            self.answer(200, {"status": "success", "data": {"resultType": "vector", "result": [
                {"metric": {"instance": "a:9100"}, "value": [1, "30"]}]}})


class FleetPrometheus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-fleet-prom-")
        workdir = cls._tmp.name
        # Two hours ago: inside the default retention, before the (empty) head block.
        cls.start = (int(time.time()) - 7200) // INTERVAL * INTERVAL
        cls.range = f"{cls.start}/{cls.start + (SCRAPES - 1) * INTERVAL}"
        prometheus_harness.build_tsdb(workdir, lambda path: harness.write_file(
            path, openmetrics(hosts(), cls.start, random.Random(9))), timeout=300)
        # 5,000 samples held at once by a query (Prometheus counts the answer and the series in hand):
        # the bucket query of all 202 hosts (9,292 series) is refused, 101 hosts are not.
        cls.prometheus = prometheus_harness.serving_tsdb(workdir, args=["--query.max-samples=5000"])
        cls.answer = cls.fleet("--format", "json")

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls._tmp.cleanup()

    @classmethod
    def run_fleet(cls, *args, url=None, range_=None, by="kernel"):
        command = ["fleet", "--prometheus", url or cls.prometheus.url(""), "--range", range_ or cls.range]
        if by is not None:
            command += ["--by", by]
        return harness.run(command + list(args), timeout=120)

    @classmethod
    def fleet(cls, *args):
        result = cls.run_fleet(*args)
        if result.returncode != 0:
            raise AssertionError(f"fleet exited {result.returncode}: {result.stderr}")
        return json.loads(result.stdout)

    def rows(self, cohort, figure_prefix):
        return [r for r in self.answer["comparisons"] if r["kernel"] == cohort and r["figure"].startswith(figure_prefix)]

    def test_effect_found_with_its_direction(self):
        a = self.answer
        self.assertEqual(a["reference"], "6.1.0-13-amd64", a["cohorts"])
        for figure in ("interruptions_per_s", "stolen_share"):
            for row in self.rows("6.6.0-1-amd64", figure):
                self.assertEqual(row["verdict"], "worse", row)
                self.assertGreater(row["shift_low"], 0, row)
        for row in self.rows("6.6.0-1-amd64", "p50_ns"):
            self.assertEqual(row["verdict"], "no significant change", row)
        self.assertFalse([r for r in a["comparisons"] if r["verdict"] == "better"])
        self.assertTrue([r for r in self.rows("6.6.0-1-amd64", "gaps_over_") if r["verdict"] == "worse"])
        self.assertIn("splits", a["aa"])
        self.assertEqual(a["aa"]["splits"], 100)

    def test_planted_hosts_and_no_other(self):
        drifted = {r["host"] for r in self.answer["drifted_hosts"]}
        self.assertEqual(drifted, PLANTED | {LOOP_DRIFTED}, self.answer["drifted_hosts"])
        for row in self.answer["drifted_hosts"]:
            self.assertGreater(row["ratio"], 1, row)
            if row["host"] == LOOP_DRIFTED:  # its loop alone: its sampled and watched CPUs are its class's
                self.assertTrue(row["figure"].startswith("loop rx0: "), row)
            else:
                self.assertIn("bios_version", row["differs_in"].split(), row)
        self.assertTrue([r for r in self.answer["drifted_hosts"]
                         if r["host"] == LOOP_DRIFTED and r["figure"] == "loop rx0: p99_99_ns"])

    def test_watched_effect_found_by_microcode(self):
        result = self.run_fleet("--format", "json", by="microcode")
        self.assertEqual(result.returncode, 0, result.stderr)
        a = json.loads(result.stdout)
        self.assertEqual(a["reference"], "0x2b", a["cohorts"])
        rows = [r for r in a["comparisons"] if r["microcode"] == "0x2c"]
        for figure in ("watched preemptions_per_s", "watched preempted_share"):
            found = [r for r in rows if r["figure"].startswith(figure + " (")]
            self.assertEqual(len(found), 2, rows)
            for row in found:
                self.assertEqual(row["verdict"], "worse", row)
                self.assertGreater(row["shift_low"], 0, row)
                self.assertEqual(row["hosts"], 80, row)  # every fifth 0x2c host has no watch: absent
        for row in rows:
            if not row["figure"].startswith(("watched preempt", "watched stolen_share")):
                self.assertNotIn(row["verdict"], ("worse", "better"), row)  # its sampled CPUs and loops untouched
        self.assertTrue([r for r in rows if r["figure"].startswith("loop rx0: ")])
        not_judged = "\n".join(a["not_judged"])
        # 20 of the 200 and the lone host; the host that changed kernel is kept by microcode.
        self.assertIn("watched CPUs: 22 of 207 hosts have none", not_judged)
        self.assertIn("loop rx0: on ", not_judged)
        hosts = {h["host"]: h for h in a["hosts"]}
        self.assertIsNone(hosts["host-009:9100"]["watched preemptions_per_s (worst CPU)"])
        self.assertIsNone(hosts["host-002:9100"]["loop rx0: p99_ns"])
        self.assertIsNotNone(hosts["host-000:9100"]["watched stolen_share (worst CPU)"])  # bpf
        self.assertIsNone(hosts["host-002:9100"]["watched stolen_share (worst CPU)"])  # counts: not timed

    def test_application_side_read_like_the_sampled_cpus(self):
        hosts = {h["host"]: h for h in self.answer["hosts"]}
        # The exact hosts, at the ends or in full: 2 preemptions a second of wall time on each
        # watched CPU, 20 us each; the relooped host's loop 100 interruptions a wall second. The
        # restarted host's counts between its last scrape and its restart (30 s of the 30 min)
        # are lost with the process: its rates over the range's wall time are 29.5/30 of them.
        for host in (RESTARTED, LATE, OLD, AHEAD, RELOOPED):
            counted = 29.5 / 30 if host == RESTARTED else 1
            for which in ("worst", "median"):
                self.assertAlmostEqual(hosts[host][f"watched preemptions_per_s ({which} CPU)"] / (2.0 * counted), 1,
                                       3, hosts[host])
                self.assertAlmostEqual(hosts[host][f"watched preempted_share ({which} CPU)"] / (4e-5 * counted), 1,
                                       3, hosts[host])
        self.assertAlmostEqual(hosts[RELOOPED]["loop rx0: interruptions_per_s"] / (6000 / 59.4), 1, 3)
        why = {r["host"]: r["why"] for r in self.answer["reads"]["in_full"]}
        self.assertIn('loop "rx0" started again inside the range', why[RELOOPED])

    def test_hostile_loop_names(self):
        self.assertIn(f"loop {HOSTILE_LOOP}: p99_ns", self.answer["hosts"][0])
        notes = "\n".join(self.answer["notes"])
        self.assertIn("loops passed over: 1 loop name over 128 bytes", notes)
        self.assertNotIn(LONG_LOOP, json.dumps(self.answer))
        html = self.run_fleet("--format", "html")
        self.assertEqual(html.returncode, 0, html.stderr)
        self.assertNotIn("<b>odd", html.stdout)
        self.assertIn("loop &lt;b&gt;odd &quot;loop&quot;", html.stdout)
        for form in ("table", "csv"):
            out = self.run_fleet("--format", form)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("<b>odd", out.stdout)

    def test_changed_host_left_out_and_lone_cohort_too_few(self):
        left = "\n".join(self.answer["left_out"])
        self.assertIn(CHANGER, left)
        self.assertIn("kernel", left)
        lone = [r for r in self.answer["comparisons"] if r["kernel"] == "7.0.0-1-amd64"]
        self.assertTrue(lone)
        self.assertTrue(all(r["verdict"] == "too few hosts" for r in lone), lone)
        hosts_seen = sum(c["hosts"] for c in self.answer["cohorts"])
        self.assertEqual(hosts_seen, 206)

    def test_read_at_the_ends_but_the_restarted_host_in_full(self):
        reads = self.answer["reads"]
        in_full = {r["host"]: r["why"] for r in reads["in_full"]}
        self.assertEqual(set(in_full), {RESTARTED, OLD, AHEAD, RELOOPED}, reads)
        self.assertIn("restarted inside the range", in_full[RESTARTED])
        self.assertIn("no jitterd_sampler_start_time_seconds", in_full[OLD])
        self.assertIn("clock is ahead of Prometheus's", in_full[AHEAD])
        self.assertIn(f"{600 - BASE * INTERVAL - 10} s later", in_full[AHEAD])  # ahead by at least that
        self.assertEqual(reads["at_ends"], 202, reads)  # every other host but the one that changed kernel
        self.assertEqual(reads["started_inside"], 1, reads)  # LATE: from zero
        # Inferred from three hosts' scrapes over the range: exact on Prometheus 2.42 (its range
        # selectors hold both ends: 31 scrapes, 30 intervals); one scrape short where a window is
        # left-open (VictoriaMetrics, Prometheus 3: 30 scrapes read as 29 intervals, 30/29 of it).
        self.assertAlmostEqual(reads["scrape_interval_seconds"] / INTERVAL, 1, delta=1.001 / (SCRAPES - 2),
                               msg=reads)
        self.assertEqual(reads["lookback_seconds"], 3 * reads["scrape_interval_seconds"], reads)
        # Both still have their planted figures: 100 interruptions a second of wall time, 59.4 s of
        # every minute sampled; stolen 5 us each.
        hosts = {h["host"]: h for h in self.answer["hosts"]}
        for host in (RESTARTED, LATE, OLD, AHEAD):
            for which in ("worst", "median"):
                self.assertAlmostEqual(hosts[host][f"interruptions_per_s ({which} CPU)"] / (6000 / 59.4), 1, 3,
                                       hosts[host])
                self.assertAlmostEqual(hosts[host][f"stolen_share ({which} CPU)"] / (0.03 / 59.4), 1, 3, hosts[host])
        table = self.run_fleet()
        self.assertIn("Read in full", table.stdout)
        self.assertIn(f"{RESTARTED}", table.stdout[table.stdout.find("Read in full"):])
        csv = self.run_fleet("--format", "csv")
        read_in_full = csv.stdout[csv.stdout.rfind("\n\nhost,why\n"):]  # the last table
        self.assertIn(f"\n{RESTARTED},restarted inside the range", read_in_full)
        self.assertEqual(read_in_full.count("\n"), 2 + 1 + 4, read_in_full)  # a blank line, the header, 4 hosts

    def test_refused_batch_is_halved(self):
        notes = "\n".join(self.answer["notes"])
        self.assertIn("too many samples", notes)
        self.assertGreater(self.answer["queries"], 5)

    def test_table_csv_and_html(self):
        table = self.run_fleet("--reference", "6.6.0-1-amd64")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("A/A:", table.stdout)
        self.assertIn("reference kernel=\"6.6.0-1-amd64\"", table.stdout)
        self.assertIn("better", table.stdout)  # 6.1 against 6.6: fewer interruptions
        for host in PLANTED:
            self.assertIn(f"{host}: ", table.stdout)
        html = self.run_fleet("--format", "html")
        self.assertEqual(html.returncode, 0, html.stderr)
        self.assertTrue(html.stdout.startswith("<!DOCTYPE html>"), html.stdout[:100])
        self.assertIn("A/A: ", html.stdout)
        # One strip plot per figure row: 22 sampled, 26 watched, 11 for each of the two loops read.
        self.assertEqual(html.stdout.count("<svg"), 22 + 26 + 2 * 11)
        self.assertIn("(ref.)", html.stdout)
        self.assertNotIn("<script", html.stdout)
        csv = self.run_fleet("--format", "csv")
        self.assertEqual(csv.returncode, 0, csv.stderr)
        self.assertTrue(csv.stdout.startswith("kernel,hosts,reference\n"), csv.stdout[:200])

    def assert_refused(self, result, code, *needles):
        self.assertEqual(result.returncode, code, f"stdout: {result.stdout}\nstderr: {result.stderr}")
        for needle in needles:
            self.assertIn(needle, result.stderr)

    def test_bad_input(self):
        self.assert_refused(self.run_fleet(by="kernal"), EXIT_USAGE, '"kernal"', "--by", "bios_version")
        self.assert_refused(self.run_fleet("--reference", "5.10"), EXIT_USAGE, '"5.10"', "6.6.0-1-amd64")
        empty = f"{self.start - 86400}/{self.start - 86400 + 600}"
        self.assert_refused(self.run_fleet(range_=empty), EXIT_DATA, "no jitterd_fingerprint_info")
        self.assert_refused(self.run_fleet(by=None), EXIT_USAGE, "--by")
        self.assert_refused(self.run_fleet("--format", "xml"), EXIT_USAGE, "--format")
        port = prometheus_harness.free_port()
        self.assert_refused(self.run_fleet(url=f"http://127.0.0.1:{port}"), EXIT_UNAVAILABLE, f"127.0.0.1:{port}")
        for handler, needles in ((ErrorServer, ["too many samples"]),
                                 (OldEngine, ["does not evaluate", "last_over_time", "unknown function"])):
            server = prometheus_harness.serving(handler)
            try:
                url = f"http://127.0.0.1:{server.server_address[1]}"
                self.assert_refused(self.run_fleet(url=url), EXIT_DATA, url, *needles)
            finally:
                server.shutdown()
                server.server_close()
        future = f"{self.start}/{int(time.time()) + 3600}"
        self.assert_refused(self.run_fleet(range_=future), EXIT_USAGE, "--range", "in the future")


def main():
    global JITTERD
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    args, rest = parser.parse_known_args()
    JITTERD = harness.JITTERD = args.jitterd
    missing = prometheus_harness.missing() or (None if shutil.which("promtool") else "promtool not installed")
    if missing:
        print(f"SKIP: {missing}")
        return 77
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


JITTERD = None
if __name__ == "__main__":
    sys.exit(main())
