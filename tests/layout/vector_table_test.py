#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the x86 APIC vectors jitterd traces are listed once: in JD_X86_VECTORS
(src/host/x86_vectors.h), which the BPF program's handlers, its jd_program entries, the handlers'
and sources' names and causes (src/watch/watch_sources.cpp) and the tracepoints engine's pairs
(src/watch/trace_watch.cpp) expand. A second list of them (a tracepoint name NAME_entry or
NAME_exit, a handler enumerator JD_PROG_STEM_ENTRY, or the source's name as a string) anywhere
else under src/ or include/ fails, naming the file and line. No exception.

The same for the softirq vectors: listed once, in JD_SOFTIRQS (src/host/softirqs.h), which
attribution's cause_of, the decoder's softirq names (trace_format.cpp), the watch's
source names (watch_sources.cpp) and the BPF program's source count expand. A second list (a
softirq's source name "softirq_NAME", or its name as a string) fails the same way; "SCHED" and
"RCU" alone are also timer:tick_stop's dependency names, so only their "softirq_" forms count.

Usage: vector_table_test.py SRC_DIR
Exit 0 when the table is the one list, 1 naming each copy.
"""

import pathlib
import re
import sys

TABLE = "host/x86_vectors.h"
ROW = re.compile(r"^\s*X\((\w+),\s*(\w+),\s*(\w+),\s*(\w+)\)")
SOFTIRQ_TABLE = "host/softirqs.h"
SOFTIRQ_ROW = re.compile(r"^\s*X\((\w+),\s*(\w+)\)")
TICK_DEPENDENCY_NAMES = {"SCHED", "RCU"}


def table(src: pathlib.Path, path=TABLE, macro="JD_X86_VECTORS", row=ROW):
    text = (src / path).read_text(encoding="utf-8")
    start = text.index(f"#define {macro}(X)")
    rows = []
    for line in text[start:].splitlines()[1:]:
        match = row.match(line)
        if not match:
            break
        rows.append(match.groups())
    return rows


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    rows = table(src)
    if len(rows) < 5:
        print(f"FAIL: src/{TABLE}: JD_X86_VECTORS lists {len(rows)} vectors; expected the x86 APIC vectors")
        return 1
    softirqs = table(src, SOFTIRQ_TABLE, "JD_SOFTIRQS", SOFTIRQ_ROW)
    if len(softirqs) < 10:
        print(f"FAIL: src/{SOFTIRQ_TABLE}: JD_SOFTIRQS lists {len(softirqs)} vectors; expected the kernel's 10")
        return 1
    patterns = []
    for event, stem, _, _ in rows:
        patterns.append((re.compile(rf"\b{event}_(entry|exit)\b"), TABLE, "JD_X86_VECTORS", "x86 vectors"))
        patterns.append((re.compile(rf"\bJD_PROG_{stem}_(ENTRY|EXIT)\b"), TABLE, "JD_X86_VECTORS", "x86 vectors"))
        patterns.append((re.compile(rf'"{event}"'), TABLE, "JD_X86_VECTORS", "x86 vectors"))
    for name, _ in softirqs:
        forms = [f"softirq_{name}"] + ([] if name in TICK_DEPENDENCY_NAMES else [name])
        for form in forms:
            patterns.append((re.compile(rf'"{form}"'), SOFTIRQ_TABLE, "JD_SOFTIRQS", "softirq vectors"))
    failed = False
    files = sorted(list(src.rglob("*")) + list((src.parent / "include").rglob("*")))
    for path in files:
        if path.suffix not in (".h", ".hpp", ".cpp", ".cc", ".c") or not path.is_file():
            continue
        relative = path.relative_to(src).as_posix() if src in path.parents else path.as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            code = line.split("//")[0]
            for pattern, home, macro, what in patterns:
                if relative == home:
                    continue
                found = pattern.search(code)
                if found:
                    failed = True
                    print(f"FAIL: src/{relative}:{number}: {found.group(0)}: a second list of the {what} "
                          f"(they are listed once, in src/{home} {macro})")
    if not failed:
        print(f"ok: the {len(rows)} x86 vectors are listed once, in src/{TABLE}; "
              f"the {len(softirqs)} softirq vectors once, in src/{SOFTIRQ_TABLE}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
