#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The loop probe end to end: the C and C++ example loops (examples/loop_probe) write their
segments into a scratch directory that a real `jitterd run` reads (loops: section, sampling
nothing); a real /metrics scrape shows each loop's series with its labels, moving; a loop that
ends removes its series, one killed goes down as its writer is gone. Then hostile segments beside
a live loop: truncated, a symlink, another user's (as root), a wrong magic, a newer layout, a
FIFO, a dead writer's; each gives its log line naming the file and its refusal count, and the
daemon keeps serving the live loop. Last, loops come and go for 25 s (a new probe every quarter
second, a refused file beside them): the daemon's descriptors stay the same and its RSS within
2 MiB (a short form of the issue's ten minutes).

Usage: loop_test.py --jitterd BIN --poll-loop BIN --ring-loop BIN
"""
import argparse
import json
import os
import re
import signal
import stat
import struct
import subprocess
import sys
import time

import harness

POLL_LOOP = None
RING_LOOP = None


def loops_config(directory):
    return f"""\
cpus: []
sampler:
  window: 10s
web:
  listen_address: "127.0.0.1:0"
loops:
  directory: {directory}
  stale_after: 2s
  interval: 200ms
{harness.PROBES_OFF}"""


def sanitized(binary):
    """True for a binary built with AddressSanitizer (dev.sh sanitize): its runtime's symbols."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


class LoopExample:
    """One example loop writing its segment into `directory`."""

    def __init__(self, binary, name, cpu, seconds, directory, labels=None):
        env = dict(os.environ, JITTERD_LOOP_DIR=directory)
        args = [binary, name, str(cpu), str(seconds)] + ([labels] if labels else [])
        self.process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True)
        self.path = os.path.join(directory, "jitterd-loop." + name)

    def wait_segment(self):
        harness.wait_until(lambda: os.path.exists(self.path) or self.process.poll() is not None, 10,
                           what=f"the segment {self.path}")
        if not os.path.exists(self.path):
            raise AssertionError(f"the example exited first: {self.process.communicate()[0]}")

    def stop(self, signum=signal.SIGKILL):
        if self.process.poll() is None:
            self.process.send_signal(signum)
        self.process.wait(10)
        self.process.stdout.close()


def cpus_allowed():
    return sorted(os.sched_getaffinity(0))


