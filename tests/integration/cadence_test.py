#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Readers keep their cadence on the real daemon (docs/DESIGN.md, "Readers keep their cadence";
issue 35): while every active probe runs (pacing holding a CPU for seconds, pinning, clock,
kernel_cost, c2c), the loops probe, a reader at a 1 s interval, still reads every second. The
test scrapes /metrics every 100 ms and takes the loops probe's run starts from
jitterd_probe_last_run_timestamp_seconds; the longest interval between two of them must stay
under two intervals. It also checks that the active probes held their lane for longer than that
meanwhile (their jitterd_probe_duration_seconds), so that a reader queued behind them, as before
issue 35, would have missed the bound.

Usage: cadence_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
Measured figures are printed to stderr ("measured: ...").
"""

import os
import sys
import time

import harness

READER = "loops"
INTERVAL = 1.0
ACTIVE = ("clock", "kernel_cost", "pinning", "pacing", "c2c")

CONFIG = harness.BURST_SAMPLER + """\
loops:
  directory: {directory}
  interval: 1s
# The active probes as they ship, pacing held longer than two of the reader's intervals: each rate
# pauses the sampled CPU's sampler for 1.5 s.
probes:
  clock: {{interval: 30s}}
  pacing: {{cpu: 1, rates: [1000, 10000], duration: 1500ms, interval: 30s}}
  kernel_cost: {{samples: 2000, interval: 30s}}
  pinning: {{window: 1s, interval: 30s}}
  c2c: {{allow_unsampled: true, interval: 30s}}
  posture: {{enabled: false}}
  attribution: {{interval: 10s}}
"""


def measured(text):
    print(f"measured: {text}", file=sys.stderr)


def value(samples, name, probe):
    found = harness.select(samples, name, probe=probe)
    return next(iter(found.values())) if found else None


class CadenceTest(harness.DaemonTestCase):
    def test_a_reader_keeps_its_cadence_while_every_active_probe_runs(self):
        directory = os.path.join(self.workdir, "loops")
        os.mkdir(directory)
        daemon = self.daemon(CONFIG.format(directory=directory))
        starts = []  # the reader's distinct run starts
        active_seconds = {}  # per active probe: its last run's duration, once it ran
        deadline = time.monotonic() + 60
        # Until every active probe has run once (their first round starts 2 s after start-up), and
        # a few of the reader's intervals after that.
        finished_at = None
        while time.monotonic() < deadline:
            samples = daemon.scrape()
            started = value(samples, "jitterd_probe_last_run_timestamp_seconds", READER)
            if started and (not starts or started != starts[-1]):
                starts.append(started)
            for probe in ACTIVE:
                if value(samples, "jitterd_probe_last_run_timestamp_seconds", probe):
                    active_seconds[probe] = value(samples, "jitterd_probe_duration_seconds", probe)
            if finished_at is None and len(active_seconds) == len(ACTIVE):
                finished_at = time.monotonic()
            if finished_at is not None and time.monotonic() > finished_at + 3 * INTERVAL:
                break
            time.sleep(0.1)
        self.assertEqual(sorted(active_seconds), sorted(ACTIVE), "not every active probe ran within 60 s")
        busy = sum(active_seconds.values())
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        longest = max(gaps)
        measured(f"{len(starts)} readings of the {READER} probe (interval {INTERVAL:.0f} s) while the active "
                 f"probes ran for {busy:.1f} s in all ({', '.join(f'{p} {s:.2f} s' for p, s in active_seconds.items())}): "
                 f"longest interval {longest:.3f} s, median {sorted(gaps)[len(gaps) // 2]:.3f} s")
        # In one lane the reader would have waited behind at least the longest active run.
        self.assertGreater(max(active_seconds.values()), 2 * INTERVAL,
                           "no active probe held its lane for two intervals: the test shows nothing")
        self.assertLess(longest, 2 * INTERVAL, f"the reader's intervals: {gaps}")
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
