# SPDX-License-Identifier: Apache-2.0
"""The set-up the watch's fidelity tests share (watch_test, watch_identity_test,
top_preempters_test): what they need of the machine, RT throttling turned off while their
SCHED_FIFO application holds the watched CPU (and restored after), and that application
(busy_app) started and seen running. Python standard library only."""

import os
import subprocess

RT_RUNTIME = "/proc/sys/kernel/sched_rt_runtime_us"


def missing(cpu, root_why, tracefs=None):
    """Why the test cannot run here (root, tracefs when given, a writable RT_RUNTIME, `cpu` and one
    more CPU for the daemon), or None."""
    if os.geteuid() != 0:
        return f"needs root: {root_why}"
    if tracefs is not None and not os.path.isdir(f"{tracefs}/instances"):
        return f"needs tracefs at {tracefs}: the kernel's tracer is the ground truth of the preemptions"
    if not os.access(RT_RUNTIME, os.W_OK):
        return f"needs a writable {RT_RUNTIME} (RT throttling is turned off for the test)"
    if cpu not in os.sched_getaffinity(0) or len(os.sched_getaffinity(0)) < 2:
        return f"needs cpu {cpu} and one more CPU for the daemon"
    return None


def write_rt_runtime(value):
    with open(RT_RUNTIME, "w", encoding="ascii") as f:
        f.write(f"{value}\n")


def restore_rt_runtime_after(test):
    """The RT throttling of now, put back when `test` (a unittest.TestCase) cleans up."""
    with open(RT_RUNTIME, encoding="ascii") as f:
        saved = f.read().strip()
    test.addCleanup(write_rt_runtime, saved)


def unthrottle():
    """RT throttling off: the application, started first, keeps its CPU without the kernel's pause."""
    write_rt_runtime(-1)


def start_busy_app(test, args, what="busy_app"):
    """busy_app (or its impostor mode) with `args`, killed at cleanup; `test` skips, saying what
    busy_app said, when it does not report running."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    test.addCleanup(lambda: (process.kill(), process.wait(), process.stderr.close()))
    line = process.stderr.readline().strip()
    if line != "busy_app: running":
        test.skipTest(f"{what}: {line}")
    return process
