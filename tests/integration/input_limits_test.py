#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The attacks of the security audit (issue 24) on what jitterd writes and reads, each reproduced
against the real binary:

  - baseline -o: a device (/dev/full's major and minor, made in the test's directory as root), a
    FIFO, a symbolic link (to a file, or to /proc/self/fd/1 as /dev/stdout is) or a directory is
    refused with exit 73 naming it, before anything is measured, and left as it was;
    a regular file is replaced and a new path written; -o - writes standard output (a full one:
    73 with "No space left on device"); symbolic links planted under the old predictable
    temporary names (FILE.tmp.PID) for the next 3000 PIDs redirect nothing; as root, a full
    tmpfs gives 73 with "No space left on device" and leaves nothing behind.
  - compare --prometheus against a fake server on 127.0.0.1: a gzip bomb (80 MiB of zeros in
    80 kB) and an endless body (500 MB, no length) stop at the 64 MiB bound, exit 69 naming the
    URL and the bound, in bounded memory; a declared length over the bound likewise; a redirect
    is not followed (69, naming where it pointed); 1e999 in the answer is 65 naming the URL;
    --prometheus-max-bytes sets the bound and a bad value is 64.
  - compare of files: over 64 MiB (refused before reading) or endless (/dev/zero), over 8192
    CPUs, a CPU or a key given twice, 1e999, format_version "01.1": each 65 naming the file and
    what is wrong; the two good files still compare.

Usage: input_limits_test.py --jitterd BINARY
"""

import http.server
import json
import os
import resource
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zlib

import harness

EXIT_USAGE, EXIT_DATA, EXIT_UNAVAILABLE, EXIT_CANNOT_WRITE = 64, 65, 69, 73
BOUND = 64 << 20
CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 100ms
"""


