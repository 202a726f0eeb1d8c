#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The bpf method's preempted time against the kernel's run-queue wait, per preemption, for short
and long preemptions side by side in one run.

busy_app (one thread that busy-polls, SCHED_FIFO priority 1, pinned to CPU 1) is the
application; a daemon watches CPU 1 with the bpf method. For each injected spin (200, 50 and
10 us), noise_injector (SCHED_FIFO 50 on CPU 1) preempts the application INJECTIONS times, and
over that window:

  the program's time per preemption:  jitterd_watch_stolen_seconds_total{cause="preempted"} /
                                      jitterd_watch_interruptions_total{cause="preempted"}
  the kernel's:                       the thread's run-queue wait (/proc/PID/task/TID/schedstat) /
                                      its involuntary switches (status)

must agree within TOLERANCE of an injection's length (its median from deadline to the spin's end)
beside the difference measured first over BACKGROUND_SECONDS without injections (per second,
scaled to the window, spread over its preemptions), and the counts within 1% (+2). The kernel's wait
starts at the preempting task's wakeup, inside the timer interrupt that woke it, several
microseconds before the switch: a program that started the preemption at the switch reported
30-40% less at 10 us ([Watching](../../docs/watch.md#every-interruption-its-length-and-who-caused-it-method-bpf)
lists each microsecond). What the program still takes out and the kernel does not, the interrupts
during a preemption (booked to their own causes), is small here, and printed: the program's
interruptions on CPU 1 over each window.

The window's edges: the application is stopped (SIGSTOP: not runnable, so neither side books
anything) while the daemon's reading and the test's reading of the kernel's figures are taken,
and continued for the injections, so both sides cover the same preemptions.

Usage: preempted_wait_test.py --jitterd BINARY --injector NOISE_INJECTOR --app BUSY_APP
Exit 77 (skip) without root, without CPU 1 and one more CPU, where the BPF program does not load,
or when SCHED_FIFO is refused.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import watched_app  # noqa: E402

CPU = 1
APP_NAME = "busyapp-poll"
INJECTIONS = 1000
SPINS_US = (200, 50, 10)
TOLERANCE = 0.10
COUNT_TOLERANCE = 0.01
BACKGROUND_SECONDS = 2
INJECTOR = None  # set in __main__
APP = None

CONFIG = watched_app.watch_config(CPU, "bpf", "200ms", "1s")


def prerequisites():
    return watched_app.missing(CPU, "the injector and the application run SCHED_FIFO, RT throttling is turned off")


def kernel_figures(pid):
    """(run-queue wait in seconds, involuntary switches) of thread `pid` as the kernel keeps them."""
    with open(f"/proc/{pid}/task/{pid}/schedstat", encoding="ascii") as f:
        wait_ns = int(f.read().split()[1])
    return wait_ns / 1e9, watched_app.involuntary_switches(pid)


