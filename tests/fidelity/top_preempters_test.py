#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
""""Who took my CPU?" after the latest outliers have scrolled away: the watch's top preempters
against a known injector.

busy_app (a busy-polling thread, SCHED_FIFO 1) is pinned to CPU 1, which a daemon that samples
nothing watches with the bpf method (the tracepoints method where BPF is refused and tracefs is
there; skipped, with the reason, where neither is). The noise on CPU 1 is measured first: for
NOISE_SECONDS without injections, the tasks the watch names as preempting the application, the
busiest of them by count and by time (on a kernel with the fair server, starved SCHED_OTHER tasks
beside a real-time loop get up to 50 ms a second, in pieces of tens of milliseconds, so by time the
noise is large). Then noise_injector (SCHED_FIFO 50, on CPU 1) preempts the application at least
INJECTIONS times (SPIN_US each, every PERIOD_US), sized so that the injector outnumbers the
busiest noise task by count, and by time where MAX_INJECTIONS can, projected over the whole test,
at least NOISE_MARGIN times (the test skips, saying so, when outnumbering it by count takes more
than MAX_INJECTIONS); then a second,
differently named injector (`scroll_noise`, a link to noise_injector: a task's name is its
program's file name) preempts it SCROLL times, more than the 32 outliers the watch lists, so the
injector is no longer among the latest outliers (checked). Then, on /status.json and /metrics:

  A. over the window, the injector is the top preempter by count and by time
     (rank_by_count 1, rank_by_time 1 but for noise tasks that each held the CPU longer than all
     the injections did: a per-CPU kworker once held it 950 ms at a time), class stray, and its preemptions match the injections that
     preempted the application (those whose deadline came after the previous spin's end, as in
     fidelity_watch) within TOLERANCE (and 2): from below, what the machine's own tasks took of
     an injection's wake-up (a task already holding the CPU is the one named for that preemption)
     and from above, nothing (the injector's set-up, which preempts the application once as it is
     moved onto CPU 1, and its exit run under other names, "injector-setup" and "injector-exit":
     its program's name is booked only for its injections); its time at least (1 - TIME_TOLERANCE) of the median spin per
     preemption and at most (1 + TIME_TOLERANCE) of the time it held the CPU (deadline to spin end);
  B. since start, the injector is listed with at least as many preemptions as over the window;
  C. the window's series jitterd_watch_top_preempter_preemptions{cpu="1",rank=R} (R its rank by
     time) names it (task="noise_injector", class="stray") with the same count, and the ranks of the series add
     up to the table's window rows;
  D. its pid is not shown (the injector has exited), the scroller is listed below it;
  E. the status page's stolen-time plot of CPU 1 (its figures in the same /status.json) names the
     injector at its time rank with the table's count and time, its `preempted` band holds at least that
     time and no bar more than the reading it covers, and the page draws it with the name.

Usage: top_preempters_test.py --jitterd BINARY --injector NOISE_INJECTOR --app BUSY_APP
Exit 77 (skip) without root, without CPU 1 and one more CPU, or when neither bpf nor tracepoints
can be used, or SCHED_FIFO is refused.
"""

import json
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402
import watched_app  # noqa: E402

CPU = 1
APP_NAME = "busyapp-top"  # its own name: another test's busy_app on CPU 1 is then noise, not the application
SPIN_US = 1000
PERIOD_US = 2500
INJECTIONS = 500
MAX_INJECTIONS = 3000
AFTER_SECONDS = 5  # the scroller and the readings after the injections
SCROLL = 100
SCROLL_SPIN_US = 150
SCROLL_PERIOD_US = 4000
NOISE_SECONDS = 5
NOISE_MARGIN = 3
TOLERANCE = 0.02
TIME_TOLERANCE = 0.10
RECENT_OUTLIERS = 32
INJECTOR = None  # set in __main__
APP = None

PREEMPTERS = "who preempted the application"
OUTLIERS = "the latest outliers"
STOLEN = "stolen"  # the watch's plots in /status.json, kept beside its tables


def config(method):
    return watched_app.watch_config(CPU, method, "500ms", "100us", tasks=APP_NAME, sections="sampler:\n  window: 60s\n")


