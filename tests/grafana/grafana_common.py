# SPDX-License-Identifier: Apache-2.0
"""Shared by the tests of grafana/: paths, the daemon configuration that exports every family
this machine can, the rules file's recorded names, and the committed dashboards."""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402,F401  (re-exported)

GRAFANA_DIR = os.path.join(harness.SOURCE_DIR, "grafana")
DASHBOARDS_DIR = os.path.join(GRAFANA_DIR, "dashboards")
RULES_FILE = os.path.join(GRAFANA_DIR, "prometheus", "jitterd.rules.yml")
GENERATOR = os.path.join(GRAFANA_DIR, "mixin", "generate.py")
FIXTURE_ROOT = os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "tuned_server")

# Every probe on, with the detail options and an `expect:` section, so that a scrape holds
# every family this machine can produce. The clock probe runs every 10 s so that its second run
# (the drift) comes within the test. Burst sampling keeps a 2-CPU machine usable.
FULL_CONFIG = """\
cpus: {cpus}
sampler:
  duty_cycle: burst
  burst_spin: 20ms
  burst_period: 200ms
  warmup: 100ms
  interruption_threshold: 20us
  window: 10s
web:
  listen_address: "127.0.0.1:0"
expect:
  isolated: "{cpus}"
  clocksource: tsc
  governor: performance
  max_exit_latency: 10us
  no_device_irqs: true
probes:
  clock: {{interval: 10s, calibration_window: 20ms, sleep_requests: [10us, 1ms], sleep_samples: 5}}
  pacing: {{rates: [1000, 10000], duration: 100ms}}
  kernel_cost: {{samples: 50}}
  pinning: {{window: 50ms}}
  c2c: {{samples: 20, round_trips: 200, allow_unsampled: true}}
  posture: {{interval: 10s, irq_detail: 4}}
  attribution: {{interval: 10s, source_detail: 8}}
"""

PROBES = ("clock", "pacing", "kernel_cost", "pinning", "c2c", "posture", "attribution")


# A daemon that samples nothing and watches cpu 1, the application named by a pattern that
# matches the test runner's own python3 threads when they run there (the series exist either way).
WATCH_CONFIG = """\
cpus: []
web:
  listen_address: "127.0.0.1:0"
application:
  tasks: ["python3*"]
watch:
  cpus: "1"
  interval: 500ms
""" + harness.PROBES_OFF


# The applications' loops: the poll_loop example (examples/loop_probe) writing into a scratch
# directory that the daemon's loops: section reads (the jitterd_loop_ families).
LOOPS_SECTION = """\
loops:
  directory: {directory}
  stale_after: 2s
  interval: 500ms
"""

POLL_LOOP = None  # set by take_poll_loop()


def take_poll_loop():
    """Takes --poll-loop BIN out of sys.argv (the rest is harness.main's)."""
    global POLL_LOOP
    import argparse
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--poll-loop", required=True, help="examples/loop_probe/poll_loop")
    own, rest = parser.parse_known_args()
    POLL_LOOP = os.path.realpath(own.poll_loop)
    sys.argv = [sys.argv[0]] + rest


class ExampleLoop:
    """poll_loop NAME on `cpu`, writing its segment into `directory` until stopped."""

    def __init__(self, directory, name="dashboards", cpu=0):
        import subprocess
        env = dict(os.environ, JITTERD_LOOP_DIR=directory)
        self.process = subprocess.Popen([POLL_LOOP, name, str(cpu), "0", "app=dashboards"], env=env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = os.path.join(directory, "jitterd-loop." + name)
        harness.wait_until(lambda: os.path.exists(path) or self.process.poll() is not None, 10,
                           what=f"the segment {path}")
        if not os.path.exists(path):
            raise AssertionError(f"poll_loop exited with {self.process.returncode} before writing {path}")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def full_config(cpus="1", loops=None):
    """FULL_CONFIG, with a loops: section reading `loops` when given."""
    text = FULL_CONFIG.format(cpus=cpus)
    return text + LOOPS_SECTION.format(directory=loops) if loops else text


def recorded_names(rules_text=None):
    """The names the rules file records (its `record:` lines; the file is generated, one rule
    per `- record:` line)."""
    if rules_text is None:
        with open(RULES_FILE, encoding="utf-8") as f:
            rules_text = f.read()
    return set(re.findall(r"^\s*- record: '([^']+)'\s*$", rules_text, re.M))


def dashboards():
    """{file name: parsed dashboard} of grafana/dashboards/*.json; invalid JSON raises."""
    boards = {}
    for name in sorted(os.listdir(DASHBOARDS_DIR)):
        if name.endswith(".json"):
            with open(os.path.join(DASHBOARDS_DIR, name), encoding="utf-8") as f:
                try:
                    boards[name] = json.load(f)
                except json.JSONDecodeError as error:
                    raise AssertionError(f"{name}: invalid JSON: {error}") from None
    return boards


def probes_have_run(daemon, also=()):
    """True once every probe has run and the given metric names are in a scrape."""
    text = daemon.scrape_text()
    samples = harness.parse_metrics(text)
    ran = {dict(l).get("probe") for (n, l), _ in samples.items() if n == "jitterd_probe_last_run_timestamp_seconds"}
    names = {n for n, _ in samples}
    return set(PROBES) <= ran and set(also) <= names and text
