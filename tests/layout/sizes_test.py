#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the sizes of the C and C++ sources in src/ and of the public headers in include/ (the
loop probe library applications include), C files (the BPF program) as well as C++: no file over
450 lines, no function over 80 (docs/DESIGN.md, "Sizes": files of a few hundred lines, functions of
a screen).

A function is found by a brace-depth scan: a `{` at namespace depth (outside any function, class
body aside) whose statement so far ends in a parameter list `)` (and qualifiers, an initializer
list, a trailing return type) opens a function body; its length is the lines from that brace to
the matching `}`. Lambdas and classes inside a function count toward the function; member
functions defined in a class body are measured like free ones. Comments, string and character
literals are blanked before scanning, so braces in them do not count.

EXCEPTIONS name files or functions allowed to be longer, each with its reason in docs/DESIGN.md
("Sizes"); an entry that no longer needs its exception is reported as one to delete.

Usage: sizes_test.py SRC_DIR (include/ is read beside it)
Exit 0 when every file and function fits, 1 naming each one that does not.
"""

import pathlib
import re
import sys

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 80

# The sources read: C++ and C (src/watch/bpf/*.bpf.c and the headers it includes), under src/ and
# include/ (the folder beside src/).
SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".c")
FOLDERS = ("src", "include")

# (path from the source root, as "src/..." or "include/...", function name or None for the whole
# file) -> why (also in docs/DESIGN.md).
EXCEPTIONS: dict = {}  # none today

RAW_STRING = re.compile(r'R"([^(\s]{0,16})\(')


def blanked(text: str) -> str:
    """The text with comments and string/char literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and RAW_STRING.match(text, i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = RAW_STRING.match(text, i)
            end = text.find(")" + m.group(1) + '"', m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i) if c == "'" else '"' + " " * (j - i - 2) + '"')
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


FUNCTION_HEAD = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|&|&&|\s)*"  # qualifiers
    r"(->\s*[\w:<>,\s*&]+)?\s*"  # trailing return type
    r"(:\s*[\w:]+\s*[({][^;]*)?$",  # constructor initializer list
    re.S)
NAME_BEFORE_PARAMS = re.compile(r"([~\w:]+|operator\s*\S+)\s*\($")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas"}


def function_name(head: str):
    """The name of the function whose header is `head` (text from the last ; or } to the {), or None."""
    if not FUNCTION_HEAD.search(head):
        return None
    depth = 0
    for i in range(len(head) - 1, -1, -1):  # the ( matching the last )
        if head[i] == ")":
            depth += 1
        elif head[i] == "(":
            depth -= 1
            if depth == 0:
                m = NAME_BEFORE_PARAMS.search(head[: i + 1])
                if not m:
                    return None
                name = m.group(1)
                if name in NOT_FUNCTIONS or name.split("::")[-1] in NOT_FUNCTIONS:
                    return None
                return name
    return None


def functions(text: str):
    """Yields (name, first line, line count) for each function body found at class or namespace depth."""
    code = blanked(text)
    stack = []  # per open brace: "function", "scope" (namespace, class, enum, initializer), or "inner"
    head_start = 0
    line = 1
    start_line = {}
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == "{":
            inside_function = any(kind == "function" for kind in stack)
            head = code[head_start:i]
            name = None if inside_function else function_name(head.strip())
            if name:
                stack.append("function")
                start_line[len(stack)] = (name, line)
            else:
                stack.append("inner" if inside_function else "scope")
            head_start = i + 1
        elif c == "}":
            if stack:
                kind = stack.pop()
                if kind == "function":
                    name, first = start_line.pop(len(stack) + 1)
                    yield name, first, line - first + 1
            head_start = i + 1
        elif c == ";" or (c == ":" and code[i - 1 : i + 1] != "::" and code[i : i + 2] != "::"
                           and re.search(r"\b(public|private|protected)\s*$", code[head_start:i])):
            head_start = i + 1


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    if not (src / "measure").is_dir():
        print(f"FAIL: {src}: not the source folder (no measure/ in it)", file=sys.stderr)
        return 1
    failed = False
    used = set()
    counted = 0
    root = src.parent
    paths = sorted(path for folder in FOLDERS for path in (root / folder).rglob("*")
                   if path.name.endswith(SUFFIXES) and path.is_file())
    for path in paths:
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines > MAX_FILE_LINES:
            if (relative, None) in EXCEPTIONS:
                used.add((relative, None))
            else:
                failed = True
                print(f"FAIL: {relative}: {lines} lines, over {MAX_FILE_LINES}: split it by meaning")
        for name, first, length in functions(text):
            counted += 1
            if length <= MAX_FUNCTION_LINES:
                continue
            if (relative, name) in EXCEPTIONS:
                used.add((relative, name))
                continue
            failed = True
            print(f"FAIL: {relative}:{first}: {name} is {length} lines, over {MAX_FUNCTION_LINES}: "
                  f"split it into named steps")
    for relative, name in sorted(set(EXCEPTIONS) - used, key=str):
        print(f"note: {relative}{' ' + name if name else ''} fits now: delete its exception from "
              f"{pathlib.Path(__file__).name} and docs/DESIGN.md")
    if counted < 500:
        print(f"FAIL: found only {counted} functions in {src}: the scan is broken")
        return 1
    if not failed:
        print(f"ok: every file in {', '.join(str(root / folder) for folder in FOLDERS)} ({len(paths)} files) is at most {MAX_FILE_LINES} lines and each of its {counted} functions "
              f"at most {MAX_FUNCTION_LINES}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
