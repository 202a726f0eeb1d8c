#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The README's screenshot of `jitterd compare --format html` (not a ctest test: it needs root and
takes a minute): a real comparison on this machine, two baselines of CPU 1 with the probes
(kernel_cost and pacing on CPU 0, c2c pairing CPUs 0 and 1), the second taken while noise_injector
puts 20 us of SCHED_FIFO work every 5 ms on CPU 1, compared as HTML and photographed in Debian's
headless chromium (browser_test.py's Browser) from the top: the verdict counts, what changed, cpu
1's exceedance plot and figures, the c2c heatmaps and the kernel costs with their verdicts.

Usage: /usr/bin/python3 readme_screenshot.py --jitterd BINARY --injector NOISE_INJECTOR --out PNG
       [--width 1300] [--height 2600]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from browser_test import Browser, load, screenshot, skip, run, websocket

SECONDS = 10
# As integration_compare_noise: the sampler at SCHED_FIFO 10, below the injector's 60.
CONFIG = """\
cpus: auto
sampler:
  duty_cycle: continuous
  warmup: 200ms
  interruption_threshold: 10us
  realtime_priority: 10
probes:
  c2c: {allow_unsampled: true}
  kernel_cost: {samples: 3000}
  pacing: {duration: 200ms}
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jitterd", required=True)
    parser.add_argument("--injector", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--width", type=int, default=1300)
    parser.add_argument("--height", type=int, default=2600)
    args = parser.parse_args()
    args.jitterd, args.injector, args.out = (os.path.realpath(p) for p in (args.jitterd, args.injector, args.out))
    if websocket is None:
        skip("python3-websocket missing")
    if os.geteuid() != 0:
        skip("needs root: the noise injector runs as SCHED_FIFO")
    workdir = tempfile.mkdtemp(prefix="jitterd_readme_screenshot_")
    config = os.path.join(workdir, "jitterd.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    paths = [os.path.join(workdir, "before.json"), os.path.join(workdir, "after.json")]
    baseline = [args.jitterd, "baseline", "--config", config, "--duration", f"{SECONDS}s", "--probes",
                "kernel_cost,pacing,c2c", "-o"]
    run(baseline + [paths[0]], timeout=300)
    injector = subprocess.Popen([args.injector, "--cpu", "1", "--priority", "60", "--period", "5ms", "--spin",
                                 "20us", "--count", "40000"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        run(baseline + [paths[1]], timeout=300)
    finally:
        injector.terminate()
        injector.wait()
    page = os.path.join(workdir, "compare.html")
    os.chdir(workdir)  # the page names the files as given: before.json, after.json
    names = [os.path.basename(p) for p in paths]
    with open(page, "w") as f:
        f.write(run([args.jitterd, "compare", *names, "--format", "html"]))
    print(run([args.jitterd, "compare", *names]))
    browser = Browser(workdir)
    try:
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable")
        _, problems = load(browser, page, width=args.width)
        if problems:
            print(f"problems: {problems}", file=sys.stderr)
            return 1
        screenshot(browser, args.out, True, args.width, max_height=args.height)
    finally:
        browser.close()
    print(f"{args.out}; baselines and page in {workdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
