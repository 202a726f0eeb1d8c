# SPDX-License-Identifier: Apache-2.0
"""A real VictoriaMetrics (Debian's `victoria-metrics` package, single-node) for the tests: started
on 127.0.0.1 on a free port with a temporary storage folder, filled through its Prometheus import
API (text exposition with millisecond timestamps), flushed so what was imported is searchable at
once, and asked through its Prometheus-compatible query API. Deadlines, never fixed sleeps."""

import os
import shutil
import subprocess
import urllib.request

import prometheus_harness
from grafana_common import harness


def missing():
    """A skip reason when the victoria-metrics server is not installed, else None."""
    if shutil.which("victoria-metrics") is None:
        return "victoria-metrics not found (install Debian's victoria-metrics package)"
    return None


def version():
    """The server's version, for the test's log and the docs: Debian's build prints none of its
    own (-version is empty), so the package's version where dpkg knows it."""
    for command in ([shutil.which("victoria-metrics"), "-version"],
                    ["dpkg-query", "-W", "-f=${Version}", "victoria-metrics"]):
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if result.returncode == 0 and result.stdout.strip():
            return "victoria-metrics " + result.stdout.strip()
    return "victoria-metrics (version unknown)"


def prometheus_text(openmetrics):
    """OpenMetrics (seconds, `# EOF`) as the Prometheus text the import API takes (milliseconds):
    VictoriaMetrics' /api/v1/import/prometheus reads a sample's timestamp in milliseconds."""
    out = []
    for line in openmetrics.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value, stamp = line.rsplit(" ", 2)
        out.append(f"{head} {value} {int(round(float(stamp) * 1000))}")
    return "\n".join(out) + "\n"


# Lines per import request: some 20 MB of text.
IMPORT_LINES = 200_000


class VictoriaMetrics(prometheus_harness.Prometheus):
    """prometheus_harness.Prometheus's handle (start, url, api, query, values, log, stop) on the
    other engine: only its command line, its readiness path and the import differ."""

    name, ready_path = "victoria-metrics", "/health"

    def __init__(self, workdir, args=()):
        self.workdir = workdir
        self.args = list(args)  # more flags (e.g. -search.maxUniqueTimeseries)
        self.binary = shutil.which("victoria-metrics")
        self.log_path = os.path.join(workdir, "victoria-metrics.log")
        self.process = None
        self.port = None

    def command(self):
        return [self.binary, f"-storageDataPath={os.path.join(self.workdir, 'vmdata')}",
                f"-httpListenAddr=127.0.0.1:{self.port}", "-retentionPeriod=100y", "-loggerLevel=WARN"] + self.args

    def import_openmetrics(self, text, series_expr, expected_series, timeout=60):
        """Imports `text` (OpenMetrics, as promtool's backfill takes it), flushes, and waits until
        `series_expr` counts `expected_series` series: the import API answers before the rows are
        searchable."""
        lines = prometheus_text(text).splitlines(keepends=True)
        # The series API reads start=0 as no start and then lists only the series of the current
        # UTC day (VictoriaMetrics' default): a run just after midnight saw none of a range that
        # began the day before. So the earliest imported second, explicitly.
        first_second = min(int(line.rsplit(" ", 1)[1]) for line in lines) // 1000
        for first in range(0, len(lines), IMPORT_LINES):  # bounded request bodies
            body = "".join(lines[first:first + IMPORT_LINES]).encode("utf-8")
            request = urllib.request.Request(self.url("/api/v1/import/prometheus"), data=body, method="POST")
            with urllib.request.urlopen(request, timeout=300) as response:
                if response.status not in (200, 204):
                    raise AssertionError(f"import: HTTP {response.status}")

        def searchable():
            with urllib.request.urlopen(self.url("/internal/force_flush"), timeout=10):
                pass
            answer = self.api("series", **{"match[]": series_expr, "start": str(first_second)})
            return len(answer.get("data", [])) >= expected_series
        harness.wait_until(searchable, timeout, interval=0.5, what=f"{expected_series} series of {series_expr}")
