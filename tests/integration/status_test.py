#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The status page on "/", its JSON form and the baseline download, from the real daemon.

- /status.json holds the numbers /metrics exports: both are read between two /status.json
  reads with the same window sequence (the rolling window moves once a second; equal sequences
  before and after the scrape mean the scrape saw the same window), so the figures compare
  exactly, not with a tolerance.
- "/" is HTML with the figures, the links and the bounded refresh; methods and bad queries fail.
- /baseline.json downloaded twice is two baselines `jitterd compare` accepts (exit 0), and so
  are a download and a `jitterd baseline` file (the same sub-windows).
- Text from the machine (a BIOS string, an IRQ name, through a --path.sysfs/--path.procfs
  fixture) comes out escaped.

Usage: status_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
"""

import json
import os
import shutil
import urllib.request

import harness

CONFIG = """\
cpus: "1"
sampler:
  duty_cycle: burst
  burst_spin: 20ms
  burst_period: 200ms
  warmup: 100ms
  interruption_threshold: 20us
  window: 10s
web:
  listen_address: "127.0.0.1:0"
probes:
  clock: {calibration_window: 20ms, sleep_requests: [10us, 1ms], sleep_samples: 5}
  pacing: {enabled: false}
  kernel_cost: {samples: 50}
  pinning: {enabled: false}
  c2c: {samples: 20, round_trips: 200, allow_unsampled: true}
  posture: {interval: 10s}
  attribution: {enabled: false}
