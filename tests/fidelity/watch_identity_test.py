#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The watch's BPF maps under attack: another user starts 16,500 threads of the application's
name on the watched CPU; IPIs come from more senders than the program's sender map holds.

busy_app (the application: one thread that busy-polls, SCHED_FIFO priority 1, pinned to CPU 1)
runs as root. An impostor (busy_app --impostors, as user nobody) first starts 16,500 sleeping
threads named as the application, pinned to CPU 1: by name and CPU they are the application's.
The daemon watches CPU 1 with the bpf method, and noise_injector (SCHED_FIFO 50 on CPU 1) preempts
the application INJECTIONS times. The kernel's ground truth is the application thread's own
count of involuntary switches (/proc/PID/task/TID/status), as the same daemon reading reads it
(jitterd_watch_preemptions_total: the counts every method takes), so both cover one window.

  A. application: {tasks: ["busyapp*"], user: 0}: the impostors are not the application
     (jitterd_watch_application_threads is 1, none untracked), and every preemption of the real
     application is counted (jitterd_watch_preemptions_by_class_total over every class grows by
     the kernel's involuntary switches within 1%, at least 90% of the injections), booked to the
     injector's class (stray);
  B. IPI senders age out: a thread of the application on another CPU sends CPU 1 a TLB shootdown
     under each of SENDER_NAMES names, then, two windows later, under SENDER_NAMES new names
     (7,000 together, the map holds 4,096): none is untracked, and the IPIs counted by sender
     (jitterd_watch_ipis_sent_total, every sender) grow by at least the shootdowns.

Usage: watch_identity_test.py --jitterd BINARY --injector NOISE_INJECTOR --app BUSY_APP
Exit 77 (skip) without root, without CPU 1 and one more CPU, where the BPF program does not load,
or where the impostors' threads or SCHED_FIFO are refused.
"""

import os
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import watched_app  # noqa: E402

CPU = 1
APP_NAME = "busyapp-poll"
IMPOSTORS = 16500
NOBODY = 65534
INJECTIONS = 600
PERIOD_US = 2000
SPIN_US = 50
TOLERANCE = 0.01
SENDER_NAMES = 3500
INJECTOR = None  # set in __main__
APP = None


def config(identity):
    return watched_app.watch_config(CPU, "bpf", "500ms", application=identity)


def prerequisites():
    return watched_app.missing(CPU, "the application runs SCHED_FIFO, the impostor becomes another user")


class WatchIdentityTest(harness.DaemonTestCase):
    def start(self, args, what):
        return watched_app.start_busy_app(self, args, what)

    def values(self, daemon):
        samples = daemon.scrape()
        by_class = harness.select(samples, "jitterd_watch_preemptions_by_class_total", cpu=str(CPU))
        threads = harness.select(samples, "jitterd_watch_application_threads", cpu=str(CPU))
        # The same reading's count of the application's involuntary switches (/proc, the counts
        # every method reads): the kernel's figure over the same window.
        switches = harness.select(samples, "jitterd_watch_preemptions_total", cpu=str(CPU))
        untracked = harness.select(samples, "jitterd_watch_application_untracked_threads")
        last = harness.select(samples, "jitterd_probe_last_run_timestamp_seconds", probe="watch")
        if not (by_class and threads and untracked and last and switches):
            return None
        classes = {dict(labels)["class"]: v for labels, v in by_class.items()}
        return (classes, next(iter(threads.values())), next(iter(untracked.values())), next(iter(last.values())),
                next(iter(switches.values())))

    def reading_after(self, daemon, after, threads):
        """The first reading of a watch run that began after `after` and saw `threads` threads."""
        return harness.wait_until(
            lambda: (lambda v: v if v and v[3] > after and v[1] == threads else None)(self.values(daemon)),
            timeout=60, what=f"a watch reading with {threads} application threads on cpu {CPU}")

    def unthrottled(self):
        """RT throttling is turned off by the caller (after its application starts) and restored after."""
        watched_app.restore_rt_runtime_after(self)

    def bpf_daemon(self, identity):
        daemon = self.daemon(config(identity))
        info = harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_watch_method_info"),
                                  timeout=15, what="jitterd_watch_method_info")
        labels = dict(next(iter(info)))
        if labels.get("method") != "bpf":
            self.skipTest(f"the BPF program does not load here: {labels.get('reason')}")
        return daemon

    def attack(self, identity, threads_seen):
        """The impostors, the application and the injections under `identity`: (preemptions
        booked to stray tasks, the kernel's involuntary switches)."""
        daemon = self.bpf_daemon(identity)
        # The impostors first: once the application holds CPU 1 without throttling, nothing else
        # starts there.
        self.start([APP, "--cpu", str(CPU), "--seconds", "120", "--name", APP_NAME, "--impostors", str(IMPOSTORS),
                    "--user", str(NOBODY)], "the impostor")
        self.unthrottled()
        app = self.start([APP, "--cpu", str(CPU), "--priority", "1", "--seconds", "120", "--name", APP_NAME],
                         "busy_app")
        watched_app.unthrottle()
        before = self.reading_after(daemon, time.time(), threads_seen)
        switches_before = watched_app.involuntary_switches(app.pid)
        watched_app.inject(self, INJECTOR, CPU, INJECTIONS, SPIN_US, PERIOD_US)
        time.sleep(0.1)  # the last switch back to the application
        injected = watched_app.involuntary_switches(app.pid) - switches_before
        after = self.reading_after(daemon, time.time(), threads_seen)
        switches = after[4] - before[4]
        counted = sum(after[0].values()) - sum(before[0].values())
        stray = after[0].get("stray", 0) - before[0].get("stray", 0)
        print(f"{identity.strip() or 'by name alone'}: {after[1]:.0f} application threads on cpu {CPU}, "
              f"{after[2]:.0f} untracked; the kernel saw {injected} involuntary switches of the application "
              f"over the injections and {switches:.0f} over the readings' window, "
              f"jitterd counted {counted:.0f} preemptions ({stray:.0f} by stray tasks)", file=sys.stderr)
        self.assertEqual(after[2], 0, "every application thread is in the program's map")
        self.assertGreaterEqual(injected, 0.9 * INJECTIONS, "the injections preempted the application")
        self.assertLessEqual(abs(counted - switches), TOLERANCE * switches,
                             "the real application's preemptions are all counted")
        return stray, min(injected, INJECTIONS)

    def test_a_user_names_the_application_and_impostors_are_not_it(self):
        stray, injections = self.attack("  user: 0\n", 1)
        # The injector's preemptions are a stray task's (kernel workers bound to CPU 1 are not).
        self.assertGreaterEqual(stray, (1 - TOLERANCE) * injections, "the injector's preemptions are a stray task's")

    def test_ipi_senders_age_out(self):
        daemon = self.bpf_daemon("  user: 0\n")
        # SCHED_FIFO and no throttling: the application holds CPU 1, so each unmap on the other
        # CPU flushes CPU 1's TLB with an IPI (a CPU running another task is flushed lazily).
        self.unthrottled()
        app = self.start([APP, "--cpu", str(CPU), "--priority", "1", "--seconds", "120", "--name", APP_NAME,
                          "--shootdowns", str(SENDER_NAMES), "--shooter-cpu",
                          str(min(os.sched_getaffinity(0) - {CPU})), "--shooter-names", str(SENDER_NAMES)],
                         "busy_app")
        watched_app.unthrottle()

        def senders():
            samples = daemon.scrape()
            sent = harness.select(samples, "jitterd_watch_ipis_sent_total", cpu=str(CPU))
            untracked = harness.select(samples, "jitterd_watch_ipi_senders_untracked_total")
            last = harness.select(samples, "jitterd_probe_last_run_timestamp_seconds", probe="watch")
            if not (untracked and last):
                return None
            return sum(sent.values()), next(iter(untracked.values())), next(iter(last.values()))

        def after(t):
            return harness.wait_until(lambda: (lambda v: v if v and v[2] > t else None)(senders()), timeout=15,
                                      what="a watch reading")

        before = after(time.time())
        for _ in range(2):
            app.send_signal(signal.SIGUSR1)
            line = app.stderr.readline().strip()
            self.assertEqual(line, f"busy_app: shootdowns {SENDER_NAMES}")
            after(time.time() + 1.5)  # two more readings: the round's names are idle for a window
        end = after(time.time())
        print(f"{2 * SENDER_NAMES} sender names: {end[0] - before[0]:.0f} IPIs counted by sender, "
              f"{end[1] - before[1]:.0f} untracked", file=sys.stderr)
        self.assertLessEqual(end[1] - before[1], 50, "the map aged out the first round's senders")
        self.assertGreaterEqual(end[0] - before[0], 2 * SENDER_NAMES, "every shootdown counted by its sender")


if __name__ == "__main__":
    INJECTOR, APP = watched_app.tools()
    harness.main([prerequisites])
