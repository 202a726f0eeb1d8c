#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jitterd fleet on a small live fleet: three real daemons on this machine, each with its own
fingerprint (two read from fixture procfs roots, tests/fixtures/tuned_server and untuned_laptop,
and one from the real /proc), sampling CPU 1 in bursts, scraped every second by a real Prometheus
(Debian's, 127.0.0.1). After about 15 s of scrapes, `jitterd fleet` over that range:
  - by kernel: three cohorts of one host each, with the fixtures' kernel releases and this
    machine's; every comparison "too few hosts" (never a verdict), the classes too small to judge,
    and each host's figures read (p50 of its CPU 1 at an exported bound);
  - by cpu_model, with --reference naming this machine's model: the same three hosts.

Usage: fleet_live_test.py --jitterd BINARY; exit 77 (skip) without prometheus or with fewer than
2 CPUs.
"""

import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import harness  # noqa: E402
import prometheus_harness  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "fixtures")
CONFIG = """\
cpus: "1"
sampler:
  duty_cycle: burst
  warmup: 200ms
  interruption_threshold: 10us
  window: 10s
web:
  listen_address: "127.0.0.1:0"
probes:
  clock: {enabled: false}
  posture: {interval: 10s}
  pacing: {enabled: false}
  kernel_cost: {enabled: false}
  pinning: {enabled: false}
  c2c: {enabled: false}
  attribution: {enabled: false}
"""
PROCFS = [os.path.join(FIXTURES, "tuned_server", "proc"), os.path.join(FIXTURES, "untuned_laptop", "proc"), "/proc"]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def model_of(procfs):
    for line in read(os.path.join(procfs, "cpuinfo")).splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""


class FleetLive(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-fleet-live-")
        cls.daemons = []
        cls.prometheus = None
        try:
            for i, procfs in enumerate(PROCFS):
                workdir = os.path.join(cls._tmp.name, f"d{i}")
                os.makedirs(workdir)
                daemon = harness.Daemon(workdir, CONFIG, args=["--path.procfs", procfs])
                daemon.start(timeout=20)
                cls.daemons.append(daemon)
            rules = os.path.join(cls._tmp.name, "rules.yml")
            with open(rules, "w") as f:
                f.write("groups: []\n")
            # The harness's configuration has one target in a quoted list: three, joined inside it.
            targets = '", "'.join(d.address for d in cls.daemons)
            cls.prometheus = prometheus_harness.Prometheus(cls._tmp.name, targets, cls.daemons[0].telemetry_path,
                                                           rules)
            cls.prometheus.start()

            def every_fingerprint():
                return len(cls.prometheus.values("jitterd_fingerprint_info")) >= 3
            harness.wait_until(every_fingerprint, 40, interval=0.5, what="three jitterd_fingerprint_info series")
            cls.start = time.time()
            time.sleep(15)  # the range: 15 scrapes of each host
            cls.end = time.time()
            harness.wait_until(lambda: cls.prometheus.values(
                f"timestamp(jitterd_sampler_sampled_seconds_total) >= {cls.end}"), 20, interval=0.2,
                what="a scrape after the range ingested")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.prometheus is not None:
            cls.prometheus.stop()
        for daemon in cls.daemons:
            daemon.kill()
        cls._tmp.cleanup()

    def fleet(self, *args):
        result = harness.run(["fleet", "--prometheus", self.prometheus.url(""), "--range",
                              f"{self.start:.3f}/{self.end:.3f}", "--format", "json"] + list(args), timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_by_kernel(self):
        answer = self.fleet("--by", "kernel")
        kernels = sorted(read(os.path.join(p, "sys", "kernel", "osrelease")).strip() for p in PROCFS)
        self.assertEqual(sorted(c["kernel"] for c in answer["cohorts"]), kernels, answer["cohorts"])
        self.assertTrue(all(c["hosts"] == 1 for c in answer["cohorts"]))
        self.assertTrue(answer["comparisons"])
        self.assertTrue(all(r["verdict"] == "too few hosts" for r in answer["comparisons"]), answer["comparisons"])
        self.assertTrue(all(not c["judged"] for c in answer["classes"]))
        self.assertEqual(answer["drifted_hosts"], [])
        self.assertEqual(answer["left_out"], [])
        # Each host's own figures were read: a p50 at an exported bound, a sampled CPU's rates.
        self.assertEqual(len(answer["hosts"]), 3)
        for host in answer["hosts"]:
            self.assertGreater(host["p50_ns (worst CPU)"], 0, host)
            self.assertIsNotNone(host["interruptions_per_s (median CPU)"], host)
        # Each was read at the range's ends, or in full with why; never for want of the samplers'
        # start time, which every real daemon exports (a scrape missed for a few seconds on a busy
        # machine may still send one to a full read).
        reads = answer["reads"]
        self.assertEqual(reads["at_ends"] + len(reads["in_full"]), 3, reads)
        self.assertFalse([r for r in reads["in_full"] if "start_time" in r["why"]], reads)
        self.assertLess(reads["scrape_interval_seconds"], 5, reads)
        # No cohort shares a CPU model with another: nothing is compared, and a note says why.
        self.assertTrue(all(r["reference_median"] is None for r in answer["comparisons"]))
        self.assertIn("like against like", "\n".join(answer["notes"]))

    def test_by_cpu_model_with_reference(self):
        model = model_of("/proc")
        answer = self.fleet("--by", "cpu_model", "--reference", model)
        self.assertEqual(answer["reference"], model)
        self.assertEqual(sorted(c["cpu_model"] for c in answer["cohorts"]), sorted(model_of(p) for p in PROCFS))


if __name__ == "__main__":
    harness.main([prometheus_harness.missing, harness.require_two_cpus])
