#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The attribution method: logged once when the daemon starts, again only when it changes (a
reload that restarts the probes with the same method logs nothing), and exported as
jitterd_attribution_method_info{method}. And, as root, what tracepoint attribution needs as
a non-root user, which is what systemd/jitterd-tracepoints.conf grants the unit's dynamic user:
CAP_PERFMON and CAP_DAC_READ_SEARCH, each necessary, both together sufficient (with
kernel.perf_event_paranoid at most 2), run under setpriv in a private mount namespace where
tracefs is mounted where the host has not (so the host's mounts stay as they are).

Usage: attribution_method_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer
than 2 CPUs. The capability cases skip without root, setpriv, unshare or a mountable tracefs, and
with kernel.perf_event_paranoid above 2 (Debian's 3 needs CAP_SYS_ADMIN, as the drop-in says).
"""

import os
import re
import shutil
import signal
import subprocess

import harness
from harness import select

METHOD_LINE = re.compile(r"probe attribution: method: (\S+) \((.*)\)$", re.M)
# The BPF engine off, so the perf path is what is tested here (tests/fidelity/attribution_test.py
# tests the bpf method).
WINDOW_DELTAS_CONFIG = harness.BURST_CONFIG.replace(
    "  attribution: {interval: 10s}", "  attribution: {interval: 10s, bpf: false}")
TRACEPOINTS_CONFIG = harness.BURST_CONFIG.replace(
    "  attribution: {interval: 10s}", "  attribution: {interval: 10s, bpf: false, tracepoints: true}")
# tracefs where the daemon looks, in the test's own mount namespace (kept where the host has it).
MOUNT_TRACEFS = "{ mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing; }"
# A change to another probe: the reload restarts every probe, attribution's method unchanged.
OTHER_PROBE_CONFIG = WINDOW_DELTAS_CONFIG.replace("  posture: {interval: 10s}", "  posture: {interval: 11s}")


class AttributionMethodTest(harness.DaemonTestCase):
    def method_lines(self, daemon):
        return METHOD_LINE.findall(daemon.log())

    def exported_method(self, daemon):
        methods = select(daemon.scrape(), "jitterd_attribution_method_info")
        if len(methods) != 1:
            return None
        return dict(next(iter(methods)))["method"]

    def attribution_runs(self, daemon):
        """The attribution probe's last run, as exported (0 before the first)."""
        found = select(daemon.scrape(), "jitterd_probe_last_run_timestamp_seconds", probe="attribution")
        return next(iter(found.values())) if found else 0

    def reload(self, daemon, config_text):
        harness.write_file(daemon.config_path, config_text)
        offset = len(daemon.log())
        daemon.signal(signal.SIGHUP)
        harness.wait_until(lambda: "configuration reloaded (" in daemon.log()[offset:], timeout=15,
                           what=f"the reload; log:\n{daemon.log()}")
        assert "probes restarted" in daemon.log()[offset:], daemon.log()[offset:]

    def wait_next_run(self, daemon, after):
        return harness.wait_until(lambda: self.attribution_runs(daemon) > after and self.attribution_runs(daemon),
                                  timeout=30, interval=0.2, what="an attribution run")

    def test_by_default_the_bpf_engine_where_it_loads(self):
        """The default configuration: the BPF engine as root on a kernel with BTF, else window deltas,
        saying why bpf is not used (not as a warning: bpf is wanted where it loads)."""
        daemon = self.daemon()
        lines = harness.wait_until(lambda: self.method_lines(daemon), timeout=20, interval=0.2,
                                   what=f"the method line; log:\n{daemon.log()}")
        method, reason = lines[0]
        self.assertEqual(self.exported_method(daemon), method)
        if os.geteuid() == 0 and os.path.exists("/sys/kernel/btf/vmlinux"):
            self.assertEqual((method, reason), ("bpf", "the BPF engine covers the sampled cpus"))
        else:
            self.assertEqual(method, "window_deltas")
            self.assertTrue(reason.startswith("tracepoints: false in the configuration; "), reason)
        self.assertNotRegex(daemon.log(), r"(?m)warn.*probe attribution: method:")
        self.stop_ok(daemon)

    def test_logged_once_and_again_when_it_changes(self):
        daemon = self.daemon(WINDOW_DELTAS_CONFIG)
        harness.wait_until(lambda: self.method_lines(daemon), timeout=20, interval=0.2,
                           what=f"the method line; log:\n{daemon.log()}")
        self.assertEqual(self.method_lines(daemon),
                         [("window_deltas", "tracepoints: false in the configuration")])
        self.assertEqual(self.exported_method(daemon), "window_deltas")
        # A second run (the first window) logs nothing new.
        first = self.wait_next_run(daemon, 0)
        self.wait_next_run(daemon, first)
        self.assertEqual(len(self.method_lines(daemon)), 1, daemon.log())

        # A reload that restarts the probes, attribution's settings unchanged: nothing new.
        before = self.attribution_runs(daemon)
        self.reload(daemon, OTHER_PROBE_CONFIG)
        self.wait_next_run(daemon, before)
        self.assertEqual(len(self.method_lines(daemon)), 1, daemon.log())

        # Tracepoints asked for: the line changes, whichever method this machine then gives.
        before = self.attribution_runs(daemon)
        self.reload(daemon, TRACEPOINTS_CONFIG)
        self.wait_next_run(daemon, before)
        lines = self.method_lines(daemon)
        self.assertEqual(len(lines), 2, daemon.log())
        method, reason = lines[1]
        self.assertEqual(self.exported_method(daemon), method)
        if method == "window_deltas":
            self.assertTrue(reason.startswith("tracepoints unavailable: ") or "perf_event_open" in reason, reason)
            self.assertRegex(daemon.log(), r"(?m)warn.*probe attribution: method: window_deltas")
        else:
            self.assertEqual((method, reason), ("tracepoints", "tracepoints open on the sampled cpus"))
        self.stop_ok(daemon)


def capability_prerequisites():
    if os.geteuid() != 0:
        return "not root: cannot run jitterd as another user with chosen capabilities"
    for tool in ("setpriv", "unshare", "mount"):
        if not shutil.which(tool):
            return f"no {tool} (util-linux)"
    try:
        with open("/proc/sys/kernel/perf_event_paranoid", encoding="ascii") as f:
            paranoid = int(f.read())
    except OSError as error:
        return f"cannot read kernel.perf_event_paranoid: {error}"
    if paranoid > 2:
        return (f"kernel.perf_event_paranoid is {paranoid}: above 2 only CAP_SYS_ADMIN opens "
                "tracepoints, whatever CAP_PERFMON allows")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            MOUNT_TRACEFS + " && test -r /sys/kernel/tracing/events/irq/irq_handler_entry/format"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot mount tracefs in a private mount namespace: {probe.stderr.strip()}"
    return None


class TracepointCapabilitiesTest(harness.DaemonTestCase):
    """jitterd as user nobody with exactly the given capabilities, tracefs mounted."""

    def setUp(self):
        super().setUp()
        reason = capability_prerequisites()
        if reason:
            self.skipTest(reason)
        os.chmod(self.workdir, 0o755)  # nobody reads the configuration and writes nothing

    def method_as_nobody(self, caps):
        c = "".join(f",+{cap}" for cap in caps)
        script = (f'{MOUNT_TRACEFS} && exec setpriv --reuid=65534 --regid=65534 '
                  f'--clear-groups --inh-caps=-all{c} --ambient-caps=-all{c} --bounding-set=-all{c} "$@"')
        daemon = self.daemon(TRACEPOINTS_CONFIG, start=False)
        os.chmod(daemon.config_path, 0o644)
        daemon.args = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"] + daemon.args
        daemon.start()
        lines = harness.wait_until(lambda: METHOD_LINE.findall(daemon.log()), timeout=20, interval=0.2,
                                   what=f"the method line; log:\n{daemon.log()}")
        self.assertEqual(len(lines), 1, daemon.log())
        methods = select(daemon.scrape(), "jitterd_attribution_method_info")
        self.assertEqual([dict(k)["method"] for k in methods], [lines[0][0]])
        self.stop_ok(daemon)
        return lines[0]

    def test_the_drop_in_capabilities_suffice(self):
        self.assertEqual(self.method_as_nobody(["perfmon", "dac_read_search"]),
                         ("tracepoints", "tracepoints open on the sampled cpus"))

    def test_without_dac_read_search_tracefs_is_unreadable(self):
        method, reason = self.method_as_nobody(["perfmon"])
        self.assertEqual(method, "window_deltas")
        self.assertIn("/sys/kernel/tracing/events", reason)
        self.assertIn("CAP_DAC_READ_SEARCH", reason)

    def test_without_perfmon_perf_event_open_is_refused(self):
        method, reason = self.method_as_nobody(["dac_read_search"])
        self.assertEqual(method, "window_deltas")
        self.assertIn("perf_event_open", reason)
        self.assertIn("CAP_PERFMON", reason)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