def prerequisites():
    return watched_app.missing(CPU, "the injector and the application run SCHED_FIFO, RT throttling is turned off")


def watch_tables(daemon):
    """The watch probe's tables on /status.json by title prefix, and when it last ran."""
    status = json.loads(daemon.scrape_text("/status.json"))
    (watch,) = [p for p in status["probes"] if p["name"] == "watch"]
    if not watch.get("ran"):
        return None, 0
    tables = {}
    for t in watch["tables"]:
        for prefix in (PREEMPTERS, OUTLIERS):
            if t["title"].startswith(prefix):
                tables[prefix] = [dict(zip(t["columns"], row)) for row in t["rows"]]
    tables[STOLEN] = watch.get("stolen", [])
    return tables, watch["last_run_unix_seconds"]


class TopPreemptersTest(harness.DaemonTestCase):

    def start_daemon(self):
        """The daemon with bpf, else tracepoints; skips when neither is in use."""
        reasons = []
        for method in ("bpf", "tracepoints"):
            daemon = self.daemon(config(method))
            info = harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_watch_method_info"),
                                      timeout=15, what="jitterd_watch_method_info")
            labels = dict(next(iter(info)))
            if labels.get("method") == method:
                return daemon, method
            reasons.append(f"{method}: {labels.get('reason')}")
            self.stop_ok(daemon)
        self.skipTest("the watch can name no preempter here (" + "; ".join(reasons) + ")")

    def reading_after(self, daemon, after):
        """The watch's tables from a run that started after `after` (Unix seconds)."""
        def fresh():
            tables, at = watch_tables(daemon)
            return tables if tables is not None and at > after and PREEMPTERS in tables else None
        return harness.wait_until(fresh, timeout=15, what="a watch probe run")

    def inject(self, program, count, spin_us, period_us, hertz):
        lines = watched_app.inject(self, program, CPU, count, spin_us, period_us)
        # An injection preempts the application when the injector slept before it; it holds the CPU
        # from its deadline (the wake-up) to its spin's end.
        slept = sum(1 for i, (deadline, _, _) in enumerate(lines) if i == 0 or deadline > lines[i - 1][2])
        median_spin = sorted(end - start for _, start, end in lines)[count // 2] / hertz
        held = sum(end - deadline for deadline, _, end in lines) / hertz
        return slept, median_spin, held

    def size(self, count_rate, time_rate, base):
        """Injections that outnumber the busiest noise task NOISE_MARGIN times by count, and by time
        where MAX_INJECTIONS can (where they cannot, a task that holds the CPU longer than all the
        injections is noise the time rank allows: longer_than_injector), projected over the whole
        test (`base` seconds beside the injections, which lengthen it); skips when outnumbering it
        by count takes more than MAX_INJECTIONS."""
        spin, period = SPIN_US * 1e-6, PERIOD_US * 1e-6
        by_count = NOISE_MARGIN * count_rate * base / max(1 - NOISE_MARGIN * count_rate * period, 1e-9)
        if int(by_count) + 1 > MAX_INJECTIONS or NOISE_MARGIN * count_rate * period >= 1:
            self.skipTest(f"too noisy: the busiest other task takes {count_rate:.1f} preemptions/s of cpu {CPU}; "
                          f"outnumbering it {NOISE_MARGIN} times needs more than {MAX_INJECTIONS} injections")
        by_time = NOISE_MARGIN * time_rate * base / max(spin - NOISE_MARGIN * time_rate * period, 1e-12)
        if int(by_time) + 1 > MAX_INJECTIONS or NOISE_MARGIN * time_rate * period >= spin:
            print(f"the busiest other task takes {time_rate * 1e3:.1f} ms/s of cpu {CPU}: more than "
                  f"{MAX_INJECTIONS} injections could outweigh; the injector's time rank is checked against it",
                  file=sys.stderr)
            by_time = 0
        return max(INJECTIONS, int(by_count) + 1, int(by_time) + 1)

    def test_the_injector_is_the_top_preempter_after_its_outliers_scrolled_away(self):
        daemon, method = self.start_daemon()
        watched_app.restore_rt_runtime_after(self)
        watched_app.start_busy_app(
            self, [APP, "--cpu", str(CPU), "--priority", "1", "--seconds", "120", "--name", APP_NAME])
        watched_app.unthrottle()
        threads = harness.wait_until(
            lambda: (lambda v: v if v and max(v.values()) >= 1 else None)(
                harness.select(daemon.scrape(), "jitterd_watch_application_threads", cpu=str(CPU))),
            timeout=15, what="the application's thread on cpu 1")
        self.assertEqual(list(threads.values()), [1], "one application thread on the watched CPU")
        started = time.time()

        # The noise first: the busiest tasks the watch names, by count and by time, over NOISE_SECONDS.
        time.sleep(NOISE_SECONDS)
        noise = self.reading_after(daemon, time.time())[PREEMPTERS]
        elapsed = time.time() - started
        noisy = [r for r in noise if r["cpu"] == CPU and r["over"] == "window" and (r["rank_by_count"] or
                                                                                     r["rank_by_time"])]
        count_rate = max((r["preemptions"] for r in noisy), default=0) / elapsed
        time_rate = max((r["stolen_ms"] * 1e-3 for r in noisy), default=0) / elapsed
        print(f"{method}: the named preempters of cpu {CPU} without injections: " +
              ", ".join(f"{r['task']} {r['preemptions']} ({r['stolen_ms']:.3f} ms)" for r in noisy), file=sys.stderr)
        injections = self.size(count_rate, time_rate, elapsed + AFTER_SECONDS)
        print(f"{method}: noise on cpu {CPU} over {elapsed:.1f} s: the busiest named preempter by count "
              f"{count_rate:.2f}/s, by time {time_rate * 1e3:.2f} ms/s; injecting {injections} of {SPIN_US} us",
              file=sys.stderr)
        (hertz,) = harness.select(daemon.scrape(), "jitterd_tick_frequency_hertz").values()

        slept, median_spin, held = self.inject(INJECTOR, injections, SPIN_US, PERIOD_US, hertz)
        with tempfile.TemporaryDirectory() as scratch:
            scroller = os.path.join(scratch, "scroll_noise")
            os.symlink(os.path.abspath(INJECTOR), scroller)
            self.inject(scroller, SCROLL, SCROLL_SPIN_US, SCROLL_PERIOD_US, hertz)
        tables = self.reading_after(daemon, time.time())
        samples = daemon.scrape()

        latest = [r for r in tables[OUTLIERS] if r["cpu"] == CPU]
        self.assertFalse([r for r in latest if r["who"].startswith("noise_injector[")],
                         f"the injector has scrolled out of the latest {RECENT_OUTLIERS} outliers: {latest}")
        rows = [r for r in tables[PREEMPTERS] if r["cpu"] == CPU]
        window = [r for r in rows if r["over"] == "window"]
        since = [r for r in rows if r["over"] == "since_start"]
        print(f"{method}: {injections} injections, {slept} after a sleep; window: " +
              ", ".join(f"{r['task']} {r['preemptions']} ({r['stolen_ms']:.3f} ms)" for r in window), file=sys.stderr)

        # A. the top preempter over the window, by count and by time, its count the injections'.
        (top,) = [r for r in window if r["task"] == "noise_injector"] or [None]
        self.assertIsNotNone(top, f"the injector among the window's top preempters: {window}")
        self.assertEqual(top["class"], "stray")
        self.assertEqual(top["rank_by_count"], 1, window)
        # By time, first unless the machine's own noise held the CPU longer than the whole injection
        # (a per-CPU kworker once held it 950 ms in one go, against the injector's 500 x 1 ms): the
        # tasks above it must each have taken more than the injector held, and the rank says so.
        above = self.longer_than_injector(window, top, held)
        # The probe's rank against its own times (what the check above allows is all that may
        # stand before the injector).
        self.assertEqual(top["rank_by_time"], 1 + len(above), window)
        self.assertLessEqual(top["preemptions"], slept, "no more preemptions than injections that preempted")
        self.assertGreaterEqual(top["preemptions"], (1 - TOLERANCE) * slept - 2,
                                "the injector's preemptions against the injections that preempted")
        # Its time: at least most of its spin for each preemption, at most the CPU it held.
        self.assertGreaterEqual(top["stolen_ms"] * 1e-3, (1 - TIME_TOLERANCE) * median_spin * top["preemptions"])
        self.assertLessEqual(top["stolen_ms"] * 1e-3, (1 + TIME_TOLERANCE) * held)
        # B. since start, at least the window's.
        (top_since,) = [r for r in since if r["task"] == "noise_injector"] or [None]
        self.assertIsNotNone(top_since, f"the injector since start: {since}")
        self.assertGreaterEqual(top_since["preemptions"], top["preemptions"])
        # D. gone, so no pid; the scroller listed, below it.
        self.assertIsNone(top["pid"], "an exited task's pid is not shown")
        scroll = [r for r in window if r["task"] == "scroll_noise"]
        self.assertTrue(scroll and scroll[0]["rank_by_count"] > 1, window)
        # C. the series (ranked by time): the injector at its time rank, with the table's count.
        series = harness.select(samples, "jitterd_watch_top_preempter_preemptions", cpu=str(CPU),
                                rank=str(top["rank_by_time"]))
        (labels, value), = series.items()
        self.assertEqual(dict(labels).get("task"), "noise_injector", series)
        self.assertEqual(dict(labels).get("class"), "stray", series)
        self.assertEqual(value, top["preemptions"])
        ranks = harness.select(samples, "jitterd_watch_top_preempter_preemptions", cpu=str(CPU))
        self.assertTrue(any(dict(k).get("rank") == "other" for k in ranks), ranks)
        self.assertTrue(any(dict(k).get("rank") == "unnamed" for k in ranks), ranks)
        self.check_plot(daemon, tables[STOLEN], top)

    def longer_than_injector(self, window, top, held):
        """The window's other preempters that took more time than the injector, each checked to have
        taken more than the injector held the CPU (so the injector's own time is not what put them
        there), and printed: noise the five seconds of measurement before did not show."""
        above = [r for r in window if r is not top and r["rank_by_time"] and r["stolen_ms"] > top["stolen_ms"]]
        for r in above:
            print(f"noise above the injector by time: {r['task']} {r['preemptions']} ({r['stolen_ms']:.3f} ms)",
                  file=sys.stderr)
            self.assertGreater(r["stolen_ms"] * 1e-3, held, f"{r} outranks the injector only with more than it held")
        return above

    def check_plot(self, daemon, plots, top):
        """E. the plot of CPU 1 from the same reading as the tables, and on the page."""
        (plot,) = [p for p in plots if p["cpu"] == CPU and p["loop"] is None] or [None]
        self.assertIsNotNone(plot, f"a stolen-time plot of cpu {CPU}: {plots}")
        self.assertTrue(plot["preempters_named"])
        (worst,) = [w for w in plot["worst_preempters"] if w["task"] == "noise_injector"] or [None]
        self.assertIsNotNone(worst, plot["worst_preempters"])
        self.assertEqual(plot["worst_preempters"].index(worst), top["rank_by_time"] - 1, plot["worst_preempters"])
        self.assertEqual((worst["task"], worst["class"], worst["preemptions"]),
                         ("noise_injector", "stray", top["preemptions"]), plot["worst_preempters"])
        self.assertAlmostEqual(worst["seconds"] * 1e3, top["stolen_ms"], delta=1e-3)
        preempted = plot["causes"].index("preempted")
        band = sum(p["stolen_seconds"][preempted] for p in plot["points"])
        # The series keeps the reading that straddles the window's start, the tally does not.
        self.assertGreaterEqual(band, 0.99 * worst["seconds"], "the preempted band holds the injector's time")
        for p in plot["points"]:
            self.assertLessEqual(sum(p["stolen_seconds"]), p["seconds"] * 1.01 + 1e-3, p)
        page = daemon.scrape_text("/")
        at = page.find(f'id="stolen-cpu{CPU}"')
        self.assertGreaterEqual(at, 0, "the plot on the status page")
        self.assertIn("<strong>noise_injector</strong> (stray)", page[at:page.find("</figure>", at)])
        print(f"plot of cpu {CPU}: {len(plot['points'])} points, preempted {band * 1e3:.1f} ms, the injector "
              f"{worst['seconds'] * 1e3:.1f} ms, worst preempter {top['rank_by_time']}", file=sys.stderr)


if __name__ == "__main__":
    INJECTOR, APP = watched_app.tools()
    harness.main([prerequisites])
