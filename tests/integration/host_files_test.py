#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""sysfs and procfs files that vanish while the daemon runs, and come back.

The daemon reads the machine through --path.sysfs and --path.procfs, here a copy of the
tuned_server fixture that the test edits under it. Files that vanish mid-run must be reported
(the log names them once, jitterd_posture_unreadable_files counts them), not be fatal (the daemon
keeps serving and sampling, the probes keep succeeding), and not be taken for a change of the
machine: a vanished /proc/cmdline is not a new kernel command line. When they come back, the log
says so and the count drops back.

Usage: host_files_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
"""

import os
import shutil

import harness

CONFIG = """\
cpus: "1"
sampler: {duty_cycle: burst, burst_spin: 20ms, burst_period: 200ms, warmup: 100ms}
web: {listen_address: "127.0.0.1:0"}
probes:
  clock: {enabled: false}
  pacing: {enabled: false}
  kernel_cost: {enabled: false}
  pinning: {enabled: false}
  c2c: {enabled: false}
  posture: {interval: 10s}
  attribution: {interval: 10s}
"""

# Relative to the fixture root: what a broken or half-unmounted sysfs and procfs lose.
VANISHING = ["proc/cmdline", "proc/interrupts", "proc/irq", "sys/devices/system/cpu/isolated",
             "sys/devices/system/cpu/cpu3/cpufreq"]


class HostFilesTest(harness.DaemonTestCase):
    def test_files_vanishing_mid_run_are_reported_not_fatal(self):
        fixture = os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "tuned_server")
        root = os.path.join(self.workdir, "root")
        shutil.copytree(fixture, root)
        daemon = self.daemon(CONFIG, args=["--path.sysfs", os.path.join(root, "sys"),
                                           "--path.procfs", os.path.join(root, "proc")])

        def last_run(probe):
            found = harness.select(daemon.scrape(), "jitterd_probe_last_run_timestamp_seconds", probe=probe)
            return next(iter(found.values()), 0)

        def after_next_runs(since):
            harness.wait_until(lambda: min(last_run("posture"), last_run("attribution")) > since, 25,
                               what="the next posture and attribution runs")

        def fingerprint():
            (labels, _), = harness.select(daemon.scrape(), "jitterd_fingerprint_info").items()
            return dict(labels)

        after_next_runs(0)
        first = last_run("posture")
        known = fingerprint()
        self.assertIn("isolcpus=", known["cmdline"])
        unreadable = daemon.value("jitterd_posture_unreadable_files")
        changes = daemon.value("jitterd_fingerprint_changes_total")

        for relative in VANISHING:
            path = os.path.join(root, relative)
            shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
        after_next_runs(first)
        self.assertIsNone(daemon.process.poll(), "the daemon must keep running")
        self.assertEqual(daemon.value("jitterd_probe_success", probe="posture"), 1)
        self.assertEqual(daemon.value("jitterd_probe_success", probe="attribution"), 1)
        self.assertEqual(daemon.value("jitterd_sampler_up", cpu="1"), 1)
        self.assertGreater(daemon.value("jitterd_posture_unreadable_files"), unreadable)
        self.assertEqual(fingerprint(), known, "a vanished /proc/cmdline is no new command line")
        self.assertEqual(daemon.value("jitterd_fingerprint_changes_total"), changes)
        log = daemon.log()
        self.assertIn("posture files unreadable: ", log)
        for name in ("proc/cmdline", "sys/devices/system/cpu/isolated"):
            self.assertIn(os.path.join(root, name), log)
        self.assertEqual(log.count("posture files unreadable: "), 1)
        # What could not be read exports no series, rather than 0s that read as "not isolated".
        scrape = daemon.scrape()
        for name in ("jitterd_posture_cpu_isolated", "jitterd_posture_cpu_device_irqs"):
            self.assertEqual(harness.select(scrape, name), {}, name)
        self.assertTrue(harness.select(scrape, "jitterd_posture_cpu_nohz_full"))

        second = last_run("posture")
        shutil.rmtree(root)
        shutil.copytree(fixture, root)
        after_next_runs(second)
        self.assertEqual(daemon.value("jitterd_posture_unreadable_files"), unreadable)
        self.assertIn("posture files readable again", daemon.log())
        self.assertEqual(daemon.value("jitterd_posture_cpu_isolated", cpu="3"), 1)
        self.assertTrue(harness.select(daemon.scrape(), "jitterd_posture_cpu_device_irqs"))
        self.assertEqual(fingerprint(), known)
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
