#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The daemon's live status page in a real headless browser (Debian's chromium over the DevTools
protocol, the helpers of browser_test.py).

Starts the real daemon (one sampled CPU, posture, clock, kernel_cost and c2c pairing the sampled
CPU with a housekeeping one, and the loops probe reading an application loop: the poll_loop
example on cpu 0), waits for a full window, the loop's window and every probe's first run, then loads
http://ADDRESS/ and fails on any console error, uncaught exception, CSP violation or request for
anything but the page itself. The page's visible p99 of the sampled CPU must match /status.json
taken at the same window: the JSON is read before and after the load, and the three window
sequences (JSON, page, JSON) must be equal, else it loads again; the same for the loop's p99 in
the loops' section (the loops probe's last run equal in both JSON reads), and its plot. Also at a phone's width nothing
but the tables scrolls sideways, and at a laptop's 1280 px nothing does but the tables (the row that
overflowed there is named). Then a second daemon that samples nothing and watches cpu 1, where
the loop runs (the watch's tables and the loop's beside them), at 1280 px and a phone's width
the same; on both pages each watched CPU's and loop's stolen-time plot in /status.json is drawn. Saves status.png (desktop, the top 1700 px) under --screenshots.
Skips (77) without chromium or python3-websocket, or with fewer than two CPUs.

Usage: /usr/bin/python3 status_browser_test.py --jitterd BINARY --poll-loop BINARY --screenshots DIR
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request

import browser_test
from browser_test import Browser, evaluate, load_url, screenshot, skip

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import wait_until  # noqa: E402

CONFIG = """\
cpus: auto
sampler:
  duty_cycle: burst
  burst_spin: 50ms
  burst_period: 200ms
  warmup: 200ms
  interruption_threshold: 10us
  window: 10s
web:
  listen_address: "127.0.0.1:0"
probes:
  clock: {calibration_window: 20ms, sleep_requests: [10us, 1ms], sleep_samples: 5}
  kernel_cost: {samples: 200}
  pacing: {rates: [1000, 10000], duration: 100ms}
  pinning: {enabled: false}
  c2c: {samples: 30, round_trips: 500, allow_unsampled: true}
  posture: {interval: 10s}
  attribution: {interval: 10s}
loops:
  directory: {loops}
  interval: 1s
"""

# The second daemon: no sampler, cpu 1 watched (bpf where its program loads, the most tables; else
# counts), the loop there.
WATCH_CONFIG = """\
cpus: []
sampler:
  window: 10s
web:
  listen_address: "127.0.0.1:0"
application:
  tasks: ["poll_loop"]
watch:
  cpus: "1"
  method: auto
  interval: 1s
loops:
  directory: {loops}
  interval: 1s
probes:
  clock: {enabled: false}
  kernel_cost: {enabled: false}
  pacing: {enabled: false}
  pinning: {enabled: false}
  c2c: {enabled: false}
  attribution: {enabled: false}
"""

LISTENING_RE = re.compile(r"listening on (127\.0\.0\.1:\d+)")

# The elements wider than the viewport's right edge that no scrolling or clipping box holds (a
# table in its .table-wrap may scroll; the page itself may not), as "tag#id.class +N px".
OVERFLOWING_JS = """(() => {
  const width = window.innerWidth, found = [];
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.right <= width + 0.5) continue;
    let p = e.parentElement, held = false;
    for (; p && p !== document.body; p = p.parentElement)
      if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) { held = true; break; }
    if (held) continue;
    const cls = typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\\s+/).join('.') : '';
    found.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + cls + ' +' + Math.round(r.right - width) + ' px');
  }
  return found.slice(0, 8).join('; ');
})()"""


