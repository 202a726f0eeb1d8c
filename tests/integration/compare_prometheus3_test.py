#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare --prometheus against an upstream Prometheus 3 that converts jitterd's classic gap
histograms to native histograms with custom buckets at scrape time
(`convert_classic_histograms_to_nhcb: true`, Prometheus 3's way to store a classic histogram as
one series): such a server keeps no jitterd_sampler_gap_seconds_bucket series at all, only
jitterd_sampler_gap_seconds with the exported bounds as its custom buckets.

The server is upstream Prometheus 3.16 (module v0.316.0) built from the Go module proxy into
BUILD/tools/bin (go install, static discovery only: -tags remove_all_sd; on request, as the
other Go tools: JITTERD_GO_TOOLS=1, dev.sh test-fleet). It scrapes the real jitterd, sampling
CPU 1 in bursts, every second; two ranges are recorded back to back, each ending once a scrape at
or after its end is ingested.
  - the conversion took place: no _bucket series, a native histogram series per sampled CPU;
  - compare reads the native histograms as the classic buckets they came from: each range's
    gap count, gaps over 10 us per sampled second and p50 agree exactly with what the server's own
    raw samples of the same ranges give (computed here from its native histogram samples);
  - the table and the verdicts are there as on a classic server.

Usage: compare_prometheus3_test.py --jitterd BINARY --build-dir BUILD; exit 77 (skip) without
two CPUs, without JITTERD_GO_TOOLS=1 and no built server, or without Go or its module proxy.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "grafana"))
import harness  # noqa: E402
import prometheus_harness  # noqa: E402

MODULE, VERSION = "github.com/prometheus/prometheus/cmd/prometheus", "v0.316.0"  # Prometheus 3.16.0
RANGE = 8
BUILD_DIR = None

CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: jitterd
    metrics_path: {path}
    convert_classic_histograms_to_nhcb: true
    static_configs:
      - targets: ["{target}"]
