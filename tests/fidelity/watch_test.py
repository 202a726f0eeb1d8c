#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Watched CPUs against ground truth: does jitterd count what the kernel took from an application
it does not run beside?

busy_app (a thread that busy-polls and never sleeps, SCHED_FIFO priority 1, as production poll
loops on isolated cores run) is pinned to CPU 1. A daemon that samples no CPU (`cpus: []`) watches
CPU 1 with the `counts` method and names the application by task name. noise_injector
(SCHED_FIFO priority 50, pinned to CPU 1) then wakes on a fixed schedule and spins: every
injection preempts the application once, and the application waits on the run queue for as long
as the injector holds the CPU.

The machine is not quiet, and on kernels since 6.12 the fair server lends starved SCHED_OTHER
tasks (per-CPU kernel workers, tasks the balancer has not moved yet) up to 50 ms a second even
beside a real-time loop, in pieces that injections split further. So the ground truth is the
kernel's own tracer, in a tracefs instance of the test's own on CPU 1 only: every sched_switch
away from the application while it was runnable is one preemption, with the task that took the
CPU, and the time until it switched back is the run-queue wait. RT throttling is off while the
test runs (kernel.sched_rt_runtime_us = -1, restored after), as on such production machines: with
it on, a real-time loop loses the CPU for 50 ms of every second, bunching the injections.

Over the readings of jitterd taken before and after the injections:

  A. jitterd_watch_preemptions_total{cpu="1"} grows by the preemptions the tracer saw, within 1%;
     and the tracer saw the injector take the CPU once per injection that slept (an injection
     whose deadline had passed before the previous spin ended runs back to back with it), within
     1%: the injections are what was counted;
  B. jitterd_watch_stolen_seconds_total{cpu="1",cause="preempted"} (the application's run-queue
     wait) grows by the tracer's wait within 10%, and the injector's part of it lies within 10% of
     the injected time: at least 90% of the median spin for each preemption by the injector (the
     median: a spin the host interrupts lasts longer, and an injection that ran while something
     else held the CPU took nothing more from the application), at most 110% of the summed
     deadline-to-spin-end; the mean cost of a switch away and back is printed;
  C. the application's thread is found on CPU 1 and the daemon runs no thread there;
  D. known IPIs: a second thread of the application, on CPU 0, maps, touches and unmaps a page
     2,000 times; each unmap flushes the TLB of CPU 1, where the application runs in the same
     address space, so CPU 1 takes 2,000 TLB shootdowns: jitterd_watch_irqs_total{cpu="1",
     cause="tlb"} grows by them within 1%.

Per method: counts (the application's involuntary switches and run-queue wait), bpf (paired in the
kernel; the injector named, the IPIs' senders) and tracepoints (perf's records of the same
tracepoints paired by the daemon; the injector named, its own wakeups bounded). A method that is
not in use (BPF or perf refused) skips with the reason.

