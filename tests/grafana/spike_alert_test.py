#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The jitter spike alert fires on real noise, in a real Prometheus.

The rules are generated for this test through their own configuration
(grafana/mixin/generate.py --set): JitterdCPUJitterSpike's threshold set to a threshold sized below and its
`for:` to FOR. jitterd samples CPU 1 in bursts at SCHED_FIFO priority 10 (so ordinary tasks of a
loaded machine cannot preempt it and make natural gaps that long; bursts keep it far from RT
throttling), and a real Prometheus scrapes it and evaluates the rules every second.

  0. The sampler runs alone for a few seconds; the alert's threshold is twice the largest gap it
     sees (at least 15 ms), and each injection 2.5 times the threshold, so the injected spikes are
     sized against this machine's own (skip, saying why, when that needs more than 70 ms a spin).
  1. Before the noise the alert must be inactive (neither pending nor firing) at an evaluation
     that saw the sampler's data. A natural spike above the threshold on a busy VM can happen; then
     the test waits, bounded, for the window to pass and the alert to clear again.
  2. noise_injector (SCHED_FIFO 50, pinned to CPU 1) then steals one spin every PERIOD; the alert must
     reach `firing` in /api/v1/alerts, labelled with cpu 1, within the deadline.

Usage: spike_alert_test.py --jitterd BINARY --injector NOISE_INJECTOR [unittest args].
Exit 77 (skip) without root (SCHED_FIFO), without CPU 1 and another CPU, without prometheus, or
when SCHED_FIFO is refused.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grafana_common as common  # noqa: E402
import prometheus_harness  # noqa: E402
from grafana_common import harness  # noqa: E402

CPU = 1
# The alert's threshold: at least MIN_THRESHOLD, and twice the largest gap the sampler sees here
# before any noise (a guest's host may stall it for milliseconds), so natural spikes stay under it.
# Each injection spins SPIN_OVER_THRESHOLD times the threshold (at least 40 ms); past MAX_SPIN the
# injections would take most of each PERIOD and run into RT throttling: the test skips, saying why.
MIN_THRESHOLD = 0.015  # s
NATURAL_MARGIN = 2.0
SPIN_OVER_THRESHOLD = 2.5
MIN_SPIN = 0.040       # s
MAX_SPIN = 0.070       # s
BACKGROUND_SECONDS = 6  # how long the natural window max is watched
FOR = "2s"
PERIOD = "100ms"      # one injection inside every burst
COUNT = 300           # 30 s at most; stopped as soon as the alert fires
INJECTOR = None

CONFIG = f"""\
cpus: "{CPU}"
sampler:
  duty_cycle: burst
  burst_spin: 100ms
  burst_period: 200ms
  warmup: 100ms
  realtime_priority: 10
  window: 10s
web:
  listen_address: "127.0.0.1:0"
probes:
  clock: {{enabled: false}}
  pacing: {{enabled: false}}
  kernel_cost: {{enabled: false}}
  pinning: {{enabled: false}}
  c2c: {{enabled: false}}
  posture: {{enabled: false}}
  attribution: {{enabled: false}}
"""


def prerequisites():
    if os.geteuid() != 0:
        return "needs root: the noise injector and the sampler run as SCHED_FIFO"
    allowed = os.sched_getaffinity(0)
    if CPU not in allowed or len(allowed) < 2:
        return f"needs cpu {CPU} and one more CPU to be allowed (allowed: {sorted(allowed)})"
    reason = prometheus_harness.missing()
    if reason:
        return reason
    probe = subprocess.run([INJECTOR, "--cpu", str(CPU), "--count", "1", "--spin", "10us"],
                           capture_output=True, text=True, timeout=10)
    if probe.returncode == harness.SKIP:
        return f"SCHED_FIFO not permitted here: {probe.stderr.strip()}"
    if probe.returncode != 0:
        print(f"FAIL: noise_injector probe exited {probe.returncode}: {probe.stderr}", file=sys.stderr)
        sys.exit(1)
    return None


