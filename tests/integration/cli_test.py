#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The command line as users meet it: check-config, --help/--version (global and per verb), usage
errors (a flag the verb does not take among them), flag values checked like the file's, the report
verb in its three formats with numbers as numbers, a missing config file, and a sysfs tree with
files missing.

Usage: cli_test.py --jitterd BINARY [unittest args]; exit 77 (skip) with fewer than 2 CPUs.
"""

import csv
import io
import json
import os
import pty
import re
import shutil
import subprocess
import threading
import time
import tty

import harness

EXIT_OK, EXIT_USAGE, EXIT_CONFIG = 0, 64, 78

REPORT_CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 100ms
  interruption_threshold: 20us
"""

# Three errors of different kinds; each must come back as file:line:col: key: message.
BROKEN_CONFIG = """\
cpus: auto
sampler:
  warmup: 5
  duty_cycel: burst
web:
  listen_address: "127.0.0.1:99999"
"""
BROKEN_ERRORS = [
    (3, 11, "sampler.warmup"),
    (4, 3, "sampler.duty_cycel"),
    (6, 19, "web.listen_address"),
]

MISSING_ISOLATED_SYSFS = os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "missing_isolated",
                                      "sys")
PERCENTILES = ["min_ns", "p50_ns", "p99_ns", "p99_9_ns", "p99_99_ns", "max_ns"]


