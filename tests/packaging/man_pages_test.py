#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The man pages and the references they are generated from cannot disagree.

jitterd(8) is generated from the binary's --help, jitterd-VERB(8) from the verb's section of
docs/command-line.md and its --help, and jitterd.yaml(5) from docs/configuration.md
(packaging/man/jitterd_man.py). This test checks the links of that chain:

1. the pages in the build (jitterd(8), jitterd-VERB(8) for every verb --help lists, jitterd.yaml(5))
   are what the generator makes now from this binary and docs/ (so an installed page is never
   stale), and man(1) renders each without a warning;
2. every flag some verb's --help lists is in jitterd(8), in that verb's page and in
   docs/command-line.md's flag table, and every flag of that table is one the binary lists (the
   Command line page agrees with --help);
3. every key of docs/configuration.md's table (hence of jitterd.yaml(5)) is a key of the annotated
   config/jitterd.yaml or of its commented `expect:` example, and every key of those is in the
   table; and the binary's check-config accepts that file with the example switched on, so every
   key the page documents is one the binary reads.

Usage: man_pages_test.py --jitterd BIN --source-dir DIR --man-dir BUILD/man --version V
Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def flags_in_help(text):
    """The long flags of a CLI11 help's Options block."""
    block = text.split("Options:", 1)[1] if "Options:" in text else ""
    block = block.split("Subcommands:", 1)[0]
    return set(re.findall(r"^\s+(?:-\w,)?(--[\w.-]+)", block, re.M))


def documented_flags(page):
    """The flags of docs/command-line.md's flag table (its first column)."""
    section = page
    flags = set()
    for line in section.splitlines():
        if line.startswith("| `--"):
            first = line.split("|")[1]
            flags |= set(re.findall(r"`(--[\w.-]+)", first))
    return flags


def documented_keys(page, probes, literal=False):
    """The keys of docs/configuration.md's table; probes.<probe>.x expanded unless literal."""
    section = page
    keys = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        for key in re.findall(r"`([a-z0-9_.<>]+)`", line.split("|")[1]):
            if "<probe>" in key and not literal:
                keys |= {key.replace("<probe>", p) for p in probes}
            else:
                keys.add(key)
    return keys