Usage: watch_test.py --jitterd BINARY --injector NOISE_INJECTOR --app BUSY_APP [unittest args]
Exit 77 (skip) without root, without CPU 1 and one more CPU, without tracefs, or when SCHED_FIFO is
refused.
"""

import json
import re
import signal
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import watched_app  # noqa: E402

CPU = 1
APP_NAME = "busyapp-poll"
SPIN_US = 200
PERIOD_US = 2000
INJECT_SECONDS = 6
PREEMPTION_TOLERANCE = 0.01
SHOOTDOWNS = 2000
TLB_TOLERANCE = 0.01
TRACEFS = "/sys/kernel/tracing"
INSTANCE = f"{TRACEFS}/instances/jitterd_watch_test"
SWITCH_RE = re.compile(r"\s(\d+\.\d+): sched_switch: prev_comm=.* prev_pid=(\d+) prev_prio=-?\d+ "
                       r"prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+) next_prio=-?\d+$")
STOLEN_TOLERANCE = 0.10
INJECTOR = None  # set in __main__
APP = None

def config(method):
    # bpf: outliers from 100 us, so that the injections' (200 us) are the latest ones listed and
    # the timer ticks of a virtual machine (tens of us each) are not.
    return watched_app.watch_config(CPU, method, "500ms", "100us")


def prerequisites():
    return watched_app.missing(CPU, "the injector and the application run SCHED_FIFO, RT throttling is turned off",
                               tracefs=TRACEFS)


def write(path, text):
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


class SwitchTrace:
    """sched_switch on one CPU, in a tracefs instance of its own, on the CLOCK_MONOTONIC clock."""

    def __init__(self, cpu, pid):
        if os.path.isdir(INSTANCE):
            os.rmdir(INSTANCE)
        os.mkdir(INSTANCE)
        write(f"{INSTANCE}/trace_clock", "mono")
        write(f"{INSTANCE}/buffer_size_kb", "16384")
        write(f"{INSTANCE}/tracing_cpumask", f"{1 << cpu:x}")
        write(f"{INSTANCE}/events/sched/sched_switch/filter", f"prev_pid == {pid} || next_pid == {pid}")
        write(f"{INSTANCE}/events/sched/sched_switch/enable", "1")
        self.pid = pid

    def close(self):
        write(f"{INSTANCE}/events/sched/sched_switch/enable", "0")
        os.rmdir(INSTANCE)

    def preemptions(self, start, end):
        """(count, wait s, {task: (count, wait s)}) of the switches away from pid while runnable
        between the monotonic times start and end, each with the time until it ran again."""
        with open(f"{INSTANCE}/trace", encoding="utf-8", errors="replace") as f:
            text = f.read()
        self.lost = "LOST" in text
        out_at, taker, count, wait, by = None, None, 0, 0.0, {}
        for line in text.splitlines():
            match = SWITCH_RE.search(line)
            if not match:
                continue
            at, prev_pid, state, next_comm, next_pid = match.groups()
            at = float(at)
            if int(prev_pid) == self.pid and state.startswith("R") and start <= at <= end:
                out_at, taker = at, next_comm
            elif int(next_pid) == self.pid and out_at is not None:
                count += 1
                wait += at - out_at
                n, w = by.get(taker, (0, 0.0))
                by[taker] = (n + 1, w + at - out_at)
                out_at = None
        return count, wait, by


class WatchFidelityTest:
    """The test, for one method: METHOD, and the families that method counts preemptions and
    interrupts in."""

    METHOD = None
    PREEMPTIONS = None  # (family, labels beside cpu)
    INTERRUPTS = None   # the family whose cause="tlb" counts TLB shootdowns

    def watch_values(self, daemon):
        samples = daemon.scrape()
        family, labels = self.PREEMPTIONS
        preempted = harness.select(samples, family, cpu=str(CPU), **labels)
        stolen = harness.select(samples, "jitterd_watch_stolen_seconds_total", cpu=str(CPU), cause="preempted")
        threads = harness.select(samples, "jitterd_watch_application_threads", cpu=str(CPU))
        last = harness.select(samples, "jitterd_probe_last_run_timestamp_seconds", probe="watch")
        if not (preempted and stolen and threads and last):
            return None
        return (next(iter(preempted.values())), next(iter(stolen.values())), next(iter(threads.values())),
                next(iter(last.values())), samples)

    def next_reading(self, daemon, after):
        """The first reading of a watch probe run that started after `after` (Unix seconds)."""
        return harness.wait_until(
            lambda: (lambda v: v if v and v[3] > after else None)(self.watch_values(daemon)),
            timeout=10, what="a watch probe run")

    def method_in_use(self, daemon):
        info = harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_watch_method_info"),
                                  timeout=15, what="jitterd_watch_method_info")
        labels = dict(next(iter(info)))
        if labels.get("method") != self.METHOD:
            self.skipTest(f"method {self.METHOD} not in use: {labels.get('reason')}")

    def test_injected_preemptions_are_counted(self):
        # The daemon first: nothing of its start-up may wait for a per-CPU worker of CPU 1 while
        # a real-time loop without throttling holds that CPU.
        daemon = self.daemon(config(self.METHOD))
        self.method_in_use(daemon)
        watched_app.restore_rt_runtime_after(self)
        app = watched_app.start_busy_app(
            self, [APP, "--cpu", str(CPU), "--priority", "1", "--seconds", "40", "--name", APP_NAME, "--shootdowns",
                   str(SHOOTDOWNS), "--shooter-cpu", str(self.other_cpu())])
        watched_app.unthrottle()
        first = harness.wait_until(lambda: (lambda v: v if v and v[2] >= 1 else None)(self.watch_values(daemon)),
                                   timeout=15, what="the application's thread on cpu 1")
        self.assertEqual(first[2], 1, "one application thread on the watched CPU")
        self.assertNotIn(CPU, self.daemon_cpus(daemon), "the daemon runs no thread on the watched CPU")
        self.check_preemptions(daemon, app)
        self.check_shootdowns(daemon, app)

    def check_preemptions(self, daemon, app):
        trace = SwitchTrace(CPU, app.pid)
        self.addCleanup(trace.close)
        count = int(INJECT_SECONDS * 1e6 / PERIOD_US)
        to_monotonic = time.time() - time.monotonic()
        before = self.next_reading(daemon, time.time())
        lines = watched_app.inject(self, INJECTOR, CPU, count, SPIN_US, PERIOD_US)
        after = self.next_reading(daemon, time.time())
        # The probe's run starts at its timestamp and reads within milliseconds; the edges fall
        # outside the injections, where preemptions are rare.
        traced, traced_wait, by_task = trace.preemptions(before[3] - to_monotonic, after[3] - to_monotonic)
        self.assertFalse(trace.lost, "the trace lost events: its buffer was too small")
        (hertz,) = harness.select(after[4], "jitterd_tick_frequency_hertz").values()
        # An injection preempts the application when the injector slept before it: its deadline
        # came after the previous spin's end.
        slept = sum(1 for i, (deadline, _, _) in enumerate(lines) if i == 0 or deadline > lines[i - 1][2])
        spins = sum(end_tick - start_tick for _, start_tick, end_tick in lines) / hertz
        median_spin = sorted(end_tick - start_tick for _, start_tick, end_tick in lines)[count // 2] / hertz
        held = sum(end_tick - deadline for deadline, _, end_tick in lines) / hertz
        by_injector, injector_wait = by_task.pop("noise_injector", (0, 0.0))
        counted = after[0] - before[0]
        stolen = after[1] - before[1]
        others = ", ".join(f"{task} {n} ({w * 1e3:.2f} ms)" for task, (n, w) in sorted(by_task.items()))
        print(f"{self.METHOD}: {count} injections of {SPIN_US} us every {PERIOD_US} us, {slept} after a sleep; the "
              f"tracer saw {traced} preemptions ({traced_wait * 1e3:.3f} ms of run-queue wait): the injector "
              f"{by_injector} ({injector_wait * 1e3:.3f} ms), others: {others or 'none'}; jitterd counted "
              f"{counted:.0f} preemptions and {stolen * 1e3:.3f} ms; injected spins {spins * 1e3:.3f} ms, "
              f"deadline to end {held * 1e3:.3f} ms; a switch away and back costs "
              f"{(injector_wait / max(by_injector, 1) - median_spin) * 1e6:.1f} us on average beside the median spin "
              f"of {median_spin * 1e6:.1f} us", file=sys.stderr)
        self.assertLessEqual(abs(counted - traced), PREEMPTION_TOLERANCE * traced + 2,
                             "jitterd's preemptions against the kernel tracer's")
        self.assertLessEqual(abs(by_injector - slept), PREEMPTION_TOLERANCE * slept,
                             "the tracer's preemptions by the injector against the injections")
        self.assertLessEqual(abs(stolen - traced_wait), STOLEN_TOLERANCE * traced_wait,
                             "jitterd's stolen time against the tracer's run-queue wait")
        self.assertGreaterEqual(injector_wait, (1 - STOLEN_TOLERANCE) * median_spin * by_injector)
        self.assertLessEqual(injector_wait, (1 + STOLEN_TOLERANCE) * held)
        self.check_named(daemon, before[4], after[4], by_injector)

    def check_named(self, daemon, before, after, by_injector):
        """Who preempted the application (bpf only)."""

    def check_shootdowns(self, daemon, app):
        """D. Known IPIs: TLB shootdowns from the application's second thread."""
        before = self.next_reading(daemon, time.time())
        app.send_signal(signal.SIGUSR1)
        line = app.stderr.readline().strip()
        self.assertEqual(line, f"busy_app: shootdowns {SHOOTDOWNS}")
        after = self.next_reading(daemon, time.time())
        tlb = self.tlb_count(after[4]) - self.tlb_count(before[4])
        print(f"{self.METHOD}: {SHOOTDOWNS} TLB shootdowns sent to cpu {CPU}; jitterd counted {tlb:.0f}",
              file=sys.stderr)
        self.assertLessEqual(abs(tlb - SHOOTDOWNS), TLB_TOLERANCE * SHOOTDOWNS)
        self.check_senders(before[4], after[4])

    def check_senders(self, before, after):
        """Who sent the IPIs (bpf only)."""

    def tlb_count(self, samples):
        (value,) = harness.select(samples, self.INTERRUPTS, cpu=str(CPU), cause="tlb").values()
        return value

    @staticmethod
    def other_cpu():
        return min(os.sched_getaffinity(0) - {CPU})

    def daemon_cpus(self, daemon):
        """Every CPU a thread of the daemon may run on."""
        cpus = set()
        task_dir = f"/proc/{daemon.process.pid}/task"
        for tid in os.listdir(task_dir):
            try:
                with open(f"{task_dir}/{tid}/status", encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("Cpus_allowed_list:"):
                            cpus |= set(harness.parse_cpu_list(line.split(":", 1)[1].strip()))
            except FileNotFoundError:
                continue
        return cpus


def status_table(daemon, title):
    """The rows of the watch probe's table `title` on /status.json."""
    status = json.loads(daemon.scrape_text("/status.json"))
    (watch,) = [p for p in status["probes"] if p["name"] == "watch"]
    (table,) = [t for t in watch["tables"] if t["title"] == title]
    return table["rows"]


class CountsWatchTest(WatchFidelityTest, harness.DaemonTestCase):
    """counts: the application's involuntary switches and run-queue wait, /proc/interrupts' TLB."""

    METHOD = "counts"
    PREEMPTIONS = ("jitterd_watch_preemptions_total", {})
    INTERRUPTS = "jitterd_watch_irqs_total"


class PairedWatch(WatchFidelityTest):
    """What both pairing methods count: each preemption and IPI paired entry to exit, and who
    preempted (the injector, a stray task, named among the latest outliers)."""

    PREEMPTIONS = ("jitterd_watch_interruptions_total", {"cause": "preempted"})
    INTERRUPTS = "jitterd_watch_interruptions_total"

    def check_named(self, daemon, before, after, by_injector):
        def stray(samples):
            return sum(harness.select(samples, "jitterd_watch_preemptions_by_class_total", cpu=str(CPU),
                                      **{"class": "stray"}).values())

        strays = stray(after) - stray(before)
        print(f"{self.METHOD}: {strays:.0f} preemptions by stray tasks, {by_injector} by the injector",
              file=sys.stderr)
        self.assertGreaterEqual(strays, (1 - PREEMPTION_TOLERANCE) * by_injector,
                                "the injector's preemptions counted as a stray task's")
        rows = status_table(daemon, f"the latest outliers ({self.METHOD}), newest last")
        named = [row for row in rows if row[2] == "preempted" and row[4].startswith("noise_injector[")]
        self.assertTrue(named, f"the injector named among the latest outliers: {rows}")
        self.assertTrue(all(row[4].endswith("(stray)") for row in named), named)


class BpfWatchTest(PairedWatch, harness.DaemonTestCase):
    """bpf: paired in the kernel, and who sent the IPIs (busy_app's thread "tlb-shooter"; where the
    kernel has ipi:ipi_send_cpumask)."""

    METHOD = "bpf"

    def check_senders(self, before, after):
        if harness.select(after, "jitterd_watch_tracepoint_missing", tracepoint="ipi:ipi_send_cpumask"):
            print("bpf: this kernel has no ipi:ipi_send_cpumask; the IPIs' senders are not checked", file=sys.stderr)
            return

        def sent(samples):
            return sum(harness.select(samples, "jitterd_watch_ipis_sent_total", cpu=str(CPU),
                                      sender="tlb-shooter").values())

        shooter = sent(after) - sent(before)
        print(f"bpf: {shooter:.0f} IPIs sent to cpu {CPU} by tlb-shooter", file=sys.stderr)
        self.assertLessEqual(abs(shooter - SHOOTDOWNS), TLB_TOLERANCE * SHOOTDOWNS,
                             "the shootdowns' IPIs counted under their sender")


class TracepointsWatchTest(PairedWatch, harness.DaemonTestCase):
    """tracepoints: perf's records of the same tracepoints paired on the daemon's CPU; its own cost,
    one irq_work per ring's worth of records, is exported and stays within what it recorded."""

    METHOD = "tracepoints"

    def check_senders(self, before, after):
        (wakeups,) = harness.select(after, "jitterd_watch_tracer_wakeups_total", cpu=str(CPU)).values()
        recorded = sum(harness.select(after, "jitterd_watch_interruptions_total", cpu=str(CPU)).values())
        print(f"tracepoints: {wakeups:.0f} wakeups of the reader on cpu {CPU} for {recorded:.0f} interruptions "
              f"recorded", file=sys.stderr)
        # Each interruption is two records or more of at least 40 bytes: a 4 MiB ring holds under
        # 60,000 of them, so the wakeups cannot outnumber one per 20,000 interruptions.
        self.assertLessEqual(wakeups, recorded / 20000 + 1)


if __name__ == "__main__":
    INJECTOR, APP = watched_app.tools()
    harness.main([prerequisites])