class CliTest(harness.DaemonTestCase):
    def config(self, text, name="config.yaml"):
        path = os.path.join(self.workdir, name)
        harness.write_file(path, text)
        return path

    def assertExit(self, result, code):
        self.assertEqual(result.returncode, code,
                         f"exit {result.returncode}, expected {code}\nstdout:\n{result.stdout}\n"
                         f"stderr:\n{result.stderr}")

    def test_check_config_accepts_the_shipped_file(self):
        shipped = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")
        result = harness.run(["check-config", "--config", shipped])
        self.assertExit(result, EXIT_OK)
        self.assertIn(f"{shipped}: valid; on this machine it samples cpus", result.stdout)

    def test_check_config_lists_every_error(self):
        path = self.config(BROKEN_CONFIG)
        result = harness.run(["check-config", "--config", path])
        self.assertExit(result, EXIT_CONFIG)
        output = result.stdout + result.stderr
        for line, column, key in BROKEN_ERRORS:
            position = f"{re.escape(path)}:{line}:{column}"
            self.assertRegex(output, rf"(?m)^{position}: {re.escape(key)}: \S",
                             f"error for {key} at {line}:{column} missing")
        self.assertIn(f"{len(BROKEN_ERRORS)} configuration error(s)", output)

    def test_help_and_version(self):
        result = harness.run(["--help"])
        self.assertExit(result, EXIT_OK)
        self.assertIn("Usage: jitterd", result.stdout)
        for verb in ("run", "check-config", "report", "--version"):
            self.assertIn(verb, result.stdout)
        for verb, present, absent in (("run", "--web.listen-address", "--duration"),
                                      ("check-config", "--web.telemetry-path", "--format"),
                                      ("report", "--duration", "--web.listen-address")):
            with self.subTest(verb=verb):
                result = harness.run([verb, "--help"])
                self.assertExit(result, EXIT_OK)
                self.assertIn(f"jitterd {verb}", result.stdout)
                for flag in ("--config", "--path.sysfs", "--log.level", present):
                    self.assertIn(flag, result.stdout)
                self.assertNotIn(absent, result.stdout)
        result = harness.run(["--version"])
        self.assertExit(result, EXIT_OK)
        self.assertRegex(result.stdout, r"^jitterd \d+\.\d+\.\d+")

    def test_usage_errors(self):
        for args, needle in [(["--no-such-flag"], "--no-such-flag"),
                             (["frobnicate"], "frobnicate"),
                             (["report", "--format", "xml"], "xml"),
                             (["run", "--config"], "--config"),
                             (["run", "--duration", "5s"], "unknown flag --duration"),
                             (["check-config", "--format=json"], "unknown flag --format"),
                             (["report", "--web.listen-address", "127.0.0.1:0"], "--web.listen-address"),
                             (["report", "kernel"], 'unknown topic "kernel"'),
                             (["report", "clock", "--duration", "1s"], "--duration: only for report gaps")]:
            with self.subTest(args=args):
                result = harness.run(args, timeout=10)
                self.assertExit(result, EXIT_USAGE)
                self.assertIn(needle, result.stderr)

    def test_flag_values_are_checked_like_the_file(self):
        # Once pasted into YAML text: \x35 listened on port 19995, a quote added keys.
        shipped = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")
        for flag, value in (("--web.listen-address", "127.0.0.1:1999\\x35"),
                            ("--web.telemetry-path", '/metrics", listen_address: "0.0.0.0:1'),
                            ("--log.level", "loud")):
            with self.subTest(flag=flag):
                for verb in ("check-config", "run"):
                    result = harness.run([verb, "--config", shipped, f"{flag}={value}"], timeout=15)
                    self.assertExit(result, EXIT_CONFIG)
                    self.assertIn(f"command line: {flag}: must ", result.stderr)
                    self.assertIn(f'got "{value}"', result.stderr)
        result = harness.run(["check-config", "--config", shipped, "--web.listen-address", "127.0.0.1:19995",
                              "--web.telemetry-path=/m", "--log.level", "debug"])
        self.assertExit(result, EXIT_OK)
        # The web configuration file a flag names is read with the rest, its errors naming it.
        missing = os.path.join(self.workdir, "web.yml")
        for verb in ("check-config", "run"):
            result = harness.run([verb, "--config", shipped, f"--web.config.file={missing}"], timeout=15)
            self.assertExit(result, EXIT_CONFIG)
            self.assertIn(f"{missing}: cannot read", result.stderr)

    def test_run_with_a_missing_config_file(self):
        path = os.path.join(self.workdir, "does-not-exist.yaml")
        result = harness.run(["run", "--config", path], timeout=15)
        self.assertExit(result, EXIT_CONFIG)
        self.assertIn(path, result.stderr)

    def test_every_verb_takes_the_built_in_defaults_without_a_file(self):
        # run and check-config exited 78 where report and baseline took the defaults: one rule now.
        default = "/etc/jitterd/jitterd.yaml"
        if os.path.exists(default):
            self.skipTest(f"{default} exists on this machine, so the built-in defaults are not used")
        check = harness.run(["check-config", "--web.listen-address", "127.0.0.1:0"], timeout=15)
        self.assertExit(check, EXIT_OK)
        self.assertIn(f"the built-in defaults (no file at {default}): valid", check.stdout)
        daemon = self.daemon(None, start=False)
        daemon.args = [harness.JITTERD, "run", "--web.listen-address", "127.0.0.1:0"]  # no --config
        daemon.start()
        self.assertTrue(daemon.scrape())
        self.assertIn(f"configuration: the built-in defaults (no file at {default})", daemon.log())
        self.stop_ok(daemon)

    def test_cpus_flag_and_node_exporter_listen_address(self):
        # --cpus for check-config, run, baseline and report gaps; --web.listen-address=:PORT.
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("needs two CPUs: one to sample, one for housekeeping")
        cpu = max(os.sched_getaffinity(0))
        shipped = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")
        check = harness.run(["check-config", "--config", shipped, "--cpus", str(cpu)], timeout=15)
        self.assertExit(check, EXIT_OK)
        self.assertIn(f"it samples cpus {cpu},", check.stdout)
        none = harness.run(["check-config", "--config", shipped, "--cpus", "none"], timeout=15)
        self.assertExit(none, EXIT_OK)
        self.assertIn("it samples no cpu", none.stdout)
        bad = harness.run(["check-config", "--config", shipped, "--cpus", "4096"], timeout=15)
        self.assertExit(bad, EXIT_CONFIG)
        self.assertIn("command line: --cpus: cpu 4096", bad.stderr)
        report = harness.run(["report", "--config", shipped, "--cpus", str(cpu), "--duration", "300ms",
                              "--format", "json"], timeout=60)
        self.assertExit(report, EXIT_OK)
        self.assertEqual([c["cpu"] for c in json.loads(report.stdout)["cpus"]], [cpu])
        every = harness.run(["check-config", "--config", shipped, "--web.listen-address=:0"], timeout=15)
        self.assertExit(every, EXIT_OK)

    def test_check_config_names_who_holds_the_port(self):
        # check-config passed a port in use; run then failed to listen.
        import socket
        holder = socket.socket()
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        self.addCleanup(holder.close)
        port = holder.getsockname()[1]
        shipped = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")
        result = harness.run(["check-config", "--config", shipped, "--web.listen-address", f"127.0.0.1:{port}"],
                             timeout=15)
        self.assertExit(result, EXIT_CONFIG)
        self.assertIn(f"command line: --web.listen-address: cannot listen on 127.0.0.1:{port}: bind: "
                      "Address already in use (held by ", result.stderr)
        self.assertRegex(result.stderr, rf"held by [^ ]+ \(pid {os.getpid()}\)")
        # A running jitterd holding it is a note: checking a running daemon's file before a reload.
        daemon = self.daemon()
        running = harness.run(["check-config", "--config", shipped, "--web.listen-address", daemon.address],
                              timeout=15)
        self.assertExit(running, EXIT_OK)
        self.assertIn(f"note: {daemon.address} is in use by jitterd (pid {daemon.process.pid})", running.stdout)

    def test_wrong_sysfs_and_procfs_roots_are_named(self):
        # A wrong --path.procfs went unnoticed; a wrong --path.sysfs was blamed on cpus.
        shipped = os.path.join(harness.SOURCE_DIR, "config", "jitterd.yaml")
        missing = os.path.join(self.workdir, "nowhere")
        for flag, fs in (("--path.sysfs", "sysfs"), ("--path.procfs", "procfs")):
            for verb in ("check-config", "run"):
                with self.subTest(flag=flag, verb=verb):
                    result = harness.run([verb, "--config", shipped, flag, missing], timeout=15)
                    self.assertExit(result, EXIT_CONFIG)
                    self.assertIn(f"command line: {flag}: must be where {fs} is mounted: {missing}: "
                                  "No such file or directory", result.stderr)
                    self.assertNotIn("cpus:", result.stderr)

    def test_files_that_are_not_regular_or_too_big_are_refused_at_once(self):
        # A FIFO once blocked check-config and the daemon forever; /dev/zero ended in bad_alloc.
        fifo = os.path.join(self.workdir, "fifo.yaml")
        os.mkfifo(fifo)
        big = os.path.join(self.workdir, "big.yaml")
        harness.write_file(big, "# " + "x" * 300000 + "\n")
        for path, why in ((fifo, "is a FIFO, not a regular file"),
                          ("/dev/zero", "is a character device, not a regular file"),
                          (big, "is 300003 bytes, more than the limit of 262144")):
            for verb in ("check-config", "run"):
                with self.subTest(path=path, verb=verb):
                    result = harness.run([verb, "--config", path], timeout=15)
                    self.assertExit(result, EXIT_CONFIG)
                    self.assertIn(f"{path}: cannot read: {why}", result.stderr)

    def report(self, fmt):
        path = self.config(REPORT_CONFIG)
        result = harness.run(["report", "--config", path, "--duration", "1s", "--format", fmt],
                             timeout=30)
        self.assertExit(result, EXIT_OK)
        # Standard error is a pipe here, not a terminal: no progress line.
        self.assertNotIn("\r", result.stderr)
        self.assertNotIn("sampling cpus", result.stderr)
        return result.stdout

    def test_report_json(self):
        started = time.monotonic()
        report = json.loads(self.report("json"))
        wall_seconds = time.monotonic() - started
        counter = report["counter"]
        self.assertGreater(counter["hertz"], 1e6)
        self.assertTrue(counter["method"])
        self.assertTrue(counter["source"])
        self.assertGreaterEqual(counter["uncertainty_ppm"], 0)
        self.assertAlmostEqual(report["duration_seconds"], 1.0, delta=0.2)
        self.assertTrue(report["cpus"])
        self.assertNotIn(0, [c["cpu"] for c in report["cpus"]], "cpu 0 is for housekeeping")
        for cpu in report["cpus"]:
            with self.subTest(cpu=cpu["cpu"]):
                self.assertEqual(cpu["error"], "")
                self.assertGreater(cpu["samples"], 0)
                values = [cpu[k] for k in PERCENTILES]
                self.assertGreater(values[0], 0)
                self.assertEqual(values, sorted(values), f"{PERCENTILES} not ordered: {values}")
                self.assertLessEqual(cpu["min_ns"], cpu["mean_ns"])
                self.assertLessEqual(cpu["mean_ns"], cpu["max_ns"])
                self.assertAlmostEqual(cpu["mean_ns"], cpu["mean_ticks"] / counter["hertz"] * 1e9,
                                       delta=cpu["mean_ns"] * 0.01)
                self.assertGreaterEqual(cpu["stddev_ns"], 0)
                self.assertGreaterEqual(cpu["interruptions"], 0)
                # Sampled for the duration asked (less the warm-up), and never longer than the
                # command ran: a loaded machine may stop the samplers late, never early.
                self.assertGreaterEqual(cpu["sampled_seconds"], report["duration_seconds"] - 0.2)
                self.assertLessEqual(cpu["sampled_seconds"], wall_seconds)
                self.assertGreaterEqual(cpu["stolen_seconds"], 0)
                self.assertLessEqual(cpu["stolen_seconds"], cpu["sampled_seconds"])
                self.assertGreaterEqual(cpu["stolen_share"], 0)
                self.assertLessEqual(cpu["stolen_share"], 1)
                self.assertAlmostEqual(cpu["stolen_share"],
                                       cpu["stolen_seconds"] / cpu["sampled_seconds"], places=4)
                self.assertAlmostEqual(cpu["threshold_ns"], 20000, delta=200)
                self.assertGreater(cpu["floor_ns"], 0)
                self.assertNotIn("kept_interruptions", cpu, "listed without --interruptions")

    def test_report_csv(self):
        rows = list(csv.DictReader(io.StringIO(self.report("csv"))))
        self.assertTrue(rows)
        for row in rows:
            self.assertEqual(row["error"], "")
            self.assertGreater(int(row["samples"]), 0)
            values = [float(row[k]) for k in PERCENTILES]
            self.assertEqual(values, sorted(values))
            self.assertTrue(0 <= float(row["stolen_share"]) <= 1)

    def test_report_table(self):
        text = self.report("table")
        self.assertRegex(text, r"(?m)^\s*cpu\s+samples\b")
        self.assertRegex(text, r"(?m)^\s*[1-9]\d*\s+[1-9]\d*\s")

    def run_on_a_terminal(self, args, timeout=60):
        """Runs jitterd with standard error on a pseudo-terminal (raw, so that nothing is
        translated) and standard output on a pipe; returns (exit code, stdout, what the terminal
        got)."""
        master, slave = pty.openpty()
        tty.setraw(slave)
        process = subprocess.Popen([harness.JITTERD, *args], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        chunks = []

        def drain():
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: the last writer closed the terminal
                    return
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=drain)
        reader.start()
        try:
            stdout, _ = process.communicate(timeout=timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            reader.join(timeout=10)
            os.close(master)
        return process.returncode, stdout.decode(), b"".join(chunks).decode("utf-8", "replace")

    def test_progress_only_on_a_terminal(self):
        path = self.config(REPORT_CONFIG)
        out = os.path.join(self.workdir, "b.json")
        args = ["baseline", "--config", path, "--duration", "3s", "--probes", "kernel_cost", "-o", out]
        code, stdout, terminal = self.run_on_a_terminal(args)
        self.assertEqual(code, EXIT_OK, terminal)
        self.assertEqual(stdout, "")
        # One line, redrawn in place: what it does and how far along.
        self.assertRegex(terminal, r"\rsampling cpus [0-9,-]+: 0/3 s\x1b\[K")
        drawn = [int(s) for s in re.findall(r"\rsampling cpus [0-9,-]+: (\d+)/3 s\x1b\[K", terminal)]
        self.assertEqual(drawn, sorted(drawn), "the seconds sampled go forward")
        self.assertLessEqual(drawn[-1], 3)
        self.assertIn("\rprobe kernel_cost (1/1): 0 s\x1b[K", terminal)
        # Erased before the command's own last line, which is as without a terminal.
        self.assertRegex(terminal, r"\r\x1b\[Kjitterd: baseline of cpus [0-9,-]+ \(3\.0 s, probes: kernel_cost\) "
                                   r"written to " + re.escape(out) + r"\n$")
        with open(out, encoding="utf-8") as f:
            self.assertEqual(json.load(f)["format"], "jitterd-baseline")

        # The same on a pipe: nothing but that last line.
        piped = harness.run(args, timeout=60)
        self.assertExit(piped, EXIT_OK)
        self.assertEqual(piped.stdout, "")
        self.assertNotIn("\r", piped.stderr)
        self.assertNotIn("sampling cpus", piped.stderr)
        self.assertRegex(piped.stderr, r"(?:^|\n)jitterd: baseline of cpus [0-9,-]+ \(3\.0 s, probes: kernel_cost\) "
                                       r"written to " + re.escape(out) + r"\n$")

        # report: the table on standard output is the same whether or not standard error is a terminal.
        code, stdout, terminal = self.run_on_a_terminal(["report", "--config", path, "--duration", "2s"])
        self.assertEqual(code, EXIT_OK, terminal)
        self.assertRegex(stdout, r"(?m)^\s*cpu\s+samples\b")
        self.assertNotIn("\r", stdout)
        self.assertRegex(terminal, r"\rsampling cpus [0-9,-]+: 0/2 s\x1b\[K")
        self.assertTrue(terminal.endswith("\r\x1b[K"), repr(terminal[-80:]))

    def test_report_probe_topics(self):
        path = self.config(REPORT_CONFIG + harness.BURST_CONFIG[harness.BURST_CONFIG.index("probes:"):])
        for name in ("clock", "pacing", "kernel_cost", "pinning", "c2c"):
            with self.subTest(topic=name):
                result = harness.run(["report", name, "--config", path, "--format", "json"], timeout=60)
                self.assertExit(result, EXIT_OK)
                report = json.loads(result.stdout)
                self.assertEqual(report["probe"], name)
                self.assertTrue(report["tables"])
                numbers = 0
                for table in report["tables"]:
                    self.assertTrue(table["rows"], table["title"])
                    for row in table["rows"]:
                        self.assertEqual(len(row), len(table["columns"]), table["title"])
                        numbers += sum(isinstance(c, (int, float)) and not isinstance(c, bool) for c in row)
                self.assertGreater(numbers, 0, f"{name}: every cell is text")
                table = harness.run(["report", name, "--config", path], timeout=60)
                self.assertExit(table, EXIT_OK)
                self.assertIn(f"probe {name}", table.stdout)
                rows = list(csv.reader(io.StringIO(
                    harness.run(["report", name, "--config", path, "--format", "csv"], timeout=60).stdout)))
                self.assertTrue(rows and rows[0], f"empty csv for {name}")
        result = harness.run(["report", "latency"], timeout=10)
        self.assertExit(result, EXIT_USAGE)
        self.assertIn('unknown topic "latency"', result.stderr)

    def test_report_c2c_matrix(self):
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("one CPU: nothing to pair")
        cpus = sorted(os.sched_getaffinity(0))[:2]
        listed = f"{cpus[0]},{cpus[1]}"
        result = harness.run(["report", "c2c", "--cpus", listed, "--format", "json"], timeout=60)
        self.assertExit(result, EXIT_OK)
        report = json.loads(result.stdout)
        matrix, pairs, classes = report["tables"]
        self.assertEqual(matrix["columns"], ["cpu", str(cpus[0]), str(cpus[1])])
        self.assertRegex(matrix["rows"][1][1], r"^\d+\.\d±\d+\.\d$")
        row = dict(zip(pairs["columns"], pairs["rows"][0]))
        self.assertEqual((row["cpu_a"], row["cpu_b"]), (cpus[0], cpus[1]))
        self.assertIsInstance(row["median_ns"], float)
        self.assertTrue(0 < row["median_ns"] < 100000, row)
        self.assertTrue(any(n.startswith("min latency: ") for n in report["notes"]), report["notes"])
        table = harness.run(["report", "c2c", "--cpus", listed], timeout=60)
        self.assertExit(table, EXIT_OK)
        self.assertRegex(table.stdout, r"(?m)^max latency|^note: max latency: ")
        for args, message in ((["--cpus", "0"], "at least two CPUs"), (["--cpus", "0-"], "--cpus")):
            bad = harness.run(["report", "c2c", *args], timeout=10)
            self.assertExit(bad, EXIT_USAGE)
            self.assertIn(message, bad.stderr)
        # report gaps: --cpus overrides cpus:, by its rules (every CPU leaves none for housekeeping).
        gaps = harness.run(["report", "--cpus", listed], timeout=10)
        self.assertExit(gaps, EXIT_CONFIG)
        self.assertIn("command line: --cpus: ", gaps.stderr)
        other = harness.run(["report", "posture", "--cpus", listed], timeout=10)
        self.assertExit(other, EXIT_USAGE)
        self.assertIn("only for report gaps, c2c", other.stderr)

    def test_check_config_rejects_c2c_pairs_outside_the_scope(self):
        path = self.config("probes:\n  c2c:\n    pairs: [[0, 1], [1, 4000]]\n")
        result = harness.run(["check-config", "--config", path])
        self.assertExit(result, EXIT_CONFIG)
        self.assertRegex(result.stdout + result.stderr, rf"{re.escape(path)}:3:12: probes.c2c.pairs: pair \(1, 4000\): "
                                        r"cpus? .*not among the CPUs the probe may use")

    def test_report_posture_matches_the_golden_checklists(self):
        # Three machines, each with its runbook's expectations (or none) and its golden output.
        fixtures = os.path.join(harness.SOURCE_DIR, "tests", "fixtures")
        # tuned_nvme is the tuned server after its runbook: SMT, one thread per core sampled, NVMe
        # managed queues on isolated cpus, matching expectations: exit 0.
        for machine, code in (("tuned_nvme", 0), ("tuned_server", 2), ("untuned_laptop", 1), ("vm_missing", 2)):
            for fmt, suffix in (("table", "txt"), ("json", "json")):
                with self.subTest(machine=machine, format=fmt):
                    root = os.path.join(fixtures, machine)
                    # No kubelet: the live /var/lib/kubelet would make the golden depend on the host.
                    result = harness.run(["report", "posture", "--format", fmt,
                                          "--config", os.path.join(fixtures, "posture", machine + ".yaml"),
                                          "--path.sysfs", os.path.join(root, "sys"),
                                          "--path.procfs", os.path.join(root, "proc"), "--path.kubelet", ""],
                                         timeout=30)
                    self.assertExit(result, code)
                    # Unreadable files are named by full path: the golden has them repo-relative.
                    output = result.stdout.replace(harness.SOURCE_DIR + "/", "")
                    with open(os.path.join(fixtures, "posture", f"{machine}.{suffix}"), encoding="utf-8") as f:
                        self.assertEqual(output, f.read())
        self.assertEqual(json.loads(output)["result"], "FAIL")
        root = os.path.join(fixtures, "tuned_server")
        table = harness.run(["report", "posture", "--format", "csv",
                             "--config", os.path.join(fixtures, "posture", "tuned_server.yaml"),
                             "--path.sysfs", os.path.join(root, "sys"),
                             "--path.procfs", os.path.join(root, "proc")], timeout=30)
        self.assertExit(table, 2)
        checks = list(csv.DictReader(io.StringIO(table.stdout)))
        with open(os.path.join(fixtures, "posture", "tuned_server.json"), encoding="utf-8") as f:
            golden = json.load(f)["checks"]
        self.assertEqual([(c["status"], c["check"], c["reason"]) for c in checks],
                         [(c["status"], c["check"], c["reason"]) for c in golden])
        # The fixes as a script: commented, never run by jitterd, the exit code as for the checklist.
        script = harness.run(["report", "posture", "--format", "script",
                              "--config", os.path.join(fixtures, "posture", "tuned_server.yaml"),
                              "--path.sysfs", os.path.join(root, "sys"),
                              "--path.procfs", os.path.join(root, "proc")], timeout=30)
        self.assertExit(script, 2)
        self.assertTrue(script.stdout.startswith("#!/bin/sh\n"))
        self.assertIn("jitterd never runs this", script.stdout)
        self.assertIn("\n# FAIL device_irqs cpu 3: 1 device IRQ(s) may fire on cpu 3: irq 45 mlx5_comp3", script.stdout)
        commands = [line for line in script.stdout.splitlines() if line and not line.startswith("#")]
        self.assertEqual(commands, ["echo 0-1,8-9 > /proc/irq/45/smp_affinity_list"])
        misuse = harness.run(["report", "clock", "--format", "script"], timeout=10)
        self.assertExit(misuse, EXIT_USAGE)
        # A root with no sysfs at all is a wrong --path.sysfs, not a checklist (nor "no CPU").
        empty = self.config("", name="empty.yaml")
        nothing = harness.run(["report", "posture", "--config", empty, "--path.sysfs", self.workdir,
                               "--path.procfs", self.workdir], timeout=10)
        self.assertExit(nothing, EXIT_CONFIG)
        self.assertIn("command line: --path.sysfs: must be where sysfs is mounted: ", nothing.stderr)

    def test_hostile_task_names_stay_inert(self):
        # The audit's attack: a task named "\ntouch /tmp/Q #" on a sampled CPU made the fix script
        # an operator runs as root hold "touch /tmp/Q". Here a machine (the tuned NVMe server's
        # fixture) gets stray tasks on a sampled CPU whose names hold every byte value, terminal
        # escapes, a bidi override and malformed UTF-8; the script, the table and the JSON must
        # keep each of them inert.
        root = os.path.join(self.workdir, "hostile")
        shutil.copytree(os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "tuned_nvme"), root, symlinks=True)
        config = os.path.join(harness.SOURCE_DIR, "tests", "fixtures", "posture", "tuned_nvme.yaml")
        args = ["report", "posture", "--config", config, "--path.sysfs", os.path.join(root, "sys"),
                "--path.procfs", os.path.join(root, "proc")]
        sampled = json.loads(harness.run(args + ["--format", "json"], timeout=30).stdout)["sampled"]
        cpu = sampled[0]
        names = [b"\ntouch /tmp/Q #", b"\x1b]0;pwned\x07\x1b[2J\r", "x\u202eevil\u2028".encode(), b"\xc3(\xff"]
        names += [bytes(range(start, min(start + 15, 256))) for start in range(0, 256, 15)]
        with open(os.path.join(root, "proc", "83", "task", "83", "stat"), "rb") as f:
            template = f.read().split(b") ", 1)[1].split(b" ")
        template[9 - 3] = b"4194560"  # flags: a user task (no PF_KTHREAD)
        template[39 - 3] = str(cpu).encode()
        for i, name in enumerate(names):
            pid = 70000 + i
            task = os.path.join(root, "proc", str(pid), "task", str(pid))
            os.makedirs(task)
            with open(os.path.join(task, "stat"), "wb") as f:
                f.write(str(pid).encode() + b" (" + name + b") " + b" ".join(template))
            with open(os.path.join(task, "status"), "wb") as f:
                f.write(b"Name:\tx\nCpus_allowed_list:\t%d\n" % cpu)
        script = subprocess.run([harness.JITTERD] + args + ["--format", "script"], capture_output=True, timeout=30)
        self.assertEqual(script.returncode, 2, script.stderr)
        text = script.stdout.decode("utf-8")  # strict: well-formed UTF-8 only
        plain = re.compile(r"[A-Za-z0-9 _.,:=+/-]+( > /(sys|proc)/[A-Za-z0-9_./-]+)?")
        self.assertIn(f"# FAIL stray_tasks cpu {cpu}: ", text)
        for line in text.splitlines():
            self.assertTrue(all(ord(c) >= 0x20 and ord(c) != 0x7f for c in line), repr(line))
            self.assertNotIn("\u202e", line)
            self.assertTrue(line.startswith("#") or line == "" or plain.fullmatch(line), repr(line))
        self.assertNotIn("\ntouch", text)
        self.assertIn("\\ntouch /tmp/Q #", text)
        # sh reads it as the lines it shows: one command per non-comment line.
        self.assertEqual(subprocess.run(["sh", "-n"], input=script.stdout, capture_output=True).returncode, 0)
        table = subprocess.run([harness.JITTERD] + args, capture_output=True, timeout=30)
        self.assertEqual(table.returncode, 2, table.stderr)
        shown = table.stdout.decode("utf-8")
        self.assertFalse([c for c in shown if (ord(c) < 0x20 and c != "\n") or ord(c) == 0x7f or c == "\u202e"])
        self.assertIn("\\x1b]0;pwned", shown)
        document = subprocess.run([harness.JITTERD] + args + ["--format", "json"], capture_output=True, timeout=30)
        self.assertEqual(document.returncode, 2, document.stderr)
        json.loads(document.stdout.decode("utf-8"))

    def test_missing_sysfs_files_are_warnings(self):
        path = self.config(REPORT_CONFIG.replace("continuous", "burst") +
                           'web:\n  listen_address: "127.0.0.1:0"\n')
        result = harness.run(["check-config", "--config", path,
                              "--path.sysfs", MISSING_ISOLATED_SYSFS])
        self.assertExit(result, EXIT_OK)
        output = result.stdout + result.stderr
        for name in ("isolated", "offline", "nohz_full"):
            missing = os.path.join(MISSING_ISOLATED_SYSFS, "devices", "system", "cpu", name)
            self.assertRegex(output, rf"warning: {re.escape(missing)}: missing",
                             f"no warning for {missing}")

        daemon = self.daemon(config_text=None, config_name="config.yaml",
                             args=["--path.sysfs", MISSING_ISOLATED_SYSFS])
        self.assertIn("missing", daemon.log())
        self.assertEqual(daemon.value("jitterd_sampler_up", cpu=daemon.sampled_cpus()[0]), 1)
        self.stop_ok(daemon)


if __name__ == "__main__":
    harness.main([harness.require_two_cpus])
