# SPDX-License-Identifier: Apache-2.0
"""The set-up the watch's fidelity tests share (watch_test, watch_identity_test,
top_preempters_test, preempted_wait_test): their tools on the command line, what they need of the
machine, the daemon's configuration, RT throttling turned off while their SCHED_FIFO application
holds the watched CPU (and restored after), that application (busy_app) started and seen running,
the injector's run and the kernel's count of the application's involuntary switches. The
standard library and the integration tests' harness only."""

import argparse
import os
import subprocess
import sys

import harness

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


def start_poll_loop(test, poll_loop, name, cpu, loops):
    """The example poll loop (examples/loop_probe/poll_loop) named `name` on `cpu` at SCHED_FIFO 10,
    its segment in the folder `loops`, killed when `test` cleans up; returned once the segment is
    there. `test` fails, saying what the loop said, when it exits first."""
    env = dict(os.environ, JITTERD_LOOP_DIR=loops)
    loop = subprocess.Popen(["chrt", "-f", "10", poll_loop, name, str(cpu), "0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    test.addCleanup(lambda: (loop.poll() is None and loop.kill(), loop.wait(10), loop.stderr.close()))
    segment = os.path.join(loops, f"jitterd-loop.{name}")
    harness.wait_until(lambda: os.path.exists(segment) or loop.poll() is not None, 10, what="the loop's segment")
    if loop.poll() is not None:
        test.fail(f"the loop exited {loop.returncode}: {loop.stderr.read()}")
    return loop


def tools():
    """(noise_injector, busy_app) from --injector and --app; the rest of the command line is
    unittest's."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--injector", required=True)
    parser.add_argument("--app", required=True)
    args, rest = parser.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    return args.injector, args.app


def watch_config(cpu, method, interval, outlier_threshold=None, tasks="busyapp*", application="", sections=""):
    """The daemon of these tests: no sampled CPU, its web server on a free port, the application's
    `tasks` (and `application` lines more of that section), a watch of `cpu` by `method` every
    `interval` (outliers from `outlier_threshold` where given), `sections` more, every probe off
    but the watch."""
    threshold = f"  outlier_threshold: {outlier_threshold}\n" if outlier_threshold else ""
    return (f'cpus: []\n{sections}web:\n  listen_address: "127.0.0.1:0"\n'
            f'application:\n  tasks: ["{tasks}"]\n{application}'
            f'watch:\n  cpus: "{cpu}"\n  method: {method}\n  interval: {interval}\n{threshold}'
            f"{harness.PROBES_OFF}")


def involuntary_switches(pid):
    """The kernel's count of involuntary switches of thread `pid` (its task's status)."""
    with open(f"/proc/{pid}/task/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("nonvoluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError(f"no nonvoluntary_ctxt_switches in /proc/{pid}/task/{pid}/status")


def inject(test, injector, cpu, count, spin_us, period_us):
    """noise_injector at SCHED_FIFO 50 on `cpu`: `count` spins of `spin_us` every `period_us`, to
    its end; its lines (deadline, spin start, spin end in counter ticks), one per injection. `test`
    skips where the injector cannot run and fails where it failed."""
    result = subprocess.run([injector, "--cpu", str(cpu), "--priority", "50", "--period", f"{period_us}us",
                             "--spin", f"{spin_us}us", "--count", str(count)],
                            capture_output=True, text=True, timeout=count * period_us / 1e6 + 30)
    if result.returncode == harness.SKIP:
        test.skipTest(f"noise_injector: {result.stderr.strip()}")
    test.assertEqual(result.returncode, 0, result.stderr)
    lines = [tuple(int(x) for x in line.split()) for line in result.stdout.splitlines()]
    test.assertEqual(len(lines), count, "one line per injection")
    return lines
