#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/tutorial.md as a user follows it: its ```sh blocks, in order, run by one bash as written
(set -euo pipefail), with J the build folder and PORT a free loopback port instead of 9978. The
tutorial starts the example loop on CPU 1, a daemon watching it, injects a task named `disturber`
that preempts the loop 500 times a second, and greps `jitterd report watch --from` for it: the
script must finish with status 0 (every command, that grep included), and the disturbed report
must name `disturber` in a row of a top-preempters table over the daemon's window.

Usage: tutorial_test.py --jitterd BINARY
Exit 77 (skip) without root (the disturber runs SCHED_FIFO), without CPU 1 and one more CPU, or
when the watch can only count here (no BPF program, no tracefs): then nothing names a preempter.
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile

SOURCE_DIR = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TUTORIAL = os.path.join(SOURCE_DIR, "docs", "tutorial.md")
BLOCK_RE = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def skip(reason):
    print(f"SKIP: {reason}", file=sys.stderr)
    sys.exit(77)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    args = parser.parse_args()
    if os.geteuid() != 0:
        skip("needs root: the tutorial's disturber runs SCHED_FIFO")
    if 1 not in os.sched_getaffinity(0) or len(os.sched_getaffinity(0)) < 2:
        skip("needs cpu 1 (the tutorial's isolated CPU) and one more CPU for jitterd")
    blocks = BLOCK_RE.findall(open(TUTORIAL, encoding="utf-8").read())
    if len(blocks) < 6:
        print(f"FAIL: {TUTORIAL}: {len(blocks)} sh blocks, the tutorial has at least 6", file=sys.stderr)
        return 1
    build = os.path.dirname(os.path.realpath(args.jitterd))
    # Whatever the script leaves running when it fails (a loop spinning on CPU 1, the daemon, the
    # disturber) is killed with its process group.
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(blocks)
    out_dir = tempfile.mkdtemp(prefix="jitterd_tutorial_")
    with open(os.path.join(out_dir, "tutorial.sh"), "w") as f:
        f.write(script)
    env = dict(os.environ, J=build, PORT=str(free_port()))
    process = subprocess.Popen(["bash", os.path.join(out_dir, "tutorial.sh")], cwd=SOURCE_DIR, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        print(output[-6000:])
        print("FAIL: the tutorial did not finish within 240 s", file=sys.stderr)
        return 1
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print(output[-8000:])
    if process.returncode != 0 and 'method="counts"' in output:
        skip("the watch reads counts here (no BPF program, no tracefs): it cannot name who preempted the loop, "
             "which the tutorial's last step greps for")
    if process.returncode != 0:
        print(f"FAIL: the tutorial's commands exited {process.returncode} (script: {out_dir}/tutorial.sh)",
              file=sys.stderr)
        return 1
    # A row of a top-preempters table over the daemon's window (the watched CPU's or the loop's):
    # the disturber named after the latest outliers could have scrolled it away.
    named = [line for line in output.splitlines() if re.search(r"\bwindow\s+disturber\b", line)]
    if not named:
        print("FAIL: no top-preempters row over the window names the disturber", file=sys.stderr)
        return 1
    print(f"ok: the tutorial ran as written; the disturbed report names the disturber: {named[0].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
