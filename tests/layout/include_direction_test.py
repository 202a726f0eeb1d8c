#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the direction of includes in src/: a folder may include only itself and the folders
below it, and the lowest folders see no third-party library.

Order, lowest first: measure, host, watch, loops, probes, config, sampling, report, compare, fleet, export,
daemon, cli
(docs/DESIGN.md, "Layers"). main.cpp may include anything. measure/, host/, watch/, loops/ and probes/ include none of
the libraries that only the folders above them may use (prometheus-cpp, yaml-cpp, spdlog,
libsystemd, CLI11, nlohmann-json, fmt, libmicrohttpd, GnuTLS, zlib, libcurl), and libcurl is seen
in compare/ only (its Prometheus client, compare --prometheus, is its one user; cli/ no longer
sees it).

The public headers of include/ (include/jitterd/loop_probe.h, which applications include, and its
parts loop_probe_*.h) include only system headers (<...>): they are below every folder of src/,
which may include them as "jitterd/..." (measure/ excepted: the standard library only).

Usage: include_direction_test.py SRC_DIR
Exit 0 when every include points down, 1 naming each file, line and include that does not.
"""

import pathlib
import re
import sys

ORDER = ["measure", "host", "watch", "loops", "probes", "config", "sampling", "report", "compare", "fleet", "export", "daemon", "cli"]
RANK = {folder: rank for rank, folder in enumerate(ORDER)}

# Folders that see only the standard library and the system (POSIX, Linux, compiler) headers.
LIBRARY_FREE = {"measure", "host", "watch", "loops", "probes"}
LIBRARY_PREFIXES = ("prometheus/", "yaml-cpp/", "spdlog/", "systemd/", "CLI/", "nlohmann/", "fmt/")
LIBRARY_HEADERS = ("microhttpd.h", "zlib.h")
LIBRARY_PREFIXES += ("gnutls/", "curl/")
# Libraries one folder alone may use.
OWNED_PREFIXES = {"curl/": "compare"}

# Back edges present when this check was added, each still to be removed: they are reported but
# do not fail the check. Any other back edge fails it, so the list can only shrink; an entry that
# no longer matches anything is reported as one to delete (branches removing these edges are in
# flight, and merging one must not fail this check).
KNOWN_BACK_EDGES: set = set()  # all removed: the registry moved to probes/, the plan takes a Config

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def violations(src: pathlib.Path):
    """Yields (relative file, line number, include, why) for every include that breaks a rule."""
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".hpp", ".cpp", ".cc") or not path.is_file():
            continue
        relative = path.relative_to(src).as_posix()
        if relative == "main.cpp":
            continue
        folder = relative.split("/")[0] if "/" in relative else ""
        if folder not in RANK:
            yield relative, 0, "", f"'{folder or '.'}' is not in the layer order {' -> '.join(ORDER)}"
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            bracket, name = match.groups()
            if bracket == '"' and "/" in name:
                target = name.split("/")[0]
                if target in RANK and RANK[target] > RANK[folder]:
                    yield relative, number, name, f"{target}/ is above {folder}/"
                elif target not in RANK and (src / target).is_dir():
                    yield relative, number, name, f"{target}/ is not in the layer order"
            if name.startswith("jitterd/") and folder == "measure":
                yield relative, number, name, "measure/ sees the standard library only"
            if folder in LIBRARY_FREE and (name.startswith(LIBRARY_PREFIXES) or name in LIBRARY_HEADERS):
                yield relative, number, name, f"{folder}/ uses no third-party library"
            for prefix, owner in OWNED_PREFIXES.items():
                if name.startswith(prefix) and folder != owner:
                    yield relative, number, name, f"{prefix} is used by {owner}/ only"


def public_header_violations(include: pathlib.Path):
    """Yields (file, line number, include, why) for a public header that includes anything but a
    system header."""
    for path in sorted(include.rglob("*.h")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = INCLUDE.match(line)
            if match and match.group(1) == '"':
                yield f"../include/{path.relative_to(include).as_posix()}", number, match.group(2), \
                    "a public header includes system headers only"


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    if not (src / "measure").is_dir():
        print(f"FAIL: {src}: not the source folder (no measure/ in it)", file=sys.stderr)
        return 1
    failed = False
    seen_known = set()
    for relative, number, name, why in violations(src):
        if (relative, name) in KNOWN_BACK_EDGES:
            seen_known.add((relative, name))
            print(f"known: src/{relative}:{number}: includes {name}: {why} (a known back edge, to be removed)")
            continue
        failed = True
        where = f"src/{relative}:{number}" if number else f"src/{relative}"
        print(f"FAIL: {where}: includes {name}: {why}" if name else f"FAIL: {where}: {why}")
    for relative, number, name, why in public_header_violations(src.parent / "include"):
        failed = True
        print(f"FAIL: src/{relative}:{number}: includes {name}: {why}")
    for relative, name in sorted(KNOWN_BACK_EDGES - seen_known):
        print(f"note: the known back edge src/{relative} -> {name} is gone: "
              f"delete it from KNOWN_BACK_EDGES in {pathlib.Path(__file__).name}")
    if not failed:
        known = f", but for the {len(seen_known)} known back edges above" if seen_known else ""
        print(f"ok: every include in {src} points down {' -> '.join(reversed(ORDER))}{known}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
