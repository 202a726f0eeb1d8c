#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the tree says its licence in its first lines: `SPDX-License-Identifier:
Apache-2.0` (the project's licence, LICENSE), as `// ...` in C and C++ and `# ...` in Python, shell
and CMake, after a `#!` line where there is one. Data (tests/fixtures, tests/golden) and generated
files (grafana/dashboards, grafana/prometheus) carry none. The one exception is the BPF program's
folder, src/watch/bpf/: the kernel lets only GPL-compatible programs call its tracing helpers, so
its files say `Apache-2.0 OR GPL-2.0-only` and each *.bpf.c declares SEC("license") = "GPL"; so do
the headers outside it that the program includes (src/host/x86_vectors.h and src/host/softirqs.h,
the interrupt vectors' tables);
no other file may say anything but Apache-2.0.

Usage: spdx_test.py SOURCE_DIR. Exit 0 when every file has it, 1 naming each one that does not.
"""

import os
import sys

LINE = "SPDX-License-Identifier: Apache-2.0"
DUAL_LINE = "SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only"
DUAL_DIR = "src/watch/bpf/"
DUAL_FILES = {"src/host/x86_vectors.h", "src/host/softirqs.h"}  # outside DUAL_DIR, compiled into the BPF program too
BPF_LICENCE = 'SEC("license") = "GPL";'
SKIPPED_DIRS = {".git", "__pycache__", "node_modules"}
SKIPPED_PREFIXES = ("build", "tests/fixtures", "tests/golden", "grafana/dashboards", "grafana/prometheus",
                    "tests/browser/screenshots")
SUFFIXES = (".cpp", ".h", ".c", ".py", ".sh", ".cmake")


def wanted(relative):
    name = os.path.basename(relative)
    return name.endswith(SUFFIXES) or name == "CMakeLists.txt" or relative == ".ci/run"


def main():
    root = sys.argv[1]
    missing, checked = [], 0
    for directory, dirs, files in os.walk(root):
        relative_dir = os.path.relpath(directory, root)
        relative_dir = "" if relative_dir == "." else relative_dir + "/"
        # Hidden folders are not the project's (a local .devrun, .venv), except .ci.
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and (d == ".ci" or not d.startswith("."))
                   and not (relative_dir + d).startswith(SKIPPED_PREFIXES)]
        for name in files:
            relative = relative_dir + name
            if not wanted(relative) or relative.startswith(SKIPPED_PREFIXES):
                continue
            checked += 1
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
            head = text.splitlines()[:3]
            wanted_line = DUAL_LINE if relative.startswith(DUAL_DIR) or relative in DUAL_FILES else LINE
            if not any(line.rstrip().endswith(wanted_line) for line in head):
                missing.append(f"{relative}: no '{wanted_line}' in its first lines")
            elif relative.endswith(".bpf.c") and BPF_LICENCE not in text:
                missing.append(f"{relative}: no {BPF_LICENCE} for the kernel")
    for problem in sorted(missing):
        print(f"FAIL: {problem}", file=sys.stderr)
    if missing:
        return 1
    print(f"ok: {checked} source files say {LINE} (those of {DUAL_DIR}: {DUAL_LINE})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
