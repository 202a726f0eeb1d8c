#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of the tree says its licence in its first lines: `SPDX-License-Identifier:
Apache-2.0` (the project's licence, LICENSE), as `// ...` in C and C++ and `# ...` in Python, shell
and CMake, after a `#!` line where there is one. Data (tests/fixtures, tests/golden) and generated
files (grafana/dashboards, grafana/prometheus) carry none.

Usage: spdx_test.py SOURCE_DIR. Exit 0 when every file has it, 1 naming each one that does not.
"""

import os
import sys

LINE = "SPDX-License-Identifier: Apache-2.0"
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
                head = [f.readline() for _ in range(3)]
            if not any(LINE in line for line in head):
                missing.append(relative)
    for relative in sorted(missing):
        print(f"FAIL: {relative}: no '{LINE}' in its first lines", file=sys.stderr)
    if missing:
        return 1
    print(f"ok: {checked} source files say {LINE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
