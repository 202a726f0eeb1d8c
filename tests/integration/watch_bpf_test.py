#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The watch's bpf method against the real kernel, and its fallback.

A daemon that samples nothing watches CPU 1 with method auto, as root: the BPF program loads
(jitterd_watch_method_info says bpf), its families are exported for the watched CPU, the timer
interrupts it pairs grow between two readings, every interruption has its entry (no unmatched
exit after the first reading) and `jitterd report watch` prints the tables by cause. Then the
same daemon without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN (root's bounding set cut by setpriv):
method auto falls back to counts and says why, naming the capabilities; method bpf does the same
and warns in the log. Last, as the unit with systemd/jitterd-bpf.conf runs it: user nobody with
exactly CAP_BPF and CAP_PERFMON loads the program; with either alone it falls back, naming both.
Skips without root, without CPU 1, without setpriv, or where this kernel cannot load the program
at all (the reason is printed).

Usage: watch_bpf_test.py --jitterd BINARY [unittest args]
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

CPU = 1


def config(method):
    return f"""\
cpus: []
web:
  listen_address: "127.0.0.1:0"
application:
  tasks: ["no-such-application*"]
watch:
  cpus: "{CPU}"
  method: {method}
  interval: 500ms
{harness.PROBES_OFF}"""


def prerequisites():
    if os.geteuid() != 0:
        return "needs root: loading a BPF program needs CAP_BPF and CAP_PERFMON"
    if CPU not in os.sched_getaffinity(0) or len(os.sched_getaffinity(0)) < 2:
        return f"needs cpu {CPU} and one more CPU for the daemon"
    if shutil.which("setpriv") is None:
        return "needs setpriv (util-linux) to run the daemon without the BPF capabilities"
    return None


def method_info(daemon):
    info = harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_watch_method_info"),
                              timeout=15, what="jitterd_watch_method_info")
    return dict(next(iter(info)))


class WatchBpfTest(harness.DaemonTestCase):
    def bpf_daemon(self):
        daemon = self.daemon(config("auto"))
        info = method_info(daemon)
        if info["method"] != "bpf":
            self.skipTest(f"this kernel does not load the BPF program: {info['reason']}")
        return daemon

    def test_bpf_loads_and_pairs_the_watched_cpus_interrupts(self):
        daemon = self.bpf_daemon()

        def timer_interrupts():
            return harness.select(daemon.scrape(), "jitterd_watch_interruptions_total", cpu=str(CPU),
                                  cause="timer")

        first = next(iter(harness.wait_until(timer_interrupts, timeout=10, what="the bpf families").values()))
        harness.wait_until(lambda: next(iter(timer_interrupts().values())) > first, timeout=10,
                           what="timer interrupts paired on cpu 1")
        samples = daemon.scrape()
        for family in ("jitterd_watch_stolen_seconds_total", "jitterd_watch_longest_interruption_seconds",
                       "jitterd_watch_preemptions_by_class_total", "jitterd_watch_tick_stop_failures_total",
                       "jitterd_watch_interruption_duration_seconds_count", "jitterd_watch_bpf_faults_total"):
            self.assertTrue(harness.select(samples, family, cpu=str(CPU)), f"{family} for cpu {CPU}")
        self.assertFalse(harness.select(samples, "jitterd_watch_interruptions_total", cpu="0"),
                         "cpu 0 is not watched")
        # Exits without an entry happen only while the program attaches (an interrupt under way).
        unmatched = harness.select(samples, "jitterd_watch_bpf_faults_total", cpu=str(CPU), kind="unmatched_exits")
        self.assertLessEqual(next(iter(unmatched.values())), 2)
        (hertz,) = harness.select(samples, "jitterd_watch_timer_interrupt_rate_hertz", cpu=str(CPU)).values()
        print(f"bpf on cpu {CPU}: {next(iter(timer_interrupts().values())):.0f} timer interruptions, "
              f"{hertz:.1f} per second", file=sys.stderr)

        report = subprocess.run([harness.JITTERD, "report", "watch", "--config", daemon.config_path],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(report.returncode, 0, report.stderr)
        self.assertIn("interruptions by cause (bpf", report.stdout)
        self.assertIn("note: method: bpf (auto: the BPF program loaded)", report.stdout)

    def without_bpf_capabilities(self, method):
        daemon = self.daemon(config(method), start=False)
        daemon.args = ["setpriv", "--bounding-set", "-bpf,-perfmon,-sys_admin", "--"] + daemon.args
        daemon.start()
        return daemon, method_info(daemon)

    def test_auto_falls_back_to_counts_without_the_capabilities(self):
        daemon, info = self.without_bpf_capabilities("auto")
        self.assertEqual(info["method"], "counts")
        self.assertEqual(info["requested"], "auto")
        self.assertIn("CAP_BPF", info["reason"])
        self.assertTrue(harness.select(daemon.scrape(), "jitterd_watch_irqs_total", cpu=str(CPU)),
                        "the counts still come")

    def method_as_nobody(self, caps):
        self.bpf_daemon().stop()  # skips where even root cannot load it
        os.chmod(self.workdir, 0o755)  # nobody reads the configuration and writes nothing
        daemon = self.daemon(config("auto"), start=False)
        os.chmod(daemon.config_path, 0o644)
        c = "".join(f",+{cap}" for cap in caps)
        daemon.args = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", f"--inh-caps=-all{c}",
                       f"--ambient-caps=-all{c}", f"--bounding-set=-all{c}", "--"] + daemon.args
        daemon.start()
        info = method_info(daemon)
        self.stop_ok(daemon)
        return info

    def test_the_drop_in_capabilities_suffice(self):
        info = self.method_as_nobody(["bpf", "perfmon"])
        self.assertEqual(info["method"], "bpf", info["reason"])

    def test_either_capability_alone_does_not(self):
        for caps in (["bpf"], ["perfmon"]):
            info = self.method_as_nobody(caps)
            self.assertEqual(info["method"], "counts", caps)
            self.assertIn("CAP_BPF and CAP_PERFMON", info["reason"])

    def test_bpf_asked_for_warns_and_falls_back(self):
        daemon, info = self.without_bpf_capabilities("bpf")
        self.assertEqual((info["method"], info["requested"]), ("counts", "bpf"))
        harness.wait_until(lambda: "CAP_BPF" in daemon.log(), timeout=10, what="the fallback's log line")
        line = next(line for line in daemon.log().splitlines() if "CAP_BPF" in line)
        self.assertRegex(line, r"warn", line)


if __name__ == "__main__":
    harness.main([prerequisites])
