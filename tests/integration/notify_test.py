#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""systemd notification protocol, checked on a unix datagram socket of our own: READY=1 only once
/metrics answers, WATCHDOG=1 pings, RELOADING=1/READY=1 around SIGHUP, STOPPING=1 and a clean
exit within 2 s on SIGTERM.

Usage: notify_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
"""

import os
import re
import signal
import socket
import time
import unittest

import harness

STATUS_RE = re.compile(r"sampling cpus (\S+) .*; housekeeping on cpus (\S+); serving (\S+)$")


class NotifySocket:
    """A bound datagram socket that collects the daemon's sd_notify messages."""

    def __init__(self, address):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.received = []  # (monotonic time, {key: value})

    def close(self):
        self.sock.close()

    def receive(self, timeout):
        """The next message as {key: value}, or None after timeout seconds."""
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return None
        fields = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
        self.received.append((time.monotonic(), fields))
        return fields

    def wait_for(self, key, timeout, skip=("WATCHDOG",)):
        """Receives until a message with `key` arrives; messages with only the keys in `skip`
        are passed over, anything else first is a failure. Returns the message."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            message = self.receive(remaining) if remaining > 0 else None
            if message is None:
                raise AssertionError(f"no {key}=1 within {timeout} s; received so far: "
                                     f"{[m for _, m in self.received]}")
            if key in message:
                return message
            if not set(message) <= set(skip):
                raise AssertionError(f"expected {key}=1, got {message}")


def pacing_only_config(cpu, pacing):
    """Samples `cpu`, serves on a free loopback port, and runs the pacing probe alone with the
    given `probes.pacing` settings (a YAML flow mapping's inside)."""
    return f"""\
cpus: "{cpu}"
web: {{listen_address: "127.0.0.1:0"}}
probes:
  clock: {{enabled: false}}
  kernel_cost: {{enabled: false}}
  pinning: {{enabled: false}}
  c2c: {{enabled: false}}
  posture: {{enabled: false}}
  attribution: {{enabled: false}}
  pacing: {{{pacing}}}
"""


class NotifyTest(harness.DaemonTestCase):
    def notify_env(self, address, **extra):
        env = dict(os.environ)
        env.pop("WATCHDOG_PID", None)
        env.pop("WATCHDOG_USEC", None)
        env["NOTIFY_SOCKET"] = address
        env.update(extra)
        return env

    def test_lifecycle(self):
        path = os.path.join(self.workdir, "notify.sock")
        notify = NotifySocket(path)
        self.addCleanup(notify.close)
        daemon = self.daemon(env=self.notify_env(path, WATCHDOG_USEC="1000000"), start=False)
        daemon.start(wait_listening=False)

        # READY=1 first, naming the sampled CPUs; /metrics must answer at once, no retry.
        ready = notify.wait_for("READY", timeout=10, skip=())
        self.assertEqual(ready["READY"], "1")
        status = STATUS_RE.search(ready.get("STATUS", ""))
        self.assertTrue(status, f"STATUS does not name cpus and address: {ready}")
        code, body = harness.http_get(f"http://{status.group(3)}/metrics")
        self.assertEqual(code, 200)
        self.assertIn("jitterd_sampler_up", body)
        daemon.wait_listening()
        self.assertEqual(status.group(3), daemon.address)
        sampled = harness.parse_cpu_list(status.group(1))
        self.assertEqual(sampled, daemon.sampled_cpus())
        self.assertNotIn(0, sampled, "cpu 0 is left to housekeeping by cpus: auto")
        self.assertEqual(set(harness.parse_cpu_list(status.group(2))) & set(sampled), set())

        # WATCHDOG=1 every WATCHDOG_USEC/2 = 0.5 s while the samplers make progress.
        pings = []
        deadline = time.monotonic() + 2.3
        while time.monotonic() < deadline:
            message = notify.receive(deadline - time.monotonic())
            if message is not None:
                self.assertEqual(message, {"WATCHDOG": "1"})
                pings.append(time.monotonic())
        self.assertGreaterEqual(len(pings), 3, f"only {len(pings)} WATCHDOG=1 in 2.3 s")
        intervals = [b - a for a, b in zip(pings, pings[1:])]
        self.assertLess(max(intervals), 1.0, f"ping intervals {intervals} reach WATCHDOG_USEC")
        self.assertGreater(min(intervals), 0.2, f"ping intervals {intervals}: far too often")

        # SIGHUP: RELOADING=1, then READY=1 again.
        daemon.signal(signal.SIGHUP)
        reloading = notify.wait_for("RELOADING", timeout=5)
        self.assertEqual(reloading["RELOADING"], "1")
        ready = notify.wait_for("READY", timeout=5)
        self.assertTrue(STATUS_RE.search(ready.get("STATUS", "")), ready)

        # SIGTERM: STOPPING=1 and exit 0 within 2 s.
        started = time.monotonic()
        daemon.signal(signal.SIGTERM)
        notify.wait_for("STOPPING", timeout=2)
        remaining = 2.0 - (time.monotonic() - started)
        self.stop_ok(daemon, timeout=max(remaining, 0.01))

    def test_watchdog_pings_while_a_probe_borrows_a_sampled_cpu(self):
        """A probe step on a sampled CPU pauses its sampler; the sampler still counts as alive, so
        the pings go on. The pacing run below holds cpu 1 for about 8 s in all, four 2 s rates and
        two short unthrottled runs, each one borrow, while the watchdog wants a ping every 2 s."""
        cpu = max(os.sched_getaffinity(0))
        config = pacing_only_config(cpu, f"cpu: {cpu}, rates: [1000, 2000], duration: 2s, action: noop")
        path = os.path.join(self.workdir, "notify.sock")
        notify = NotifySocket(path)
        self.addCleanup(notify.close)
        daemon = self.daemon(config_text=config, env=self.notify_env(path, WATCHDOG_USEC="2000000"), start=False)
        daemon.start(wait_listening=False)
        notify.wait_for("READY", timeout=10, skip=())
        daemon.wait_listening()

        def pacing_ran():
            found = harness.select(daemon.scrape(), "jitterd_probe_duration_seconds", probe="pacing")
            return next(iter(found.values())) if found else None

        pings = [time.monotonic()]
        deadline = time.monotonic() + 40
        while pacing_ran() is None and time.monotonic() < deadline:
            message = notify.receive(0.2)
            if message is not None:
                self.assertEqual(message, {"WATCHDOG": "1"})
                pings.append(time.monotonic())
        duration = pacing_ran()
        self.assertIsNotNone(duration, f"the pacing probe did not finish in 40 s; log:\n{daemon.log()}")
        self.assertGreaterEqual(duration, 8.0, "the probe was shorter than the borrow this test is about")
        intervals = [b - a for a, b in zip(pings, pings[1:])]
        self.assertGreaterEqual(len(intervals), 8, f"only {len(pings)} pings")
        self.assertLess(max(intervals), 2.0, f"ping intervals {intervals} reach WATCHDOG_USEC")
        self.assertNotIn("withholding the watchdog ping", daemon.log())
        self.assertEqual(harness.select(daemon.scrape(), "jitterd_probe_success", probe="pacing"),
                         {harness.labels(probe="pacing"): 1.0})
        self.stop_ok(daemon)

    def test_reload_does_not_wait_for_a_long_probe_unit(self):
        """A pacing rate on a housekeeping CPU is one 10 s unit that cancellation cannot cut; a
        reload that restarts the probes must not wait for it: READY=1 follows RELOADING=1 within
        1.5 s, and SIGTERM still stops the daemon within 2 s while the old unit runs on."""
        cpu = max(os.sched_getaffinity(0))
        config = lambda interval: pacing_only_config(cpu, f"interval: {interval}, rates: [1000], duration: 10s, action: noop")
        path = os.path.join(self.workdir, "notify.sock")
        notify = NotifySocket(path)
        self.addCleanup(notify.close)
        daemon = self.daemon(config_text=config("15m"), env=self.notify_env(path), start=False)
        daemon.start(wait_listening=False)
        notify.wait_for("READY", timeout=10, skip=())
        time.sleep(3.0)  # the first round starts 2 s after READY: the 10 s rate is under way
        harness.write_file(daemon.config_path, config("20m"))
        started = time.monotonic()
        daemon.signal(signal.SIGHUP)
        notify.wait_for("RELOADING", timeout=5)
        notify.wait_for("READY", timeout=5)
        self.assertLess(time.monotonic() - started, 1.5, f"reload waited for the probe; log:\n{daemon.log()}")
        self.assertIn("probes restarted", daemon.log())
        started = time.monotonic()
        daemon.signal(signal.SIGTERM)
        notify.wait_for("STOPPING", timeout=2)
        self.stop_ok(daemon, timeout=max(2.0 - (time.monotonic() - started), 0.01))

    def test_abstract_socket_and_foreign_watchdog_pid(self):
        name = f"jitterd-notify-test-{os.getpid()}-{time.monotonic_ns()}"
        notify = NotifySocket("\0" + name)
        self.addCleanup(notify.close)
        # WATCHDOG_PID names another process: the watchdog is not ours to ping.
        env = self.notify_env("@" + name, WATCHDOG_USEC="200000", WATCHDOG_PID="1")
        daemon = self.daemon(env=env, start=False)
        daemon.start(wait_listening=False)
        notify.wait_for("READY", timeout=10, skip=())
        message = notify.receive(1.0)
        self.assertIsNone(message, "pinged a watchdog that belongs to WATCHDOG_PID=1")
        daemon.signal(signal.SIGTERM)
        notify.wait_for("STOPPING", timeout=5, skip=())
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
