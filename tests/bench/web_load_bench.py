#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Load and soak benchmark of the web server, against the real jitterd (issue 10).

Prints figures for docs/benchmarks.md, asserts nothing about time. Phases, one daemon:

  quiet    the sampled CPU's stolen share with no scraper (the machine's own noise)
  load     N concurrent scrapers looping GET /metrics: requests, errors, latency, and the
           sampled CPU's stolen share meanwhile
  reloads  R SIGHUPs alternating a good file (which restarts the web server: its web
           configuration file changes) and a broken one, under S scrapers: failed scrapes,
           descriptors before and after
  soak     (only with --soak SECONDS) scrapes and a reload every few seconds; RSS and open
           descriptors printed every --soak-every seconds
  attacks  (only with --many-loops BINARY; --only-attacks skips the phases above) issue 35's:
           the daemon reading --loops loops (256: the status pages' heaviest input), then
           sequential scrapes' p50/p99/max with no load, under --page-clients clients looping over
           /, /status.json and /baseline.json, and under slowloris from --slowloris-addresses
           loopback addresses (127.0.0.2...) holding 128 connections each, side by side

Usage: python3 tests/bench/web_load_bench.py --jitterd build/jitterd
           [--duration 30] [--scrapers 50] [--reloads 200] [--soak 3600]
           [--many-loops build/many_loops [--only-attacks] [--page-clients 150] [--loops 256]]
"""

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import harness  # noqa: E402
import web_attacks  # noqa: E402

CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 20us
  window: 10s
web:
  listen_address: "127.0.0.1:{port}"
  config_file: {web_config}
log:
  level: info
"""

# The attack phases: issue 35's audit's daemon, the samplers as shipped and a loops section.
ATTACK_CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  window: 60s
web:
  listen_address: "127.0.0.1:0"
loops:
  directory: {directory}
"""

BROKEN = "sampler:\n  duty_cycle: sometimes\n"
# Two valid web configuration files: switching between them restarts the web server.
WEB_A = "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n"
WEB_B = "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def counters(url, cpu):
    samples = harness.parse_metrics(urllib.request.urlopen(url, timeout=10).read().decode())
    stolen = harness.select(samples, "jitterd_sampler_stolen_seconds_total", cpu=cpu)
    sampled = harness.select(samples, "jitterd_sampler_sampled_seconds_total", cpu=cpu)
    return next(iter(stolen.values())), next(iter(sampled.values()))


def stolen_share(url, cpu, seconds):
    s0, t0 = counters(url, cpu)
    time.sleep(seconds)
    s1, t1 = counters(url, cpu)
    return (s1 - s0) / (t1 - t0) if t1 > t0 else float("nan")


class Scrapers:
    """n threads looping GET url until stopped; counts, errors and latencies."""

    def __init__(self, url, n):
        self.url, self.n = url, n
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies, self.errors = [], []
        self.error_times = []  # time.monotonic() of each error, beside self.errors
        self.threads = [threading.Thread(target=self.loop, daemon=True) for _ in range(n)]

    def loop(self):
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=10) as response:
                    response.read()
                    ok = response.status == 200
                    why = f"HTTP {response.status}"
            except (urllib.error.URLError, OSError, ConnectionError) as e:
                ok, why = False, repr(e)
            elapsed = time.monotonic() - started
            with self.lock:
                if ok:
                    self.latencies.append(elapsed)
                else:
                    self.errors.append(f"{why} after {elapsed:.1f} s")
                    self.error_times.append(time.monotonic())

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(15)

    def summary(self):
        lat = sorted(self.latencies)
        if not lat:
            return f"0 scrapes, {len(self.errors)} errors"
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3  # noqa: E731
        return (f"{len(lat)} scrapes, {len(self.errors)} errors; latency p50 {q(0.5):.1f} ms, "
                f"p99 {q(0.99):.1f} ms, max {lat[-1] * 1e3:.1f} ms")


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def attack_phases(args, workdir):
    """Issue 35's attacks on a daemon reading args.loops loops; prints the scrapes side by side."""
    web_attacks.raise_descriptor_limit(8192)
    loop_dir = os.path.join(workdir, "loops")
    os.makedirs(loop_dir, exist_ok=True)
    housekeeping = min(os.sched_getaffinity(0))
    loops = subprocess.Popen([os.path.realpath(args.many_loops), str(args.loops), str(housekeeping), "0"],
                             env=dict(os.environ, JITTERD_LOOP_DIR=loop_dir), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    daemon = harness.Daemon(workdir, ATTACK_CONFIG.format(directory=loop_dir), config_name="attacks.yaml")
    try:
        print(f"many_loops: {loops.stdout.readline().strip()}")
        daemon.start()
        harness.wait_until(lambda: sum(harness.select(daemon.scrape(), "jitterd_loop_up").values()) >= args.loops,
                           90, interval=0.5, what=f"{args.loops} loops up")
        base = daemon.url("/").rstrip("/")
        sizes = {path: len(urllib.request.urlopen(base + path, timeout=60).read()) for path in web_attacks.PAGES}
        print(f"attacks: jitterd pid {daemon.process.pid}, {args.loops} loops up; page sizes "
              + ", ".join(f"{p} {n / 1024:.0f} KiB" for p, n in sizes.items()))
        # The scrapes run in a process of their own, as Prometheus does (web_attacks.timed_scrapes_apart).
        def scrapes():
            latencies, errors, _ = web_attacks.timed_scrapes_apart(daemon.url(), args.attack_scrapes, pause=0.05)
            return latencies, errors, f"load average {os.getloadavg()[0]:.1f}"

        rows = [("no load", *scrapes())]
        host, port = daemon.address.rsplit(":", 1)
        with web_attacks.PageClients(host, int(port), args.page_clients) as pages:
            time.sleep(2)
            rows.append((f"{args.page_clients} page clients", *scrapes()))
        rows[-1] = rows[-1][:3] + (rows[-1][3] + "; " + pages.summary(),)
        with web_attacks.Slowloris(host, int(port), args.slowloris_addresses, 128) as attack:
            time.sleep(4)
            rows.append((f"slowloris {args.slowloris_addresses} addresses x 128", *scrapes()))
        rows[-1] = rows[-1][:3] + (rows[-1][3] + "; " + attack.describe(),)
        print(f"{'scrapes of /metrics':<34} {'n':>5} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for what, latencies, errors, note in rows:
            q = lambda p: web_attacks.quantile(latencies, p) * 1e3  # noqa: E731
            print(f"{what:<34} {len(latencies):>5} {len(errors):>6} {q(0.5):>8.1f} {q(0.99):>8.1f} "
                  f"{max(latencies, default=float('nan')) * 1e3:>8.1f}  {note}")
        web = {(name, labels): value for (name, labels), value in daemon.scrape().items()
               if name.startswith("jitterd_web_")}
        print("the server: " + ", ".join(f"{name[len('jitterd_web_'):]}{dict(labels) or ''} {value:.0f}"
                                         for (name, labels), value in sorted(web.items())))
    finally:
        daemon.stop()
        loops.kill()
        loops.wait(10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--duration", type=float, default=30)
    parser.add_argument("--scrapers", type=int, default=50)
    parser.add_argument("--reloads", type=int, default=200)
    parser.add_argument("--reload-scrapers", type=int, default=8)
    parser.add_argument("--soak", type=float, default=0)
    parser.add_argument("--soak-every", type=float, default=60)
    parser.add_argument("--many-loops", help="tests/bench/many_loops, built: runs the attack phases")
    parser.add_argument("--only-attacks", action="store_true")
    parser.add_argument("--loops", type=int, default=256)
    parser.add_argument("--page-clients", type=int, default=150)
    parser.add_argument("--slowloris-addresses", type=int, default=12)
    parser.add_argument("--attack-scrapes", type=int, default=300)
    args = parser.parse_args()
    harness.JITTERD = os.path.realpath(args.jitterd)
    if args.many_loops:
        with tempfile.TemporaryDirectory(prefix="jitterd-attacks-") as workdir:
            attack_phases(args, workdir)
        if args.only_attacks:
            return 0

    with tempfile.TemporaryDirectory(prefix="jitterd-load-") as workdir:
        web_a, web_b = os.path.join(workdir, "web_a.yml"), os.path.join(workdir, "web_b.yml")
        harness.write_file(web_a, WEB_A)
        harness.write_file(web_b, WEB_B)
        port = free_port()
        good = {web: CONFIG.format(port=port, web_config=web) for web in (web_a, web_b)}
        daemon = harness.Daemon(workdir, good[web_a])
        try:
            daemon.start()
            pid = daemon.process.pid
            cpu = str(daemon.sampled_cpus()[0])
            # The scrapers run where jitterd's web server does, off the sampled CPUs: the figure
            # is then what serving costs the sampled CPU, not what the load generator does there.
            others = set(os.sched_getaffinity(0)) - set(daemon.sampled_cpus())
            if others:
                os.sched_setaffinity(0, others)
            url = daemon.url()
            time.sleep(2)  # past the warm-up
            print(f"jitterd pid {pid}, sampling cpu {cpu}, scrapers on cpus {sorted(os.sched_getaffinity(0))}, "
                  f"{url}; {os.cpu_count()} CPUs; "
                  f"{os.uname().release}")

            quiet = stolen_share(url, cpu, args.duration)
            print(f"quiet: stolen share {quiet * 100:.3f}% over {args.duration:.0f} s")
            with Scrapers(url, args.scrapers) as load:
                loaded = stolen_share(url, cpu, args.duration)
            print(f"load: {args.scrapers} scrapers for {args.duration:.0f} s: {load.summary()}; "
                  f"stolen share {loaded * 100:.3f}%")
            for e in sorted(set(load.errors))[:5]:
                print(f"  error: {e}")

            fds_before, rss_before = fds(pid), rss_kib(pid)
            started = time.monotonic()
            with Scrapers(url, args.reload_scrapers) as scrapers:
                for i in range(args.reloads):
                    offset = len(daemon.log())
                    text = BROKEN if i % 2 else good[web_b if i % 4 == 0 else web_a]
                    harness.write_file(daemon.config_path, text)
                    daemon.signal(signal.SIGHUP)
                    # The next reload only after this one ended (accepted or rejected).
                    harness.wait_until(lambda: "reload" in daemon.log()[offset:] or i % 2 == 0 and
                                       "configuration reloaded" in daemon.log()[offset:], 30,
                                       what="the reload's log line")
                    if i % 2 == 0:
                        harness.wait_until(lambda: "configuration reloaded" in daemon.log()[offset:], 30,
                                           what="configuration reloaded")
            time.sleep(1)
            print(f"reloads: {args.reloads} alternating good (web server restarted) and broken in "
                  f"{time.monotonic() - started:.1f} s under {args.reload_scrapers} scrapers: "
                  f"{scrapers.summary()}; fds {fds_before} -> {fds(pid)}, RSS {rss_before} -> {rss_kib(pid)} KiB")
            for e in sorted(set(scrapers.errors))[:5]:
                print(f"  error: {e}")
            harness.write_file(daemon.config_path, good[web_a])
            daemon.signal(signal.SIGHUP)

            if args.soak > 0:
                end = time.monotonic() + args.soak
                next_report = time.monotonic()
                reloads = 0
                with Scrapers(url, 2) as soak:
                    while time.monotonic() < end:
                        if time.monotonic() >= next_report:
                            print(f"soak t={args.soak - (end - time.monotonic()):6.0f} s: RSS {rss_kib(pid)} KiB, "
                                  f"fds {fds(pid)}, {soak.summary()}", flush=True)
                            next_report += args.soak_every
                        harness.write_file(daemon.config_path, good[web_b if reloads % 2 else web_a])
                        daemon.signal(signal.SIGHUP)
                        reloads += 1
                        time.sleep(5)
                print(f"soak: {args.soak:.0f} s, {reloads} reloads: RSS {rss_kib(pid)} KiB, fds {fds(pid)}, "
                      f"{soak.summary()}")
                started = end - args.soak
                for when, why in list(zip(soak.error_times, soak.errors))[:10]:
                    print(f"  error at t={when - started:.0f} s: {why}")
        finally:
            daemon.kill() if daemon.address is None else None
            code = daemon.stop()
            print(f"stopped: exit {code}")
            if code != 0:
                print(daemon.log()[-3000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
