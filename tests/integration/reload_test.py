#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SIGHUP reloads: a broken file is rejected with every error as file:line:col while the old
configuration keeps serving; a good changed file takes effect. Both show in the reload metrics.

Usage: reload_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
"""

import re
import signal
import time

import harness

# An unknown key and a bad value: both must be reported, with their positions.
BROKEN_CONFIG = """\
cpus: auto
sampler:
  duty_cycle: sometimes
  burst_spinn: 20ms
web:
  listen_address: "127.0.0.1:0"
"""

CONTINUOUS_CONFIG = harness.BURST_CONFIG.replace("duty_cycle: burst", "duty_cycle: continuous")


class ReloadTest(harness.DaemonTestCase):
    def metrics(self, daemon, cpu):
        samples = daemon.scrape()

        def one(name, **pairs):
            found = harness.select(samples, name, **pairs)
            self.assertEqual(len(found), 1, f"{name}{pairs}: {found}")
            return next(iter(found.values()))
        return {
            "successful": one("jitterd_config_last_reload_successful"),
            "timestamp": one("jitterd_config_last_reload_success_timestamp_seconds"),
            "duty": one("jitterd_sampler_duty_cycle_ratio", cpu=cpu),
        }

    def wait_log(self, daemon, pattern, timeout, start=0):
        """Waits for a log line matching pattern after offset start; returns the match."""
        return harness.wait_until(lambda: re.search(pattern, daemon.log()[start:], re.M),
                                  timeout, what=f"log line /{pattern}/; log:\n{daemon.log()}")

    def test_broken_then_good_reload(self):
        daemon = self.daemon()
        cpu = str(daemon.sampled_cpus()[0])
        initial = self.metrics(daemon, cpu)
        self.assertEqual(initial["successful"], 1)
        self.assertAlmostEqual(initial["duty"], 0.1, places=6)
        # When the samplers started (fleet tells a counter reset by it): about now.
        started = daemon.value("jitterd_sampler_start_time_seconds")
        self.assertLess(abs(started - time.time()), 120)

        # Broken file: rejected, every error named with file:line:col, old config still serving.
        harness.write_file(daemon.config_path, BROKEN_CONFIG)
        offset = len(daemon.log())
        address = daemon.address
        daemon.signal(signal.SIGHUP)
        self.wait_log(daemon, r"reload rejected", timeout=5, start=offset)
        log = daemon.log()[offset:]
        path = re.escape(daemon.config_path)
        self.assertRegex(log, rf"{path}:3:15: sampler\.duty_cycle: .*sometimes")
        self.assertRegex(log, rf"{path}:4:3: sampler\.burst_spinn: unknown key")
        self.assertEqual(daemon.refresh_address(), address, "a rejected reload moved the server")
        harness.wait_until(lambda: self.metrics(daemon, cpu)["successful"] == 0, timeout=5,
                           what="jitterd_config_last_reload_successful 0")
        after_broken = self.metrics(daemon, cpu)
        self.assertEqual(after_broken["timestamp"], initial["timestamp"])
        self.assertAlmostEqual(after_broken["duty"], 0.1, places=6)
        self.assertIsNone(daemon.process.poll(), "daemon exited on a broken reload")
        self.assertEqual(daemon.value("jitterd_sampler_up", cpu=cpu), 1)
        self.assertEqual(daemon.value("jitterd_sampler_start_time_seconds"), started)

        # Good, changed file: takes effect. Only the sampler settings changed, so the samplers
        # restart and the web server keeps its (ephemeral) port.
        time.sleep(0.01)  # the success timestamp must be able to move
        harness.write_file(daemon.config_path, CONTINUOUS_CONFIG)
        offset = len(daemon.log())
        daemon.signal(signal.SIGHUP)
        self.wait_log(daemon, r"configuration reloaded \(samplers restarted, probes restarted, web server kept\)",
                      timeout=10, start=offset)
        self.assertEqual(daemon.refresh_address(), address, "a sampler-only reload moved the server")
        harness.wait_until(lambda: self.metrics(daemon, cpu)["duty"] == 1, timeout=5,
                           what="jitterd_sampler_duty_cycle_ratio 1")
        after_good = self.metrics(daemon, cpu)
        self.assertEqual(after_good["successful"], 1)
        self.assertGreater(after_good["timestamp"], initial["timestamp"])
        # New samplers, new counters from zero: their start time moved.
        self.assertGreater(daemon.value("jitterd_sampler_start_time_seconds"), started)
        self.assertEqual(daemon.value("jitterd_sampler_up", cpu=cpu), 1)
        self.stop_ok(daemon)

    def test_usr1_usr2_are_logged_and_sigquit_stops_cleanly(self):
        # Their default actions once ended the daemon without a word.
        daemon = self.daemon()
        for signum, name in ((signal.SIGUSR1, "USR1"), (signal.SIGUSR2, "USR2")):
            offset = len(daemon.log())
            daemon.signal(signum)
            self.wait_log(daemon, rf"received SIG{name}: nothing to do; sampling cpus", timeout=5, start=offset)
            self.assertIsNone(daemon.process.poll())
        daemon.scrape()
        daemon.signal(signal.SIGQUIT)
        self.assertEqual(daemon.process.wait(harness.STOP_TIMEOUT), 0, daemon.log())
        self.assertIn("received SIGQUIT, stopping", daemon.log())

    def test_unchanged_reload_keeps_serving(self):
        daemon = self.daemon()
        address = daemon.address
        before = daemon.value("jitterd_config_last_reload_success_timestamp_seconds")
        started = daemon.value("jitterd_sampler_start_time_seconds")
        time.sleep(0.01)
        offset = len(daemon.log())
        daemon.signal(signal.SIGHUP)
        self.wait_log(daemon, r"configuration reloaded; sampling and web server unchanged", timeout=5,
                      start=offset)
        harness.wait_until(
            lambda: daemon.value("jitterd_config_last_reload_success_timestamp_seconds") > before,
            timeout=5, what="the success timestamp to move")
        self.assertEqual(daemon.refresh_address(), address)
        self.assertEqual(daemon.value("jitterd_config_last_reload_successful"), 1)
        self.assertEqual(daemon.value("jitterd_sampler_start_time_seconds"), started)  # samplers kept
        self.stop_ok(daemon)


class StopDuringProbeTest(harness.DaemonTestCase):
    """SIGTERM while a probe is inside one long unit of work still stops at once."""

    def test_sigterm_during_a_long_pacing_run(self):
        config = harness.BURST_CONFIG[:harness.BURST_CONFIG.index("probes:")] + """\
probes:
  clock: {enabled: false}
  kernel_cost: {enabled: false}
  pinning: {enabled: false}
  pacing: {rates: [1000], duration: 5s, action: noop}
"""
        daemon = self.daemon(config_text=config)
        time.sleep(3.0)  # the first probe round starts 2 s after start-up: pacing is running
        started = time.monotonic()
        self.stop_ok(daemon)
        elapsed = time.monotonic() - started
        self.assertLess(elapsed, 1.5, f"stopping took {elapsed:.2f} s")
        self.assertIn("a probe is still running", daemon.log())


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