class BaselineOutput(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="jitterd-input-")
        self.addCleanup(self._tmp.cleanup)
        self.workdir = self._tmp.name
        self.config = os.path.join(self.workdir, "jitterd.yaml")
        harness.write_file(self.config, CONFIG)

    def baseline(self, output, **kwargs):
        return subprocess.run([harness.JITTERD, "baseline", "--config", self.config, "--duration", "200ms",
                               "--probes", "none", "-o", output], timeout=30, **kwargs)

    def baseline_text(self, output):
        return self.baseline(output, capture_output=True, text=True)

    def test_devices_fifos_links_and_directories_are_refused_and_left_alone(self):
        # Copies of /dev/full and /dev/stdout in the test's directory, never the machine's own:
        # a jitterd that still replaced them would break them for everything else on it.
        victim = os.path.join(self.workdir, "victim")
        harness.write_file(victim, "precious\n")
        link = os.path.join(self.workdir, "link.json")
        os.symlink(victim, link)
        stdout_link = os.path.join(self.workdir, "stdout")
        os.symlink("/proc/self/fd/1", stdout_link)
        fifo = os.path.join(self.workdir, "fifo.json")
        os.mkfifo(fifo)
        directory = os.path.join(self.workdir, "dir.json")
        os.mkdir(directory)
        cases = [(link, "is a symbolic link, not a regular file"),
                 (stdout_link, "is a symbolic link, not a regular file"),
                 (fifo, "is a FIFO, not a regular file"),
                 (directory, "is a directory, not a regular file")]
        full = os.path.join(self.workdir, "full")
        if os.geteuid() == 0:
            os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            cases.append((full, "is a character device, not a regular file"))
        for path, why in cases:
            with self.subTest(path=path):
                result = self.baseline_text(path)
                self.assertEqual(result.returncode, EXIT_CANNOT_WRITE, result.stderr)
                self.assertIn(f"{path}: {why}", result.stderr)
                self.assertNotIn("sampling", result.stderr)  # refused before measuring
        if os.geteuid() == 0:
            self.assertTrue(stat.S_ISCHR(os.lstat(full).st_mode))
        self.assertTrue(os.path.islink(link) and os.path.islink(stdout_link))
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        # report --save goes through the same check.
        result = harness.run(["report", "--config", self.config, "--duration", "200ms", "--save", fifo])
        self.assertEqual(result.returncode, EXIT_CANNOT_WRITE, result.stderr)
        self.assertIn(f"{fifo}: is a FIFO", result.stderr)

    def test_a_regular_file_is_replaced_a_new_one_written_and_nothing_left_beside_them(self):
        path = os.path.join(self.workdir, "b.json")
        harness.write_file(path, "old\n")
        before = os.stat(path).st_ino
        result = self.baseline_text(path)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(path) as f:
            self.assertEqual(json.load(f)["format"], "jitterd-baseline")
        self.assertNotEqual(os.stat(path).st_ino, before)
        fresh = os.path.join(self.workdir, "fresh.json")
        self.assertEqual(self.baseline_text(fresh).returncode, 0)
        self.assertEqual(sorted(os.listdir(self.workdir)), ["b.json", "fresh.json", "jitterd.yaml"])

    def test_dash_is_standard_output(self):
        result = self.baseline_text("-")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(json.loads(result.stdout)["format"], "jitterd-baseline")
        self.assertIn("written to standard output", result.stderr)
        with open("/dev/full", "w") as full:
            result = self.baseline("-", stdout=full, stderr=subprocess.PIPE, text=True)
        self.assertEqual(result.returncode, EXIT_CANNOT_WRITE, result.stderr)
        self.assertIn("standard output: cannot write: No space left on device", result.stderr)
        result = harness.run(["report", "--config", self.config, "--save", "-"])
        self.assertEqual(result.returncode, 64, result.stderr)

    def test_links_planted_under_the_old_temporary_names_redirect_nothing(self):
        # The old writer wrote FILE.tmp.PID through whatever was there: links for the next PIDs,
        # planted in a shared directory, made a root baseline overwrite the file they point at.
        shared = os.path.join(self.workdir, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        victim = os.path.join(self.workdir, "victim")
        harness.write_file(victim, "precious\n")
        with open("/proc/sys/kernel/ns_last_pid") as f:
            last = int(f.read())
        for pid in range(last + 1, last + 3001):
            os.symlink(victim, os.path.join(shared, f"b.json.tmp.{pid}"))
        result = self.baseline_text(os.path.join(shared, "b.json"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        with open(os.path.join(shared, "b.json")) as f:
            self.assertEqual(json.load(f)["format"], "jitterd-baseline")
        self.assertEqual(len(os.listdir(shared)), 3001)

    def test_a_full_filesystem_is_named_with_its_reason(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a small tmpfs")
        mount = os.path.join(self.workdir, "small")
        os.mkdir(mount)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
        self.addCleanup(subprocess.run, ["umount", mount])
        fd = os.open(os.path.join(mount, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        path = os.path.join(mount, "b.json")
        result = self.baseline_text(path)
        self.assertEqual(result.returncode, EXIT_CANNOT_WRITE, result.stderr)
        self.assertIn(path, result.stderr)
        self.assertIn("No space left on device", result.stderr)
        self.assertEqual(os.listdir(mount), ["filler"])


def baseline(cpus, version="1.1"):
    """A small valid baseline of `cpus` CPUs, as jitterd writes one."""
    def cpu(number):
        return {"cpu": number, "error": "", "samples": 10, "sampled_seconds": 0.5, "stolen_seconds": 0.0,
                "interruptions": 1, "floor_ns": 20.0, "threshold_ns": 10000.0, "max_ns": 30000.0,
                "histogram_ticks": [[40, 9], [300, 1]],
                "sub_windows": [{"seconds": 0.5, "samples": 10, "p50_ns": 20.0, "p99_ns": 30000.0,
                                 "p99_9_ns": 30000.0, "p99_99_ns": 30000.0, "interruptions": 1,
                                 "stolen_seconds": 0.0, "over_threshold": [1, 1, 0, 0, 0]}]}
    return {"format": "jitterd-baseline", "format_version": version, "created": "2026-11-26T00:00:00Z",
            "jitterd_version": "0.1.0", "fingerprint": {"hostname": "box", "cpu_model": "x"},
            "configuration": {"cpus": "0-1"}, "tick_method": "lfence_rdtsc", "counter_hertz": 2e9,
            "duration_seconds": 0.5, "sub_window_seconds": 0.5,
            "tail_thresholds_ns": [10000, 20000, 50000, 100000, 1000000],
            "cpus": [cpu(n) for n in range(cpus)], "probes": []}


class CompareFiles(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="jitterd-input-")
        self.addCleanup(self._tmp.cleanup)
        self.good = self.write("good.json", json.dumps(baseline(2)))

    def write(self, name, text):
        path = os.path.join(self._tmp.name, name)
        harness.write_file(path, text)
        return path

    def assert_refused(self, path, *needles):
        result = harness.run(["compare", self.good, path], timeout=60)
        self.assertEqual(result.returncode, EXIT_DATA, result.stderr)
        for needle in (path + ": ",) + needles:
            self.assertIn(needle, result.stderr)

    def test_bad_files_are_named_with_what_is_wrong(self):
        self.assertEqual(harness.run(["compare", self.good, self.good]).returncode, 0)
        big = self.write("big.json", "")
        os.truncate(big, (64 << 20) + 1)
        self.assert_refused(big, f"is {(64 << 20) + 1} bytes, more than the limit of {BOUND}")
        self.assert_refused("/dev/zero", f"holds more than the limit of {BOUND} bytes")
        self.assert_refused(self.write("many.json", json.dumps(baseline(8193))),
                            "cpus: 8193 CPUs, more than the limit of 8192")
        twice = baseline(2)
        twice["cpus"][1]["cpu"] = 0
        self.assert_refused(self.write("twice.json", json.dumps(twice)), "cpus[1].cpu: cpu 0 is given twice")
        text = json.dumps(baseline(2))
        self.assert_refused(self.write("key.json", text.replace('"created"', '"format_version": "9.0", "created"')),
                            'the key "format_version" is given twice')
        self.assert_refused(self.write("overflow.json", text.replace('"max_ns": 30000.0', '"max_ns": 1e999', 1)),
                            "cpus[0].max_ns: the number 1e999 is out of range")
        self.assert_refused(self.write("version.json", json.dumps(baseline(2, "01.1"))),
                            'format_version: must be MAJOR.MINOR (two whole numbers such as 1.1), got "01.1"')


def gzip_bomb(decoded_bytes):
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip container
    chunk = b"0" * (1 << 20)
    return b"".join([packer.compress(chunk) for _ in range(decoded_bytes >> 20)] + [packer.flush()])


class HostileServer(http.server.BaseHTTPRequestHandler):
    """/bomb/: a gzip bomb; /endless/: 500 MB of garbage without a length (read to the close);
    /declared/: a length of 500 MB declared; /redirect/: 302 to /elsewhere/; /overflow/: JSON
    with 1e999; /small/: a 3 kB Prometheus error answer."""

    bomb = None

    def do_GET(self):
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # jitterd stopped reading, as it should

    def answer(self):
        if self.path.startswith("/bomb/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(self.bomb)))
            self.end_headers()
            self.wfile.write(self.bomb)
        elif self.path.startswith("/endless/") or self.path.startswith("/declared/"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if self.path.startswith("/declared/"):
                self.send_header("Content-Length", str(500 << 20))
            self.end_headers()
            chunk = b"x" * (1 << 20)
            for _ in range(500):
                self.wfile.write(chunk)
        elif self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/elsewhere/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            if self.path.startswith("/overflow/"):
                body = ('{"status":"success","data":{"resultType":"matrix","result":'
                        '[{"metric":{"__name__":"jitterd_sampler_sampled_seconds_total","cpu":"1"},'
                        '"values":[[1e999,"1"]]}]}}')
            else:
                body = json.dumps({"status": "error", "errorType": "bad_data", "error": "x" * 3000})
            self.send_response(400 if self.path.startswith("/small/") else 200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


class PrometheusAnswers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        HostileServer.bomb = gzip_bomb(80 << 20)
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HostileServer)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def compare(self, path, *args):
        started = time.monotonic()
        result = harness.run(["compare", "--prometheus", self.base + path, "--instance", "box:9978",
                              "--before", "1795600000/1795600600", "--after", "1795600600/1795601200",
                              *args], timeout=60)
        return result, time.monotonic() - started

    def assert_refused(self, result, code, *needles):
        self.assertEqual(result.returncode, code, result.stderr)
        for needle in needles:
            self.assertIn(needle, result.stderr)
        self.assertEqual(result.stdout, "")

    def test_bodies_past_the_bound_stop_there(self):
        self.assertLess(len(HostileServer.bomb), 100 << 10)
        for path in ("/bomb", "/endless", "/declared"):
            with self.subTest(path=path):
                result, seconds = self.compare(path)
                self.assert_refused(result, EXIT_UNAVAILABLE, self.base + path + " (query ",
                                    f"larger than the limit of {BOUND} bytes", "--prometheus-max-bytes")
                self.assertLess(seconds, 30)
        # Every jitterd run so far stayed far below the answers it was sent (ru_maxrss: KiB).
        self.assertLess(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 400 << 10)

    def test_the_bound_is_a_flag(self):
        result, _ = self.compare("/small", "--prometheus-max-bytes", "1KiB")
        self.assert_refused(result, EXIT_UNAVAILABLE, self.base + "/small", "larger than the limit of 1024 bytes")
        result, _ = self.compare("/small", "--prometheus-max-bytes", "4KiB")
        self.assert_refused(result, EXIT_DATA, "Prometheus answered HTTP 400 with error bad_data")
        for bad in ("10", "64XB", "17GiB", ""):
            with self.subTest(value=bad):
                result, _ = self.compare("/small", "--prometheus-max-bytes", bad)
                self.assert_refused(result, EXIT_USAGE, "--prometheus-max-bytes")

    def test_a_redirect_is_not_followed(self):
        result, _ = self.compare("/redirect")
        self.assert_refused(result, EXIT_UNAVAILABLE, self.base + "/redirect (query ", "HTTP status 302",
                            f"a redirect to {self.base}/elsewhere/", "not followed")

    def test_a_number_out_of_range_is_named(self):
        result, _ = self.compare("/overflow")
        self.assert_refused(result, EXIT_DATA, self.base + "/overflow (query ", "the number 1e999 is out of range")


if __name__ == "__main__":
    harness.main()