"""

HOSTILE_BIOS = '<script>alert("bios")</script>'
HOSTILE_IRQ = "<img_src=x_onerror=alert(1)>"


def get(url, method="GET"):
    """(status, headers, body bytes); HTTP errors return their status."""
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.getheaders()), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def status_json(daemon):
    status, _, body = get(daemon.url("/status.json"))
    assert status == 200, status
    return json.loads(body)


def cpu_entry(document, cpu):
    return next(c for c in document["cpus"] if c["cpu"] == cpu)


class StatusPageTest(harness.DaemonTestCase):
    def start(self, config=CONFIG, args=()):
        daemon = self.daemon(config, args=args)

        def window_full():
            document = status_json(daemon)
            window = cpu_entry(document, 1)["window"]
            # The window is full once it spans its configured length (less one update).
            return window and window["seconds"] >= document["window"]["configured_seconds"] - 1.5 and document

        harness.wait_until(window_full, 30, interval=0.2, what="a full rolling window on cpu 1")
        return daemon

    def test_json_holds_what_metrics_exports_for_the_same_window(self):
        daemon = self.start()
        harness.wait_until(lambda: all(p.get("ran") for p in status_json(daemon)["probes"]), 40, interval=0.2,
                           what="every probe's first run")
        for attempt in range(50):
            before = status_json(daemon)
            samples = daemon.scrape()
            after = status_json(daemon)
            if before["window"]["sequence"] == after["window"]["sequence"]:
                break
        else:
            self.fail("the window moved during each of 50 scrapes")
        cpu = cpu_entry(before, 1)
        window = cpu["window"]
        quantiles = harness.select(samples, "jitterd_sampler_window_gap_seconds", cpu="1")
        for quantile, key in (("0.5", "p50_seconds"), ("0.99", "p99_seconds"), ("0.999", "p99_9_seconds"),
                              ("0.9999", "p99_99_seconds")):
            value = next(v for labels, v in quantiles.items() if dict(labels).get("quantile") == quantile)
            self.assertAlmostEqual(window[key], value, delta=abs(value) * 1e-9, msg=key)
        for name, figure in (("jitterd_sampler_window_max_gap_seconds", window["max_seconds"]),
                             ("jitterd_sampler_loop_floor_seconds", cpu["loop_floor_seconds"]),
                             ("jitterd_sampler_interruption_threshold_seconds",
                              cpu["interruption_threshold_seconds"]),
                             ("jitterd_sampler_realtime_priority", cpu["realtime_priority"]),
                             ("jitterd_sampler_up", 1 if cpu["up"] else 0),
                             ("jitterd_sampler_pinned", 1 if cpu["pinned"] else 0),
                             ("jitterd_sampler_memory_locked", 1 if cpu["memory_locked"] else 0)):
            scraped = next(iter(harness.select(samples, name, cpu="1").values()))
            self.assertAlmostEqual(scraped, figure, delta=abs(figure) * 1e-9, msg=name)
        self.assertAlmostEqual(next(iter(harness.select(samples, "jitterd_tick_frequency_hertz").values())),
                               before["tick"]["frequency_hertz"], delta=1e-3)
        # Probe results cannot move between the two reads unless a probe ran in between: compare
        # each probe's last run, the same value in both.
        for probe in after["probes"]:
            scraped = harness.select(samples, "jitterd_probe_last_run_timestamp_seconds", probe=probe["name"])
            earlier = next(p for p in before["probes"] if p["name"] == probe["name"])
            if earlier["last_run_unix_seconds"] == probe["last_run_unix_seconds"]:
                self.assertAlmostEqual(next(iter(scraped.values())), probe["last_run_unix_seconds"], delta=1e-3)
        self.assertGreaterEqual(window["interruptions_per_second"], 0)
        self.assertTrue(0 <= window["stolen_ratio"] < 1)
        self.assertIsNotNone(before["fingerprint"])
        self.stop_ok(daemon)

    def test_page_methods_and_refresh(self):
        daemon = self.start()
        status, headers, body = get(daemon.url("/"))
        self.assertEqual(status, 200)
        self.assertTrue(headers["Content-Type"].startswith("text/html"))
        self.assertEqual(headers.get("Cache-Control"), "no-store")
        page = body.decode("utf-8")
        for needle in ('id="cpu1-p99"', 'href="/metrics"', 'href="/status.json"', 'href="/baseline.json"',
                       "Content-Security-Policy", "<svg", "<h2>Probes</h2>", 'id="probe-c2c"'):
            self.assertIn(needle, page)
        self.assertNotIn("http-equiv=\"refresh\"", page)
        self.assertIn('http-equiv="refresh" content="10"', get(daemon.url("/?refresh=10"))[2].decode())
        self.assertIn('http-equiv="refresh" content="2"', get(daemon.url("/?refresh=1"))[2].decode())
        self.assertIn('http-equiv="refresh" content="3600"', get(daemon.url("/?refresh=99999"))[2].decode())
        self.assertEqual(get(daemon.url("/?refresh=soon"))[0], 400)
        for path in ("/", "/status.json", "/baseline.json"):
            with self.subTest(path=path):
                status, headers, body = get(daemon.url(path), method="HEAD")
                self.assertEqual((status, body), (200, b""))
                status, headers, _ = get(daemon.url(path), method="POST")
                self.assertEqual(status, 405)
                self.assertEqual(headers.get("Allow"), "GET, HEAD")
        self.stop_ok(daemon)

    def test_baseline_downloaded_twice_compares(self):
        daemon = self.start()
        harness.wait_until(lambda: status_json(daemon)["fingerprint"], 30, interval=0.2,
                           what="the posture probe's first run")
        paths = []
        for name in ("before", "after"):
            status, headers, body = get(daemon.url("/baseline.json"))
            self.assertEqual(status, 200)
            self.assertEqual(headers.get("Content-Disposition"), 'attachment; filename="jitterd-baseline.json"')
            document = json.loads(body)
            self.assertEqual(document["format"], "jitterd-baseline")
            cpu = next(c for c in document["cpus"] if c["cpu"] == 1)
            self.assertGreater(cpu["samples"], 0)
            self.assertGreaterEqual(len(cpu["sub_windows"]), 3)
            self.assertEqual(sum(w["samples"] for w in cpu["sub_windows"]), cpu["samples"])
            # The posture probe's fingerprint, with the hypervisor flag compare's allowances need.
            self.assertEqual(document["fingerprint"].get("hypervisor"), "yes" if harness.under_hypervisor() else "no")
            path = os.path.join(self.workdir, name + ".json")
            with open(path, "wb") as f:
                f.write(body)
            paths.append(path)
            # The second download from a later window.
            sequence = status_json(daemon)["window"]["sequence"]
            harness.wait_until(lambda: status_json(daemon)["window"]["sequence"] > sequence, 10,
                               what="the next window update")
        result = harness.run(["compare"] + paths, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("cpu 1", result.stdout)
        self.assertEqual("in a VM" in result.stdout, harness.under_hypervisor(), result.stdout)
        self.stop_ok(daemon)
        # A `jitterd baseline` file has the download's sub-windows (one recorder, one length):
        # compare accepts a file of the window's duration against a download.
        with open(paths[0]) as f:
            window_seconds = max(1, round(json.load(f)["duration_seconds"]))
        config = os.path.join(self.workdir, "baseline.yaml")
        harness.write_file(config, CONFIG)
        recorded = os.path.join(self.workdir, "recorded.json")
        result = harness.run(["baseline", "--config", config, "--duration", f"{window_seconds}s", "-o", recorded],
                             timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        result = harness.run(["compare", recorded, paths[0]], timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("cpu 1", result.stdout)

    def test_text_from_the_machine_is_escaped(self):
        fixture = os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "tuned_server")
        root = os.path.join(self.workdir, "root")
        shutil.copytree(fixture, root)
        harness.write_file(os.path.join(root, "sys/class/dmi/id/bios_vendor"), HOSTILE_BIOS + "\n")
        interrupts = os.path.join(root, "proc/interrupts")
        with open(interrupts) as f:
            text = f.read().replace("i801_smbus", HOSTILE_IRQ)
        harness.write_file(interrupts, text)
        config = CONFIG.replace("c2c: {samples: 20, round_trips: 200, allow_unsampled: true}",
                                "c2c: {enabled: false}").replace("attribution: {enabled: false}",
                                                                 "attribution: {interval: 10s}")
        daemon = self.daemon(config, args=["--path.sysfs", os.path.join(root, "sys"),
                                           "--path.procfs", os.path.join(root, "proc")])
        harness.wait_until(lambda: status_json(daemon)["fingerprint"], 30, interval=0.2,
                           what="the posture probe's first run")
        document = status_json(daemon)
        self.assertEqual(document["fingerprint"]["fields"]["bios_vendor"], HOSTILE_BIOS)
        page = get(daemon.url("/"))[2].decode("utf-8")
        self.assertNotIn("<script", page)
        self.assertNotIn("<img", page)
        self.assertIn("&lt;script&gt;alert(&quot;bios&quot;)&lt;/script&gt;", page)
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