def check_widths(browser, url, failures, what):
    """At a laptop's width and a phone's, nothing but the tables scrolls sideways."""
    for name, width, height, mobile in (("1280 px", 1280, 800, False), ("phone", 390, 844, True)):
        problems = load_url(browser, url, width=width, height=height, mobile=mobile)
        failures += [f"{what} ({name}): {p}" for p in problems]
        overflow = evaluate(browser, "document.documentElement.scrollWidth - window.innerWidth")
        if overflow > 0:
            failures.append(f"{what} ({name}): the page is {overflow} px wider than the screen: "
                            f"{evaluate(browser, OVERFLOWING_JS)}")
        else:
            tables = evaluate(browser, "document.querySelectorAll('table').length")
            print(f"{what} ({name}): {tables} tables, nothing but them wider than the screen")


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def check_page(browser, base, failures):
    status_url = base + "/status.json"
    for attempt in range(20):
        before = get_json(status_url)
        problems = load_url(browser, base + "/")
        after = get_json(status_url)
        page_sequence = evaluate(browser, "document.getElementById('window').dataset.sequence")
        if str(before["window"]["sequence"]) == page_sequence == str(after["window"]["sequence"]):
            break
    else:
        failures.append("the window moved during each of 20 page loads")
        return
    failures += [f"status page: {p}" for p in problems]
    for cpu in before["cpus"]:
        if not cpu["window"]:
            continue
        shown = evaluate(browser, f"document.getElementById('cpu{cpu['cpu']}-p99').innerText")
        expected = f"{cpu['window']['p99_seconds'] * 1e6:.3f}"
        if shown != expected:
            failures.append(f"cpu {cpu['cpu']}: the page shows p99 {shown} us, the JSON of the same window "
                            f"{expected} us")
        else:
            print(f"cpu {cpu['cpu']}: p99 {shown} us on the page and in the JSON (window {page_sequence})")
    check_loops(browser, base, failures)
    text = evaluate(browser, "document.body.innerText")
    for heading in ("Samplers", "Loops (the applications' own)", "Probes", "Fingerprint", "isolation checklist"):
        if heading not in text:
            failures.append(f"status page: no \"{heading}\"")
    if evaluate(browser, "document.querySelectorAll('svg.plot polyline').length") < 1:
        failures.append("status page: no exceedance plot")
    if evaluate(browser, "document.querySelectorAll('.heatmaps svg:not(.stolen)').length") != 1:
        failures.append("status page: no c2c heatmap")


def loops_run(document):
    return next(p["last_run_unix_seconds"] for p in document["probes"] if p["name"] == "loops")


def check_loops(browser, base, failures):
    """The application loop's row shows the p99 of /status.json's same reading of the loops probe
    (its last run the same before and after the load), and its plot is drawn."""
    status_url = base + "/status.json"
    for attempt in range(20):
        before = get_json(status_url)
        problems = load_url(browser, base + "/")
        after = get_json(status_url)
        if loops_run(before) == loops_run(after):
            break
    else:
        failures.append("the loops probe ran during each of 20 page loads")
        return
    failures += [f"status page: {p}" for p in problems]
    loops = [l for l in before["loops"]["loops"] if l["window"]]
    if not loops:
        failures.append(f"no loop with a window in /status.json: {before['loops']}")
    for loop in loops:
        shown = evaluate(browser, f"document.getElementById('loop-{loop['loop']}-p99').innerText")
        expected = f"{loop['window']['p99_seconds'] * 1e6:.3f}"
        if shown != expected:
            failures.append(f"loop {loop['loop']}: the page shows p99 {shown} us, the JSON of the same reading "
                            f"{expected} us")
        else:
            print(f"loop {loop['loop']}: p99 {shown} us on the page and in the JSON")
        if evaluate(browser, f"document.querySelectorAll('#loop-{loop['loop']}-plot svg.plot polyline').length") < 1:
            failures.append(f"loop {loop['loop']}: no exceedance plot")
    check_stolen_plots(browser, before, "loops", failures)


def check_stolen_plots(browser, document, probe, failures):
    """Each stolen-time plot of `probe` in /status.json is drawn: its figure, an SVG with a y axis
    in percent, and as many bands as the JSON lists causes (the causes with time in the window)."""
    entry = next((p for p in document["probes"] if p["name"] == probe), None)
    plots = (entry or {}).get("stolen", [])
    if not plots:
        failures.append(f"{probe}: no stolen-time plot in /status.json")
    for plot in plots:
        figure = f"stolen-loop-{plot['loop']}" if plot["loop"] else f"stolen-cpu{plot['cpu']}"
        svg = f"document.querySelector('#{figure} svg.stolen')"
        if not evaluate(browser, f"{svg} !== null"):
            failures.append(f"{probe}: no plot #{figure} on the page")
            continue
        bands = evaluate(browser, f"{svg}.querySelectorAll('g[data-cause]').length")
        if "% of each reading taken" not in evaluate(browser, f"{svg}.textContent"):
            failures.append(f"{probe}: #{figure} has no y axis in percent")
        print(f"{probe}: #{figure}: {len(plot['points'])} points, {bands} bands ({', '.join(plot['causes'])})")


