#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Series per sampled CPU, counted on a real scrape of the daemon with the shipped configuration
(config/jitterd.yaml, only the listen address and the posture interval changed so that every probe
has run twice within the test): DESIGN's cardinality budget, checked.

Two counts. Always: the series labelled with the sampled CPU, with another online CPU, with a c2c
pair, and the rest (machine-wide). Where at least 3 CPUs are allowed: the same configuration
sampling 1 CPU, then 2, and the difference of the totals (the c2c pairs the second CPU adds left
out, as DESIGN counts them apart) must be exactly what the second CPU's own labels account for.
Each per-CPU figure must stay within SAMPLED_CPU_BUDGET; docs/metrics.md states both
the budget and the figures measured.

Usage: series_budget_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2
CPUs. The 2-CPU case skips with fewer than 3 (one CPU always stays for housekeeping).
"""

import os
import re

import harness
from harness import select

SHIPPED_CONFIG = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")

# Series per sampled CPU with the shipped configuration, beyond what the same CPU exports
# unsampled. Measured on the 2-CPU KVM development VM: 80 (85 labelled with the sampled CPU:
# sampler 45, attribution 25, posture 15; an unsampled CPU has posture's 5). What a real server
# adds on top of that: the cpufreq governor and frequencies (4) and one series per enabled idle
# state beyond the VM's 2 (a handful on current x86). Budget: DESIGN's "~60 per sampled CPU" proved too small once attribution and posture
# count (docs/metrics.md says by how much); 100 leaves room for that hardware and no more.
SAMPLED_CPU_BUDGET = 100

# Series of the c2c pairs and of their relation classes (DESIGN budgets "plus the probed pairs"
# apart; docs/metrics.md, "c2c series bound").
PAIR_LABELS = ("cpu_a", "cpu_b", "relation")


def shipped_config(cpus=None):
    """The shipped configuration, listening on an ephemeral loopback port, posture every 10 s;
    `cpus` replaces `cpus: auto`."""
    with open(SHIPPED_CONFIG, encoding="utf-8") as f:
        text = f.read()
    replacements = [
        (r'^  listen_address: "0\.0\.0\.0:9978"$', '  listen_address: "127.0.0.1:0"'),
        # posture: its second run adds the IRQ-fired counts; attribution's (10 s) closes a window.
        (r"^(  posture:\n(?:    .*\n|\n)*?    interval: )1m$", r"\g<1>10s"),
    ]
    if cpus is not None:
        replacements.append((r"^cpus: auto$", f'cpus: "{cpus}"'))
    for pattern, replacement in replacements:
        text, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
        if count != 1:
            raise AssertionError(f"{SHIPPED_CONFIG}: no line matching /{pattern}/ to replace")
    return text


def count_series(samples, sampled):
    """{"sampled": {cpu: n}, "other": {cpu: n}, "pairs": n, "machine": n, "total": n}."""
    out = {"sampled": {}, "other": {}, "pairs": 0, "machine": 0, "total": len(samples)}
    for (_, labels) in samples:
        labels = dict(labels)
        if any(l in labels for l in PAIR_LABELS):
            out["pairs"] += 1
        elif "cpu" in labels and labels["cpu"] != "":
            cpu = int(labels["cpu"])
            group = out["sampled"] if cpu in sampled else out["other"]
            group[cpu] = group.get(cpu, 0) + 1
        else:
            out["machine"] += 1
    return out


class SeriesBudgetTest(harness.DaemonTestCase):
    def settled_scrape(self, daemon, sampled):
        """A scrape once every probe has run and attribution and posture twice: the full set."""
        def settled():
            samples = daemon.scrape()
            runs = [
                select(samples, "jitterd_posture_cpu_device_irqs_fired", cpu=str(cpu)) and
                select(samples, "jitterd_attribution_interruptions_total", cpu=str(cpu))
                for cpu in sampled]
            probes = select(samples, "jitterd_probe_last_run_timestamp_seconds")
            return samples if all(runs) and len(probes) >= 7 else None
        harness.wait_until(settled, timeout=60, interval=0.5,
                           what="second posture run and first attribution window")
        # Scraped again, the counts must not move: the set is complete, not mid-change.
        first = daemon.scrape()
        second = daemon.scrape()
        self.assertEqual(set(first), set(second), "the series set changed between two scrapes")
        return second

    def run_shipped(self, cpus=None):
        daemon = self.daemon(shipped_config(cpus))
        sampled = daemon.sampled_cpus()
        if cpus is not None:
            self.assertEqual(sampled, harness.parse_cpu_list(cpus))
        counts = count_series(self.settled_scrape(daemon, sampled), sampled)
        self.stop_ok(daemon)
        return sampled, counts

    def test_series_per_sampled_cpu(self):
        sampled, counts = self.run_shipped()
        self.assertEqual(sorted(counts["sampled"]), sampled, counts)
        others = set(range(os.cpu_count())) - set(sampled)
        per_other = set(counts["other"].values())
        for cpu, n in counts["sampled"].items():
            extra = n - max(per_other or {0})
            print(f"shipped configuration: cpu {cpu} sampled: {n} series with its label "
                  f"({extra} more than an unsampled cpu's {sorted(per_other)}); "
                  f"{counts['machine']} machine-wide, {counts['pairs']} c2c pair series, "
                  f"{counts['total']} in all")
            self.assertLessEqual(extra, SAMPLED_CPU_BUDGET, counts)
        self.assertTrue(set(counts["other"]) <= others, counts)

    def test_series_added_by_a_second_sampled_cpu(self):
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) < 3:
            self.skipTest(f"{len(allowed)} allowed CPUs: sampling 2 needs 3 (one stays for "
                          "housekeeping)")
        one, two = str(allowed[1]), f"{allowed[1]},{allowed[2]}"
        _, single = self.run_shipped(one)
        _, double = self.run_shipped(two)
        added = (double["total"] - double["pairs"]) - (single["total"] - single["pairs"])
        second = allowed[2]
        # What the second CPU's own labels account for: its sampled series, less what it had
        # as an unsampled CPU.
        own = double["sampled"][second] - single["other"].get(second, 0)
        print(f"shipped configuration: sampling cpu {second} too adds {added} series "
              f"({double['sampled'][second]} labelled cpu {second}, "
              f"{single['other'].get(second, 0)} before), c2c pairs "
              f"{single['pairs']} -> {double['pairs']}")
        self.assertEqual(added, own, (single, double))
        self.assertLessEqual(added, SAMPLED_CPU_BUDGET, (single, double))


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
