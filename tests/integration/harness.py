# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for the integration tests: start the real jitterd, scrape it, stop it.

Every test script runs as `python3 SCRIPT --jitterd PATH [unittest args]` (ctest passes the
freshly built binary). Exit codes follow ctest: 0 pass, 1 fail, 77 skip (SKIP_RETURN_CODE).
Every wait here is bounded; a daemon left running by a failed test is killed in cleanup.
"""

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

SKIP = 77
SOURCE_DIR = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
JITTERD = None  # set by main()

# Burst mode at 10% keeps a 2-CPU machine usable while several tests run; the short period
# makes counters move between two scrapes taken a fraction of a second apart.
# Every probe off, as a configuration's `probes:` section: for tests whose probes would only add load.
PROBES_OFF = """\
probes:
  clock: {enabled: false}
  pacing: {enabled: false}
  kernel_cost: {enabled: false}
  pinning: {enabled: false}
  c2c: {enabled: false}
  posture: {enabled: false}
  attribution: {enabled: false}
"""


def bpf_watch_only(cpu):
    """A daemon that samples nothing and watches `cpu` by method bpf every 500 ms, for an
    application that does not exist (so only the CPU's own events are counted), every probe off."""
    return (f'cpus: []\nweb: {{listen_address: "127.0.0.1:0"}}\n'
            f'application: {{tasks: ["no-such-application*"]}}\n'
            f'watch: {{cpus: "{cpu}", method: bpf, interval: 500ms}}\n{PROBES_OFF}')


# The samplers in short bursts and the web server on a free loopback port: the start of most
# test configurations, which add their own sections after it.
BURST_SAMPLER = """\
cpus: auto
sampler:
  duty_cycle: burst
  burst_spin: 20ms
  burst_period: 200ms
  warmup: 100ms
  window: 10s
web:
  listen_address: "127.0.0.1:0"
"""

BURST_CONFIG = BURST_SAMPLER.replace("  window: 10s\n", "  interruption_threshold: 20us\n  window: 10s\n") + """\
# Pacing on cpu 1, the one `cpus: auto` samples on a 2-CPU machine: the probe goes through the
# paused sampler, as the daemon does for any sampled CPU.
probes:
  clock: {calibration_window: 20ms, sleep_requests: [10us, 1ms], sleep_samples: 5}
  pacing: {cpu: 1, rates: [1000, 10000], duration: 100ms}
  kernel_cost: {samples: 50}
  pinning: {window: 50ms}
  c2c: {samples: 20, round_trips: 200, allow_unsampled: true}
  posture: {interval: 10s}
  attribution: {interval: 10s}
"""

# How long SIGTERM may take outside the test dedicated to it (notify_test checks the 2 s
# promise): generous, so that the other tests report their own subject, not slow shutdowns.
STOP_TIMEOUT = 5.0

# "listening on 127.0.0.1:9978, ..." or "listening on [::1]:9978, ...": the host as a URL writes it.
LISTENING_RE = re.compile(r"listening on (\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:.]+\]):(\d+), metrics at (\S+)")


def skip_script(reason):
    """Skips the whole script: ctest shows it as skipped with this reason."""
    print(f"SKIP: {reason}", file=sys.stderr)
    sys.exit(SKIP)


def main(prerequisites=None):
    """Parses --jitterd, checks the script's prerequisites (each returns a skip reason or None),
    then runs the unittest cases of the calling module."""
    global JITTERD
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True, help="the jitterd binary under test")
    args, rest = parser.parse_known_args()
    JITTERD = os.path.realpath(args.jitterd)
    if not os.access(JITTERD, os.X_OK):
        print(f"FAIL: {JITTERD}: not an executable file", file=sys.stderr)
        sys.exit(1)
    for check in prerequisites or []:
        reason = check()
        if reason:
            skip_script(reason)
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


def require_two_cpus():
    if len(os.sched_getaffinity(0)) < 2:
        return "needs at least 2 allowed CPUs (one sampled, one for housekeeping)"
    return None


def under_hypervisor():
    """True when /proc/cpuinfo shows the x86 hypervisor flag (a guest)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return any(line.startswith("flags") and " hypervisor" in line for line in f)
    except OSError:
        return False


# Injected noise sized against the machine's own. compare calls a change of a figure whose
# run-to-run allowance is cv only beyond exp(Z_ALPHA * sqrt(2) * cv) (compare/allowances.h, alpha 0.001);
# a test that injects gaps to be called "worse" injects enough to pass that INJECTED_RATIO times,
# whatever the natural rate of such gaps on the machine it runs on.
Z_ALPHA = 3.2905
INJECTED_RATIO = 2.0


def injection_rate(background_per_s, cv, minimum=200, maximum=5000):
    """(rate, why_not): injections per second that raise a tail rate of background_per_s
    INJECTED_RATIO times past the smallest change compare calls under allowance cv; why_not is a
    reason to skip when that takes more than maximum per second, else None."""
    wanted_ratio = INJECTED_RATIO * math.exp(Z_ALPHA * math.sqrt(2) * cv)
    rate = max(minimum, (wanted_ratio - 1) * background_per_s)
    if rate > maximum:
        return rate, (f"{background_per_s:.0f} natural gaps per s: a change compare must call (x{wanted_ratio:.1f}, "
                      f"allowance cv {cv}) needs {rate:.0f} injections per s, more than the {maximum} injected")
    return rate, None


def wait_until(predicate, timeout, interval=0.05, what="condition"):
    """Polls predicate until it returns a truthy value (returned) or timeout seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.1f} s waiting for {what}")
        time.sleep(interval)


