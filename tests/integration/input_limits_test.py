#!/usr/bin/env python3
"""The attacks of the security audit (issue 24) on what jitterd writes and reads, each reproduced
against the real binary:

  - baseline -o: a device (/dev/full's major and minor, made in the test's directory as root), a
    FIFO, a symbolic link (to a file, or to /proc/self/fd/1 as /dev/stdout is) or a directory is
    refused with exit 73 naming it, before anything is measured, and left as it was;
    a regular file is replaced and a new path written; -o - writes standard output (a full one:
    73 with "No space left on device"); symbolic links planted under the old predictable
    temporary names (FILE.tmp.PID) for the next 3000 PIDs redirect nothing; as root, a full
    tmpfs gives 73 with "No space left on device" and leaves nothing behind.
  - compare of files: over 64 MiB (refused before reading) or endless (/dev/zero), over 8192
    CPUs, a CPU or a key given twice, 1e999, format_version "01.1": each 65 naming the file and
    what is wrong; the two good files still compare.

Usage: input_limits_test.py --jitterd BINARY
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

import harness

EXIT_DATA, EXIT_CANNOT_WRITE = 65, 73
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


if __name__ == "__main__":
    harness.main()