class LoopTest(harness.DaemonTestCase):
    def setUp(self):
        super().setUp()
        self.loops = os.path.join(self.workdir, "loops")
        os.mkdir(self.loops)
        self.examples = []
        self.addCleanup(lambda: [e.stop() for e in self.examples])

    def example(self, binary, name, cpu, seconds, labels=None):
        loop = LoopExample(binary, name, cpu, seconds, self.loops, labels)
        self.examples.append(loop)
        loop.wait_segment()
        return loop

    def up(self, daemon, name):
        found = harness.select(daemon.scrape(), "jitterd_loop_up", loop=name)
        return next(iter(found.values())) if len(found) == 1 else None

    def test_c_and_cpp_loops_are_exported_like_sampled_cpus(self):
        cpus = cpus_allowed()
        c_loop = self.example(POLL_LOOP, "c_loop", cpus[0], 6, "kind=c")
        cpp_loop = self.example(RING_LOOP, "cpp_loop", cpus[-1], 0, "kind=cpp")
        daemon = self.daemon(loops_config(self.loops))
        harness.wait_until(lambda: self.up(daemon, "c_loop") == 1 and self.up(daemon, "cpp_loop") == 1, 10,
                           what="both loops up")
        first = daemon.scrape()
        c_gaps = harness.select(first, "jitterd_loop_gap_seconds_count", loop="c_loop", cpu=cpus[0], kind="c")
        self.assertEqual(len(c_gaps), 1, f"c_loop's gap histogram with its labels: {c_gaps}")
        # The window's quantiles appear from the second reading; counts move between scrapes.
        harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_loop_window_max_gap_seconds",
                                                  loop="cpp_loop"), 10, what="cpp_loop's window max")
        time.sleep(0.5)
        second = daemon.scrape()
        for name in ("c_loop", "cpp_loop"):
            before = sum(harness.select(first, "jitterd_loop_gap_seconds_count", loop=name).values())
            after = sum(harness.select(second, "jitterd_loop_gap_seconds_count", loop=name).values())
            self.assertGreater(after, before, f"{name}'s gaps did not move")
            p50 = harness.select(second, "jitterd_loop_window_gap_seconds", loop=name, quantile="0.5")
            window_max = harness.select(second, "jitterd_loop_window_max_gap_seconds", loop=name)
            self.assertTrue(p50 and window_max, f"{name}: p50 {p50}, window max {window_max}")
            self.assertLessEqual(next(iter(p50.values())), next(iter(window_max.values())))
            floor = harness.select(second, "jitterd_loop_floor_seconds", loop=name)
            self.assertTrue(floor and 0 < next(iter(floor.values())) < 1e-3, f"{name}'s floor: {floor}")
        # The C loop ends and closes its probe: its series go; the C++ one is killed: it goes down.
        c_loop.process.wait(20)
        harness.wait_until(lambda: not harness.select(daemon.scrape(), "jitterd_loop_up", loop="c_loop"), 10,
                           what="c_loop's series gone after it closed")
        cpp_loop.stop(signal.SIGKILL)
        harness.wait_until(lambda: self.up(daemon, "cpp_loop") == 0, 10, what="cpp_loop down once killed")
        log = daemon.log()
        self.assertIn("jitterd-loop.c_loop: removed", log)
        self.assertRegex(log, r"jitterd-loop\.cpp_loop: loop cpp_loop down: its writer, pid \d+, is gone")
        self.stop_ok(daemon)

    def test_hostile_segments_are_refused_and_the_daemon_keeps_serving(self):
        cpus = cpus_allowed()
        live = self.example(POLL_LOOP, "live", cpus[0], 0)
        donor = self.example(POLL_LOOP, "donor", cpus[-1], 0)
        time.sleep(0.3)
        donor.stop(signal.SIGKILL)  # first: a dead writer's segment no longer changes under the copy
        with open(donor.path, "rb") as segment:
            valid = segment.read()
        os.unlink(donor.path)

        def plant(name, data):
            path = os.path.join(self.loops, "jitterd-loop." + name)
            with open(path, "wb") as out:
                out.write(data)
            return path

        with_name = lambda name: valid[:128] + name.encode().ljust(64, b"\0") + valid[192:]
        plant("truncated", with_name("truncated")[:4096])
        plant("magic", b"NOTALOOP" + with_name("magic")[8:])
        plant("version", with_name("version")[:8] + struct.pack("<I", 99) + with_name("version")[12:])
        plant("dead", with_name("dead"))  # the donor's pid: killed above
        os.symlink(live.path, os.path.join(self.loops, "jitterd-loop.link"))
        os.mkfifo(os.path.join(self.loops, "jitterd-loop.fifo"))
        expected = {"truncated": "truncated", "magic": "magic", "version": "version", "link": "not_regular",
                    "fifo": "not_regular"}
        if os.geteuid() == 0:
            os.chown(plant("foreign", with_name("foreign")), 65534, 65534)
            expected["foreign"] = "owner"
        else:
            print("note: not root: the other user's segment is left out", file=sys.stderr)
        daemon = self.daemon(loops_config(self.loops))
        harness.wait_until(lambda: self.up(daemon, "live") == 1, 10, what="the live loop up beside the hostile ones")
        harness.wait_until(lambda: self.up(daemon, "dead") == 0, 10, what="the dead writer's loop down")
        samples = daemon.scrape()
        log = daemon.log()
        counts = {}
        for reason in set(expected.values()):
            found = harness.select(samples, "jitterd_loop_refused_total", reason=reason)
            counts[reason] = next(iter(found.values())) if found else None
        for name, reason in expected.items():
            self.assertRegex(log, rf"jitterd-loop\.{name}: refused \({reason}\): ",
                             f"no log line for {name}; log:\n{log}")
            self.assertIsNone(harness.select(samples, "jitterd_loop_up", loop=name) or None)
        for reason in set(expected.values()):
            want = sum(1 for r in expected.values() if r == reason)
            self.assertEqual(counts[reason], want, f"jitterd_loop_refused_total{{reason={reason}}}")
        self.assertRegex(log, r"jitterd-loop\.dead: loop dead down: its writer, pid \d+, is gone")
        # Once each: a second look changes no count, and the live loop still moves.
        before = sum(harness.select(samples, "jitterd_loop_gap_seconds_count", loop="live").values())
        time.sleep(1.0)
        later = daemon.scrape()
        for reason in set(expected.values()):
            self.assertEqual(next(iter(harness.select(later, "jitterd_loop_refused_total", reason=reason).values())),
                             counts[reason])
        after = sum(harness.select(later, "jitterd_loop_gap_seconds_count", loop="live").values())
        self.assertGreater(after, before, "the live loop stopped moving beside the hostile segments")
        self.assertEqual(harness.http_get(daemon.url())[0], 200)
        self.stop_ok(daemon)

    def test_status_page_and_json_show_each_loop_and_the_refused_segments(self):
        # The loops probe reads once a second: /status.json is read before and after a scrape,
        # and when the probe did not run in between, the three saw the same reading and its
        # numbers compare exactly.
        cpus = cpus_allowed()
        self.example(POLL_LOOP, "status_loop", cpus[0], 0, "kind=c")
        with open(os.path.join(self.loops, "jitterd-loop.junk"), "wb") as junk:
            junk.write(b"<script>" * 100)
        daemon = self.daemon(loops_config(self.loops).replace("interval: 200ms", "interval: 1s"))

        def status():
            status_code, body = harness.http_get(daemon.url("/status.json"))
            self.assertEqual(status_code, 200)
            return json.loads(body)

        def loops_probe(document):
            return next(p for p in document["probes"] if p["name"] == "loops")

        def loop_in(document):
            found = [l for l in (document["loops"] or {}).get("loops", []) if l["loop"] == "status_loop"]
            return found[0] if found and found[0]["window"] else None

        harness.wait_until(lambda: loop_in(status()), 15, interval=0.2, what="status_loop's window in /status.json")
        for _ in range(20):
            before, samples, after = status(), daemon.scrape(), status()
            if loops_probe(before)["last_run_unix_seconds"] == loops_probe(after)["last_run_unix_seconds"]:
                break
        else:
            self.fail("the loops probe ran during each of 20 scrapes")
        loop = loop_in(before)
        self.assertEqual(before["loops"]["directory"], self.loops)
        self.assertEqual((loop["cpu"], loop["labels"], loop["up"], loop["error"]), (cpus[0], {"kind": "c"}, True, ""))
        one = lambda name, **pairs: next(iter(harness.select(samples, name, loop="status_loop", **pairs).values()))
        # /metrics writes 16 significant digits (text_format.cpp), the JSON every digit: the same
        # double to 1e-9 relative, as integration_status compares a sampled CPU's.
        same = lambda figure, name, **pairs: self.assertAlmostEqual(
            figure, one(name, **pairs), delta=abs(figure) * 1e-9, msg=name + str(pairs))
        window = loop["window"]
        for quantile, key in (("0.5", "p50_seconds"), ("0.99", "p99_seconds"), ("0.999", "p99_9_seconds"),
                              ("0.9999", "p99_99_seconds")):
            same(window[key], "jitterd_loop_window_gap_seconds", quantile=quantile)
        same(window["max_seconds"], "jitterd_loop_window_max_gap_seconds")
        self.assertLessEqual(window["p99_seconds"], window["max_seconds"])
        self.assertGreater(window["seconds"], 0)
        self.assertGreater(window["samples"], 0)
        same(loop["loop_floor_seconds"], "jitterd_loop_floor_seconds")
        same(loop["interruption_threshold_seconds"], "jitterd_loop_interruption_threshold_seconds")
        self.assertEqual(loop["interruptions"], one("jitterd_loop_interruptions_total"))
        self.assertEqual(loop["gaps"], one("jitterd_loop_gap_seconds_count"))
        self.assertAlmostEqual(loop["last_seen_unix_seconds"], one("jitterd_loop_last_seen_timestamp_seconds"),
                               delta=1e-5)
        self.assertEqual(1, one("jitterd_loop_up"))
        self.assertGreaterEqual(window["stolen_ratio"], 0)
        self.assertLess(window["stolen_ratio"], 1)
        refused = before["loops"]["refused"]
        self.assertEqual([(r["file"], r["reason"]) for r in refused], [("jitterd-loop.junk", "magic")])
        self.assertTrue(refused[0]["why"])
        # The page: the loops' section with the same figures, the refused file with why, nothing
        # from the file unescaped.
        status_code, page = harness.http_get(daemon.url("/"))
        self.assertEqual(status_code, 200)
        self.assertIn("<h2>Loops (the applications&#39; own)</h2>", page)
        self.assertRegex(page, r'<tr id="loop-status_loop"><td>status_loop</td><td>%d</td>' % cpus[0])
        self.assertRegex(page, r'id="loop-status_loop-p99">\d+\.\d{3}<')
        self.assertIn('id="loop-status_loop-plot"', page)
        self.assertIn("<td>jitterd-loop.junk</td><td>magic</td>", page)
        self.assertNotIn("<script>", page)
        self.stop_ok(daemon)

    def test_a_missing_or_non_directory_loops_directory_is_a_configuration_error(self):
        # At start: exit 78 naming loops.directory and the path; on reload: rejected, the old
        # configuration keeps serving its loops.
        not_a_directory = os.path.join(self.workdir, "a-file")
        with open(not_a_directory, "w", encoding="utf-8") as f:
            f.write("x")
        for path, why in ((os.path.join(self.workdir, "missing"), "No such file or directory"),
                          (not_a_directory, "not a directory")):
            daemon = self.daemon(loops_config(path), start=False)
            daemon.start(wait_listening=False)
            self.assertEqual(daemon.process.wait(15), 78, daemon.log())
            self.assertRegex(daemon.log(), rf"loops\.directory: {re.escape(path)}: {why}")
        cpus = cpus_allowed()
        self.example(POLL_LOOP, "kept", cpus[0], 0)
        daemon = self.daemon(loops_config(self.loops))
        harness.wait_until(lambda: self.up(daemon, "kept") == 1, 10, what="the loop up")
        offset = len(daemon.log())
        harness.write_file(daemon.config_path, loops_config(os.path.join(self.workdir, "missing")))
        daemon.signal(signal.SIGHUP)
        harness.wait_until(lambda: "reload rejected" in daemon.log()[offset:], 10, what="the reload rejected")
        self.assertIn("loops.directory", daemon.log()[offset:])
        time.sleep(1)
        self.assertEqual(self.up(daemon, "kept"), 1, "the old configuration's loop is gone after a rejected reload")
        self.stop_ok(daemon)

    def test_probes_coming_and_going_leave_descriptors_and_memory_flat(self):
        # Loops open, run 0.2 s and close one after another (a new name each, so each is a new
        # probe to the daemon), and a refused file comes and goes beside them; the daemon reads
        # every 100 ms. Its descriptors and RSS are taken once the churn has run 5 s and again
        # 20 s later.
        config = loops_config(self.loops).replace("interval: 200ms", "interval: 100ms")
        daemon = self.daemon(config)
        pid = daemon.process.pid

        def usage():
            with open(f"/proc/{pid}/status", encoding="utf-8") as status:
                rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
            return len(os.listdir(f"/proc/{pid}/fd")), rss

        cpu = cpus_allowed()[-1]
        junk = os.path.join(self.loops, "jitterd-loop.junk")
        cycles, first, started = 0, None, time.monotonic()
        while time.monotonic() - started < 25:
            loop = LoopExample(POLL_LOOP, f"churn{cycles}", cpu, 0.2, self.loops)
            self.examples.append(loop)
            with open(junk, "wb") as out:
                out.write(b"x" * 1000)
            loop.process.wait(10)
            loop.stop()
            self.examples.remove(loop)
            os.unlink(junk)
            cycles += 1
            if first is None and time.monotonic() - started >= 5:
                time.sleep(0.3)  # the daemon has seen the last loop go
                first = usage()
        time.sleep(0.5)
        last = usage()
        refused = next(iter(harness.select(daemon.scrape(), "jitterd_loop_refused_total", reason="magic").values()))
        print(f"churn: {cycles} loops came and went; descriptors {first[0]} -> {last[0]}, RSS {first[1]} -> "
              f"{last[1]} kB; wrong-magic refusals {refused:.0f}", file=sys.stderr)
        self.assertGreater(cycles, 20, "too few loops came and went to say anything")
        self.assertGreater(refused, 0, "the daemon never saw the refused file")
        self.assertEqual(last[0], first[0], "the daemon's descriptors changed while loops came and went")
        if sanitized(harness.JITTERD):
            # AddressSanitizer holds freed memory in quarantine (256 MiB by default): RSS grows
            # with every free by design, so only the plain build's RSS says anything.
            print("churn: RSS not checked: the binary is built with AddressSanitizer", file=sys.stderr)
        else:
            self.assertLessEqual(last[1] - first[1], 2048, "the daemon's RSS grew by more than 2 MiB")
        self.assertNotIn("churn", "".join(l for l in daemon.scrape_text().splitlines() if l.startswith("jitterd_loop_up")))
        self.stop_ok(daemon)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--poll-loop", required=True)
    parser.add_argument("--ring-loop", required=True)
    own, rest = parser.parse_known_args()
    POLL_LOOP, RING_LOOP = os.path.realpath(own.poll_loop), os.path.realpath(own.ring_loop)
    sys.argv = [sys.argv[0]] + rest
    harness.main()
