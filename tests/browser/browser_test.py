#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The HTML reports in a real headless browser (Debian's chromium), driven by the Chrome DevTools
Protocol through Debian's python3-websocket.

Takes two short baselines with the real binary (kernel_cost, pacing, and c2c pairing the sampled
CPU with a housekeeping one, so a matrix appears on a 2-CPU machine), renders `compare --format html` and `report --format html`, loads each file:// page
and fails on any console error, uncaught exception, CSP violation or request for anything but the
file itself; checks that the page's visible text holds the figures of `compare --format json` (the
verdicts, p99 before and after) and, at a phone-sized viewport, that nothing but the tables
scrolls sideways; prints it to PDF; and saves screenshots (desktop full page, its top, and phone)
under --screenshots. A control page that fetches an image must be caught, so the watch itself is
tested. Skips (77) without chromium or python3-websocket, or with fewer than two CPUs online.

Usage: /usr/bin/python3 browser_test.py --jitterd BINARY --screenshots DIR
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

SKIP = 77
SECONDS = 3
CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 10us
probes:
  kernel_cost: {samples: 200}
  pacing: {rates: [1000, 10000], duration: 200ms}
  c2c: {samples: 30, round_trips: 500, allow_unsampled: true}
"""

try:
    import websocket  # Debian: python3-websocket
except ImportError:
    websocket = None


def skip(reason):
    print(f"SKIP: {reason}", file=sys.stderr)
    sys.exit(SKIP)


def run(args, timeout=60):
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


class Browser:
    """One headless chromium and a CDP session to its first page; events are kept in order."""

    def __init__(self, workdir):
        self.profile = os.path.join(workdir, "profile")
        os.makedirs(self.profile)
        self.process = subprocess.Popen(
            [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if self.process.poll() is not None:
                raise AssertionError(f"chromium exited {self.process.returncode}: "
                                     f"{self.process.stderr.read().decode(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError("chromium did not write DevToolsActivePort within 60 s")
            time.sleep(0.1)
        port = int(open(port_file).read().split("\n")[0])
        targets = []
        while not targets:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
                targets = [t for t in json.load(response) if t["type"] == "page"]
            if not targets:
                if time.monotonic() > deadline:
                    raise AssertionError("chromium shows no page target")
                time.sleep(0.1)
        self.socket = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=60,
                                                  suppress_origin=True)
        self.next_id = 0
        self.events = []

    def send(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events:
                if event["method"] == method:
                    return event
            if time.monotonic() > deadline:
                raise AssertionError(f"no {method} within {timeout} s")
            self.socket.settimeout(max(0.1, deadline - time.monotonic()))
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message)

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def problems_of(events, url):
    """Every console error, uncaught exception, CSP violation and request other than `url`."""
    found = []
    for event in events:
        method, params = event["method"], event["params"]
        if method == "Network.requestWillBeSent" and params["request"]["url"] != url:
            found.append(f"request for {params['request']['url']}")
        elif method == "Runtime.exceptionThrown":
            found.append(f"uncaught exception: {params['exceptionDetails'].get('text')}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert", "warning"):
            found.append(f"console {params['type']}: {[a.get('value') for a in params['args']]}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            entry = params["entry"]
            found.append(f"log {entry['level']} ({entry.get('source')}): {entry['text']}")
        elif method == "Network.loadingFailed":
            found.append(f"loading failed: {params.get('errorText')} {params.get('blockedReason', '')}")
    return found


def load_url(browser, url, width=1100, height=900, mobile=False):
    """Loads `url` at a viewport; returns the problems seen."""
    browser.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                 deviceScaleFactor=2 if mobile else 1, mobile=mobile)
    browser.events.clear()
    browser.send("Page.navigate", url=url)
    browser.wait_event("Page.loadEventFired")
    # A round trip after the load, so that events the page raised while loading have arrived.
    browser.send("Runtime.evaluate", expression="1", returnByValue=True)
    return problems_of(browser.events, url)


def load(browser, path, width=1100, height=900, mobile=False):
    """Loads the file `path` at a viewport; returns (visible text, the problems seen)."""
    problems = load_url(browser, "file://" + os.path.realpath(path), width, height, mobile)
    text = browser.send("Runtime.evaluate", expression="document.body.innerText",
                        returnByValue=True)["result"]["value"]
    return text, problems


def evaluate(browser, expression):
    return browser.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"]["value"]


def screenshot(browser, path, full_page, width, max_height=None):
    height = evaluate(browser, "document.documentElement.scrollHeight") if full_page else None
    params = {"format": "png"}
    if full_page:
        height = min(height, max_height) if max_height else height
        params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
    with open(path, "wb") as f:
        f.write(base64.b64decode(browser.send("Page.captureScreenshot", **params)["data"]))


def take_baselines(jitterd, workdir, probes):
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    paths = []
    for side in ("before", "after"):
        path = os.path.join(workdir, f"{side}.json")
        run([jitterd, "baseline", "--config", config, "--duration", f"{SECONDS}s", "--probes", probes, "-o", path])
        paths.append(path)
    return config, paths


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        skip("chromium not found (Debian package chromium)")
    if websocket is None:
        skip(f"{sys.executable} cannot import websocket (Debian package python3-websocket)")
    # A baseline needs one CPU to sample and one for housekeeping (offline CPUs are not in the
    # affinity mask: another test may have taken one offline for a while).
    if len(os.sched_getaffinity(0)) < 2:
        skip("needs at least 2 online, allowed CPUs (one sampled, one for housekeeping)")
    jitterd = os.path.realpath(args.jitterd)
    os.makedirs(args.screenshots, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="jitterd_browser_")
    config, (before, after) = take_baselines(jitterd, workdir, "kernel_cost,pacing,c2c")
    compare_html = os.path.join(workdir, "compare.html")
    with open(compare_html, "w") as f:
        f.write(run([jitterd, "compare", before, after, "--format", "html"]))
    comparison = json.loads(run([jitterd, "compare", before, after, "--format", "json"]))
    report_html = os.path.join(workdir, "report.html")
    with open(report_html, "w") as f:
        f.write(run([jitterd, "report", "--config", config, "--duration", "1s", "--format", "html"]))
    control_html = os.path.join(workdir, "control.html")
    with open(control_html, "w") as f:
        f.write("<!DOCTYPE html><html><body><p>control</p><img src=\"fetched.png\"></body></html>\n")

    failures = []
    browser = Browser(workdir)
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")

        # The watch must see a page that fetches something.
        _, control_problems = load(browser, control_html)
        if not any("fetched.png" in p for p in control_problems):
            failures.append(f"the control page's image request was not seen: {control_problems}")

        text, problems = load(browser, compare_html)
        failures += [f"compare.html: {p}" for p in problems]
        cpu_figures = [f for f in comparison["figures"] if f["scope"].startswith("cpu ")]
        if not cpu_figures:
            failures.append("compare --format json has no CPU figure")
        for f in cpu_figures:
            if f["figure"] == "p99_ns":
                for side in ("before", "after"):
                    value = f"{f[side]:.3f}" if max(f["before"], f["after"]) < 100 else f"{f[side]:.1f}"
                    if value not in text:
                        failures.append(f"compare.html: {f['scope']} p99 {side} {value} not on the page")
        for verdict in {f["verdict"] for f in cpu_figures}:
            if verdict not in text:
                failures.append(f"compare.html: verdict \"{verdict}\" not on the page")
        for heading in ["What changed", "What it did, per CPU", "Core-to-core latency", "Kernel costs", "Pacing"]:
            if heading not in text:
                failures.append(f"compare.html: no \"{heading}\" section")
        plots = evaluate(browser, "document.querySelectorAll('svg.plot polyline').length")
        if plots < 2 * len({f["scope"] for f in cpu_figures}):
            failures.append(f"compare.html: {plots} plotted lines for {len(cpu_figures)} figures")
        if evaluate(browser, "document.querySelectorAll('.heatmaps svg').length") != 3:
            failures.append("compare.html: not three c2c heatmaps (before, after, difference)")
        width = 1100
        screenshot(browser, os.path.join(args.screenshots, "compare.png"), True, width)
        screenshot(browser, os.path.join(args.screenshots, "compare_top.png"), True, width, max_height=1500)
        pdf = base64.b64decode(browser.send("Page.printToPDF", printBackground=True)["data"])
        if not pdf.startswith(b"%PDF") or len(pdf) < 10_000:
            failures.append(f"compare.html: printing gave {len(pdf)} bytes")

        # A phone: the page itself must not scroll sideways (the tables scroll in their boxes).
        text, problems = load(browser, compare_html, width=390, height=844, mobile=True)
        failures += [f"compare.html (phone): {p}" for p in problems]
        overflow = evaluate(browser, "document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            failures.append(f"compare.html (phone): the page is {overflow} px wider than the screen")
        plot_width = evaluate(browser, "document.querySelector('svg.plot').getBoundingClientRect().width")
        if plot_width > 390:
            failures.append(f"compare.html (phone): the plot is {plot_width} px wide")
        screenshot(browser, os.path.join(args.screenshots, "compare_phone.png"), False, 390)

        text, problems = load(browser, report_html)
        failures += [f"report.html: {p}" for p in problems]
        if "Gaps per CPU" not in text:
            failures.append("report.html: no \"Gaps per CPU\" section")
        screenshot(browser, os.path.join(args.screenshots, "report.png"), True, width)
    finally:
        browser.close()
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(f"screenshots in {args.screenshots}; pages in {workdir}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
