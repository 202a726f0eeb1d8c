#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A basic-auth flood against the real jitterd (issue 24): for each attacker count, the
legitimate scraper's latency (its password already verified, so cached) while that many threads
send wrong passwords (tests/integration/auth_flood.py says how). One daemon, basic auth with a
cost-10 bcrypt hash, the probes off. Prints figures for docs/benchmarks.md, asserts nothing about time.

Usage: python3 tests/bench/auth_flood_bench.py --jitterd build/jitterd [--attackers 0 8 32 64]
           [--seconds 10]
"""

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import auth_flood  # noqa: E402
import harness  # noqa: E402

CONFIG = """\
cpus: auto
sampler: {duty_cycle: burst, burst_spin: 20ms, burst_period: 200ms, warmup: 100ms, window: 10s}
web: {listen_address: "127.0.0.1:0"}
""" + harness.PROBES_OFF


def hash_thread_cpu_seconds(pid):
    """CPU seconds of each of the daemon's threads by name, summed ({comm: seconds})."""
    ticks = os.sysconf("SC_CLK_TCK")
    totals = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii") as f:
                text = f.read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        totals[name] = totals.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return totals


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--attackers", type=int, nargs="+", default=[0, 8, 32, 64])
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    harness.JITTERD = os.path.realpath(args.jitterd)
    with tempfile.TemporaryDirectory(prefix="jitterd-flood-") as workdir:
        web = os.path.join(workdir, "web.yml")
        harness.write_file(web, f"basic_auth_users:\n  alice: {auth_flood.SECRET_HASH_10}\n")
        daemon = harness.Daemon(workdir, CONFIG, args=["--web.config.file", web])
        try:
            daemon.start()
            print(f"{harness.JITTERD}: {os.cpu_count()} CPUs, {os.uname().release}; cost-10 hash")
            # The first scrape pays bcrypt once; the rest find the password verified.
            latencies, failures = auth_flood.scrape(daemon.address, 0.5, interval=0.1)
            print(f"warm-up: {auth_flood.summary(latencies, failures)}")
            for attackers in args.attackers:
                before = hash_thread_cpu_seconds(daemon.process.pid)
                flood = auth_flood.Flood(daemon.address, attackers, args.seconds)
                started = time.monotonic()
                latencies, failures = auth_flood.scrape(daemon.address, args.seconds)
                outcomes = flood.result()
                elapsed = time.monotonic() - started
                after = hash_thread_cpu_seconds(daemon.process.pid)
                cpu = {name: after[name] - before.get(name, 0.0) for name in after
                       if after[name] - before.get(name, 0.0) >= 0.05}
                print(f"{attackers:3d} attackers, {elapsed:.1f} s: {auth_flood.summary(latencies, failures)}; "
                      f"attackers got {dict(sorted(outcomes.items()))}; daemon thread CPU s "
                      f"{ {k: round(v, 2) for k, v in sorted(cpu.items())} }")
                for failure in failures[:3]:
                    print(f"  failed: {failure}")
                time.sleep(2)  # let requests left waiting drain
        finally:
            code = daemon.stop(timeout=30)
            print(f"stopped: exit {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
