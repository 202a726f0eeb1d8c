#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The web server under pressure and by the book: idle and slowloris connections do not delay a
scrape, silent and slow clients are dropped, SIGTERM stays fast with connections open, GET/HEAD
and 405/404 semantics, gzip, IPv6, bind errors, the web threads' CPUs, and reloads that restart the
web server under scrape load without a failed scrape or a leaked descriptor.

Usage: web_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
Measured figures are printed to stderr ("measured: ...").
"""

import gzip
import os
import re
import select
import signal
import socket
import sys
import threading
import time
import urllib.request

import harness

# The samplers as in the other tests, the probes off: they would only add load here.
WEB_CONFIG = harness.BURST_CONFIG[:harness.BURST_CONFIG.index("# Pacing")] + harness.PROBES_OFF

# bcrypt of "secret" at cost 4 (the lowest), so authenticated scrapes stay cheap.
SECRET_HASH = "$2y$04$QpcekFas4TsDdhhhvalQ.uFCTxq338o3gdaZbumCw4Fc8DNQjbLVW"

SCRAPE_LIMIT = 1.0      # seconds a scrape may take with the connections below open
IDLE_CONNECTIONS = 64
SLOW_CONNECTIONS = 8


def measured(text):
    print(f"measured: {text}", file=sys.stderr)


def split_address(address):
    """'127.0.0.1:80' -> ('127.0.0.1', 80); '[::1]:80' -> ('::1', 80)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def connect(address, timeout=5):
    return socket.create_connection(split_address(address), timeout=timeout)


