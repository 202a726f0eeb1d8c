# SPDX-License-Identifier: Apache-2.0
"""The application's side of the synthetic fleets of fleet_prometheus_test.py and
fleet_null_prometheus_test.py, as jitterd exports it: the watched CPUs' counters (jitterd_watch_*,
docs/metrics.md) and the loops' (jitterd_loop_*), OpenMetrics lines shaped like jitterd's scrape.

A host dict may carry:
  "watch": "bpf" or "counts" (no key: no watch: section), "watch_rate" (its preemptions' host
  factor), "watch_effect" (a planted factor on its watched CPUs' preemptions and preempted time);
  "loops": {name: {"tail": factor, "rate": interruptions/s, "restart_at": scrape (optional: the
  application restarted the loop there, its counters from zero, jitterd's start time unchanged)}}.
The counters count from the host's own start as its sampler counters do (`elapsed`)."""

import math

WATCHED_CPUS = (4, 5)
DURATION_BOUNDS_NS = [1024 * 2 ** k for k in range(11)]  # 1.024 us .. 1.048576 ms, le exclusive
DURATION_SHARE = [0.2, 0.6, 0.9, 0.97, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9998, 0.9999]
TIMER_HZ, DEVICE_HZ, SOFTIRQ_HZ, PREEMPT_HZ, TICK_STOP_HZ = 100, 5, 20, 2, 0.1
PREEMPTED_S, INTERRUPT_S = 20e-6, 2e-6  # each preemption's time, each timer interrupt's


def label_value(text):
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def watched(host, rng):
    """Per watched CPU: its amounts per second (CPU-to-CPU spread unless the host is exact)."""
    out = {}
    for cpu in WATCHED_CPUS:
        spread = 1.0 if host.get("exact") else math.exp(rng.gauss(0, 0.1))
        preempt = PREEMPT_HZ * host.get("watch_rate", 1.0) * host.get("watch_effect", 1.0) * spread
        out[cpu] = {"timer": TIMER_HZ * spread, "device": DEVICE_HZ * spread, "softirqs": SOFTIRQ_HZ * spread,
                    "preemptions": preempt}
    return out


def watch_families(fleet, times, rng, elapsed, interval):
    """The jitterd_watch_ families' lines of every host with a watch."""
    cpus = {h["instance"]: (h, watched(h, rng)) for h in fleet if h.get("watch")}
    families = {}

    def add(name, kind, host, cpu, value, extra=""):
        family = families.setdefault((name, kind), [])
        for i, t in enumerate(times):
            e = elapsed(host, i)
            if e is not None:
                family.append(f'{name}{{instance="{host["instance"]}",job="jitterd",cpu="{cpu}"{extra}}} '
                              f'{value * e * interval:.9g} {t}')

    for instance, (host, per_cpu) in cpus.items():
        bpf = host["watch"] == "bpf"
        for cpu, a in per_cpu.items():
            add("jitterd_watch_irqs_total", "counter", host, cpu, a["timer"], ',cause="timer"')
            add("jitterd_watch_irqs_total", "counter", host, cpu, a["device"], ',cause="device_irq"')
            add("jitterd_watch_softirqs_total", "counter", host, cpu, a["softirqs"], ',cause="timer"')
            add("jitterd_watch_preemptions_total", "counter", host, cpu, a["preemptions"])
            add("jitterd_watch_application_run_seconds_total", "counter", host, cpu, 0.98)
            add("jitterd_watch_stolen_seconds_total", "counter", host, cpu, a["preemptions"] * PREEMPTED_S,
                ',cause="preempted"')
            if not bpf:
                continue
            add("jitterd_watch_stolen_seconds_total", "counter", host, cpu, a["timer"] * INTERRUPT_S,
                ',cause="timer"')
            add("jitterd_watch_interruptions_total", "counter", host, cpu, a["timer"], ',cause="timer"')
            add("jitterd_watch_interruptions_total", "counter", host, cpu, a["preemptions"], ',cause="preempted"')
            add("jitterd_watch_tick_stop_failures_total", "counter", host, cpu, TICK_STOP_HZ,
                ',dependency="POSIX_TIMER"')
            total = a["timer"] + a["preemptions"]
            for bound, share in list(zip(DURATION_BOUNDS_NS, DURATION_SHARE)) + [(math.inf, 1.0)]:
                le = "+Inf" if math.isinf(bound) else repr(bound / 1e9)
                add("jitterd_watch_interruption_duration_seconds_bucket", "histogram", host, cpu, total * share,
                    f',le="{le}"')
    lines = []
    for (name, kind), family in families.items():
        base = name[:-len("_bucket")] if kind == "histogram" else name[:-len("_total")]
        lines.append(f"# TYPE {base} {kind}")
        lines += family
    return lines


def loop_elapsed(elapsed, host, loop, i):
    e = elapsed(host, i)
    if e is None or "restart_at" not in loop or i < loop["restart_at"]:
        return e
    return i - loop["restart_at"] + 0.5


def loop_families(fleet, times, elapsed, survival, bounds_ns, gaps_per_interval):
    """The jitterd_loop_ families' lines: each loop a sampled CPU's families, labelled loop and cpu."""
    buckets, counters = [], {"sampled_seconds": [], "interruptions": [], "stolen_seconds": []}
    for host in fleet:
        for name, loop in sorted(host.get("loops", {}).items()):
            labels = f'instance="{host["instance"]}",job="jitterd",loop="{label_value(name)}",cpu="3"'
            running = 0.0
            for le in bounds_ns + [math.inf]:
                running = max(running, 1.0 if math.isinf(le) else 1 - survival(le, loop["tail"]))
                le_label = "+Inf" if math.isinf(le) else repr(le / 1e9)
                for i, t in enumerate(times):
                    e = loop_elapsed(elapsed, host, loop, i)
                    if e is not None:
                        buckets.append(f'jitterd_loop_gap_seconds_bucket{{{labels},le="{le_label}"}} '
                                       f'{round(running * gaps_per_interval * e)} {t}')
            for counter, per_interval in (("sampled_seconds", 59.4), ("interruptions", loop["rate"] * 60),
                                          ("stolen_seconds", loop["rate"] * 60 * 5e-6)):
                for i, t in enumerate(times):
                    e = loop_elapsed(elapsed, host, loop, i)
                    if e is not None:
                        counters[counter].append(f"jitterd_loop_{counter}_total{{{labels}}} {per_interval * e:.9g} {t}")
    lines = []
    if buckets:
        lines += ["# TYPE jitterd_loop_gap_seconds histogram"] + buckets
    for counter, family in counters.items():
        if family:
            lines += [f"# TYPE jitterd_loop_{counter} counter"] + family
    return lines