def run(args, timeout=30, env=None):
    """Runs jitterd to completion; returns CompletedProcess with text stdout/stderr."""
    return subprocess.run([JITTERD] + args, capture_output=True, text=True, timeout=timeout,
                          env=env)


def http_get(url, timeout=5):
    """Returns (status, body text); HTTP errors return their status instead of raising."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


_SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\S+)?$")
_LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*')


def parse_metrics(text):
    """Parses the Prometheus text format into {(name, ((label, value), ...)): float}, labels
    sorted by name. Comments are skipped; a malformed line raises ValueError."""
    samples = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        match = _SAMPLE_RE.match(line)
        if not match:
            raise ValueError(f"malformed sample line: {line!r}")
        name, _, label_text, value = match.group(1, 2, 3, 4)
        labels = []
        if label_text:
            position = 0
            while position < len(label_text):
                label = _LABEL_RE.match(label_text, position)
                if not label:
                    raise ValueError(f"malformed labels in: {line!r}")
                labels.append((label.group(1), label.group(2)))
                position = label.end()
        samples[(name, tuple(sorted(labels)))] = float(value)
    return samples


def labels(**pairs):
    """The label key used by parse_metrics: labels(cpu="1") -> (("cpu", "1"),)."""
    return tuple(sorted((k, str(v)) for k, v in pairs.items()))


def select(samples, name, **pairs):
    """Samples of one metric whose labels include the given pairs: {labels: value}."""
    wanted = set(labels(**pairs))
    return {l: v for (n, l), v in samples.items() if n == name and wanted <= set(l)}


class Daemon:
    """One `jitterd run` in the foreground with its stderr in a file under workdir."""

    def __init__(self, workdir, config_text=BURST_CONFIG, args=(), env=None,
                 config_name="jitterd.yaml"):
        self.workdir = workdir
        self.config_path = os.path.join(workdir, config_name)
        if config_text is not None:
            write_file(self.config_path, config_text)
        self.log_path = os.path.join(workdir, "jitterd.log")
        self.args = [JITTERD, "run", "--config", self.config_path] + list(args)
        self.env = env
        self.process = None
        self.address = None
        self.telemetry_path = None

    def start(self, wait_listening=True, timeout=10):
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env)
        if wait_listening:
            self.wait_listening(timeout)
        return self

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as log:
            return log.read()

    def wait_listening(self, timeout=10):
        def listening():
            if self.process.poll() is not None:
                raise AssertionError(f"jitterd exited with {self.process.returncode} before "
                                     f"listening; log:\n{self.log()}")
            text = self.log()
            return LISTENING_RE.search(text) and READY_RE.search(text)
        wait_until(listening, timeout, what="the 'listening on' and 'ready:' log lines")
        self.refresh_address()

    def refresh_address(self):
        """Takes the address from the last 'listening on' line: a reload that restarts the web
        server on port 0 gets a new ephemeral port."""
        matches = LISTENING_RE.findall(self.log())
        if not matches:
            raise AssertionError(f"no 'listening on' line in the log:\n{self.log()}")
        host, port, path = matches[-1]
        self.address = f"{host}:{port}"
        self.telemetry_path = path
        return self.address

    def sampled_cpus(self):
        return sampled_cpus(self.log())

    def url(self, path=None):
        return f"http://{self.address}{self.telemetry_path if path is None else path}"

    def scrape_text(self, path=None):
        status, body = http_get(self.url(path))
        if status != 200:
            raise AssertionError(f"GET {self.url(path)}: HTTP {status}")
        return body

    def scrape(self, path=None):
        return parse_metrics(self.scrape_text(path))

    def value(self, name, **pairs):
        """One sample from a fresh scrape; raises if it is absent or ambiguous."""
        found = select(self.scrape(), name, **pairs)
        if len(found) != 1:
            raise AssertionError(f"{name}{pairs}: expected one sample, got {found}")
        return next(iter(found.values()))

    def signal(self, signum):
        self.process.send_signal(signum)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM, then the exit code (None if it did not exit within timeout; then killed)."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def write_file(path, text):
    """Writes through a temporary name and rename, so a reload never sees half a file."""
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


class DaemonTestCase(unittest.TestCase):
    """Gives each test a temp dir and kills any daemon it started, whatever happened."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="jitterd-it-")
        self.workdir = self._tmp.name
        self._daemons = []
        self.addCleanup(self._tmp.cleanup)
        self.addCleanup(self._kill_daemons)

    def _kill_daemons(self):
        for daemon in self._daemons:
            daemon.kill()

    def daemon(self, config_text=BURST_CONFIG, args=(), env=None, start=True, **kwargs):
        daemon = Daemon(self.workdir, config_text, args, env, **kwargs)
        self._daemons.append(daemon)
        if start:
            daemon.start()
        return daemon

    def stop_ok(self, daemon, timeout=STOP_TIMEOUT):
        """Stops with SIGTERM and asserts a clean exit (0) within timeout seconds."""
        started = time.monotonic()
        code = daemon.stop(timeout)
        elapsed = time.monotonic() - started
        self.assertEqual(code, 0, f"SIGTERM: exit code {code} after {elapsed:.2f} s "
                                  f"(None: still running after {timeout} s); log:\n{daemon.log()}")


READY_RE = re.compile(r"ready: sampling (?:cpus (\S+)|no cpu)")


def parse_cpu_list(text):
    """'1-3,5' -> [1, 2, 3, 5]."""
    cpus = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def sampled_cpus(log_text):
    """The CPUs named by the daemon's 'ready: sampling cpus LIST' log line."""
    match = READY_RE.search(log_text)
    if not match:
        raise AssertionError(f"no 'ready: sampling cpus' line in the log:\n{log_text}")
    return parse_cpu_list(match.group(1)) if match.group(1) else []  # "sampling no cpu": cpus: []
