#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes jitterd_drift_test.yml, the promtool unit test of the drift recording rules and
JitterdHostDriftedFromClass: `python3 make_drift_test.py > jitterd_drift_test.yml`.

A synthetic fleet of known truth, 1 minute scrapes, one sampled CPU a host, every gap histogram
60000 gaps a minute in the buckets le=10us, 200us, +Inf:
- class "Xeon A" (8 hosts): a..e normal (every gap <= 10 us, 1 interruption/s); f 10x the
  interruptions (fires, interruptions figure); g a p99.99 about 5x its class's (inside the bound of
  5 spreads, e^2.5 = 12.2x: never fires); h 1% of its gaps in (10 us, 200 us], a p99.99 19.8x
  its class's (fires, p99.99 figure).
- class "Xeon B" (4 hosts, fewer than fleetDriftMinClassHosts): one 20x host, never judged.
- class "Xeon C" (6 hosts): one 20x host for the first 20 minutes only (pending, never fires).
- class "Xeon E" (5 hosts): p99.99 about 1, e, e, e^2, e^2 times 10 us: the MAD (1) is above half
  the interquartile range (1), so the spread is 1.4826 x MAD, checked against this file's own
  computation of it (interpolated quantiles, as Prometheus's).
- class "Xeon D" (8 hosts): 5 normal, 3 with the p99.99 19.8x (a bucket away): the MAD is 0, the
  quartiles see the three, so the spread is ln(19.8) / 1.349 and none of them is outside.
- class "Xeon W" (6 hosts, the application's watched CPUs only, no sampled CPU): w1..w5 1
  preemption a second on their watched CPU, w6 50 (outside: beyond 5 x the cv 0.7, e^3.5 = 33x);
  their hard interrupts all alike (none outside).
- class "Xeon L" (6 hosts, a loop "rx0" only): l6's loop a p99.99 19.8x its class's (outside,
  with its loop label); the loop is matched across hosts by its name.

The fleet dashboard's "Drifted hosts" query (from grafana/dashboards/jitterd-fleet.json, every job
and instance selected) is checked on the same fleet: f and h, with their BIOS version and microcode.
grafana_promtool_rules fails if this file's output differs from the committed test.
"""

import json
import math
import os

MINUTES = 90
PER_MIN = 60000.0


def counter(per_min_segments):
    """[(per_min, minutes), ...] -> promtool's expanding notation of a cumulative counter."""
    out, value = [], 0.0
    for per_min, minutes in per_min_segments:
        out.append(f"{value:.12g}+{per_min:.12g}x{minutes}")
        value += per_min * (minutes + 1)
    return " ".join(out)


def host(name, model, tail_share, tail_minutes=MINUTES, interruptions_per_s=1.0, bios="2.1"):
    """tail_share: the share of gaps in (10 us, 200 us] for the first tail_minutes, then none."""
    segments_fast = [(PER_MIN * (1 - tail_share), tail_minutes)]
    if tail_minutes < MINUTES:
        segments_fast.append((PER_MIN, MINUTES - tail_minutes - 1))
    labels = f'job="jitterd", instance="{name}:9978", cpu="3"'
    series = [(f'jitterd_sampler_gap_seconds_bucket{{{labels}, le="1e-05"}}', counter(segments_fast))]
    for le in ("0.0002", "+Inf"):
        series.append((f'jitterd_sampler_gap_seconds_bucket{{{labels}, le="{le}"}}', counter([(PER_MIN, MINUTES)])))
    series.append((f"jitterd_sampler_interruptions_total{{{labels}}}", counter([(60 * interruptions_per_s, MINUTES)])))
    series.append((f'jitterd_fingerprint_info{{job="jitterd", instance="{name}:9978", kernel="6.1.0-13-amd64", '
                   f'cpu_model="{model}", bios_version="{bios}", microcode="0xd0003a5"}}', f"1x{MINUTES}"))
    return series


def fingerprint(name, model, bios="2.1"):
    return (f'jitterd_fingerprint_info{{job="jitterd", instance="{name}:9978", kernel="6.1.0-13-amd64", '
            f'cpu_model="{model}", bios_version="{bios}", microcode="0xd0003a5"}}', f"1x{MINUTES}")


def watched_host(name, model, preemptions_per_s):
    labels = f'job="jitterd", instance="{name}:9978", cpu="4"'
    return [(f"jitterd_watch_preemptions_total{{{labels}}}", counter([(60 * preemptions_per_s, MINUTES)])),
            (f'jitterd_watch_irqs_total{{{labels}, cause="timer"}}', counter([(60 * 100, MINUTES)])),
            fingerprint(name, model)]


def loop_host(name, model, tail_share):
    """A host with the loop rx0 only: its gaps as host()'s sampled CPU's."""
    labels = f'job="jitterd", instance="{name}:9978", loop="rx0", cpu="3"'
    series = [(f'jitterd_loop_gap_seconds_bucket{{{labels}, le="1e-05"}}', counter([(PER_MIN * (1 - tail_share), MINUTES)]))]
    for le in ("0.0002", "+Inf"):
        series.append((f'jitterd_loop_gap_seconds_bucket{{{labels}, le="{le}"}}', counter([(PER_MIN, MINUTES)])))
    return series + [fingerprint(name, model)]


def tail_share_for(p9999):
    """The share of gaps in (10 us, 200 us] that puts the interpolated p99.99 at p9999 seconds."""
    return 0.0001 / (1 - (p9999 - 10e-6) / 190e-6)


def p9999_of(tail_share):
    return 10e-6 * 0.9999 if tail_share == 0 else 10e-6 + (0.9999 - (1 - tail_share)) / tail_share * 190e-6


def quantile(q, values):
    """Prometheus's quantile(): linear between the closest ranks."""
    v, rank = sorted(values), q * (len(values) - 1)
    low = int(math.floor(rank))
    high = min(low + 1, len(v) - 1)
    return v[low] + (v[high] - v[low]) * (rank - low)


def spread(values, cv):
    logs = [math.log(x) for x in values]
    centre = quantile(0.5, logs)
    mad = quantile(0.5, [abs(x - centre) for x in logs])
    return max(1.4826 * mad, (quantile(0.75, logs) - quantile(0.25, logs)) / 1.349, cv)


E_SHARES = [0] + [tail_share_for(10e-6 * math.exp(k)) for k in (1, 1, 2, 2)]

# p99.99 interpolated in (10 us, 200 us]: 10us + (0.9999 - (1 - s)) / s * 190us; 5x for s below.
FIVE_X = 0.0001 / (1 - 40e-6 / 190e-6)
HOSTS = ([host(n, "Xeon A", 0) for n in "abcde"] + [host("f", "Xeon A", 0, interruptions_per_s=10.0)]
         + [host("g", "Xeon A", FIVE_X), host("h", "Xeon A", 0.01, bios="1.9")]
         + [host(n, "Xeon B", 0) for n in ("b1", "b2", "b3")] + [host("b4", "Xeon B", 0.01)]
         + [host(n, "Xeon C", 0) for n in ("c1", "c2", "c3", "c4", "c5")] + [host("c6", "Xeon C", 0.01, 20)]
         + [host(f"d{i}", "Xeon D", 0) for i in range(1, 6)] + [host(f"d{i}", "Xeon D", 0.01) for i in range(6, 9)]
         + [host(f"e{i}", "Xeon E", share) for i, share in enumerate(E_SHARES, start=1)]
         + [watched_host(f"w{i}", "Xeon W", 50.0 if i == 6 else 1.0) for i in range(1, 7)]
         + [loop_host(f"l{i}", "Xeon L", 0.01 if i == 6 else 0) for i in range(1, 7)])

DESCRIPTION = ("The {figure}{loop} of {host}:9978 (kernel 6.1.0-13-amd64) is {ratio} times the median of its "
               "class (cpu_model {model}), beyond 5 robust spreads for 30m; `jitterd fleet --class ...` names the "
               "fingerprint fields in which it differs.")


def alert(host_name, figure, ratio, model="Xeon A", loop=None):
    loop_label = f", loop: {loop}" if loop else ""
    description = DESCRIPTION.format(figure=figure, loop=f" of loop {loop}" if loop else "", host=host_name,
                                     ratio=ratio, model=model)
    return (f"          - exp_labels: {{severity: warning, job: jitterd, instance: \"{host_name}:9978\", "
            f"cpu_model: {model}, kernel: 6.1.0-13-amd64, figure: {figure}{loop_label}}}\n"
            f"            exp_annotations:\n"
            f"              summary: \"A host's jitter lies far outside its class of identical hardware.\"\n"
            f"              description: \"{description}\"\n")


def main():
    print("# Generated by make_drift_test.py (its docstring says what the fleet is); edit that, not this.")
    print("rule_files:\n  - ../jitterd.rules.yml\nevaluation_interval: 1m\n\ntests:\n  - interval: 1m\n    input_series:")
    for h in HOSTS:
        for name, values in h:
            print(f"      - series: '{name}'\n        values: '{values}'")
    print("    promql_expr_test:")
    # Class sizes, and who is outside at 40m: f (interruptions), h (p99.99); not g, not b4 (class
    # too small: no series), c6 back inside.
    print("      - expr: cpu_model:jitterd_drift_figure_ln:hosts{figure=\"p99_99_seconds_worst_cpu\"}\n"
          "        eval_time: 40m\n        exp_samples:")
    for model, n in (("Xeon A", 8), ("Xeon B", 4), ("Xeon C", 6), ("Xeon D", 8), ("Xeon E", 5)):
        print(f"          - labels: 'cpu_model:jitterd_drift_figure_ln:hosts{{cpu_model=\"{model}\", figure=\"p99_99_seconds_worst_cpu\"}}'\n"
              f"            value: {n}")
    print("      - expr: instance:jitterd_drift_outside_class:bool == 1\n        eval_time: 40m\n        exp_samples:")
    for h, figure, model, extra in (("f", "interruptions_per_second_worst_cpu", "Xeon A", ""),
                                    ("h", "p99_99_seconds_worst_cpu", "Xeon A", ""),
                                    ("w6", "watched_preemptions_per_second_worst_cpu", "Xeon W", ""),
                                    ("l6", "loop_p99_99_seconds", "Xeon L", ", loop=\"rx0\"")):
        print(f"          - labels: 'instance:jitterd_drift_outside_class:bool{{job=\"jitterd\", instance=\"{h}:9978\", cpu_model=\"{model}\", "
              f"kernel=\"6.1.0-13-amd64\", figure=\"{figure}\"{extra}}}'\n            value: 1")
    # The application's classes: the watched CPUs' hosts, and the loop's by its name.
    print("      - expr: cpu_model:jitterd_drift_figure_ln:hosts{cpu_model=~\"Xeon W|Xeon L\"}\n"
          "        eval_time: 40m\n        exp_samples:")
    for model, figure, extra in (("Xeon W", "watched_preemptions_per_second_worst_cpu", ""),
                                 ("Xeon W", "watched_irqs_per_second_worst_cpu", ""),
                                 ("Xeon L", "loop_p99_99_seconds", ", loop=\"rx0\"")):
        print(f"          - labels: 'cpu_model:jitterd_drift_figure_ln:hosts{{cpu_model=\"{model}\", figure=\"{figure}\"{extra}}}'\n"
              f"            value: 6")
    # b4 is outside its class, which is too small to judge; c6 is back inside.
    print("      - expr: instance:jitterd_drift_outside_class:bool{instance=~\"b4:9978|c6:9978\"}\n"
          "        eval_time: 40m\n        exp_samples:")
    for h, model in (("b4", "Xeon B"), ("c6", "Xeon C")):
        for figure in ("p99_99_seconds_worst_cpu", "interruptions_per_second_worst_cpu"):
            print(f"          - labels: 'instance:jitterd_drift_outside_class:bool{{job=\"jitterd\", "
                  f"instance=\"{h}:9978\", cpu_model=\"{model}\", kernel=\"6.1.0-13-amd64\", figure=\"{figure}\"}}'\n"
                  f"            value: 0")
    # The p99.99 figure of the class of h: its median the normal hosts' (9.999 us, in ns: the p99.99
    # interpolated in the first bucket), its spread the floor cv 0.5 (MAD 0, the quartiles in the normal hosts).
    print("      - expr: round(1e9 * exp(cpu_model:jitterd_drift_figure_ln:median{cpu_model=\"Xeon A\", figure=\"p99_99_seconds_worst_cpu\"}))\n"
          "        eval_time: 40m\n        exp_samples:\n"
          "          - labels: '{cpu_model=\"Xeon A\", figure=\"p99_99_seconds_worst_cpu\"}'\n"
          "            value: 9999")
    print("      - expr: cpu_model:jitterd_drift_figure_ln:spread{cpu_model=\"Xeon A\"}\n"
          "        eval_time: 40m\n        exp_samples:")
    for figure, cv in (("p99_99_seconds_worst_cpu", 0.5), ("interruptions_per_second_worst_cpu", 0.2)):
        print(f"          - labels: 'cpu_model:jitterd_drift_figure_ln:spread{{cpu_model=\"Xeon A\", figure=\"{figure}\"}}'\n"
              f"            value: {cv}")
    # Xeon D: the spread from the quartiles, in thousandths; no host of it outside.
    p9999_ratio = (10e-6 + 0.99 * 190e-6) / 9.999e-6
    print("      - expr: round(1000 * cpu_model:jitterd_drift_figure_ln:spread{cpu_model=\"Xeon D\", figure=\"p99_99_seconds_worst_cpu\"})\n"
          "        eval_time: 40m\n        exp_samples:\n"
          "          - labels: '{cpu_model=\"Xeon D\", figure=\"p99_99_seconds_worst_cpu\"}'\n"
          f"            value: {round(1000 * math.log(p9999_ratio) / 1.349)}")
    print("      - expr: round(1000 * cpu_model:jitterd_drift_figure_ln:spread{cpu_model=\"Xeon E\", figure=\"p99_99_seconds_worst_cpu\"})\n"
          "        eval_time: 40m\n        exp_samples:\n"
          "          - labels: '{cpu_model=\"Xeon E\", figure=\"p99_99_seconds_worst_cpu\"}'\n"
          f"            value: {round(1000 * spread([p9999_of(x) for x in E_SHARES], 0.5))}")
    print("      - expr: sum(instance:jitterd_drift_outside_class:bool{cpu_model=\"Xeon D\"})\n"
          "        eval_time: 40m\n        exp_samples:\n          - labels: '{}'\n            value: 0")
    board = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dashboards", "jitterd-fleet.json")
    with open(board, encoding="utf-8") as f:
        panel = next(p for p in json.load(f)["panels"] if p.get("title") == "Drifted hosts")
    query = panel["targets"][0]["expr"].replace("$job", ".+").replace("$instance", ".+")
    # The ratio in thousandths (floating point: the last digits depend on the order of operations).
    print(f"      - expr: {json.dumps('round(1000 * (' + query + '))')}\n        eval_time: 40m\n        exp_samples:")
    p9999_19x = (10e-6 + 0.99 * 190e-6) / 9.999e-6
    for h, figure, bios, ratio, model, extra in (
            ("f", "interruptions_per_second_worst_cpu", "2.1", (10 + 1 / 300) / (1 + 1 / 300), "Xeon A", ""),
            ("h", "p99_99_seconds_worst_cpu", "1.9", p9999_19x, "Xeon A", ""),
            ("w6", "watched_preemptions_per_second_worst_cpu", "2.1", (50 + 1 / 300) / (1 + 1 / 300), "Xeon W", ""),
            ("l6", "loop_p99_99_seconds", "2.1", p9999_19x, "Xeon L", ", loop=\"rx0\"")):
        print(f"          - labels: '{{job=\"jitterd\", instance=\"{h}:9978\", cpu_model=\"{model}\", "
              f"kernel=\"6.1.0-13-amd64\", figure=\"{figure}\"{extra}, bios_version=\"{bios}\", microcode=\"0xd0003a5\"}}'\n"
              f"            value: {round(1000 * ratio)}")
    print("    alert_rule_test:")
    # Outside from the second minute: pending at 20m, firing from 31m on; c6 was outside ~24 min.
    print("      - eval_time: 20m\n        alertname: JitterdHostDriftedFromClass\n        exp_alerts: []")
    for t in ("40m", "80m"):
        print(f"      - eval_time: {t}\n        alertname: JitterdHostDriftedFromClass\n        exp_alerts:")
        print(alert("f", "interruptions_per_second_worst_cpu", "9.97"), end="")
        print(alert("h", "p99_99_seconds_worst_cpu", "19.8"), end="")
        print(alert("l6", "loop_p99_99_seconds", "19.8", "Xeon L", "rx0"), end="")
        print(alert("w6", "watched_preemptions_per_second_worst_cpu", "49.8", "Xeon W"), end="")


if __name__ == "__main__":
    main()
