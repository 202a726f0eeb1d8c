#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loop probes coming and going for a long time (the issue's ten minutes): do the daemon's RSS and
open descriptors stay flat?

Runs a real `jitterd run` (sampling nothing, the loops probe reading a scratch directory every
--interval) while loops are created and destroyed without pause: each cycle a new example loop
(examples/loop_probe/poll_loop, a new name each time) runs --loop-seconds and closes its probe;
every third cycle one more is killed with SIGKILL instead (a dead writer, its file left behind until
the next such cycle removes it); and each cycle one hostile file replaces the last one, in turn
truncated, wrong magic, a newer layout, swapped (a valid segment renamed over another under the same
name), a dead writer's copy, a symlink, a FIFO and a segment whose label clashes with jitterd's
(`le=`). As root, --foreign files of another user (uid 65534) that sort before every loop sit in
the directory the whole run: they must take no place under the cap of 256 (every loop of the
churn still accepted) and count once each. Every --sample-every seconds it samples the
daemon's VmRSS and open descriptors (/proc/PID/status, /proc/PID/fd), and prints start, end and
max of each and the least-squares slope after --settle seconds (per minute), the loops and
refusals the daemon counted, and the machine. Prints figures for docs/benchmarks.md; asserts
nothing about them (CI runs the short churn in tests/integration/loop_test.py).

The binaries are copied into the scratch directory first, so a rebuild during the run changes
nothing.

Usage: python3 tests/bench/loop_churn_bench.py --jitterd build/jitterd
           --poll-loop build/examples/loop_probe/poll_loop [--duration 600] [--sample-every 5]
"""

import argparse
import os
import platform
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402  (Daemon, select, PROBES_OFF)

CONFIG = """\
cpus: []
sampler:
  window: 10s
web:
  listen_address: "127.0.0.1:0"
loops:
  directory: {directory}
  stale_after: 2s
  interval: {interval}
{probes_off}"""

HOSTILE_KINDS = ("truncated", "magic", "version", "swapped", "dead", "symlink", "fifo", "label")


def usage(pid):
    """(open descriptors, VmRSS in kB) of the process."""
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return len(os.listdir(f"/proc/{pid}/fd")), rss


def slope_per_minute(points):
    """Least-squares slope of [(seconds, value)] in value per minute (0 for fewer than two)."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return 0.0
    return 60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / spread


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs ({model}), kernel {platform.release()}"