def task_state(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


class PreemptedWaitTest(harness.DaemonTestCase):
    def program_figures(self, daemon):
        samples = daemon.scrape()
        stolen = harness.select(samples, "jitterd_watch_stolen_seconds_total", cpu=str(CPU), cause="preempted")
        count = harness.select(samples, "jitterd_watch_interruptions_total", cpu=str(CPU), cause="preempted")
        every = harness.select(samples, "jitterd_watch_interruptions_total", cpu=str(CPU))
        last = harness.select(samples, "jitterd_probe_last_run_timestamp_seconds", probe="watch")
        if not (stolen and count and last):
            return None
        interrupts = sum(every.values()) - next(iter(count.values()))
        return next(iter(stolen.values())), next(iter(count.values())), interrupts, next(iter(last.values()))

    def reading_after(self, daemon, after):
        return harness.wait_until(lambda: (lambda v: v if v and v[3] > after else None)(self.program_figures(daemon)),
                                  timeout=10, what="a watch reading")

    def stopped_reading(self, daemon, app):
        """The daemon's figures and the kernel's, both taken while the application is stopped."""
        app.send_signal(signal.SIGSTOP)
        harness.wait_until(lambda: task_state(app.pid) == "T", timeout=5, what="busy_app stopped")
        program = self.reading_after(daemon, time.time())
        return program, kernel_figures(app.pid)

    def background(self, daemon, app, seconds):
        """The difference between the program's time and the kernel's wait (seconds per second)
        over `seconds` without injections: the other preemptions' (a long one, as the fair server
        lends starved tasks, holds interrupts that the program books to their causes)."""
        before, kernel_before = self.stopped_reading(daemon, app)
        app.send_signal(signal.SIGCONT)
        time.sleep(seconds)
        after, kernel_after = self.stopped_reading(daemon, app)
        app.send_signal(signal.SIGCONT)
        return ((after[0] - before[0]) - (kernel_after[0] - kernel_before[0])) / seconds

    def window(self, daemon, app, spin_us):
        before, kernel_before = self.stopped_reading(daemon, app)
        app.send_signal(signal.SIGCONT)
        period_us = max(10 * spin_us, 1000)
        lines = watched_app.inject(self, INJECTOR, CPU, INJECTIONS, spin_us, period_us)
        after, kernel_after = self.stopped_reading(daemon, app)
        app.send_signal(signal.SIGCONT)
        booked, counted = after[0] - before[0], after[1] - before[1]
        waited, switched = kernel_after[0] - kernel_before[0], kernel_after[1] - kernel_before[1]
        (hertz,) = harness.select(daemon.scrape(), "jitterd_tick_frequency_hertz").values()
        held = sorted(end - deadline for deadline, _, end in lines)[INJECTIONS // 2] / hertz
        return booked, counted, waited, switched, after[2] - before[2], held, INJECTIONS * period_us / 1e6

    def test_preempted_time_per_preemption_agrees_with_the_kernels_wait(self):
        daemon = self.daemon(CONFIG)
        info = harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_watch_method_info"),
                                  timeout=15, what="jitterd_watch_method_info")
        labels = dict(next(iter(info)))
        if labels.get("method") != "bpf":
            self.skipTest(f"the BPF program does not load here: {labels.get('reason')}")
        watched_app.restore_rt_runtime_after(self)
        app = watched_app.start_busy_app(
            self, [APP, "--cpu", str(CPU), "--priority", "1", "--seconds", "120", "--name", APP_NAME])
        watched_app.unthrottle()
        noise = abs(self.background(daemon, app, BACKGROUND_SECONDS))
        rows = [(spin_us, ) + self.window(daemon, app, spin_us) for spin_us in SPINS_US]
        print(f"without injections the program's time and the kernel's wait differ by {noise * 1e6:.1f} us per "
              f"second", file=sys.stderr)
        print(f"{'spin':>6} | {'bpf preemptions':>15} | {'bpf us each':>11} | {'kernel switches':>15} | "
              f"{'kernel wait us each':>19} | {'difference us':>13} | {'injection us':>12} | "
              f"interruptions on cpu {CPU}", file=sys.stderr)
        for spin_us, booked, counted, waited, switched, interrupts, held, _ in rows:
            mine, theirs = booked / max(counted, 1) * 1e6, waited / max(switched, 1) * 1e6
            print(f"{spin_us:>4}us | {counted:>15.0f} | {mine:>11.2f} | {switched:>15} | {theirs:>19.2f} | "
                  f"{mine - theirs:>13.2f} | {held * 1e6:>12.2f} | {interrupts:.0f}", file=sys.stderr)
        for spin_us, booked, counted, waited, switched, _, held, seconds in rows:
            with self.subTest(spin_us=spin_us):
                self.assertGreaterEqual(switched, 0.9 * INJECTIONS, "the injections preempted the application")
                self.assertLessEqual(abs(counted - switched), COUNT_TOLERANCE * switched + 2,
                                     "the program's preemptions against the kernel's involuntary switches")
                mine, theirs = booked / counted, waited / switched
                self.assertLessEqual(abs(mine - theirs), TOLERANCE * held + noise * seconds / switched,
                                     f"{spin_us} us spins: the program's time per preemption ({mine * 1e6:.2f} us) "
                                     f"against the kernel's run-queue wait per switch ({theirs * 1e6:.2f} us), "
                                     f"beside an injection's {held * 1e6:.2f} us")


if __name__ == "__main__":
    INJECTOR, APP = watched_app.tools()
    harness.main([prerequisites])