def yaml_keys(text):
    """Leaf keys of a block-style YAML document, dotted (indentation by two spaces)."""
    keys, stack = set(), []
    for line in text.splitlines():
        m = re.match(r"^( *)([a-z0-9_]+):(.*)$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        stack = stack[:depth] + [m.group(2)]
        value = m.group(3).split("#", 1)[0].strip()
        if value:
            keys.add(".".join(stack))
    return keys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--man-dir", required=True)
    parser.add_argument("--version", required=True)
    args = parser.parse_args()
    src = Path(args.source_dir)
    command_line = (src / "docs/command-line.md").read_text(encoding="utf-8")
    configuration = (src / "docs/configuration.md").read_text(encoding="utf-8")

    def helptext(*verb):
        return subprocess.run([args.jitterd, *verb, "--help"], capture_output=True, text=True, check=True).stdout

    top = helptext()
    verbs = re.findall(r"^  ([a-z][a-z-]*)\s{2,}", top.split("Subcommands:", 1)[1], re.M)
    if not verbs:
        fail("jitterd --help lists no subcommands")
    pages = ["jitterd.8", *(f"jitterd-{verb}.8" for verb in verbs), "jitterd.yaml.5"]

    # 1. The built pages are current (one per verb --help lists: cmake/jitterd_install.cmake's
    #    JITTERD_VERBS), and man renders each cleanly.
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(src / "packaging/man/jitterd_man.py"), "--jitterd", args.jitterd,
                        "--docs", str(src / "docs"), "--version", args.version, "--out-dir", tmp], check=True)
        for page in pages:
            built = Path(args.man_dir) / page
            fresh = Path(tmp) / page
            if not fresh.exists():
                fail(f"{page}: packaging/man/jitterd_man.py did not make it")
            elif not built.exists():
                fail(f"{built}: not built (the jitterd_man target; a new verb goes into JITTERD_VERBS)")
            elif built.read_text() != fresh.read_text():
                fail(f"{built} differs from what packaging/man/jitterd_man.py generates now: rebuild")
        if shutil.which("man"):
            for page in pages:
                r = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", str(Path(tmp) / page)],
                                   capture_output=True, text=True, env={"MANWIDTH": "80", "LC_ALL": "C.UTF-8",
                                                                         "PATH": "/usr/bin:/bin"})
                if r.returncode != 0 or r.stderr.strip():
                    fail(f"man --warnings {page}: rc {r.returncode}: {r.stderr.strip()}")
                else:
                    print(f"ok: man renders {page} without warnings ({len(r.stdout.splitlines())} lines)")
        else:
            print("note: man(1) not installed; the pages' rendering is not checked", file=sys.stderr)
        page8 = (Path(tmp) / "jitterd.8").read_text()
        verb_pages = {verb: (Path(tmp) / f"jitterd-{verb}.8").read_text() for verb in verbs}
        page5 = (Path(tmp) / "jitterd.yaml.5").read_text()

    # 2. Flags: --help, jitterd(8) and docs/command-line.md's flag table.
    help_flags = set(flags_in_help(top))
    for verb in verbs:
        verb_flags = flags_in_help(helptext(verb))
        help_flags |= verb_flags
        for flag in sorted(verb_flags - {"--help"}):
            if flag.replace("-", "\\-") not in verb_pages[verb]:
                fail(f"jitterd-{verb}(8) does not mention {flag}, which jitterd {verb} --help lists")
    for flag in sorted(help_flags):
        if flag.replace("-", "\\-") not in page8:
            fail(f"jitterd(8) does not mention {flag}, which --help lists")
    documented = documented_flags(command_line)
    for flag in sorted(help_flags - documented):
        fail(f"docs/command-line.md's flag table lacks {flag}, which --help lists")
    for flag in sorted(documented - help_flags):
        fail(f"docs/command-line.md's flag table documents {flag}, which no verb's --help lists")
    print(f"ok: {len(help_flags)} flags of {len(verbs)} verbs checked against jitterd(8) and docs/command-line.md")

    # 3. Keys: docs/configuration.md's table (jitterd.yaml(5)) against the annotated configuration and the binary.
    config = (src / "config/jitterd.yaml").read_text()
    # The sections that are off unless written (expect:, application:, watch:, loops:) are commented
    # example blocks in the shipped file: their keys count as the file's.
    expect_yaml = ""
    for section in ("expect", "application", "watch", "loops"):
        example = re.search(rf"^# {section}:\n((?:#   .*\n)+)", config, re.M)
        if not example:
            fail(f"config/jitterd.yaml: no commented `# {section}:` example block")
            return
        expect_yaml += f"{section}:\n" + "".join(l[1:] + "\n" for l in example.group(1).splitlines())
    probes = re.findall(r"^  ([a-z0-9_]+):\s*$", config.split("\nprobes:", 1)[1].split("\n# ", 1)[0], re.M)
    file_keys = yaml_keys(config) | yaml_keys(expect_yaml)
    table_keys = documented_keys(configuration, probes)
    for key in sorted(table_keys - file_keys):
        fail(f"docs/configuration.md's table (jitterd.yaml(5)) documents {key}, which config/jitterd.yaml does not have")
    for key in sorted(file_keys - table_keys):
        fail(f"config/jitterd.yaml has {key}, which docs/configuration.md's table (jitterd.yaml(5)) lacks")
    for key in sorted(documented_keys(configuration, probes, literal=True)):
        if ("\\fB" + key.replace("-", "\\-") + "\\fR") not in page5:
            fail(f"jitterd.yaml(5) has no entry for {key}")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as full:
        full.write(config + "\n" + expect_yaml)
        full.flush()
        r = subprocess.run([args.jitterd, "check-config", "--config", full.name,
                            "--path.sysfs", str(src / "tests/fixtures/tuned_server/sys"),
                            "--path.procfs", str(src / "tests/fixtures/tuned_server/proc")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"jitterd check-config on config/jitterd.yaml with its expect: example: rc {r.returncode}: "
                 f"{(r.stdout + r.stderr).strip()}")
    print(f"ok: {len(table_keys)} configuration keys: docs/configuration.md = config/jitterd.yaml, and check-config knows each")


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