"""


def server_binary():
    return os.path.join(BUILD_DIR, "tools", "bin", "prometheus")


def missing_server():
    """A skip reason, or None once the upstream server is built (building it here if asked)."""
    binary = server_binary()
    if os.access(binary, os.X_OK):
        return None
    if os.environ.get("JITTERD_GO_TOOLS") != "1":
        return (f"no upstream Prometheus 3 in {binary}: JITTERD_GO_TOOLS=1 ctest -R compare_prometheus3 builds it "
                "(go install, a few minutes of CPU, once; dev.sh test-fleet does it)")
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if go is None:
        return "no Go toolchain to build upstream Prometheus 3 with"
    proxy = subprocess.run([go, "env", "GOPROXY"], capture_output=True, text=True).stdout.split(",")[0].strip()
    if proxy.startswith("http"):
        try:
            urllib.request.urlopen(f"{proxy}/github.com/prometheus/prometheus/@v/{VERSION}.info", timeout=20).close()
        except OSError as error:
            return f"the Go module proxy {proxy} is not reachable ({error})"
    print(f"installing upstream prometheus {VERSION} into {os.path.dirname(binary)} (go install; minutes, once)",
          flush=True)
    env = dict(os.environ, GOBIN=os.path.dirname(binary), GOFLAGS="-trimpath")
    os.makedirs(env["GOBIN"], exist_ok=True)
    result = subprocess.run(["nice", go, "install", "-tags", "remove_all_sd", f"{MODULE}@{VERSION}"], env=env,
                            capture_output=True, text=True, timeout=3000)
    if result.returncode != 0:
        print(f"FAIL: go install {MODULE}@{VERSION}:\n{result.stderr[-4000:]}", file=sys.stderr)
        sys.exit(1)
    return None


class ComparePrometheus3(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="jitterd-compare-prom3-")
        workdir = cls._tmp.name
        cls.daemon = harness.Daemon(workdir, harness.BURST_SAMPLER)
        cls.daemon.start(timeout=20)
        config = CONFIG.format(path=cls.daemon.telemetry_path, target=cls.daemon.address)
        cls.prometheus = prometheus_harness.Prometheus(workdir, cls.daemon.address, cls.daemon.telemetry_path, None,
                                                       binary=server_binary(), config_text=config)
        try:
            cls.prometheus.start(timeout=60)
            harness.wait_until(lambda: cls.prometheus.values(f"jitterd_sampler_gap_seconds{{{cls.selector()}}}"),
                               30, interval=0.2, what="the converted gap histogram in Prometheus")
            cls.before = cls.record()
            cls.after = cls.record()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.prometheus.stop()
        cls.daemon.kill()
        cls._tmp.cleanup()

    @classmethod
    def selector(cls):
        return f'instance="{cls.daemon.address}",cpu="1"'

    @classmethod
    def record(cls):
        return cls.prometheus.record_range(f"jitterd_sampler_sampled_seconds_total{{{cls.selector()}}}", RANGE)

    def raw(self, expr, range_):
        """The server's raw samples of `expr` over the range, as compare asks for them."""
        start, end = range_
        answer = self.prometheus.query(f"{expr}[{int(math.ceil((end - start) * 1000))}ms]", time=f"{end:.3f}")
        self.assertEqual(answer.get("status"), "success", answer)
        self.assertEqual(len(answer["data"]["result"]), 1, answer)
        return answer["data"]["result"][0]

    def server_figures(self, range_):
        """Gaps, gaps over 10 us per sampled second and p50 from the native histogram samples."""
        histograms = self.raw(f"jitterd_sampler_gap_seconds{{{self.selector()}}}", range_)["histograms"]

        def at_or_under(h, bound):
            return sum(float(b[3]) for b in h.get("buckets", []) if float(b[2]) <= bound * (1 + 1e-9))
        first, last = histograms[0][1], histograms[-1][1]
        count = float(last["count"]) - float(first["count"])
        seconds_values = self.raw(f"jitterd_sampler_sampled_seconds_total{{{self.selector()}}}", range_)["values"]
        seconds = float(seconds_values[-1][1]) - float(seconds_values[0][1])
        under_10us = at_or_under(last, 1e-5) - at_or_under(first, 1e-5)
        p50 = None
        bounds = sorted({float(b[2]) for b in last.get("buckets", []) if b[2] != "+Inf"})
        for bound in bounds:
            if at_or_under(last, bound) - at_or_under(first, bound) >= math.ceil(count / 2):
                p50 = round(bound * 1e12) / 1e3
                break
        return {"samples": count, "gaps_over_10us_per_s": (count - under_10us) / seconds, "p50_ns": p50}

    def compare(self, fmt="json"):
        return harness.run(["compare", "--prometheus", self.prometheus.url(""), "--instance", self.daemon.address,
                            "--before", "{:.3f}/{:.3f}".format(*self.before),
                            "--after", "{:.3f}/{:.3f}".format(*self.after), "--format", fmt], timeout=60)

    def test_only_native_histograms_are_kept(self):
        self.assertEqual(self.prometheus.values(f"jitterd_sampler_gap_seconds_bucket{{{self.selector()}}}"), [])
        sample = self.prometheus.values(f"jitterd_sampler_gap_seconds{{{self.selector()}}}")[0]
        self.assertIn("histogram", sample, sample)
        buckets = sample["histogram"][1]["buckets"]
        self.assertTrue(all(b[0] == 0 for b in buckets), buckets)  # custom buckets: (lower, upper]

    def test_figures_agree_with_the_servers_samples(self):
        result = self.compare()
        self.assertEqual(result.returncode, 0, result.stderr)
        comparison = json.loads(result.stdout)
        figures = {f["figure"]: f for f in comparison["figures"] if f["scope"] == "cpu 1"}
        for side, range_ in (("before", self.before), ("after", self.after)):
            expected = self.server_figures(range_)
            self.assertGreater(expected["samples"], 0, expected)
            for name in ("gaps_over_10us_per_s", "p50_ns"):
                self.assertAlmostEqual(figures[name][side], expected[name],
                                       delta=1e-9 * max(1, abs(expected[name] or 0)), msg=f"{side} {name}")
        table = self.compare(fmt="table")
        self.assertEqual(table.returncode, 0, table.stderr)
        print(table.stdout, file=sys.stderr)
        self.assertIn("what it did", table.stdout)


def main():
    global BUILD_DIR
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    args, rest = parser.parse_known_args()
    BUILD_DIR = os.path.realpath(args.build_dir)
    sys.argv = [sys.argv[0]] + rest
    harness.main([harness.require_two_cpus, missing_server])


if __name__ == "__main__":
    main()
