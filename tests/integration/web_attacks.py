# SPDX-License-Identifier: Apache-2.0
"""Load on jitterd's web server, shared by the integration test (web_attacks_test.py) and the
benchmark (tests/bench/web_load_bench.py); Python standard library only.

- Slowloris: connections from several loopback addresses (127.0.0.2, 127.0.0.3, ...), each
  sending one byte of a request per second and never finishing it; every connection the server
  closes is opened again at once, so the attack keeps as many open as the server lets it.
- PageClients: threads looping GET over the status pages (/, /status.json, /baseline.json), from
  many loopback addresses as many browsers would be.
- Scraper: timed GET /metrics, one after another, each with Prometheus' default timeout; in a
  process of its own (timed_scrapes_apart), as Prometheus is: in the process of the page clients'
  or the attack's threads it would wait for Python's interpreter lock between its reads, and the
  wait would be measured as the server's.
"""

import errno
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

PROMETHEUS_TIMEOUT = 10.0  # seconds: Prometheus' default scrape_timeout
PAGES = ("/", "/status.json", "/baseline.json")


def raise_descriptor_limit(wanted):
    """Raises this process's soft RLIMIT_NOFILE towards `wanted` (children inherit it); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(hard, max(soft, wanted)) if hard != resource.RLIM_INFINITY else max(soft, wanted)
    if target != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Slowloris:
    """`per_address` connections from each of `addresses` loopback addresses to (host, port)."""

    REQUEST = b"GET /metrics HTTP/1.1\r\nHost: jitterd\r\nUser-Agent: slowloris\r\nX-a: "

    def __init__(self, host, port, addresses=12, per_address=128):
        self.target = (host, port)
        self.sources = [f"127.0.0.{2 + i}" for i in range(addresses)]
        self.per_address = per_address
        self.selector = selectors.DefaultSelector()
        self.sockets = {}  # socket -> [source, bytes sent]
        self.opened = self.closed_by_server = self.refused = 0
        self.error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, source):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((source, 0))
            err = s.connect_ex(self.target)
            if err not in (0, errno.EINPROGRESS):
                raise OSError(err, "connect")
        except OSError:
            s.close()
            self.refused += 1
            return
        self.sockets[s] = [source, 0]
        self.selector.register(s, selectors.EVENT_READ)
        self.opened += 1

    def _drop(self, s):
        source = self.sockets.pop(s)[0]
        self.selector.unregister(s)
        s.close()
        return source

    def _run(self):
        try:
            for source in self.sources:
                for _ in range(self.per_address):
                    self._open(source)
            next_byte = time.monotonic()
            while not self._stop.is_set():
                for key, _ in self.selector.select(timeout=0.05):
                    s = key.fileobj
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    if not data:  # closed (or answered and closed): open another at once
                        self.closed_by_server += 1
                        self._open(self._drop(s))
                if time.monotonic() >= next_byte:
                    next_byte += 1.0
                    for s, state in list(self.sockets.items()):
                        byte = self.REQUEST[state[1]:state[1] + 1] or b"a"
                        try:
                            s.send(byte)
                            state[1] += 1
                        except BlockingIOError:
                            pass  # still connecting
                        except OSError:
                            self.closed_by_server += 1
                            self._open(self._drop(s))
                # Keep the count: a source refused at connect time is tried again.
                missing = self.per_address * len(self.sources) - len(self.sockets)
                for i in range(min(missing, 64)):
                    self._open(self.sources[i % len(self.sources)])
        except Exception as e:  # noqa: BLE001 (reported by the caller)
            self.error = e

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(10)
        for s in list(self.sockets):
            self._drop(s)

    def describe(self):
        return (f"slowloris from {len(self.sources)} addresses x {self.per_address}: {self.opened} opened, "
                f"{self.closed_by_server} closed by the server, {self.refused} refused")


class PageClients:
    """`n` threads looping GET over PAGES on host:port, from `addresses` loopback addresses
    (127.0.0.100, 127.0.0.101, ...: as many browsers, each under the server's per-address limit;
    the scrapes come from 127.0.0.1)."""

    def __init__(self, host, port, n, addresses=50):
        self.host, self.port, self.n = host, port, n
        self.sources = [f"127.0.0.{100 + i}" for i in range(min(addresses, n))]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies, self.errors = [], []
        self.spans = []  # (start, end) of each page served, time.monotonic()
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(n)]

    def _get(self, source, path):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60, source_address=(source, 0))
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            return response.status == 200, f"HTTP {response.status}"
        finally:
            connection.close()

    def _loop(self, i):
        k = i
        source = self.sources[i % len(self.sources)]
        while not self.stop.is_set():
            path = PAGES[k % len(PAGES)]
            k += 1
            started = time.monotonic()
            try:
                ok, why = self._get(source, path)
            except (http.client.HTTPException, OSError) as e:
                ok, why = False, repr(e)
            ended = time.monotonic()
            with self.lock:
                (self.latencies if ok else self.errors).append(ended - started if ok else why)
                if ok:
                    self.spans.append((started, ended))

    def in_flight_throughout(self, start, end):
        """Page requests that were in flight from `start` to `end` (time.monotonic(), which is the
        system's CLOCK_MONOTONIC, the same in every process): sent before and answered after."""
        with self.lock:
            return sum(1 for s, e in self.spans if s <= start and e >= end)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(70)

    def summary(self):
        with self.lock:
            lat, errors = list(self.latencies), list(self.errors)
        kinds = sorted(set(errors))[:3]
        return (f"{self.n} page clients from {len(self.sources)} addresses: {len(lat)} pages, {len(errors)} errors"
                f"{' (' + '; '.join(kinds) + ')' if kinds else ''}, page p50 {quantile(lat, 0.5) * 1e3:.0f} ms")


def timed_scrapes(url, count, pause=0.0, timeout=PROMETHEUS_TIMEOUT, budget=None, starts=None):
    """`count` GETs of url one after another: (latencies of the successful ones, errors). With
    `budget` (seconds), no scrape starts after that long; with `starts` (a list), the successful
    ones' start times (time.monotonic()) are appended to it."""
    latencies, errors = [], []
    began = time.monotonic()
    for _ in range(count):
        if budget is not None and time.monotonic() - began > budget:
            break
        started = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                response.read()
                if response.status == 200:
                    latencies.append(time.monotonic() - started)
                    if starts is not None:
                        starts.append(started)
                else:
                    errors.append(f"HTTP {response.status}")
        except (urllib.error.URLError, OSError) as e:
            errors.append(f"{e!r} after {time.monotonic() - started:.1f} s")
        if pause:
            time.sleep(pause)
    return latencies, errors


def timed_scrapes_apart(url, count, pause=0.0, timeout=PROMETHEUS_TIMEOUT, budget=None):
    """timed_scrapes in a process of its own: (latencies, errors, starts), `starts` the successful
    scrapes' start times (time.monotonic()) beside their latencies."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import web_attacks\n"
            "url, count, pause, timeout, budget = json.loads(sys.argv[2]); starts = []\n"
            "latencies, errors = web_attacks.timed_scrapes(url, count, pause, timeout, budget, starts)\n"
            "print(json.dumps([latencies, errors, starts]))\n")
    limit = count * (timeout + pause) + 30 if budget is None else budget + timeout + 30
    result = subprocess.run([sys.executable, "-c", code, os.path.dirname(os.path.abspath(__file__)),
                             json.dumps([url, count, pause, timeout, budget])],
                            capture_output=True, text=True, timeout=limit)
    if result.returncode != 0:
        raise RuntimeError(f"the scraping process exited {result.returncode}: {result.stderr[-2000:]}")
    latencies, errors, starts = json.loads(result.stdout)
    return latencies, errors, starts


def describe_latencies(latencies, errors=()):
    if not latencies:
        return f"0 scrapes, {len(errors)} errors"
    return (f"{len(latencies)} scrapes, {len(errors)} errors: p50 {quantile(latencies, 0.5) * 1e3:.1f} ms, "
            f"p99 {quantile(latencies, 0.99) * 1e3:.1f} ms, max {max(latencies) * 1e3:.1f} ms")
