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


def full_config(cpus="1"):
    return FULL_CONFIG.format(cpus=cpus)


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