class SpikeAlert(harness.DaemonTestCase):
    def alert_states(self, prometheus):
        """{cpu: state} of JitterdCPUJitterSpike in /api/v1/alerts."""
        answer = prometheus.api("alerts")
        self.assertEqual(answer.get("status"), "success", answer)
        return {a["labels"].get("cpu"): a["state"] for a in answer["data"]["alerts"]
                if a["labels"].get("alertname") == "JitterdCPUJitterSpike"}

    def last_evaluation(self, prometheus):
        for group in prometheus.api("rules")["data"]["groups"]:
            for rule in group["rules"]:
                if rule["name"] == "JitterdCPUJitterSpike":
                    self.assertEqual(rule["health"], "ok", rule)
                    return rule["lastEvaluation"]
        self.fail("JitterdCPUJitterSpike is not among the loaded rules")

    def natural_max_gap(self, daemon):
        """The largest window max gap the sampler reports over BACKGROUND_SECONDS, before noise."""
        def window_max():
            found = harness.select(daemon.scrape(), "jitterd_sampler_window_max_gap_seconds", cpu=str(CPU))
            return next(iter(found.values())) if len(found) == 1 else None
        harness.wait_until(lambda: window_max() is not None, timeout=15, what="the sampler's first window")
        largest = 0.0
        deadline = time.monotonic() + BACKGROUND_SECONDS
        while time.monotonic() < deadline:
            largest = max(largest, window_max() or 0.0)
            time.sleep(0.5)
        return largest

    def test_spike_alert_fires_on_injected_noise(self):
        daemon = self.daemon(CONFIG)
        natural = self.natural_max_gap(daemon)
        threshold = round(max(MIN_THRESHOLD, NATURAL_MARGIN * natural), 3)
        spin = max(MIN_SPIN, SPIN_OVER_THRESHOLD * threshold)
        print(f"natural window max {natural * 1e3:.2f} ms: threshold {threshold * 1e3:.0f} ms, "
              f"injections of {spin * 1e3:.0f} ms", file=sys.stderr)
        if spin > MAX_SPIN:
            raise unittest.SkipTest(f"cpu {CPU} sees natural gaps of {natural * 1e3:.1f} ms before any noise: an "
                                    f"injection that stands out would spin {spin * 1e3:.0f} ms of each {PERIOD}, "
                                    f"more than the {MAX_SPIN * 1e3:.0f} ms this test injects")
        rules_dir = os.path.join(self.workdir, "rules")
        subprocess.run([sys.executable, common.GENERATOR, "--out", rules_dir,
                        "--set", f"jitterSpikeMaxGapSeconds={threshold}", "--set", f"jitterSpikeFor={FOR}"],
                       check=True)
        rules_file = os.path.join(rules_dir, "prometheus", "jitterd.rules.yml")
        with open(rules_file, encoding="utf-8") as f:
            self.assertIn(f"> {threshold}'\n        for: '{FOR}'", f.read())

        with tempfile.TemporaryDirectory(prefix="jitterd-spike-prom-") as promdir:
            prometheus = prometheus_harness.Prometheus(promdir, daemon.address, daemon.telemetry_path, rules_file)
            self.addCleanup(prometheus.stop)
            prometheus.start()

            # 1. Inactive at an evaluation that saw the sampler's window max.
            def quiet():
                seen = prometheus.values(f'jitterd_sampler_window_max_gap_seconds{{cpu="{CPU}"}}')
                if not seen:
                    return False
                before = self.last_evaluation(prometheus)
                harness.wait_until(lambda: self.last_evaluation(prometheus) != before, timeout=10,
                                   interval=0.2, what="the next rule evaluation")
                states = self.alert_states(prometheus)
                if states:
                    print(f"natural spike before the noise (window max {seen[0]['value'][1]} s): "
                          f"{states}; waiting for it to clear", file=sys.stderr)
                return not states
            harness.wait_until(quiet, timeout=60, interval=0.5,
                               what="the spike alert to be inactive with data before the noise")

            # 2. The noise: the alert fires.
            started = time.monotonic()
            injector_log = os.path.join(self.workdir, "noise_injector.log")
            with open(injector_log, "wb") as log:
                injector = subprocess.Popen([INJECTOR, "--cpu", str(CPU), "--priority", "50", "--period", PERIOD,
                                             "--spin", f"{round(spin * 1e3)}ms", "--count", str(COUNT)],
                                            stdout=subprocess.DEVNULL, stderr=log)
            self.addCleanup(lambda: injector.poll() is None and (injector.kill(), injector.wait(5)))
            try:
                harness.wait_until(lambda: self.alert_states(prometheus).get(str(CPU)) == "firing",
                                   timeout=25, interval=0.25, what="JitterdCPUJitterSpike firing for cpu 1")
            finally:
                if injector.poll() is None:
                    injector.kill()
                injector.wait(5)
            max_gap = prometheus.values(f'jitterd_sampler_window_max_gap_seconds{{cpu="{CPU}"}}')
            print(f"firing {time.monotonic() - started:.1f} s after the noise started; window max "
                  f"{max_gap[0]['value'][1] if max_gap else '?'} s", file=sys.stderr)
            with open(injector_log, encoding="utf-8", errors="replace") as log:
                self.assertIn(injector.returncode, (0, -9), f"noise_injector failed: {log.read()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--injector", required=True)
    args, rest = parser.parse_known_args()
    INJECTOR = os.path.realpath(args.injector)
    sys.argv = [sys.argv[0]] + rest
    harness.main([prerequisites])