def raw_request(address, method, path, headers=(), timeout=5):
    """One request with Connection: close; returns (status, {header: value}, body bytes)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: jitterd", "Connection: close", *headers, "", ""]
    with connect(address, timeout) as s:
        s.sendall("\r\n".join(lines).encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), fields, body


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def log_count(daemon, pattern):
    return len(re.findall(pattern, daemon.log()))


class ConnectionPressure:
    """Keeps `idle` silent connections and `slow` slowloris connections (one byte of a request
    per second) open to `address`, reopening any the server closes, until stop()."""

    REQUEST = b"GET /metrics HTTP/1.1\r\nHost: jitterd\r\nUser-Agent: slowloris\r\n"

    def __init__(self, address, idle, slow):
        self.address = address
        self.idle = [connect(address) for _ in range(idle)]
        self.slow = [[connect(address), 0] for _ in range(slow)]
        self.reopened = 0
        self.error = None  # what stopped the keeper early, if anything
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _closed_by_server(self, s):
        readable, _, _ = select.select([s], [], [], 0)
        if not readable:
            return False
        try:
            return s.recv(4096) == b""
        except OSError:
            return True

    def _reopen(self, s):
        s.close()
        self.reopened += 1
        return connect(self.address)

    def _run(self):
        try:
            self._keep()
        except OSError as error:
            self.error = error

    def _keep(self):
        next_byte = time.monotonic()
        while not self._stop.is_set():
            self.idle = [self._reopen(s) if self._closed_by_server(s) else s for s in self.idle]
            now = time.monotonic()
            for entry in self.slow:
                if self._closed_by_server(entry[0]):
                    entry[0], entry[1] = self._reopen(entry[0]), 0
                elif now >= next_byte:
                    try:
                        entry[0].send(self.REQUEST[entry[1] % len(self.REQUEST):][:1])
                        entry[1] += 1
                    except OSError:
                        entry[0], entry[1] = self._reopen(entry[0]), 0
            if now >= next_byte:
                next_byte = now + 1.0
            self._stop.wait(0.05)

    def stop(self):
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(5)
        for s in self.idle + [entry[0] for entry in self.slow]:
            s.close()


class PressureTest(harness.DaemonTestCase):
    def test_idle_and_slowloris_connections_leave_scrapes_fast(self):
        daemon = self.daemon(WEB_CONFIG)
        pressure = ConnectionPressure(daemon.address, IDLE_CONNECTIONS, SLOW_CONNECTIONS)
        self.addCleanup(pressure.stop)
        latencies = []
        # Several scrapes over about 4 s: past the 2 s idle timeout and the 3 s request deadline,
        # so they also run while dropped connections are being replaced.
        for _ in range(8):
            started = time.monotonic()
            with urllib.request.urlopen(daemon.url(), timeout=10) as response:
                body = response.read()
                status = response.status
            latencies.append(time.monotonic() - started)
            self.assertEqual(status, 200)
            self.assertIn(b"jitterd_build_info", body)
            time.sleep(0.5)
        pressure.stop()
        self.assertIsNone(pressure.error, "could not keep the connections open")
        measured(f"scrape with {IDLE_CONNECTIONS} idle + {SLOW_CONNECTIONS} slowloris connections: "
                 f"max {max(latencies) * 1e3:.1f} ms, median {sorted(latencies)[4] * 1e3:.1f} ms; "
                 f"the server dropped {pressure.reopened} of them meanwhile")
        for latency in latencies:
            self.assertLess(latency, SCRAPE_LIMIT, f"scrape latencies {latencies}")
        self.assertGreater(pressure.reopened, 0, "the server never dropped an idle or slow connection")
        self.stop_ok(daemon)

    def test_silent_and_slow_connections_are_dropped(self):
        daemon = self.daemon(WEB_CONFIG)
        silent = connect(daemon.address, timeout=15)
        slow = connect(daemon.address, timeout=15)
        started = time.monotonic()
        done = {}

        def dribble():
            for byte in ConnectionPressure.REQUEST:
                try:
                    slow.send(bytes([byte]))
                except OSError:
                    return
                if "slow" in done:
                    return
                time.sleep(0.5)
        threading.Thread(target=dribble, daemon=True).start()

        def wait_closed(name, s):
            try:
                data = s.recv(1)
            except ConnectionResetError:
                data = b""
            done[name] = (time.monotonic() - started, data)
        waiters = [threading.Thread(target=wait_closed, args=pair) for pair in (("silent", silent), ("slow", slow))]
        for waiter in waiters:
            waiter.start()
        for waiter in waiters:
            waiter.join(20)
        silent.close()
        slow.close()
        measured(f"silent connection closed after {done['silent'][0]:.2f} s, "
                 f"slowloris (a byte every 0.5 s) after {done['slow'][0]:.2f} s")
        self.assertEqual(done["silent"][1], b"", "the server sent data to a silent client")
        self.assertEqual(done["slow"][1], b"", "the server answered an incomplete request")
        self.assertLess(done["silent"][0], 5.0)  # idle timeout 2 s
        self.assertLess(done["slow"][0], 6.0)    # request deadline 3 s
        self.stop_ok(daemon)

    def test_sigterm_with_idle_connections_open(self):
        daemon = self.daemon(WEB_CONFIG)
        idle = [connect(daemon.address) for _ in range(IDLE_CONNECTIONS)]
        self.addCleanup(lambda: [s.close() for s in idle])
        # The server answers with them open, so it has accepted them.
        self.assertEqual(harness.http_get(daemon.url())[0], 200)
        started = time.monotonic()
        daemon.signal(signal.SIGTERM)
        code = daemon.process.wait(10)
        elapsed = time.monotonic() - started
        measured(f"SIGTERM with {IDLE_CONNECTIONS} idle connections open: exit after {elapsed * 1e3:.0f} ms")
        self.assertEqual(code, 0, daemon.log())
        self.assertLess(elapsed, 1.0)


class HttpTest(harness.DaemonTestCase):
    """One daemon for the read-only checks of the HTTP semantics."""

    @classmethod
    def setUpClass(cls):
        cls.case = harness.DaemonTestCase()
        cls.case.setUp()
        cls.addClassCleanup(cls.case.doCleanups)
        cls.daemon = cls.case.daemon(WEB_CONFIG)

    def test_get_and_head(self):
        for path, kind in (("/", "text/html"), ("/metrics", "text/plain; version=0.0.4"),
                           ("/status.json", "application/json"), ("/baseline.json", "application/json")):
            with self.subTest(path=path):
                status, fields, body = raw_request(self.daemon.address, "GET", path)
                self.assertEqual(status, 200)
                self.assertTrue(fields["content-type"].startswith(kind), fields)
                self.assertEqual(int(fields["content-length"]), len(body))
                status, head_fields, head_body = raw_request(self.daemon.address, "HEAD", path)
                self.assertEqual(status, 200)
                self.assertEqual(head_body, b"", "HEAD sent a body")
                self.assertEqual(head_fields["content-type"], fields["content-type"])
                # Every page is live: its figures move between two requests; the length stays close.
                self.assertAlmostEqual(int(head_fields["content-length"]), len(body), delta=len(body) // 10)
        status, _, _ = raw_request(self.daemon.address, "GET", "/metrics?name=x")
        self.assertEqual(status, 200, "a query string is ignored")

    def test_other_methods_are_405_with_allow(self):
        for path in ("/", "/metrics", "/status.json", "/baseline.json"):
            for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
                with self.subTest(path=path, method=method):
                    status, fields, _ = raw_request(self.daemon.address, method, path,
                                                    headers=("Content-Length: 0",))
                    self.assertEqual(status, 405)
                    self.assertEqual(fields.get("allow"), "GET, HEAD")
        # A body the server does not want is not read: the answer comes at once.
        status, _, _ = raw_request(self.daemon.address, "POST", "/metrics",
                                   headers=("Content-Length: 1000000",))
        self.assertEqual(status, 405)

    def test_unknown_paths_are_404(self):
        for method in ("GET", "HEAD", "POST"):
            for path in ("/nope", "/metrics/", "/metrics/x", "//metrics", "/index.html"):
                with self.subTest(method=method, path=path):
                    status, _, _ = raw_request(self.daemon.address, method, path)
                    self.assertEqual(status, 404)

    def test_gzip_when_accepted(self):
        status, fields, body = raw_request(self.daemon.address, "GET", "/metrics",
                                           headers=("Accept-Encoding: gzip",))
        self.assertEqual(status, 200)
        self.assertEqual(fields.get("content-encoding"), "gzip")
        self.assertEqual(fields.get("vary"), "Accept-Encoding")
        text = gzip.decompress(body).decode()
        self.assertIn("jitterd_build_info", text)
        self.assertLess(len(body), len(text) / 3)
        status, fields, _ = raw_request(self.daemon.address, "GET", "/metrics",
                                        headers=("Accept-Encoding: gzip;q=0, identity",))
        self.assertNotIn("content-encoding", fields)

    def test_web_threads_run_on_the_housekeeping_cpus(self):
        housekeeping = harness.parse_cpu_list(
            re.search(r"housekeeping on cpus (\S+)", self.daemon.log()).group(1).rstrip(";"))
        pid = self.daemon.process.pid
        web_threads = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                    name = comm.read().strip()
                with open(f"/proc/{pid}/task/{tid}/status") as status:
                    allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", status.read()).group(1)
            except FileNotFoundError:
                continue
            if name.startswith("MHD-") or name in ("web-deadlines", "web-accept"):
                web_threads[f"{name}/{tid}"] = harness.parse_cpu_list(allowed)
        self.assertGreaterEqual(len(web_threads), 4, f"web threads found: {web_threads}")
        self.assertTrue(any(t.startswith("web-accept/") for t in web_threads), f"no acceptor in {web_threads}")
        for thread, cpus in web_threads.items():
            self.assertEqual(cpus, housekeeping, f"{thread} may run on cpus {cpus}")


class AddressTest(harness.DaemonTestCase):
    def test_ipv6_loopback_and_dual_stack(self):
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
                probe.bind(("::1", 0))
        except OSError as error:
            self.skipTest(f"no IPv6 loopback on this machine ({error})")
        daemon = self.daemon(WEB_CONFIG.replace('"127.0.0.1:0"', '"[::1]:0"'))
        self.assertTrue(daemon.address.startswith("[::1]:"), daemon.address)
        self.assertIn(b"jitterd_build_info", raw_request(daemon.address, "GET", "/metrics")[2])
        self.stop_ok(daemon)

        daemon = self.daemon(WEB_CONFIG.replace('"127.0.0.1:0"', '"[::]:0"'))
        port = split_address(daemon.address)[1]
        for address in (f"[::1]:{port}", f"127.0.0.1:{port}"):
            with self.subTest(address=address):
                self.assertEqual(raw_request(address, "GET", "/metrics")[0], 200)
        self.stop_ok(daemon)

    def test_bind_failure_names_the_address_and_the_reason(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            address = f"127.0.0.1:{taken.getsockname()[1]}"
            daemon = self.daemon(WEB_CONFIG, args=["--web.listen-address", address], start=False)
            daemon.start(wait_listening=False)
            code = daemon.process.wait(15)
        self.assertEqual(code, 1)
        self.assertIn(f"cannot listen on {address}: bind: Address already in use", daemon.log())

    def test_unclean_telemetry_paths_are_configuration_errors(self):
        config = os.path.join(self.workdir, "jitterd.yaml")
        harness.write_file(config, WEB_CONFIG)
        for path, why in (("/a/../b", 'must not hold a "." or ".." segment'),
                          ("/m?x=1", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"),
                          ("/<script>", "must hold only A-Z a-z 0-9 . _ ~ - between slashes"),
                          ("//m", 'must not hold an empty segment')):
            with self.subTest(path=path):
                result = harness.run(["check-config", "--config", config, "--web.telemetry-path", path])
                self.assertEqual(result.returncode, 78, result.stderr)
                self.assertIn(f"command line: --web.telemetry-path: {why}", result.stderr)
                self.assertIn(f'got "{path}"', result.stderr)


class ReloadUnderLoadTest(harness.DaemonTestCase):
    RELOADS = 20

    def web_config(self, with_bob):
        users = f"  alice: {SECRET_HASH}\n" + (f"  bob: {SECRET_HASH}\n" if with_bob else "")
        return "basic_auth_users:\n" + users

    @staticmethod
    def fewest_fds(pid):
        """The fewest descriptors seen over 0.4 s: a log write or a /proc read holds one briefly."""
        fewest = fd_count(pid)
        for _ in range(20):
            time.sleep(0.02)
            fewest = min(fewest, fd_count(pid))
        return fewest

    def test_reloads_restarting_the_web_server_fail_no_scrape_and_leak_no_fd(self):
        web_config = os.path.join(self.workdir, "web.yml")
        harness.write_file(web_config, self.web_config(False))
        daemon = self.daemon(WEB_CONFIG, args=["--web.config.file", web_config])
        pid = daemon.process.pid
        # alice:secret; every scrape opens a new connection (urllib sends Connection: close).
        request = urllib.request.Request(daemon.url(), headers={"Authorization": "Basic YWxpY2U6c2VjcmV0"})
        with urllib.request.urlopen(request, timeout=5) as response:
            self.assertEqual(response.status, 200)
        before = self.fewest_fds(pid)

        results = {"ok": 0, "failed": []}
        stop = threading.Event()

        def scrape_loop():
            while not stop.is_set():
                try:
                    with urllib.request.urlopen(request, timeout=10) as response:
                        body = response.read()
                    if response.status == 200 and b"jitterd_build_info" in body:
                        results["ok"] += 1
                    else:
                        results["failed"].append(f"HTTP {response.status}")
                except Exception as error:  # every failure counts, whatever its kind
                    results["failed"].append(repr(error))
        scrapers = [threading.Thread(target=scrape_loop) for _ in range(2)]
        for scraper in scrapers:
            scraper.start()
        try:
            for i in range(self.RELOADS):
                restarted = log_count(daemon, r"web server restarted")
                harness.write_file(web_config, self.web_config(i % 2 == 0))
                daemon.signal(signal.SIGHUP)
                harness.wait_until(lambda: log_count(daemon, r"web server restarted") > restarted, timeout=15,
                                   what=f"reload {i + 1}; log:\n{daemon.log()[-3000:]}")
                ok = results["ok"]
                harness.wait_until(lambda: results["ok"] > ok, timeout=10, what="a scrape after the reload")
        finally:
            stop.set()
            for scraper in scrapers:
                scraper.join(15)
        self.assertEqual(results["failed"], [], f"{len(results['failed'])} failed of {results['ok']} scrapes")
        self.assertEqual(daemon.refresh_address(), daemon.address, "a reload moved the server")
        self.assertGreater(results["ok"], self.RELOADS)
        self.assertNotIn("reload failed", daemon.log())
        harness.wait_until(lambda: fd_count(pid) <= before, timeout=10,
                           what=f"the descriptor count back to {before} (now {fd_count(pid)})")
        after = self.fewest_fds(pid)
        measured(f"{self.RELOADS} reloads restarting the web server under scrape load: "
                 f"{results['ok']} scrapes, 0 failed; daemon fds {before} before, {after} after")
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