def start_loop(args, loops, name, cpu, labels):
    """The poll_loop example as an application's loop named `name` on `cpu`, until killed."""
    return subprocess.Popen([os.path.realpath(args.poll_loop), name, str(cpu), "0", labels],
                            env=dict(os.environ, JITTERD_LOOP_DIR=loops), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def start_daemon(args, workdir, name, config_text):
    """The daemon on `config_text` (written to NAME.yaml, its log NAME.log): (process, log path)."""
    config = os.path.join(workdir, f"{name}.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    log_path = os.path.join(workdir, f"{name}.log")
    with open(log_path, "w") as log:
        daemon = subprocess.Popen([os.path.realpath(args.jitterd), "run", "--config", config], stdout=log,
                                  stderr=subprocess.STDOUT)
    return daemon, log_path


def address_of(daemon, log_path, what):
    """http://ADDRESS once the daemon says it listens; fails with its log if it exits first."""
    def listening():
        if daemon.poll() is not None:
            raise AssertionError(f"jitterd exited {daemon.returncode}: {open(log_path).read()[-2000:]}")
        return (LISTENING_RE.findall(open(log_path).read()) or [None])[0]

    return "http://" + wait_until(listening, 30, interval=0.2, what=what)


def stop(daemon):
    if daemon.poll() is not None:
        return
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=10)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()


def check_watch_page(args, workdir, loops, browser, failures):
    """A daemon that watches cpu 1, where the loop runs: its page at 1280 px and a phone's width."""
    loop = start_loop(args, loops, "watch_loop", 1, "app=watched")
    daemon, log_path = start_daemon(args, workdir, "watch", WATCH_CONFIG.replace("{loops}", loops))
    try:
        base = address_of(daemon, log_path, "the watching daemon to listen")

        def ready():
            document = get_json(base + "/status.json")
            watched = any(p["name"] == "watch" and p["ran"] for p in document["probes"])
            looping = document["loops"] and any(l["window"] for l in document["loops"]["loops"])
            return watched and looping

        wait_until(ready, 60, interval=0.5, what="the watch's first readings and the loop's window")
        check_widths(browser, base + "/", failures, "watch status page")
        if "Watched CPUs" not in evaluate(browser, "document.body.innerText"):
            failures.append("watch status page: no section of the watch probe")
        document = get_json(base + "/status.json")
        check_stolen_plots(browser, document, "watch", failures)
        check_stolen_plots(browser, document, "loops", failures)
    finally:
        loop.kill()
        loop.wait()
        stop(daemon)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--poll-loop", required=True, help="examples/loop_probe/poll_loop: the application loop")
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        skip("chromium not found (Debian package chromium)")
    if browser_test.websocket is None:
        skip(f"{sys.executable} cannot import websocket (Debian package python3-websocket)")
    if len(os.sched_getaffinity(0)) < 2:
        skip("needs at least 2 online, allowed CPUs (one sampled, one for housekeeping)")
    os.makedirs(args.screenshots, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="jitterd_status_browser_")
    loops = os.path.join(workdir, "loops")
    os.mkdir(loops)
    failures = []
    # The application's loop, on cpu 0 (cpu 1 is sampled), until the end.
    loop = start_loop(args, loops, "app_loop", 0, "app=browser")
    daemon, log_path = start_daemon(args, workdir, "jitterd", CONFIG.replace("{loops}", loops))
    browser = None
    try:
        base = address_of(daemon, log_path, "the daemon to listen")

        def ready():
            document = get_json(base + "/status.json")
            full = [c for c in document["cpus"] if c["window"] and c["window"]["seconds"] >= 8.5]
            looping = document["loops"] and any(l["window"] for l in document["loops"]["loops"])
            return full and looping and all(p["ran"] for p in document["probes"])

        wait_until(ready, 60, interval=0.2, what="a full window and every probe's first run")
        browser = Browser(workdir)
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")
        check_page(browser, base, failures)
        screenshot(browser, os.path.join(args.screenshots, "status.png"), True, 1100, max_height=1700)

        check_widths(browser, base + "/", failures, "status page")
        stop(daemon)
        loop.kill()
        loop.wait()
        check_watch_page(args, workdir, loops, browser, failures)
    finally:
        loop.kill()
        loop.wait()
        if browser is not None:
            browser.close()
        stop(daemon)
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(f"screenshots in {args.screenshots}; daemon log in {log_path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
