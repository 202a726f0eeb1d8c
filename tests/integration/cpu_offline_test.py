#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A sampled CPU taken offline while jitterd runs, and brought back; then a watched one.

When a CPU goes offline the kernel moves its threads elsewhere and widens their affinity; a
sampler that went on spinning would report another CPU's gaps under the offline CPU's label. The
daemon must instead report the CPU down (jitterd_sampler_up and jitterd_sampler_pinned 0, one
jitterd_sampler_cpu_losses_total, a log line), measure nothing for it meanwhile, keep the systemd
watchdog fed (the machine took the CPU away; nothing hangs), and sample it again once it is back,
pinned to it, without a restart.

A watched CPU (the application's) taken offline: jitterd_watch_cpu_online goes to 0, the CPU's
current figures (the application's threads there, its timer rate) leave /metrics rather than
going stale, its counters stay and never go down, and all comes back with the CPU.

Needs root and a writable /sys/devices/system/cpu/cpuN/online for the sampled CPU; runs alone
(RUN_SERIAL), since the machine has one CPU fewer while it runs.

Usage: cpu_offline_test.py --jitterd BINARY [unittest args]; exit 77 (skip) when it cannot run.
"""

import html
import json
import os
import signal
import socket
import time
import unittest

import harness


def sampled_cpu():
    return max(os.sched_getaffinity(0))


def online_path(cpu):
    return f"/sys/devices/system/cpu/cpu{cpu}/online"


def require_offlinable_cpu():
    if len(os.sched_getaffinity(0)) < 2:
        return "needs at least 2 allowed CPUs (one sampled, one for housekeeping)"
    if os.geteuid() != 0:
        return "needs root to take a CPU offline"
    path = online_path(sampled_cpu())
    if not os.path.exists(path):
        return f"{path} does not exist: the kernel cannot take that CPU offline"
    if not os.access(path, os.W_OK):
        return f"{path} is not writable here (a container, or a read-only sysfs)"
    return None


def set_online(cpu, online):
    with open(online_path(cpu), "w", encoding="ascii") as control:
        control.write("1" if online else "0")


def is_online(cpu):
    with open(online_path(cpu), encoding="ascii") as control:
        return control.read().strip() == "1"


CONFIG = """\
cpus: "{cpu}"
sampler:
  duty_cycle: continuous
  warmup: 100ms
  window: 10s
web: {{listen_address: "127.0.0.1:0"}}
probes:
  clock: {{enabled: false}}
  pacing: {{enabled: false}}
  kernel_cost: {{enabled: false}}
  pinning: {{enabled: false}}
  c2c: {{enabled: false}}
  posture: {{enabled: false}}
  attribution: {{enabled: false}}
"""


def threads_allowed_only_on(pid, cpu):
    """Thread ids of `pid` whose Cpus_allowed_list is exactly `cpu`."""
    found = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("Cpus_allowed_list:") and line.split(":", 1)[1].strip() == str(cpu):
                        found.append(int(tid))
        except FileNotFoundError:
            pass
    return found


def cpu_status(daemon, cpu):
    """The entry of `cpu` in /status.json."""
    document = json.loads(harness.http_get(daemon.url("/status.json"))[1])
    return next(entry for entry in document["cpus"] if entry["cpu"] == cpu)


WATCH_CONFIG = """\
cpus: []
web:
  listen_address: "127.0.0.1:0"
application:
  tasks: ["no-such-task*"]
watch:
  cpus: "{cpu}"
  interval: 200ms
"""


class CpuOfflineTest(harness.DaemonTestCase):
    def test_offline_watched_cpu_exports_no_current_figure(self):
        cpu = sampled_cpu()
        self.addCleanup(lambda: is_online(cpu) or set_online(cpu, True))
        daemon = self.daemon(WATCH_CONFIG.format(cpu=cpu) + harness.PROBES_OFF)
        label = {"cpu": str(cpu)}

        def values():
            samples = daemon.scrape()
            online = harness.select(samples, "jitterd_watch_cpu_online", **label)
            rate = harness.select(samples, "jitterd_watch_timer_interrupt_rate_hertz", **label)
            timer = harness.select(samples, "jitterd_watch_irqs_total", cause="timer", **label)
            return (next(iter(online.values()), None), next(iter(rate.values()), None),
                    next(iter(timer.values()), None))

        harness.wait_until(lambda: values()[1] is not None, timeout=10, what="the watch probe's first window")
        before = values()[2]
        set_online(cpu, False)
        down = harness.wait_until(lambda: (lambda v: v if v[0] == 0 else None)(values()), timeout=10,
                                  what=f"jitterd_watch_cpu_online{{cpu=\"{cpu}\"}} 0")
        self.assertIsNone(down[1], "no timer rate for an offline CPU")
        self.assertGreaterEqual(down[2], before, "the counters stay and do not go down")
        set_online(cpu, True)
        up = harness.wait_until(lambda: (lambda v: v if v[0] == 1 and v[1] is not None else None)(values()),
                                timeout=10, what="the watched CPU back online with a timer rate")
        self.assertGreaterEqual(up[2], down[2])
        self.assertIn("probe watch", daemon.log())  # it logged what it does
        self.stop_ok(daemon)

    def test_offline_cpu_is_reported_down_and_sampled_again_when_back(self):
        cpu = sampled_cpu()
        self.addCleanup(lambda: is_online(cpu) or set_online(cpu, True))
        notify_path = os.path.join(self.workdir, "notify.sock")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        self.addCleanup(notify.close)
        env = dict(os.environ, NOTIFY_SOCKET=notify_path, WATCHDOG_USEC="2000000")
        env.pop("WATCHDOG_PID", None)
        daemon = self.daemon(CONFIG.format(cpu=cpu), env=env)
        pid = daemon.process.pid

        def metric(name):
            return daemon.value(name, cpu=str(cpu))

        harness.wait_until(lambda: metric("jitterd_sampler_sampled_seconds_total") > 0, 10,
                           what="the sampler's first published progress")
        self.assertEqual(metric("jitterd_sampler_up"), 1)
        self.assertEqual(metric("jitterd_sampler_pinned"), 1)
        self.assertEqual(metric("jitterd_sampler_cpu_losses_total"), 0)
        self.assertEqual(len(threads_allowed_only_on(pid, cpu)), 1, "one sampler thread pinned to the cpu")
        self.assertEqual(cpu_status(daemon, cpu)["error"], "")

        set_online(cpu, False)
        harness.wait_until(lambda: metric("jitterd_sampler_up") == 0 and metric("jitterd_sampler_pinned") == 0,
                           10, what=f"cpu {cpu} reported down")
        self.assertEqual(metric("jitterd_sampler_cpu_losses_total"), 1)
        harness.wait_until(lambda: "the sampler is off its CPU" in daemon.log(), 5, what="the log line")
        self.assertEqual(threads_allowed_only_on(pid, cpu), [], "no thread may still claim the offline cpu")
        # /status.json and the page say the same, in words: which CPU, since when, why.
        entry = cpu_status(daemon, cpu)
        self.assertEqual((entry["up"], entry["pinned"]), (False, False), entry)
        self.assertRegex(entry["error"], rf"^cpu {cpu} is offline \(or outside this process's cpuset\): the sampler "
                                         r"cannot pin itself to it since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; not sampled")
        escaped = html.escape(entry["error"]).replace("&#x27;", "&#39;")  # as jitterd writes it
        self.assertIn(escaped, harness.http_get(daemon.url("/"))[1])

        # Down, nothing is measured for the CPU: the sampled time stands still, while the
        # watchdog pings go on (every WATCHDOG_USEC/2 = 1 s).
        sampled_down = metric("jitterd_sampler_sampled_seconds_total")
        samples_down = daemon.value("jitterd_sampler_gap_seconds_count", cpu=str(cpu))
        notify.settimeout(0.2)
        pings = 0
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline:
            try:
                if b"WATCHDOG=1" in notify.recv(4096):
                    pings += 1
            except socket.timeout:
                pass
        self.assertGreaterEqual(pings, 2, f"only {pings} WATCHDOG=1 in 3.5 s with the cpu offline")
        self.assertEqual(metric("jitterd_sampler_sampled_seconds_total"), sampled_down)
        self.assertEqual(daemon.value("jitterd_sampler_gap_seconds_count", cpu=str(cpu)), samples_down)
        self.assertEqual(daemon.process.poll(), None, "the daemon must keep running")

        set_online(cpu, True)
        harness.wait_until(lambda: metric("jitterd_sampler_up") == 1 and metric("jitterd_sampler_pinned") == 1,
                           10, what=f"cpu {cpu} sampled again")
        harness.wait_until(lambda: metric("jitterd_sampler_sampled_seconds_total") > sampled_down, 10,
                           what="sampling to resume")
        harness.wait_until(lambda: "the sampler is back on its CPU" in daemon.log(), 5, what="the log line")
        self.assertEqual(len(threads_allowed_only_on(pid, cpu)), 1, "the sampler pinned itself back")
        self.assertEqual(metric("jitterd_sampler_cpu_losses_total"), 1)
        self.assertEqual(cpu_status(daemon, cpu)["error"], "")
        daemon.signal(signal.SIGTERM)
        self.assertEqual(daemon.process.wait(10), 0, daemon.log())


if __name__ == "__main__":
    harness.main([require_offlinable_cpu])
