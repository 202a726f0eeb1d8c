#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documentation holds together: README.md is a front door of at most 400 lines that links
every page of docs/ and CHANGELOG.md, and no relative link or #anchor in README.md, CHANGELOG.md or docs/*.md is
dead (anchors as GitHub makes them from headings). Also: every metric family of the golden scrape
(tests/golden/metrics.prom) is in docs/metrics.md's tables, and every metric those tables name is
one the source exports, so a metric missing from the reference, or one that no longer exists,
fails here (integration_metrics checks a real scrape the same way).

Usage: docs_test.py SOURCE_DIR. Exit 0 pass, 1 fail.
"""
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

README_MAX_LINES = 400


def strip_code(text):
    """Markdown text without fenced code blocks and inline code spans (links there are not links)."""
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`+[^`]*`+", "``", line))
    return "\n".join(out)


def heading_anchor(title):
    """GitHub's anchor for a heading: the text without markup, lowercased, punctuation but '-' and
    '_' dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_|_(?!\w)", "", text)  # _emphasis_, not snake_case
    text = text.strip().lower()
    kept = "".join(c for c in text
                   if c in " -_" or unicodedata.category(c)[0] in ("L", "N") or unicodedata.category(c) == "Mn")
    return kept.replace(" ", "-")


def anchors(path):
    """Every anchor a Markdown file defines: its headings' (with -1, -2 for repeats) and any
    explicit <a name|id="...">."""
    result, seen = set(), {}
    text = path.read_text(encoding="utf-8")
    fence = None
    for line in text.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            fence = m.group(1)[:3] if fence is None else (None if m.group(1).startswith(fence) else fence)
            continue
        if fence:
            continue
        h = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            base = heading_anchor(h.group(1))
            n = seen.get(base, -1) + 1
            seen[base] = n
            result.add(base if n == 0 else f"{base}-{n}")
    result |= set(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
    return result


def links(text):
    """(line number, target) of every inline Markdown link and image outside code."""
    found = []
    for n, line in enumerate(strip_code(text).splitlines(), 1):
        found += [(n, m.group(1)) for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", line)]
    # A link whose text wraps onto the next line: join pairs of lines to catch it too.
    lines = strip_code(text).splitlines()
    for n in range(len(lines) - 1):
        joined = lines[n] + " " + lines[n + 1]
        for m in re.finditer(r"\[[^\]]*\n?[^\]]*\]\(\s*([^)\s]+)\s*\)", joined):
            if m.start() < len(lines[n]) < m.end() and (n + 1, m.group(1)) not in found:
                found.append((n + 1, m.group(1)))
    return found


def check_links(src, page, failures, anchor_cache):
    text = page.read_text(encoding="utf-8")
    count = 0
    for line, target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        count += 1
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / unquote(path_part)).resolve() if path_part else page.resolve()
        where = f"{page.relative_to(src)}:{line}: {target}"
        if not dest.exists():
            failures.append(f"{where}: no such file {dest.relative_to(src) if dest.is_relative_to(src) else dest}")
            continue
        if not dest.is_relative_to(src):
            failures.append(f"{where}: points outside the repository")
            continue
        if fragment:
            if dest.suffix != ".md":
                continue  # #L12 into source files: not checked
            if dest not in anchor_cache:
                anchor_cache[dest] = anchors(dest)
            if unquote(fragment) not in anchor_cache[dest]:
                failures.append(f"{where}: {dest.relative_to(src)} has no heading with the anchor #{fragment}")
    return count


def metric_names(reference):
    names = set()
    for line in reference.splitlines():
        if line.startswith("| `jitterd_"):
            names |= set(re.findall(r"`(jitterd_[a-z0-9_]+)`", line.split("|")[1]))
    return names


def check_metrics(src, failures):
    documented = metric_names((src / "docs/metrics.md").read_text(encoding="utf-8"))
    golden = set(re.findall(r"^# TYPE (\S+)", (src / "tests/golden/metrics.prom").read_text(), re.M))
    for name in sorted(golden - documented):
        failures.append(f"docs/metrics.md: {name} is in tests/golden/metrics.prom but not in the reference")
    source = "\n".join(p.read_text(encoding="utf-8") for p in (src / "src").rglob("*.cpp"))
    for name in sorted(documented - golden):
        if f'"{name}"' not in source and f'"{name[len("jitterd_"):]}"' not in source:
            failures.append(f"docs/metrics.md documents {name}, which no file under src/ exports")
    return len(documented), len(golden)


def main():
    src = Path(sys.argv[1]).resolve()
    failures = []
    readme = src / "README.md"
    readme_text = readme.read_text(encoding="utf-8")
    n = len(readme_text.splitlines())
    if n > README_MAX_LINES:
        failures.append(f"README.md has {n} lines, more than {README_MAX_LINES}: move the detail to docs/")
    pages = sorted((src / "docs").glob("*.md"))
    linked = {(readme.parent / t.partition("#")[0]).resolve() for _, t in links(readme_text)}
    for page in [*pages, src / "CHANGELOG.md"]:
        if page.resolve() not in linked:
            failures.append(f"README.md does not link {page.relative_to(src)} (its map of the documentation must)")
    anchor_cache, count = {}, 0
    for page in [readme, src / "CHANGELOG.md", *pages]:
        count += check_links(src, page, failures, anchor_cache)
    documented, golden = check_metrics(src, failures)
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if not failures:
        print(f"ok: README.md {n} lines, links all {len(pages)} pages of docs/; {count} relative links "
              f"resolve; {documented} metrics in docs/metrics.md cover the golden scrape's {golden}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
