# SPDX-License-Identifier: Apache-2.0
"""A real Prometheus (Debian's `prometheus` package) for the tests: started on 127.0.0.1 on a free
port with a temporary storage folder, 1 s scrape and evaluation intervals, scraping one jitterd
with a given rules file; its HTTP API polled with deadlines, never fixed sleeps. Also a Prometheus
serving a TSDB built from OpenMetrics (what fleet's tests and benchmark read), and the small HTTP
servers that stand in for an engine's answers."""

import http.server
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request

from grafana_common import harness


def missing():
    """A skip reason when the prometheus server is not installed, else None."""
    if shutil.which("prometheus") is None:
        return "prometheus not found (install Debian's prometheus package)"
    return None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:
  - job_name: jitterd
    metrics_path: {path}
    static_configs:
      - targets: ["{target}"]
"""


class Prometheus:
    def __init__(self, workdir, target, metrics_path, rules_file, args=(), binary=None, config_text=None):
        self.workdir = workdir
        self.args = list(args)  # more flags for prometheus (e.g. --query.max-samples)
        self.binary = binary or shutil.which("prometheus")  # another build (an upstream 3.x) where given
        self.config_path = os.path.join(workdir, "prometheus.yml")
        with open(self.config_path, "w", encoding="utf-8") as f:
            f.write(config_text or CONFIG.format(rules=rules_file, path=metrics_path, target=target))
        self.log_path = os.path.join(workdir, "prometheus.log")
        self.process = None
        self.port = None

    # The server's name in messages and the path that answers 200 once it serves queries.
    name, ready_path = "prometheus", "/-/ready"

    def command(self):
        """The server's command line, listening on self.port."""
        return [self.binary, f"--config.file={self.config_path}",
                f"--storage.tsdb.path={os.path.join(self.workdir, 'data')}",
                f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"] + self.args

    def start(self, timeout=30):
        for attempt in range(3):  # a free port can be taken between the check and the bind
            self.port = free_port()
            with open(self.log_path, "wb") as log:
                self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL)

            def ready():
                if self.process.poll() is not None:
                    return "exited"
                status, _ = harness.http_get(self.url(self.ready_path), timeout=2) if self._connectable() else (0, "")
                return status == 200
            state = harness.wait_until(ready, timeout, interval=0.2, what=f"{self.name} {self.ready_path}")
            if state is True:
                return self
            if "address already in use" not in self.log() or attempt == 2:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}; log:\n{self.log()}")
        return self

    def _connectable(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def api(self, path, **params):
        """GET /api/v1/PATH; returns the decoded JSON (status 'success' or 'error')."""
        url = self.url("/api/v1/" + path) + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            return json.loads(error.read().decode("utf-8", "replace"))

    def query(self, expr, **params):
        return self.api("query", query=expr, **params)

    def query_range(self, expr, seconds=20, step=1):
        end = time.time()
        return self.api("query_range", query=expr, start=f"{end - seconds:.3f}", end=f"{end:.3f}", step=str(step))

    def values(self, expr):
        """The result list of an instant query, asserting success."""
        answer = self.query(expr)
        if answer.get("status") != "success":
            raise AssertionError(f"{expr}: {answer}")
        return answer["data"]["result"]

    def newest_scrape(self, series):
        """Time of the newest ingested scrape of `series` (one series' selector), or 0."""
        result = self.values(f"timestamp({series})")
        return float(result[0]["value"][1]) if result else 0

    def record_range(self, series, seconds):
        """A range from the newest ingested scrape of `series` to the first scrape `seconds` later,
        once that one is ingested (the API polled, nothing waits blindly)."""
        start = harness.wait_until(lambda: self.newest_scrape(series), 30, interval=0.2, what=f"a scrape of {series}")
        end = start + seconds
        harness.wait_until(lambda: self.newest_scrape(series) >= end, seconds + 30, interval=0.2,
                           what=f"a scrape of {series} at or after {end:.3f} ingested")
        return start, end

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


def build_tsdb(workdir, write, timeout=600):
    """promtool's blocks in workdir/data, what serving_tsdb(workdir) serves, from the OpenMetrics
    that write(path) writes (ending in '# EOF'); the text is removed once built. Returns its size in
    bytes. Raises AssertionError with promtool's output when the build fails."""
    source = os.path.join(workdir, "tsdb.om")
    write(source)
    size = os.path.getsize(source)
    data = os.path.join(workdir, "data")
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    result = subprocess.run([shutil.which("promtool") or "promtool", "tsdb", "create-blocks-from", "openmetrics",
                             source, data], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"promtool: {result.stdout}\n{result.stderr}")
    os.remove(source)
    return size


def serving_tsdb(workdir, args=(), timeout=30):
    """A started Prometheus of workdir's TSDB (build_tsdb) that scrapes nothing and evaluates no
    rule, keeping 30 days (ranges hours in the past stay in it); `args`: more flags."""
    rules = os.path.join(workdir, "rules.yml")
    with open(rules, "w", encoding="utf-8") as f:
        f.write("groups: []\n")
    prometheus = Prometheus(workdir, "127.0.0.1:1", "/metrics", rules,
                            args=["--storage.tsdb.retention.time=30d", *args])
    return prometheus.start(timeout=timeout)


class Answering(http.server.BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers with answer(); subclasses define do_GET."""

    def answer(self, status, body):
        """Answers `status` with `body`: bytes as they are, anything else as JSON."""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serving(handler, tls=None):
    """A threading HTTP server of `handler` on 127.0.0.1 (a free port), serving from a daemon thread,
    over HTTPS where `tls` (a server-side ssl.SSLContext) is given; the caller shuts it down."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
