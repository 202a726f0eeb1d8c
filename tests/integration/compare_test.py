#!/usr/bin/env python3
"""Baselines and compare with the real binary on CPU 1 (what `cpus: auto` samples on a 2-CPU
machine).

--case same:  two 8 s baselines back to back compare with no figure "worse"; and the bad inputs
              (missing, truncated, newer major version, foreign JSON) exit 66/65 naming the file.
--case noise: a baseline, then one taken while noise_injector (SCHED_FIFO, pinned to CPU 1,
              20 us busy every 5 ms) runs, compare as "worse". The injector is started first and
              the baseline only once it has said it is running. Needs root; skips (77) otherwise.

Usage: compare_test.py --jitterd BINARY --case same|noise [--injector NOISE_INJECTOR]
"""

import argparse
import json
import re
import os
import subprocess
import sys
import tempfile
import unittest

import harness

EXIT_BAD_BASELINE, EXIT_UNREADABLE = 65, 66
SECONDS = 8
CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 10us
"""
INJECTOR = None


# The noise case samples at SCHED_FIFO priority 10, below the injector's 60: the injector still
# takes the CPU, while anything else the machine runs there (CI shares its machine) cannot, so
# the quiet baseline stays quiet enough for the injected gaps to stand out.
CONFIG_FIFO = CONFIG + "  realtime_priority: 10\n"


def take_baseline(workdir, name, config_text=CONFIG):
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    path = os.path.join(workdir, name)
    result = harness.run(["baseline", "--config", config, "--duration", f"{SECONDS}s", "--probes", "kernel_cost",
                          "-o", path], timeout=SECONDS + 20)
    if result.returncode != 0:
        raise AssertionError(f"baseline exited {result.returncode}: {result.stderr}")
    return path


def compare(before, after):
    result = harness.run(["compare", before, after, "--format", "json"])
    if result.returncode != 0:
        raise AssertionError(f"compare exited {result.returncode}: {result.stderr}")
    return json.loads(result.stdout)


def cpu_verdicts(comparison, verdict):
    return [f"{f['scope']} {f['figure']}: {f['before']:.4g} -> {f['after']:.4g} (p {f['p_value']:.2g})"
            for f in comparison["figures"] if f["scope"].startswith("cpu ") and f["verdict"] == verdict]


class SameMachine(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="jitterd_compare_")

    def test_back_to_back_is_not_worse(self):
        before = take_baseline(self.workdir, "before.json")
        after = take_baseline(self.workdir, "after.json")
        comparison = compare(before, after)
        self.assertTrue(any(f["scope"] == "cpu 1" for f in comparison["figures"]), comparison)
        self.assertEqual(cpu_verdicts(comparison, "worse"), [])
        self.assertEqual(comparison["changed"], [])
        table = harness.run(["compare", before, after])
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("what changed", table.stdout)
        self.assertIn("what it did", table.stdout)

        with open(before) as f:
            text = f.read()
        bad = {
            "truncated.json": (text[: len(text) // 2], "not valid JSON"),
            "newer.json": (json.dumps(dict(json.loads(text), format_version="2.0")), "newer than this jitterd"),
            "foreign.json": ('{"status": "success"}', "not a jitterd baseline"),
        }
        for name, (content, reason) in bad.items():
            path = os.path.join(self.workdir, name)
            with open(path, "w") as f:
                f.write(content)
            result = harness.run(["compare", before, path])
            self.assertEqual(result.returncode, EXIT_BAD_BASELINE, f"{name}: {result.stderr}")
            self.assertIn(path, result.stderr)
            self.assertIn(reason, result.stderr)
        missing = os.path.join(self.workdir, "absent.json")
        result = harness.run(["compare", missing, after])
        self.assertEqual(result.returncode, EXIT_UNREADABLE, result.stderr)
        self.assertIn(missing, result.stderr)


class InjectedNoise(unittest.TestCase):
    def setUp(self):
        self.workdir = tempfile.mkdtemp(prefix="jitterd_compare_")

    def test_injected_noise_is_worse(self):
        before = take_baseline(self.workdir, "quiet.json", CONFIG_FIFO)
        count = (SECONDS + 10) * 200  # one every 5 ms, longer than the baseline with its start-up
        injector = subprocess.Popen([INJECTOR, "--cpu", "1", "--priority", "60", "--period", "5ms", "--spin", "20us",
                                     "--count", str(count)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            line = injector.stderr.readline()
            if "running" not in line:
                raise AssertionError(f"noise_injector did not start: {line}{injector.stderr.read()}")
            after = take_baseline(self.workdir, "noisy.json", CONFIG_FIFO)
        finally:
            injector.kill()
            injector.wait()
            injector.stderr.close()
        comparison = compare(before, after)
        worse = cpu_verdicts(comparison, "worse")
        print("\n".join(["worse:"] + worse), file=sys.stderr)
        # The injected 20 us gaps must be seen as more gaps over 10 or 20 us...
        self.assertTrue([w for w in worse if re.search(r" gaps_over_(10|20)us_per_s:", w)],
                        json.dumps(comparison["figures"][:12], indent=1))
        # ...and nothing they feed may look better: the rates over 10 and 20 us and the stolen
        # share. Other figures (p99.99 is one gap in 10^4, the injections about one in 10^5;
        # the rates over 50 us and more, which the injected gaps do not reach) may truly differ
        # between two runs of this guest in either direction: they are not asserted on.
        fed = [b for b in cpu_verdicts(comparison, "better")
               if re.search(r" (gaps_over_(10|20)us_per_s|stolen_share):", b)]
        self.assertEqual(fed, [])


def noise_prerequisites():
    if os.geteuid() != 0:
        return "needs root: the noise injector runs as SCHED_FIFO"
    probe = subprocess.run([INJECTOR, "--cpu", "1", "--count", "1", "--period", "1ms", "--spin", "10us"],
                           capture_output=True, text=True, timeout=10)
    if probe.returncode == 77:
        return f"SCHED_FIFO or pinning refused: {probe.stderr.strip()}"
    return None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--case", choices=["same", "noise"], required=True)
    parser.add_argument("--injector")
    args, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    if args.case == "same":
        sys.argv.append("SameMachine")
        harness.main([harness.require_two_cpus])
    else:
        INJECTOR = os.path.realpath(args.injector)
        sys.argv.append("InjectedNoise")
        harness.main([harness.require_two_cpus, noise_prerequisites])
