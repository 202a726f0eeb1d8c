#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""/metrics under issue 35 item 10's attacks on the real daemon:

- page clients, with 256 loops (the status pages' heaviest input): clients from 50 loopback
  addresses looping over /, /status.json and /baseline.json. The number of clients is sized
  against this machine: enough that, were pages built per request on the two web workers (as
  before issue 35), the pages queued ahead of a scrape would take twice the timeout (clients >=
  2 x 2 workers x 10 s / the time one page takes here).
- slowloris: 12 loopback addresses x 128 connections (the per-address limit), each sending one
  byte of a request a second and reconnecting at once when the server drops it. Before the
  acceptor (export/connection_acceptor.h) the connections not yet accepted filled the kernel's
  accept queue and each scrape waited behind them: about 6 s here.

Every scrape must succeed within Prometheus' default timeout (10 s), and the median scrape must
stay within a bound taken from the scrapes this machine answers without load, measured first:
max(1 s, 20 x the unloaded median). The scrapes come from a process of their own, as Prometheus'
do (web_attacks.timed_scrapes_apart).

A scrape never shares a worker with a page (export/request_sorting.h): while the page clients run,
every scrape, and nothing else, is handed to the telemetry lane (jitterd_web_connections_total
counts each lane's connections), and each scrape is answered while page requests sent before it
are still in flight: at least two per page worker, for the median scrape. What the server shed
under slowloris is on /metrics (jitterd_web_connections_shed_total) as it happens, and agrees with
what it logs when it stops.

Usage: web_attacks_test.py --jitterd BINARY --many-loops BINARY [unittest args]; exit 77 (skip)
with fewer than 2 CPUs. Measured figures are printed to stderr ("measured: ...").
"""

import argparse
import math
import os
import re
import subprocess
import sys
import time
import urllib.request

import harness
import web_attacks

MANY_LOOPS = None
LOOPS = 256
WORKERS = 2  # the web server's page lane (src/export/web_server.h kWorkerThreads)
MAX_PAGE_CLIENTS = 200


def config(directory):
    return harness.BURST_SAMPLER + f"""\
loops:
  directory: {directory}
  interval: 1s
{harness.PROBES_OFF}"""


def lanes(daemon):
    """The web server's connections by lane so far (jitterd_web_connections_total)."""
    by_lane = harness.select(daemon.scrape(), "jitterd_web_connections_total")
    return {dict(labels)["lane"]: value for labels, value in by_lane.items()}


def shed_counts(daemon):
    """The connections the web server shed so far, by reason (jitterd_web_connections_shed_total)."""
    shed = harness.select(daemon.scrape(), "jitterd_web_connections_shed_total")
    return {dict(labels)["reason"]: value for labels, value in shed.items()}


def measured(text):
    print(f"measured: {text}", file=sys.stderr)


def page_seconds(base_url, path, times=5):
    """The median time of `times` GETs of `path`, each after the state changed (a fresh build)."""
    spent = []
    for _ in range(times):
        time.sleep(1.1)  # past the next window step: the page is built again for this request
        started = time.monotonic()
        with urllib.request.urlopen(base_url + path, timeout=60) as response:
            response.read()
        spent.append(time.monotonic() - started)
    return sorted(spent)[len(spent) // 2]


class ScrapeBounds:
    """The bounds on loaded scrapes, from this machine's unloaded ones (a mixin of the tests)."""

    def measure_unloaded(self, url):
        self.quiet, errors, _ = web_attacks.timed_scrapes_apart(url, 20, pause=0.05)
        self.assertEqual(errors, [])
        self.median_bound = max(1.0, 20 * web_attacks.quantile(self.quiet, 0.5))
        measured(f"without load: {web_attacks.describe_latencies(self.quiet)}; a loaded scrape's median "
                 f"must stay under {self.median_bound * 1e3:.0f} ms")

    def check_scrapes(self, latencies, errors, what):
        measured(f"{what}: {web_attacks.describe_latencies(latencies, errors)}"
                 + (f"; errors: {sorted(set(errors))[:3]}" if errors else ""))
        self.assertEqual(errors, [], f"{what}: failed scrapes")
        self.assertTrue(latencies)
        self.assertLess(max(latencies), web_attacks.PROMETHEUS_TIMEOUT, f"{what}: a scrape past Prometheus' timeout")
        self.assertLess(web_attacks.quantile(latencies, 0.5), self.median_bound, f"{what}: median scrape")


class WebAttacksTest(ScrapeBounds, harness.DaemonTestCase):
    def setUp(self):
        super().setUp()
        web_attacks.raise_descriptor_limit(8192)
        self.loop_dir = os.path.join(self.workdir, "loops")
        os.mkdir(self.loop_dir)
        env = dict(os.environ, JITTERD_LOOP_DIR=self.loop_dir)
        # The loops run on the housekeeping CPU, which they barely use (a record per loop per ms).
        housekeeping = min(os.sched_getaffinity(0))
        self.loops = subprocess.Popen([MANY_LOOPS, str(LOOPS), str(housekeeping), "0"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.addCleanup(self.stop_loops)
        line = self.loops.stdout.readline()
        self.assertTrue(line.startswith("ready"), f"many_loops: {line}")
        self.daemon_ = self.daemon(config(self.loop_dir))
        harness.wait_until(lambda: sum(harness.select(self.daemon_.scrape(), "jitterd_loop_up").values()) >= LOOPS,
                           60, interval=0.5, what=f"{LOOPS} loops up")
        self.base = self.daemon_.url("/").rstrip("/")
        self.measure_unloaded(self.daemon_.url())

    def stop_loops(self):
        self.loops.kill()
        self.loops.wait(10)

    def test_page_clients_never_hold_a_scrape(self):
        build = max(page_seconds(self.base, path) for path in web_attacks.PAGES)
        clients = min(MAX_PAGE_CLIENTS, max(8, math.ceil(2 * WORKERS * web_attacks.PROMETHEUS_TIMEOUT / build)))
        measured(f"the heaviest page with {LOOPS} loops takes {build * 1e3:.0f} ms here: {clients} page clients")
        host, port = self.daemon_.address.rsplit(":", 1)
        with web_attacks.PageClients(host, int(port), clients) as pages:
            time.sleep(2)  # every client has a request in flight
            before = lanes(self.daemon_)
            latencies, errors, starts = web_attacks.timed_scrapes_apart(self.daemon_.url(), 20, pause=0.25)
            after = lanes(self.daemon_)  # this scrape's own connection counted
            time.sleep(1)  # the page requests in flight at the last scrape are answered
        measured(pages.summary())
        self.check_scrapes(latencies, errors, f"{clients} page clients")
        self.assertGreater(len(pages.latencies), clients, "the page clients were not served")
        # Sorted: the scrapes, and only they, on the telemetry lane; the page clients on the other.
        measured(f"connections by lane meanwhile: telemetry {after['telemetry'] - before['telemetry']:.0f}, "
                 f"pages {after['pages'] - before['pages']:.0f}")
        self.assertEqual(after["telemetry"] - before["telemetry"], len(latencies) + len(errors) + 1,
                         "every scrape, and nothing else, on the telemetry lane")
        self.assertGreater(after["pages"] - before["pages"], clients, "the page clients on the page lane")
        # Answered while pages sent before them were still in flight.
        overtaken = sorted(pages.in_flight_throughout(start, start + latency)
                           for start, latency in zip(starts, latencies))
        measured(f"page requests in flight throughout each scrape: min {overtaken[0]}, "
                 f"median {overtaken[len(overtaken) // 2]}, max {overtaken[-1]}")
        self.assertGreaterEqual(overtaken[len(overtaken) // 2], 2 * WORKERS,
                                "the median scrape answered while page requests sent before it were in flight")
        self.stop_ok(self.daemon_)


class SlowlorisTest(ScrapeBounds, harness.DaemonTestCase):
    """Slowloris needs no loops: what it fills is the server's connections and the kernel's queue."""

    ADDRESSES, PER_ADDRESS = 12, 128
    SCRAPES = 12
    BUDGET = 30  # seconds of scraping at most (before the acceptor, 12 scrapes took 70 s)

    def test_slowloris_from_many_addresses_never_holds_a_scrape(self):
        web_attacks.raise_descriptor_limit(8192)
        daemon = self.daemon(harness.BURST_SAMPLER + harness.PROBES_OFF)
        self.measure_unloaded(daemon.url())
        host, port = daemon.address.rsplit(":", 1)
        attempts = self.ADDRESSES * self.PER_ADDRESS
        with web_attacks.Slowloris(host, int(port), self.ADDRESSES, self.PER_ADDRESS) as attack:
            harness.wait_until(lambda: attack.opened >= attempts, 30, what=f"{attempts} attack connections opened")
            # Past the request deadline (3 s): the first connections have been dropped and opened again.
            time.sleep(4)
            latencies, errors, _ = web_attacks.timed_scrapes_apart(daemon.url(), self.SCRAPES, pause=0.25,
                                                                   budget=self.BUDGET)
            self.assertIsNone(attack.error, "the attack failed")
            shed_then = shed_counts(daemon)
            # It pressed the server: well over the connections the server keeps were dropped.
            self.assertGreater(attack.closed_by_server, attempts, attack.describe())
        measured(attack.describe())
        self.check_scrapes(latencies, errors, f"slowloris from {self.ADDRESSES} addresses x {self.PER_ADDRESS}")
        self.stop_ok(daemon)
        # What the server shed is told when it stops, and it is what the attacker saw.
        shed = re.search(r"web server on \S+: (\d+) connections evicted to make room, (\d+) shut down at the "
                         r"request deadline, (\d+) refused at the per-address limit; accepting held (\d+) times",
                         daemon.log())
        self.assertIsNotNone(shed, "the web server's log line of what it shed")
        evicted, dropped, refused, holds = (int(n) for n in shed.groups())
        measured(f"the server: {evicted} evicted, {dropped} at the deadline, {refused} refused, held {holds} times")
        self.assertLessEqual(evicted + dropped + refused, attack.opened)
        self.assertGreater(evicted + dropped + refused, attempts)
        # On /metrics as it happened: by the last scrape, no more than the log's final count.
        measured(f"/metrics during the attack: {shed_then}")
        self.assertGreater(shed_then["evicted"] + shed_then["request_deadline"] + shed_then["per_address_limit"],
                           attempts)
        self.assertLessEqual(shed_then["evicted"], evicted)
        self.assertLessEqual(shed_then["request_deadline"], dropped)
        self.assertLessEqual(shed_then["per_address_limit"], refused)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--many-loops", required=True)
    own, rest = parser.parse_known_args()
    MANY_LOOPS = os.path.realpath(own.many_loops)
    sys.argv = [sys.argv[0]] + rest
    harness.main([harness.require_two_cpus])