class Churn:
    def __init__(self, directory, poll_loop, loop_seconds, cpu):
        self.directory = directory
        self.poll_loop = poll_loop
        self.loop_seconds = loop_seconds
        self.cpu = cpu
        self.env = dict(os.environ, JITTERD_LOOP_DIR=directory)
        self.cycles = 0
        self.closed = 0
        self.killed = 0
        self.hostile = 0
        self.dead_file = None
        self.hostile_path = None
        self.template = self.donor_segment()

    def path(self, name):
        return os.path.join(self.directory, "jitterd-loop." + name)

    def loop(self, name, seconds):
        return subprocess.Popen([self.poll_loop, name, str(self.cpu), str(seconds)], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_file(self, process, path):
        harness.wait_until(lambda: os.path.exists(path) or process.poll() is not None, 10,
                           what=f"the segment {path}")

    def donor_segment(self):
        """A valid segment of a writer that is gone: the hostile files are made of it."""
        process = self.loop("donor", 0)
        self.wait_file(process, self.path("donor"))
        time.sleep(0.3)
        process.kill()
        process.wait(10)
        with open(self.path("donor"), "rb") as segment:
            data = segment.read()
        os.unlink(self.path("donor"))
        return data

    def named(self, name):
        return self.template[:128] + name.encode().ljust(64, b"\0") + self.template[192:]

    def write(self, path, data):
        with open(path, "wb") as out:
            out.write(data)

    def replace_hostile(self):
        """Removes the last hostile file and plants the next kind."""
        if self.hostile_path is not None and os.path.lexists(self.hostile_path):
            os.unlink(self.hostile_path)
        kind = HOSTILE_KINDS[self.cycles % len(HOSTILE_KINDS)]
        name = f"{kind}{self.cycles}"
        path = self.path(name)
        data = self.named(name)
        if kind == "truncated":
            self.write(path, data[:4096])
        elif kind == "magic":
            self.write(path, b"NOTALOOP" + data[8:])
        elif kind == "version":
            self.write(path, data[:8] + struct.pack("<I", 99) + data[12:])
        elif kind == "swapped":
            self.write(path, data)
            time.sleep(0.15)
            swap = os.path.join(self.directory, ".swap")
            self.write(swap, data)
            os.replace(swap, path)
        elif kind == "dead":
            self.write(path, data)
        elif kind == "symlink":
            os.symlink("/etc/passwd", path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "label":
            self.write(path, data[:192] + b"le=0.5".ljust(192, b"\0") + data[384:])
        self.hostile_path = path
        self.hostile += 1

    def cycle(self):
        name = f"churn{self.cycles}"
        closing = self.loop(name, self.loop_seconds)
        killed = None
        if self.cycles % 3 == 0:
            killed = self.loop(f"killed{self.cycles}", 0)
        self.replace_hostile()
        if killed is not None:
            self.wait_file(killed, self.path(f"killed{self.cycles}"))
            time.sleep(self.loop_seconds)
            killed.kill()
            killed.wait(10)
            if self.dead_file is not None and os.path.exists(self.dead_file):
                os.unlink(self.dead_file)
            self.dead_file = self.path(f"killed{self.cycles}")
            self.killed += 1
        closing.wait(30)
        self.closed += 1
        self.cycles += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--poll-loop", required=True)
    parser.add_argument("--duration", type=float, default=600, help="seconds of churn (default 600)")
    parser.add_argument("--sample-every", type=float, default=5, help="seconds between samples")
    parser.add_argument("--settle", type=float, default=60,
                        help="seconds before the slope's samples start (start-up's allocations)")
    parser.add_argument("--interval", default="100ms", help="the loops probe's interval")
    parser.add_argument("--loop-seconds", type=float, default=0.3, help="how long each loop runs")
    parser.add_argument("--foreign", type=int, default=300,
                        help="files of another user sorting first, as root (default 300: more than the cap)")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="jitterd-loop-churn-")
    jitterd = shutil.copy2(args.jitterd, os.path.join(workdir, "jitterd"))
    poll_loop = shutil.copy2(args.poll_loop, os.path.join(workdir, "poll_loop"))
    directory = os.path.join(workdir, "loops")
    os.mkdir(directory)
    foreign = args.foreign if os.geteuid() == 0 else 0
    for i in range(foreign):
        path = os.path.join(directory, f"jitterd-loop.0foreign{i:05d}")
        with open(path, "wb") as out:
            out.write(b"x" * 1000)
        os.chown(path, 65534, 65534)
    harness.JITTERD = jitterd
    daemon = harness.Daemon(workdir, CONFIG.format(directory=directory, interval=args.interval,
                                                   probes_off=harness.PROBES_OFF))
    daemon.start()
    pid = daemon.process.pid
    samples = []  # (seconds since the start, descriptors, RSS kB)
    stop = threading.Event()
    started = time.monotonic()

    def sampler():
        while not stop.is_set():
            fds, rss = usage(pid)
            samples.append((time.monotonic() - started, fds, rss))
            stop.wait(args.sample_every)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    cpu = sorted(os.sched_getaffinity(0))[-1]
    churn = Churn(directory, poll_loop, args.loop_seconds, cpu)
    try:
        while time.monotonic() - started < args.duration:
            churn.cycle()
        time.sleep(1)
        stop.set()
        thread.join()
        fds, rss = usage(pid)
        samples.append((time.monotonic() - started, fds, rss))
        scraped = daemon.scrape()
        refused = {labels: value for labels, value in harness.select(scraped, "jitterd_loop_refused_total").items()}
        code = daemon.stop(10)
    finally:
        daemon.kill()
    settled = [s for s in samples if s[0] >= args.settle] or samples
    print(f"machine: {machine()}")
    print(f"{samples[-1][0]:.0f} s: {churn.cycles} cycles, {churn.closed} loops closed, {churn.killed} killed "
          f"(dead writers), {churn.hostile} hostile files; daemon reading every {args.interval}; "
          f"{len(samples)} samples every {args.sample_every:g} s")
    for index, what, unit in ((1, "descriptors", ""), (2, "RSS", " kB")):
        values = [s[index] for s in samples]
        print(f"{what}: start {values[0]}{unit}, after {args.settle:g} s {settled[0][index]}{unit}, end "
              f"{values[-1]}{unit}, max {max(values)}{unit}, slope after {args.settle:g} s "
              f"{slope_per_minute([(s[0], s[index]) for s in settled]):+.2f}{unit} per minute")
    print("refusals counted by the daemon: " +
          ", ".join(f"{dict(labels)['reason']} {value:.0f}" for labels, value in sorted(refused.items())
                    if value > 0))
    log = daemon.log()
    print(f"daemon log: {log.count('down: its writer')} loops down as their writer was gone, "
          f"{log.count(': removed')} segments removed, {log.count(': refused (')} refusal lines, "
          f"{log.count(' up (pid')} loops up")
    print(f"cap: {foreign} files of another user sorted first the whole run"
          + ("" if foreign else " (not root: none planted)") + f"; {churn.closed + churn.killed} loops of the churn "
          f"started, {log.count(' up (pid')} seen up by the daemon, too_many refusals "
          f"{sum(v for l, v in refused.items() if dict(l)['reason'] == 'too_many'):.0f}")
    print(f"daemon exit code at SIGTERM: {code}; log and scratch directory in {workdir}")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
