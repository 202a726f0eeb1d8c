#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""promtool on grafana/prometheus/: `check rules` must be clean (no warnings either) and
`test rules` must pass for every test file under grafana/prometheus/tests/ (every alert has a
case that fires it and one that must not), a generated one (make_X_test.py) being what it writes; every alert has a runbook entry in docs/dashboards-and-alerts.md.

Usage: promtool_rules_test.py; exit 77 (skip) without promtool (Debian's prometheus package).
"""

import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grafana_common as common  # noqa: E402


def main():
    promtool = shutil.which("promtool")
    if promtool is None:
        common.harness.skip_script("promtool not found (install the prometheus package)")
    check = subprocess.run([promtool, "check", "rules", common.RULES_FILE], capture_output=True, text=True)
    print(check.stdout + check.stderr)
    if check.returncode != 0 or "WARNING" in (check.stdout + check.stderr).upper():
        print("FAIL: promtool check rules", file=sys.stderr)
        return 1
    tests = sorted(glob.glob(os.path.join(common.GRAFANA_DIR, "prometheus", "tests", "*.yml")))
    if not tests:
        print("FAIL: no promtool test files in grafana/prometheus/tests", file=sys.stderr)
        return 1
    # Every alert of the rules file is named in some test file.
    with open(common.RULES_FILE, encoding="utf-8") as f:
        alerts = set(l.split("'")[1] for l in f if l.strip().startswith("- alert: '"))
    tested = set()
    for path in tests:
        with open(path, encoding="utf-8") as f:
            tested |= {l.split(":", 1)[1].strip() for l in f if l.strip().startswith("alertname:")}
    if alerts - tested or not alerts:
        print(f"FAIL: alerts without a promtool test: {sorted(alerts - tested)}", file=sys.stderr)
        return 1
    # Every alert has its runbook entry in docs/dashboards-and-alerts.md ("- **AlertName.**" or
    # "- **AlertName** (info).").
    with open(os.path.join(common.harness.SOURCE_DIR, "docs", "dashboards-and-alerts.md"), encoding="utf-8") as f:
        readme = f.read()
    undocumented = sorted(a for a in alerts if f"- **{a}.**" not in readme and f"- **{a}** (" not in readme)
    if undocumented:
        print(f"FAIL: alerts without a runbook entry in docs/dashboards-and-alerts.md: {undocumented}", file=sys.stderr)
        return 1
    # A test file written by a generator (make_X_test.py -> jitterd_X_test.yml) is what it writes now.
    for maker in sorted(glob.glob(os.path.join(common.GRAFANA_DIR, "prometheus", "tests", "make_*.py"))):
        written = os.path.join(os.path.dirname(maker), "jitterd_" + os.path.basename(maker)[5:-3] + ".yml")
        made = subprocess.run([sys.executable, maker], capture_output=True, text=True)
        with open(written, encoding="utf-8") as f:
            if made.returncode != 0 or made.stdout != f.read():
                print(f"FAIL: {written} is not what {os.path.basename(maker)} writes now "
                      f"(python3 {maker} > {written}){made.stderr}", file=sys.stderr)
                return 1
    result = subprocess.run([promtool, "test", "rules"] + tests, capture_output=True, text=True)
    print(result.stdout + result.stderr)
    if result.returncode != 0:
        print("FAIL: promtool test rules", file=sys.stderr)
        return 1
    print(f"OK: {len(alerts)} alerts, each tested in {', '.join(os.path.basename(t) for t in tests)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
