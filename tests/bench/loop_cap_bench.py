#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loops at the cap: the daemon reading 256 segments of the largest layout (65,536 window slots,
1,048,576 ring entries: 17.8 MB each, every slot and ring entry filled), side by side for two
builds (--jitterd and --before, e.g. main's), each alone on the machine in turn.

Each segment is written once, consistent in every count the reader checks, its writer this
process (alive, so the loop is up until its heartbeat is stale, and read at every interval
either way). The daemon samples nothing and reads them every --interval over --window. After
--settle seconds the bench takes the daemon's CPU time (utime + stime) over --measure seconds and
its VmRSS and VmHWM, and prints them per build with the ratio. Prints figures for
docs/benchmarks.md; asserts nothing.

Usage: python3 tests/bench/loop_cap_bench.py --jitterd build/jitterd [--before OTHER/jitterd]
           [--loops 256] [--settle 20] [--measure 30]
"""

import argparse
import os
import platform
import shutil
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import harness  # noqa: E402

HEADER, BUCKETS, SLOTS, RING = 512, 976, 65536, 1048576
HEAD = HEADER + 8 * BUCKETS
HERTZ, SLOT_TICKS = 1_000_000_000, 250_000_000
CONFIG = """\
cpus: []
sampler:
  window: {window}
web:
  listen_address: "127.0.0.1:0"
loops:
  directory: {directory}
  stale_after: 10s
  interval: {interval}
{probes_off}"""


def own_start_time():
    with open("/proc/self/stat", encoding="utf-8") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def segment(name):
    """A consistent segment of the largest layout, every slot and ring entry filled."""
    interruptions = 2 * RING
    samples = 4 * interruptions
    duration = 50_000
    stolen = interruptions * duration
    sampled = (samples - interruptions) * 100 + stolen
    first_tick = 1_000_000
    heartbeat = first_tick + sampled
    total = HEAD + 16 * SLOTS + 16 * RING
    head = bytearray(HEADER)
    struct.pack_into("<QIIQiiQIIQIIIIQQQQQQQ", head, 0, 0x31504F4F4C544A4A, 1, HEADER, total, os.getpid(), 0,
                     own_start_time(), 6, 4, HERTZ, BUCKETS, RING, SLOTS, 0, SLOT_TICKS, 2000, 100, HEADER, HEAD,
                     HEAD + 16 * SLOTS, 0)
    head[128:128 + len(name)] = name.encode()
    struct.pack_into("<10Q", head, 384, samples, sampled, interruptions, stolen, 100, duration, heartbeat,
                     first_tick, interruptions, interruptions)
    histogram = bytearray(8 * BUCKETS)
    struct.pack_into("<Q", histogram, 8 * 50, samples - interruptions)
    struct.pack_into("<Q", histogram, 8 * 300, interruptions)
    last_id = heartbeat // SLOT_TICKS + 1
    slots = bytearray(16 * SLOTS)
    for slot_id in range(max(1, last_id - SLOTS + 1), last_id + 1):
        struct.pack_into("<QQ", slots, 16 * (slot_id % SLOTS), slot_id, duration)
    entry = struct.pack("<QQ", first_tick, duration)
    return bytes(head) + bytes(histogram) + bytes(slots) + entry * RING


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs ({model}), kernel {platform.release()}"


def status(pid, key):
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":"))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(binary, directory, workdir, args):
    os.makedirs(workdir, exist_ok=True)
    harness.JITTERD = shutil.copy2(binary, os.path.join(workdir, "jitterd"))
    daemon = harness.Daemon(workdir, CONFIG.format(window=args.window, directory=directory, interval=args.interval,
                                                   probes_off=harness.PROBES_OFF))
    daemon.start()
    try:
        pid = daemon.process.pid
        time.sleep(args.settle)
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(args.measure)
        cpu = (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
        up = harness.select(daemon.scrape(), "jitterd_loop_up")
        return {"cpu": cpu, "rss": status(pid, "VmRSS"), "hwm": status(pid, "VmHWM"), "loops": len(up)}
    finally:
        daemon.stop(10)
        daemon.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--before", help="another build to measure first, side by side")
    parser.add_argument("--loops", type=int, default=256)
    parser.add_argument("--interval", default="1s")
    parser.add_argument("--window", default="60s")
    parser.add_argument("--settle", type=float, default=20)
    parser.add_argument("--measure", type=float, default=30)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="jitterd-loop-cap-")
    directory = os.path.join(workdir, "loops")
    os.mkdir(directory)
    try:
        for i in range(args.loops):
            name = f"cap{i:03d}"
            with open(os.path.join(directory, "jitterd-loop." + name), "wb") as out:
                out.write(segment(name))
        size = os.path.getsize(os.path.join(directory, "jitterd-loop.cap000"))
        print(f"machine: {machine()}")
        print(f"{args.loops} segments of {size:,} bytes ({args.loops * size / 2**20:,.0f} MiB), read every "
              f"{args.interval}, window {args.window}; CPU over {args.measure:g} s after {args.settle:g} s")
        results = []
        for label, binary in (("before", args.before), ("after", args.jitterd)):
            if binary:
                results.append((label, measure(binary, directory, os.path.join(workdir, label) + "/", args)))
        for label, r in results:
            print(f"{label}: {r['loops']} loops exported, CPU {100 * r['cpu']:.1f}% of one CPU, RSS "
                  f"{r['rss']:,} kB, peak RSS {r['hwm']:,} kB")
        if len(results) == 2:
            (_, b), (_, a) = results
            print(f"after / before: CPU {a['cpu'] / max(b['cpu'], 1e-9):.3f}, RSS {a['rss'] / b['rss']:.3f}, "
                  f"peak RSS {a['hwm'] / b['hwm']:.3f}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
