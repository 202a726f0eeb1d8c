#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Isolation at run time, through the real binary: cgroup v2 cpuset partitions and the kubelet's
CPU manager state, read through --path.cgroupfs and --path.kubelet.

- `report posture` on the untuned laptop's fixture with each cgroup shape of tests/fixtures/cgroup
  and each kubelet state of tests/fixtures/kubelet: the isolated CPUs by mechanism, an invalid
  partition a FAIL (exit 2) naming the partition and the kernel's reason, in text and JSON; a
  malformed file an unreadable line naming it.
- The daemon with `watch.cpus: auto` over a scratch cgroup tree and kubelet directory it is given,
  rewritten while it runs: a partition made invalid leaves the watch and sets
  jitterd_expectation_unmet{check="cpuset_partition"} (the series the shipped drift alert
  watches), a pod given the CPU brings it back, every change logged.
- A real cgroup v2 cpuset partition where this machine allows one (root, cgroup v2 with the cpuset
  controller, 2 CPUs or more): an isolated partition of the highest CPU, read by `report posture`
  from the cgroup2 mount, then everything restored; otherwise a skip saying why (this project's
  development guest mounts cgroup2 at /sys/fs/cgroup/unified with cpuset bound to v1).

Usage: partitions_test.py --jitterd BINARY [unittest args]
"""

import json
import os
import shutil
import time
import unittest

import harness

FIXTURES = os.path.join(harness.SOURCE_DIR, "tests", "fixtures")
LAPTOP = os.path.join(FIXTURES, "untuned_laptop")
EXIT_FAIL = 2


def posture(cgroup, kubelet="", fmt="table", timeout=30):
    config = os.path.join(FIXTURES, "posture", "untuned_laptop.yaml")
    return harness.run(["report", "posture", "--format", fmt, "--config", config,
                        "--path.sysfs", os.path.join(LAPTOP, "sys"), "--path.procfs", os.path.join(LAPTOP, "proc"),
                        "--path.cgroupfs", cgroup, "--path.kubelet", kubelet], timeout=timeout)


class FixturePostureTest(harness.DaemonTestCase):
    def test_invalid_partition_fails_naming_it_and_the_reason(self):
        result = posture(os.path.join(FIXTURES, "cgroup", "v2_invalid"))
        self.assertEqual(result.returncode, EXIT_FAIL, result.stdout + result.stderr)
        self.assertIn("FAIL  cpuset_partition", result.stdout)
        self.assertIn("partition /rt.slice is isolated invalid (Cpu list in cpuset.cpus not exclusive): its cpuset.cpus 3-4 "
                      "went back to the parent and are not isolated [expect]", result.stdout)
        self.assertIn("partition /rt.slice/inner is root invalid (Parent is not a partition root)", result.stdout)
        self.assertIn("  cpuset  /good.slice: cpus 6-7\n", result.stdout)
        document = json.loads(posture(os.path.join(FIXTURES, "cgroup", "v2_invalid"), fmt="json").stdout)
        self.assertEqual(document["result"], "FAIL")
        failed = [c for c in document["checks"] if c["check"] == "cpuset_partition" and c["status"] == "FAIL"]
        self.assertEqual(len(failed), 2)
        self.assertEqual(document["isolation"], [{"cpu": 6, "mechanism": "cpuset", "by": "/good.slice"},
                                                 {"cpu": 7, "mechanism": "cpuset", "by": "/good.slice"}])

    def test_each_shape_says_which_cpus_each_mechanism_isolates(self):
        cases = (
            ("v2_isolated", "static", ["  kubelet  pod 6f1c2a4e-3b5d-4c8e-9a7f-1d2e3f4a5b6c container trader: cpus 2-3",
                                       "  cpuset  /rt.slice: cpus 4-5",
                                       "WARN  partition_isolation", "WARN  kubelet_cpus",
                                       "kubelet CPU manager: policy static, shared pool 0-1,4-7, exclusive cpus 2-3"]),
            ("v2_nested", "none", ["  cpuset  /app.slice/feed: cpus 4-5", "  cpuset  /app.slice/trader: cpus 6-7",
                                   "PASS  cpuset_partition", "/app.slice root 2-3",
                                   "kubelet CPU manager: policy none, shared pool none, exclusive cpus none"]),
            ("v1_cpuset", "v1", ["  kubelet  container 0f3c9a: cpus 2-3", "cpuset partitions: not read: ",
                                 "no cpuset controller"]),
        )
        for shape, kubelet, expected in cases:
            with self.subTest(shape=shape, kubelet=kubelet):
                result = posture(os.path.join(FIXTURES, "cgroup", shape), os.path.join(FIXTURES, "kubelet", kubelet))
                self.assertIn(result.returncode, (1, 2), result.stderr)
                for line in expected:
                    self.assertIn(line, result.stdout)
                self.assertNotIn("FAIL  cpuset_partition", result.stdout)

    def test_malformed_files_are_named(self):
        result = posture(os.path.join(FIXTURES, "cgroup", "malformed"), os.path.join(FIXTURES, "kubelet", "malformed"))
        self.assertIn(result.returncode, (1, 2), result.stderr)
        output = result.stdout.replace(harness.SOURCE_DIR + "/", "")
        self.assertIn("unreadable: tests/fixtures/cgroup/malformed/odd/cpuset.cpus.partition: not a partition state",
                      output)
        self.assertIn("unreadable: tests/fixtures/kubelet/malformed/cpu_manager_state: at byte", output)
        given = harness.run(["report", "posture", "--path.cgroupfs", os.path.join(self.workdir, "none")], timeout=10)
        self.assertEqual(given.returncode, 78)
        self.assertIn("--path.cgroupfs: must be where the cgroup v2 hierarchy is mounted", given.stderr)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    harness.write_file(path, text)


class FollowTest(harness.DaemonTestCase):
    """The daemon follows a scratch cgroup tree and kubelet state rewritten while it runs."""

    def test_auto_follows_a_partition_and_a_pod(self):
        if len(os.sched_getaffinity(0)) < 2:
            self.skipTest("needs 2 allowed CPUs: one watched, one for housekeeping")
        cpu = max(os.sched_getaffinity(0))
        cgroup, kubelet = os.path.join(self.workdir, "cgroup"), os.path.join(self.workdir, "kubelet")
        write(cgroup, "cgroup.controllers", "cpuset cpu\n")
        write(cgroup, "cgroup.subtree_control", "cpuset\n")
        write(cgroup, "rt/cgroup.subtree_control", "\n")
        write(cgroup, "rt/cpuset.cpus", f"{cpu}\n")
        write(cgroup, "rt/cpuset.cpus.effective", f"{cpu}\n")
        write(cgroup, "rt/cpuset.cpus.partition", "isolated\n")
        os.makedirs(kubelet)
        config = ("cpus: []\nweb:\n  listen_address: \"127.0.0.1:0\"\n" + harness.PROBES_OFF.replace(
            "  posture: {enabled: false}\n", "  posture: {interval: 10s}\n") +
                  "watch:\n  cpus: auto\n  method: counts\n  interval: 500ms\n")
        daemon = self.daemon(config, args=["--path.cgroupfs", cgroup, "--path.kubelet", kubelet])
        self.assertIn(f"watching cpus {cpu}", daemon.log())
        online = lambda: harness.select(daemon.scrape(), "jitterd_watch_cpu_online", cpu=str(cpu))
        harness.wait_until(lambda: online(), 15, interval=0.5, what=f"cpu {cpu} watched")
        harness.wait_until(lambda: harness.select(daemon.scrape(), "jitterd_expectation_unmet",
                                                  check="cpuset_partition"), 20, interval=0.5,
                           what="the posture's partition line")
        self.assertEqual(daemon.value("jitterd_expectation_unmet", check="cpuset_partition", cpu=""), 0)
        self.assertEqual(daemon.value("jitterd_posture_cpu_isolated_by_info", cpu=str(cpu), mechanism="cpuset",
                                      by="/rt"), 1)
        # The partition goes invalid: its CPU leaves the watch; the posture FAILs (the alert's series).
        write(cgroup, "rt/cpuset.cpus.partition", "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n")
        harness.wait_until(lambda: not online(), 25, interval=0.5, what=f"cpu {cpu} no longer watched")
        self.assertIn(f"watch: auto: the isolated cpus changed: watching none (was {cpu})", daemon.log())
        harness.wait_until(lambda: daemon.value("jitterd_expectation_unmet", check="cpuset_partition", cpu="") == 1,
                           25, interval=0.5, what="jitterd_expectation_unmet{check=cpuset_partition} 1")
        # A pod is given the CPU: the watch takes it again.
        write(kubelet, "cpu_manager_state",
              json.dumps({"policyName": "static", "defaultCpuSet": "0", "entries": {"pod-1": {"app": str(cpu)}},
                          "checksum": 1}))
        harness.wait_until(lambda: online(), 25, interval=0.5, what=f"cpu {cpu} watched again")
        self.assertIn(f"watching {cpu} (was none)", daemon.log())
        self.stop_ok(daemon)


def cgroup2_mount():
    """Where cgroup v2 is mounted (/sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a
    hybrid one), or None."""
    with open("/proc/mounts", encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return fields[1]
    return None


CPUSET_ROOT = cgroup2_mount()


def real_partition_unavailable():
    if os.geteuid() != 0:
        return "needs root to create a cgroup"
    if CPUSET_ROOT is None:
        return "no cgroup v2 hierarchy is mounted (/proc/mounts lists no cgroup2)"
    try:
        with open(os.path.join(CPUSET_ROOT, "cgroup.controllers"), encoding="ascii") as f:
            controllers = f.read().split()
    except OSError as e:
        return f"{CPUSET_ROOT}/cgroup.controllers: {e.strerror}"
    if "cpuset" not in controllers:
        return (f"{CPUSET_ROOT}/cgroup.controllers lists no cpuset ({' '.join(controllers) or 'nothing'}): the "
                "cpuset controller is bound to a cgroup v1 hierarchy here, so no partition can be made")
    if len(os.sched_getaffinity(0)) < 2:
        return "needs 2 CPUs: one isolated, one left to the root"
    return None


class RealPartitionTest(unittest.TestCase):
    def test_an_isolated_partition_of_the_highest_cpu(self):
        why = real_partition_unavailable()
        if why:
            self.skipTest(why)
        cpu = max(os.sched_getaffinity(0))
        control = os.path.join(CPUSET_ROOT, "cgroup.subtree_control")
        with open(control, encoding="ascii") as f:
            had_cpuset = "cpuset" in f.read().split()
        group = os.path.join(CPUSET_ROOT, f"jitterd-test-{os.getpid()}")
        try:
            if not had_cpuset:
                with open(control, "w", encoding="ascii") as f:
                    f.write("+cpuset")
            os.mkdir(group)
            for name, value in (("cpuset.cpus", str(cpu)), ("cpuset.cpus.partition", "isolated")):
                with open(os.path.join(group, name), "w", encoding="ascii") as f:
                    f.write(value)
            with open(os.path.join(group, "cpuset.cpus.partition"), encoding="ascii") as f:
                state = f.read().strip()
            result = harness.run(["report", "posture", "--path.kubelet", "", "--path.cgroupfs", CPUSET_ROOT],
                                 timeout=30)
            name = "/" + os.path.basename(group)
            if state == "isolated":
                self.assertIn(f"  cpuset  {name}: cpus {cpu}\n", result.stdout)
            else:  # the kernel refused it: posture must say so, with its reason
                self.assertIn(f"partition {name} is {state}", result.stdout)
        finally:
            if os.path.isdir(group):
                with open(os.path.join(group, "cpuset.cpus.partition"), "w", encoding="ascii") as f:
                    f.write("member")
                os.rmdir(group)
            if not had_cpuset:
                with open(control, "w", encoding="ascii") as f:
                    f.write("-cpuset")


if __name__ == "__main__":
    harness.main()
