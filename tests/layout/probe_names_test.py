#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that no code in src/ outside probes/ and config/ names a probe: a probe's facts (whether a
baseline or `report` runs it, its plan check, compare's allowances and row conditions, how its
tables render) sit beside its registry entry (src/probes/probe_registry.cpp), and the layers above
ask the registry instead of testing a name (docs/DESIGN.md, "Where new work goes").

The names are read from the registry's entries (entry<...>("name", ...)), so a new probe is
covered as soon as it is listed. A name in a comment is allowed; one as a string literal in code
(a comparison, a lookup, a table keyed by it) is not. config/ maps the YAML keys to the settings
types by name, and probes/ is where the names live. A document's key that happens to spell a
probe's name (the baseline file's and /status.json's "loops") is marked on its line by a comment
saying "(JSON key)".

Usage: probe_names_test.py SRC_DIR
Exit 0 when no such literal is found, 1 naming each file, line and name.
"""

import pathlib
import re
import sys

ALLOWED_FOLDERS = ("probes", "config")
ENTRY = re.compile(r'entry<[^>]*>\(\s*"([a-z0-9_]+)"')

# Uses present when this check was added, each to be removed by a branch in flight: reported but
# not failing, and an entry that no longer matches is reported as one to delete.
# export/status_page.cpp fingerprint_of reads the posture probe's exported fingerprint metric; the
# baseline-recorder work takes the fingerprint from the posture probe's typed result instead.
KNOWN: set = set()  # none left: the live baseline takes the posture probe's typed reading


def code_of(line: str) -> str:
    """The line without its // comment (a // inside a string literal is kept)."""
    in_string = False
    i = 0
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def probe_names(src: pathlib.Path):
    return sorted(set(ENTRY.findall((src / "probes" / "probe_registry.cpp").read_text(encoding="utf-8"))))


def findings(src: pathlib.Path, names):
    literal = re.compile(r'"(' + "|".join(map(re.escape, names)) + r')"')
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".hpp", ".cpp", ".cc") or not path.is_file():
            continue
        relative = path.relative_to(src).as_posix()
        if relative.split("/")[0] in ALLOWED_FOLDERS:
            continue
        in_block_comment = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if in_block_comment:
                if "*/" not in line:
                    continue
                line = line[line.index("*/") + 2:]
                in_block_comment = False
            if "/*" in line and "*/" not in line[line.index("/*"):]:
                in_block_comment = True
                line = line[:line.index("/*")]
            if "(JSON key)" in line[len(code_of(line)):]:
                continue
            for match in literal.finditer(code_of(line)):
                yield relative, number, match.group(1)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    if not (src / "probes" / "probe_registry.cpp").is_file():
        print(f"FAIL: {src}: not the source folder (no probes/probe_registry.cpp in it)", file=sys.stderr)
        return 1
    names = probe_names(src)
    if len(names) < 2:
        print(f"FAIL: read {len(names)} probe names from the registry: has its entry<...>(\"name\") form changed?",
              file=sys.stderr)
        return 1
    failed = False
    seen_known = set()
    for relative, number, name in findings(src, names):
        if (relative, name) in KNOWN:
            seen_known.add((relative, name))
            print(f"known: src/{relative}:{number}: names the probe \"{name}\" (to be removed)")
            continue
        failed = True
        print(f"FAIL: src/{relative}:{number}: names the probe \"{name}\" in code: put the fact in the probe's "
              f"registry entry (src/probes/probe_registry.cpp) and ask the registry")
    for relative, name in sorted(KNOWN - seen_known):
        print(f"note: src/{relative} no longer names \"{name}\": delete it from KNOWN in {pathlib.Path(__file__).name}")
    if not failed:
        print(f"ok: no code outside {' and '.join(f + '/' for f in ALLOWED_FOLDERS)} names one of the "
              f"{len(names)} probes ({', '.join(names)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
