#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One loop's labels must never cost the host its scrape (issue 35, item 1): beside a live loop
(the poll_loop example) and a sampled CPU, segments whose labels take every name jitterd or
Prometheus puts on a loop's series (le, quantile, loop, cpu, cause, instance, job) or a reserved
one (__name__) are planted, with one accepted loop whose label value holds a backslash (escaped by
the exposition). The real scrape passes `promtool check metrics`, a real Prometheus scraping the
real daemon keeps `up` 1 with the sampler's and the loops' series, each hostile segment is refused
(reason name) with a log line naming its label, and the accepted odd value reads back unchanged.

Usage: loop_labels_scrape_test.py --jitterd BIN --poll-loop BIN; exit 77 (skip) without the
prometheus package or promtool.
"""

import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grafana_common as common  # noqa: E402
import prometheus_harness  # noqa: E402
from grafana_common import harness  # noqa: E402

HOSTILE = {"le": "le=0.5", "quantile": "quantile=0.99", "loop": "app=x,loop=evil", "cpu": "cpu=7",
           "cause": "cause=timer", "instance": "instance=evil:1", "job": "job=evil", "__name__": "__name__=x"}
ODD_VALUE = "C:\\dir\\x"  # printable ASCII with backslashes: accepted, escaped as \\ in the exposition

CONFIG = harness.BURST_SAMPLER + """\
loops:
  directory: {directory}
  stale_after: 2s
  interval: 500ms
"""


def segment_with(valid, name, labels):
    """The donor's segment under another name and labels (the layout's offsets 128 and 192)."""
    data = bytearray(valid)
    data[128:192] = name.encode().ljust(64, b"\0")
    data[192:384] = labels.encode().ljust(192, b"\0")
    return bytes(data)


class LoopLabelsScrapeTest(harness.DaemonTestCase):
    def setUp(self):
        super().setUp()
        for tool in ("prometheus", "promtool"):
            if shutil.which(tool) is None:
                self.skipTest(f"{tool} not found (install Debian's prometheus package)")
        self.loops = os.path.join(self.workdir, "loops")
        os.mkdir(self.loops)

    def plant(self):
        donor = common.ExampleLoop(self.loops, "donor", cpu=0)
        time.sleep(0.3)
        donor.stop()  # killed: its segment no longer changes under the copy
        path = os.path.join(self.loops, "jitterd-loop.donor")
        with open(path, "rb") as f:
            valid = f.read()
        os.unlink(path)
        for key, labels in HOSTILE.items():
            name = "hostile_" + key.strip("_")
            with open(os.path.join(self.loops, "jitterd-loop." + name), "wb") as out:
                out.write(segment_with(valid, name, labels))
        with open(os.path.join(self.loops, "jitterd-loop.odd"), "wb") as out:
            out.write(segment_with(valid, "odd", "path=" + ODD_VALUE))

    def test_hostile_labels_never_break_the_scrape(self):
        self.plant()
        live = common.ExampleLoop(self.loops, "live", cpu=0)
        self.addCleanup(live.stop)
        daemon = self.daemon(CONFIG.format(directory=self.loops) + harness.PROBES_OFF)
        up = lambda name: harness.select(daemon.scrape(), "jitterd_loop_up", loop=name)
        harness.wait_until(lambda: list(up("live").values()) == [1] and up("odd"), 15,
                           what="the live loop up and the odd-valued one exported")
        text = daemon.scrape_text()
        checked = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                                 timeout=30)
        output = (checked.stdout + checked.stderr).strip()
        self.assertEqual((checked.returncode, output), (0, ""), f"promtool check metrics:\n{output}")
        samples = harness.parse_metrics(text)
        odd = harness.select(samples, "jitterd_loop_up", loop="odd")
        escaped = ODD_VALUE.replace("\\", "\\\\")  # as the exposition writes it
        self.assertEqual([dict(k).get("path") for k in odd], [escaped], f"the odd value read back: {odd}")
        refused = next(iter(harness.select(samples, "jitterd_loop_refused_total", reason="name").values()))
        self.assertEqual(refused, len(HOSTILE), "each hostile segment refused, once")
        log = daemon.log()
        for key in HOSTILE:
            self.assertRegex(log, rf"jitterd-loop\.hostile_{key.strip('_')}: refused \(name\): .*'{key}'",
                             f"no refusal naming {key}; log:\n{log}")
            self.assertFalse(up("hostile_" + key.strip("_")), f"hostile_{key} has series")
        # A real Prometheus keeps the host: up 1, the sampler's and the loops' series there.
        prometheus = prometheus_harness.Prometheus(self.workdir, daemon.address, daemon.telemetry_path,
                                                   common.RULES_FILE)
        prometheus.start()
        self.addCleanup(prometheus.stop)
        harness.wait_until(lambda: [r["value"][1] for r in prometheus.values('up{job="jitterd"}')] == ["1"] and
                           prometheus.values('jitterd_loop_up{loop="live"}') and
                           prometheus.values('jitterd_sampler_gap_seconds_count'), 30,
                           what="Prometheus scraping: up 1 with the sampler's and the live loop's series")
        self.assertEqual([r["metric"].get("path") for r in prometheus.values('jitterd_loop_up{loop="odd"}')],
                         [ODD_VALUE])
        self.assertEqual(prometheus.values('jitterd_loop_up{loop=~"hostile.*"}'), [])
        self.stop_ok(daemon)


if __name__ == "__main__":
    common.take_poll_loop()
    harness.main()
