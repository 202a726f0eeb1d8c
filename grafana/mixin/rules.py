# SPDX-License-Identifier: Apache-2.0
"""jitterd's Prometheus recording and alerting rules, built from config.CONFIG.

Recording rules are named level:metric:operation (Prometheus' convention); the fleet dashboard
and the alerts read them, so the fleet-wide histogram_quantile is computed once per evaluation.
"""


def seconds(value):
    """0.0002 -> '200us', 0.005 -> '5ms': a threshold as a reader writes it."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}s"


def percent(value):
    return f"{value * 100:g}%"


def _ri(c):
    return c["rateInterval"]


def recording_names(c):
    """The names the recording rules define (the dashboards' static check accepts them)."""
    return sorted({rule["record"] for rule in recording_rules(c)})


def recording_rules(c):
    sel, ri = c["jitterdSelector"], _ri(c)
    rules = [
        {
            "record": f"instance_cpu:jitterd_sampler_interruptions:rate{ri}",
            "expr": f"rate(jitterd_sampler_interruptions_total{{{sel}}}[{ri}])",
        },
        {
            "record": f"instance_cpu:jitterd_sampler_stolen_share:ratio_rate{ri}",
            "expr": (f"rate(jitterd_sampler_stolen_seconds_total{{{sel}}}[{ri}])\n"
                     f"/\nrate(jitterd_sampler_sampled_seconds_total{{{sel}}}[{ri}])"),
        },
    ]
    for quantile in ("0.99", "0.999", "0.9999"):
        rules.append({
            "record": f"instance_cpu:jitterd_sampler_gap_seconds:histogram_quantile_rate{ri}",
            "expr": (f"histogram_quantile({quantile}, sum by (job, instance, cpu, le) "
                     f"(rate(jitterd_sampler_gap_seconds_bucket{{{sel}}}[{ri}])))"),
            "labels": {"quantile": quantile},
        })
    rules += [
        {
            "record": f"instance:jitterd_sampler_gap_seconds:histogram_quantile_rate{ri}",
            "expr": (f"histogram_quantile(0.9999, sum by (job, instance, le) "
                     f"(rate(jitterd_sampler_gap_seconds_bucket{{{sel}}}[{ri}])))"),
            "labels": {"quantile": "0.9999"},
        },
        {
            "record": "instance:jitterd_sampler_window_max_gap_seconds:max",
            "expr": f"max by (job, instance) (jitterd_sampler_window_max_gap_seconds{{{sel}}})",
        },
        {
            "record": f"instance:jitterd_sampler_stolen_share:ratio_rate{ri}",
            "expr": (f"sum by (job, instance) (rate(jitterd_sampler_stolen_seconds_total{{{sel}}}[{ri}]))\n"
                     f"/\nsum by (job, instance) (rate(jitterd_sampler_sampled_seconds_total{{{sel}}}[{ri}]))"),
        },
        {
            "record": f"instance:jitterd_sampler_interruptions:rate{ri}",
            "expr": f"sum by (job, instance) (rate(jitterd_sampler_interruptions_total{{{sel}}}[{ri}]))",
        },
        {
            "record": "instance:jitterd_expectations_unmet:sum",
            "expr": f"sum by (job, instance) (jitterd_expectation_unmet{{{sel}}})",
        },
        {
            "record": "instance:jitterd_samplers_down:sum",
            "expr": f"sum by (job, instance) (1 - jitterd_sampler_up{{{sel}}})",
        },
        {
            "record": "instance:jitterd_probes_failing:sum",
            "expr": f"sum by (job, instance) (1 - jitterd_probe_success{{{sel}}})",
        },
        {
            "record": f"instance_loop:jitterd_loop_interruptions:rate{ri}",
            "expr": f"rate(jitterd_loop_interruptions_total{{{sel}}}[{ri}])",
        },
        {
            "record": f"instance_loop:jitterd_loop_stolen_share:ratio_rate{ri}",
            "expr": (f"rate(jitterd_loop_stolen_seconds_total{{{sel}}}[{ri}])\n"
                     f"/\nrate(jitterd_loop_sampled_seconds_total{{{sel}}}[{ri}])"),
        },
        {
            "record": f"instance_relation:jitterd_c2c_class_median_latency_seconds:avg_over_time{c['c2cBaselineWindow']}",
            "expr": (f"avg_over_time(jitterd_c2c_class_pair_median_latency_seconds"
                     f"{{{sel},quantile=\"0.5\"}}[{c['c2cBaselineWindow']}])"),
        },
    ]
    return rules + drift_rules(c)


def duration_seconds(duration):
    """'5m' -> 300: a Prometheus duration of one unit, as config.py writes them."""
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    for unit in sorted(units, key=len, reverse=True):
        if duration.endswith(unit) and duration[:-len(unit)].isdigit():
            return int(duration[:-len(unit)]) * units[unit]
    raise ValueError(f"not a single-unit Prometheus duration: {duration!r}")


# The figures of the drift rules: (label value, PromQL of one value per host, allowance cv key).
def drift_figures(c):
    ri, sel = _ri(c), c["jitterdSelector"]
    return [
        # The host's worst sampled CPU's p99.99 gap over rateInterval (from the per-CPU recording
        # rule above). A CPU without gaps in the window gives NaN, dropped by "> 0".
        ("p99_99_seconds_worst_cpu",
         f"max by (job, instance) (instance_cpu:jitterd_sampler_gap_seconds:histogram_quantile_rate{ri}"
         f"{{quantile=\"0.9999\"}} > 0)",
         "fleetDriftP9999Cv"),
        # The host's worst sampled CPU's interruptions per second, plus one interruption over the
        # window (jitterd fleet adds one event over its range), so that a quiet host has a log.
        ("interruptions_per_second_worst_cpu",
         f"max by (job, instance) (instance_cpu:jitterd_sampler_interruptions:rate{ri})\n"
         f"+ 1 / {duration_seconds(ri)}",
         "fleetDriftInterruptionsCv"),
        # The application's side (a watch: section): the host's worst watched CPU's preemptions
        # and hard interrupts per second, plus one over the window. A host without a watch has
        # no such series and is in no class of these figures.
        ("watched_preemptions_per_second_worst_cpu",
         f"max by (job, instance) (rate(jitterd_watch_preemptions_total{{{sel}}}[{ri}]))\n"
         f"+ 1 / {duration_seconds(ri)}",
         "fleetDriftWatchPreemptionsCv"),
        ("watched_irqs_per_second_worst_cpu",
         f"max by (job, instance) (sum by (job, instance, cpu) (rate(jitterd_watch_irqs_total{{{sel}}}[{ri}])))\n"
         f"+ 1 / {duration_seconds(ri)}",
         "fleetDriftInterruptionsCv"),
        # Each loop's p99.99 gap (a loops: section), keeping its `loop` label: a loop is matched
        # across hosts by its name, so its class is the hosts of one cpu_model running that loop.
        ("loop_p99_99_seconds",
         f"histogram_quantile(0.9999, sum by (job, instance, loop, le) "
         f"(rate(jitterd_loop_gap_seconds_bucket{{{sel}}}[{ri}]))) > 0",
         "fleetDriftP9999Cv"),
    ]


def drift_rules(c):
    """Drifted hosts, continuously: `jitterd fleet`'s drift rule (src/fleet/drift.cpp) in PromQL.

    A class is the hosts of one cpu_model (the command adds its cohort, e.g. the kernel, and any
    --class field; here the kernel rides along as a label), and for a loop's figure the hosts
    running a loop of that name (every aggregation is by cpu_model, figure and loop: the sampled
    and watched CPUs' figures have no loop label, so their classes are the cpu_model's). Per figure, on the natural log scale:
    the class's median, MAD and interquartile range; its robust spread, the largest of 1.4826 x MAD,
    IQR / 1.349 and the figure's allowance cv; each host's distance from the median in spreads, and
    a 0/1 series "outside its class" (|distance| > fleetDriftScales, and the class of at least
    fleetDriftMinClassHosts hosts). Every rule is linear in the hosts (no per-host queries, no
    subqueries). Prometheus's quantile() interpolates between ranks where the command takes the
    nearest rank: the quartiles of a small class can differ slightly.
    """
    sel = c["jitterdSelector"]
    host_ln = "instance:jitterd_drift_figure:ln"
    median, mad, iqr = ("cpu_model:jitterd_drift_figure_ln:median", "cpu_model:jitterd_drift_figure_ln:mad",
                        "cpu_model:jitterd_drift_figure_ln:iqr")
    hosts, scale = "cpu_model:jitterd_drift_figure_ln:hosts", "cpu_model:jitterd_drift_figure_ln:spread"
    figures = drift_figures(c)
    rules = []
    for figure, value, _ in figures:
        rules.append({
            # ln of the host's figure, with its cpu_model and kernel from jitterd_fingerprint_info
            # (topk keeps one fingerprint per host, so a host exporting two cannot break the join).
            "record": host_ln,
            "expr": (f"ln(\n  {value}\n)\n"
                     f"+ on (job, instance) group_left (cpu_model, kernel)\n"
                     f"0 * topk by (job, instance) (1, jitterd_fingerprint_info{{{sel}}})"),
            "labels": {"figure": figure},
        })
    rules += [
        {"record": hosts, "expr": f"count by (cpu_model, figure, loop) ({host_ln})"},
        {"record": median, "expr": f"quantile by (cpu_model, figure, loop) (0.5, {host_ln})"},
        # The median of the absolute deviations from the class's median.
        {"record": mad,
         "expr": (f"quantile by (cpu_model, figure, loop) (0.5,\n"
                  f"  abs({host_ln} - on (cpu_model, figure, loop) group_left {median})\n)")},
        {"record": iqr,
         "expr": (f"quantile by (cpu_model, figure, loop) (0.75, {host_ln})\n"
                  f"- quantile by (cpu_model, figure, loop) (0.25, {host_ln})")},
    ]
    for figure, _, cv_key in figures:
        f = f'{{figure="{figure}"}}'
        rules.append({
            # max(1.4826 x MAD, IQR / 1.349, cv): each of the first two is one standard deviation
            # of a normal sample; most hosts in one histogram bucket make the MAD 0, and the
            # quartiles still see a quarter of the class one bucket away.
            "record": scale,
            "expr": (f"clamp_min(\n"
                     f"  (1.4826 * {mad}{f} >= on (cpu_model, figure, loop) {iqr}{f} / 1.349)\n"
                     f"  or on (cpu_model, figure, loop)\n  {iqr}{f} / 1.349,\n  {c[cv_key]}\n)"),
            "labels": {"figure": figure},  # what it has already; one rule per figure for promtool's lint
        })
    rules += [
        # The host's distance from its class's median, in spreads (signed: below is negative).
        {"record": "instance:jitterd_drift_figure_ln:class_spreads",
         "expr": (f"({host_ln} - on (cpu_model, figure, loop) group_left {median})\n"
                  f"/ on (cpu_model, figure, loop) group_left\n{scale}")},
        # The host's figure over its class's median (exp of the log distance).
        {"record": "instance:jitterd_drift_figure:ratio_to_class_median",
         "expr": f"exp({host_ln} - on (cpu_model, figure, loop) group_left {median})"},
        # 1 outside a class of at least fleetDriftMinClassHosts hosts; 0 inside, or in a class of
        # too few hosts (not judged, as jitterd fleet lists such a class and does not judge it).
        {"record": "instance:jitterd_drift_outside_class:bool",
         "expr": (f"(abs(instance:jitterd_drift_figure_ln:class_spreads) > bool {c['fleetDriftScales']})\n"
                  f"* on (cpu_model, figure, loop) group_left ()\n({hosts} >= bool {c['fleetDriftMinClassHosts']})")},
    ]
    return rules


def _alert(name, expr, for_, severity, summary, description):
    rule = {"alert": name, "expr": expr}
    if for_ not in ("0m", "0s", ""):
        rule["for"] = for_
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {"summary": summary, "description": description}
    return rule


def alerting_rules(c):
    sel, ri = c["jitterdSelector"], _ri(c)
    fp_labels = "job, instance, kernel, cmdline, microcode, bios_vendor, bios_version, bios_date, cpu_model"
    fw, cw = c["fingerprintChangeWindow"], c["clocksourceChangeWindow"]
    baseline = f"instance_relation:jitterd_c2c_class_median_latency_seconds:avg_over_time{c['c2cBaselineWindow']}"
    return [
        _alert("JitterdDown", f"up{{{sel}}} == 0", c["downFor"], "critical",
               "jitterd is down or its /metrics cannot be scraped.",
               "Prometheus has failed to scrape jitterd on {{ $labels.instance }} (job {{ $labels.job }}) "
               f"for {c['downFor']}: no jitter is measured or exported there."),
        _alert("JitterdTargetMissing", f"absent(up{{{sel}}})", c["downFor"], "critical",
               "No jitterd target is scraped at all.",
               f"No target matches {sel} in Prometheus: jitterd is not scraped (service discovery "
               "or scrape configuration), so no jitter alert can fire."),
        _alert("JitterdSamplerDown", f"jitterd_sampler_up{{{sel}}} == 0", c["samplerDownFor"], "critical",
               "A jitterd sampler is down.",
               "The sampler of CPU {{ $labels.cpu }} on {{ $labels.instance }} is not running, makes "
               "no progress, or has lost its CPU (taken offline): that CPU is not measured."),
        _alert("JitterdSamplerStalled",
               f"increase(jitterd_sampler_sampled_seconds_total{{{sel}}}[{ri}]) == 0\n"
               f"and on (job, instance, cpu)\njitterd_sampler_up{{{sel}}} == 1",
               c["samplerDownFor"], "critical",
               "A jitterd sampler reports up but samples nothing.",
               "The sampled time of CPU {{ $labels.cpu }} on {{ $labels.instance }} has not advanced "
               f"for {ri} although its sampler reports up."),
        _alert("JitterdCPUJitterSpike",
               f"jitterd_sampler_window_max_gap_seconds{{{sel}}} > {c['jitterSpikeMaxGapSeconds']}",
               c["jitterSpikeFor"], "warning",
               "Jitter spike on a sampled CPU.",
               "CPU {{ $labels.cpu }} on {{ $labels.instance }} was interrupted for up to "
               "{{ $value | humanizeDuration }} within the last window, above "
               f"{seconds(c['jitterSpikeMaxGapSeconds'])} for {c['jitterSpikeFor']}."),
        _alert("JitterdCPUTailLatencyHigh",
               f"jitterd_sampler_window_gap_seconds{{{sel},quantile=\"0.9999\"}} > {c['tailP9999Seconds']}",
               c["tailFor"], "warning",
               "The p99.99 gap on a sampled CPU is high.",
               "The p99.99 gap of CPU {{ $labels.cpu }} on {{ $labels.instance }} is "
               f"{{{{ $value | humanizeDuration }}}}, above {seconds(c['tailP9999Seconds'])} for {c['tailFor']}."),
        _alert("JitterdCPUStolenShareHigh",
               f"instance_cpu:jitterd_sampler_stolen_share:ratio_rate{ri} > {c['stolenShareThreshold']}",
               c["stolenShareFor"], "warning",
               "Interruptions steal too much of a sampled CPU.",
               "Interruptions stole {{ $value | humanizePercentage }} of CPU {{ $labels.cpu }} on "
               f"{{{{ $labels.instance }}}} over {ri}, above {percent(c['stolenShareThreshold'])}."),
        _alert("JitterdLoopDown", f"jitterd_loop_up{{{sel}}} == 0", c["loopDownFor"], "critical",
               "An application's loop is down.",
               "The loop {{ $labels.loop }} on CPU {{ $labels.cpu }} of {{ $labels.instance }} has a segment "
               "but its writer is gone or its heartbeat stopped: the application stopped or no longer "
               "records its loop (jitterd report loops says which)."),
        _alert("JitterdLoopJitterSpike",
               f"jitterd_loop_window_max_gap_seconds{{{sel}}} > {c['loopJitterSpikeMaxGapSeconds']}",
               c["loopJitterSpikeFor"], "warning",
               "Jitter spike in an application's loop.",
               "The loop {{ $labels.loop }} on CPU {{ $labels.cpu }} of {{ $labels.instance }} was interrupted "
               "for up to {{ $value | humanizeDuration }} within the last window, above "
               f"{seconds(c['loopJitterSpikeMaxGapSeconds'])} for {c['loopJitterSpikeFor']}."),
        _alert("JitterdLoopTailLatencyHigh",
               f"jitterd_loop_window_gap_seconds{{{sel},quantile=\"0.9999\"}} > {c['loopTailP9999Seconds']}",
               c["loopTailFor"], "warning",
               "The p99.99 gap of an application's loop is high.",
               "The p99.99 gap of the loop {{ $labels.loop }} on CPU {{ $labels.cpu }} of "
               f"{{{{ $labels.instance }}}} is {{{{ $value | humanizeDuration }}}}, above "
               f"{seconds(c['loopTailP9999Seconds'])} for {c['loopTailFor']}."),
        _alert("JitterdLoopStolenShareHigh",
               f"instance_loop:jitterd_loop_stolen_share:ratio_rate{ri} > {c['loopStolenShareThreshold']}",
               c["loopStolenShareFor"], "warning",
               "Interruptions steal too much of an application's loop.",
               "Interruptions stole {{ $value | humanizePercentage }} of the loop {{ $labels.loop }} on CPU "
               f"{{{{ $labels.cpu }}}} of {{{{ $labels.instance }}}} over {ri}, above "
               f"{percent(c['loopStolenShareThreshold'])}."),
        _alert("JitterdLoopSegmentRefused",
               f"increase(jitterd_loop_refused_total{{{sel}}}[{ri}]) > 0", c["loopRefusedFor"], "warning",
               "jitterd refused a loop segment.",
               "jitterd on {{ $labels.instance }} refused a loop segment ({{ $labels.reason }}) within "
               f"{ri}: that loop is not measured. The daemon's log names the file and why; "
               "`jitterd report loops` lists the refused segments."),
        _alert("JitterdExpectationUnmet", f"jitterd_expectation_unmet{{{sel}}} == 1",
               c["expectationUnmetFor"], "warning",
               "An isolation expectation is not met (isolation drift).",
               "The expectation {{ $labels.check }} is not met on {{ $labels.instance }}"
               "{{ if $labels.cpu }} for CPU {{ $labels.cpu }}{{ end }}; "
               "`jitterd report posture` on the host says what was found."),
        _alert("JitterdFingerprintChanged",
               f"(\n  count by (job, instance) (\n    jitterd_fingerprint_info{{{sel}}}\n"
               f"    unless on ({fp_labels})\n    jitterd_fingerprint_info{{{sel}}} offset {fw}\n  )\n"
               f"  and on (job, instance)\n  count by (job, instance) (jitterd_fingerprint_info{{{sel}}} offset {fw})\n)\n"
               f"or on (job, instance)\n"
               f"sum by (job, instance) (increase(jitterd_fingerprint_changes_total{{{sel}}}[{fw}])) > 0",
               "0m", "info",
               "The kernel, command line, microcode or BIOS of a host changed.",
               "The fingerprint of {{ $labels.instance }} changed within the last "
               f"{fw}: compare jitter before and after on the Posture and change dashboard."),
        _alert("JitterdClocksourceUnexpected",
               f"jitterd_clocksource_current_info{{{sel},clocksource!~\"{c['expectedClocksource']}\"}} == 1",
               c["clocksourceFor"], "warning",
               "The kernel's clocksource is not the expected one.",
               "{{ $labels.instance }} uses the clocksource {{ $labels.clocksource }}, not "
               f"{c['expectedClocksource']}: clock reads are slower and the kernel may have found "
               "the counter unstable (see dmesg)."),
        _alert("JitterdClocksourceChanged",
               f"count by (job, instance) (\n  jitterd_clocksource_current_info{{{sel}}}\n"
               f"  unless on (job, instance, clocksource)\n  jitterd_clocksource_current_info{{{sel}}} offset {cw}\n)\n"
               f"and on (job, instance)\ncount by (job, instance) (jitterd_clocksource_current_info{{{sel}}} offset {cw})",
               "0m", "warning",
               "The kernel's clocksource changed.",
               f"The clocksource of {{{{ $labels.instance }}}} changed within the last {cw}, "
               "often because the kernel judged the counter unstable (dmesg: clocksource watchdog)."),
        _alert("JitterdClockFrequencyDisagreement",
               f"abs(jitterd_clock_frequency_disagreement_ratio{{{sel},{c['clockDisagreementMethodSelector']}}}) "
               f"> {c['clockDisagreementRatio']}",
               c["clockDisagreementFor"], "warning",
               "A counter frequency estimate disagrees with the frequency in use.",
               "The {{ $labels.method }} estimate of the counter frequency on {{ $labels.instance }} "
               "differs from the frequency jitterd uses by {{ $value | humanizePercentage }} (above "
               f"{c['clockDisagreementRatio'] * 1e6:.0f} ppm): every duration jitterd reports is off by as much."),
        _alert("JitterdC2CPairFailures",
               f"increase(jitterd_c2c_pair_failures_total{{{sel}}}[{c['c2cFailureWindow']}]) > 0",
               "0m", "warning",
               "Core-to-core latency measurements fail.",
               "The c2c pair {{ $labels.cpu_a }}-{{ $labels.cpu_b }} on {{ $labels.instance }} failed "
               f"{{{{ $value | humanize }}}} times within {c['c2cFailureWindow']} (timeout, or a side could not run)."),
        _alert("JitterdC2CClassLatencyRegression",
               f"jitterd_c2c_class_pair_median_latency_seconds{{{sel},quantile=\"0.5\"}}\n"
               f"> on (job, instance, relation) {c['c2cRegressionRatio']} * {baseline}",
               c["c2cRegressionFor"], "warning",
               "Core-to-core latency of a relation class is up against its baseline.",
               "The median one-way latency of {{ $labels.relation }} pairs on {{ $labels.instance }} is "
               f"{{{{ $value | humanizeDuration }}}}, more than {c['c2cRegressionRatio']} times its "
               f"{c['c2cBaselineWindow']} average."),
        _alert("JitterdPacingBelowTarget",
               f"jitterd_pacing_achieved_ratio{{{sel}}} < {c['pacingAchievedRatioMin']}",
               c["pacingFor"], "warning",
               "A pacer misses its target rate.",
               "The {{ $labels.method }} pacer on {{ $labels.instance }} achieves "
               "{{ $value | humanizePercentage }} of {{ $labels.rate }}/s, below "
               f"{percent(c['pacingAchievedRatioMin'])}."),
        _alert("JitterdProbeFailing",
               f"max_over_time(jitterd_probe_success{{{sel}}}[{c['probeFailingWindow']}]) == 0\n"
               f"and on (job, instance, probe)\n"
               f"changes(jitterd_probe_last_run_timestamp_seconds{{{sel}}}[{c['probeFailingWindow']}]) >= 1",
               "0m", "warning",
               "A jitterd probe fails repeatedly.",
               "The {{ $labels.probe }} probe on {{ $labels.instance }} ran more than once within "
               f"{c['probeFailingWindow']} and failed every time; its reason is in jitterd's log."),
        _alert("JitterdWatchedApplicationPreempted",
               f"rate(jitterd_watch_stolen_seconds_total{{{sel},cause=\"preempted\"}}[{ri}]) > {c['watchPreemptedShare']}",
               c["watchPreemptedFor"], "warning",
               "Other tasks take time from the application on a watched CPU.",
               "The application's threads on CPU {{ $labels.cpu }} of {{ $labels.instance }} waited "
               "{{ $value | humanizePercentage }} of the time on the run queue while another task ran, "
               f"above {percent(c['watchPreemptedShare'])} for {c['watchPreemptedFor']}."),
        _alert("JitterdWatchedCpuDeviceIrq",
               f"increase(jitterd_watch_irqs_total{{{sel},cause=\"device_irq\"}}[{ri}]) > 0",
               c["watchDeviceIrqFor"], "warning",
               "A device interrupt fired on a CPU that runs the application.",
               "{{ $value | humanize }} device interrupts fired on watched CPU {{ $labels.cpu }} of "
               f"{{{{ $labels.instance }}}} within {ri}; jitterd_watch_device_irqs_total names them."),
        _alert("JitterdWatchedCpuTickNotStopped",
               f"jitterd_watch_timer_interrupt_rate_hertz{{{sel}}} > {c['watchTickRateMax']}\n"
               f"and on (job, instance, cpu)\njitterd_watch_cpu_nohz_full{{{sel}}} == 1",
               c["watchTickFor"], "warning",
               "The timer tick runs on a nohz_full CPU that runs the application.",
               "Watched CPU {{ $labels.cpu }} of {{ $labels.instance }} takes {{ $value | humanize }} timer "
               f"interrupts a second (above {c['watchTickRateMax']}) although it is nohz_full: something "
               "keeps the tick (a second runnable task, a POSIX timer, perf events, RCU callbacks)."),
        _alert("JitterdWatchedApplicationAbsent",
               f"sum by (job, instance) (jitterd_watch_application_threads{{{sel}}}) == 0",
               c["watchAbsentFor"], "warning",
               "No thread of the application runs on the watched CPUs.",
               "jitterd on {{ $labels.instance }} finds no thread of the application (application.tasks, "
               "application.cgroup) on any watched CPU: the application is down, renamed or runs elsewhere."),
        _alert("JitterdWatchedApplicationPreemptedByStray",
               f"sum by (job, instance, cpu) (increase(jitterd_watch_preemptions_by_class_total"
               f"{{{sel},class=\"stray\"}}[{ri}])) > 0",
               c["watchStrayFor"], "warning",
               "A stray task preempted the application on a watched CPU.",
               "The application on CPU {{ $labels.cpu }} of {{ $labels.instance }} was preempted "
               f"{{{{ $value | humanize }}}} times within {ri} by tasks that belong neither to it, nor to "
               "jitterd, nor to the CPU's own kernel threads; `jitterd report watch` lists the latest "
               "by name (bpf method)."),
        _alert("JitterdWatchedCpuTickStopFailing",
               f"sum by (job, instance, cpu, dependency) (rate(jitterd_watch_tick_stop_failures_total{{{sel}}}[{ri}])) > 0\n"
               f"and on (job, instance, cpu)\njitterd_watch_cpu_nohz_full{{{sel}}} == 1",
               c["watchTickStopFor"], "warning",
               "A nohz_full CPU that runs the application cannot stop its tick.",
               "Watched CPU {{ $labels.cpu }} of {{ $labels.instance }} failed to stop its tick "
               "{{ $value | humanize }} times a second because of {{ $labels.dependency }} "
               "(timer:tick_stop, bpf method)."),
        _alert("JitterdHostDriftedFromClass",
               "instance:jitterd_drift_figure:ratio_to_class_median\n"
               "and on (job, instance, figure, loop)\n"
               "instance:jitterd_drift_outside_class:bool == 1",
               c["fleetDriftFor"], "warning",
               "A host's jitter lies far outside its class of identical hardware.",
               "The {{ $labels.figure }}{{ if $labels.loop }} of loop {{ $labels.loop }}{{ end }} of "
               "{{ $labels.instance }} (kernel {{ $labels.kernel }}) is "
               "{{ printf \"%.3g\" $value }} times the median of its class (cpu_model {{ $labels.cpu_model }}), "
               f"beyond {c['fleetDriftScales']} robust spreads for {c['fleetDriftFor']}; "
               "`jitterd fleet --class ...` names the fingerprint fields in which it differs."),
        _alert("JitterdConfigReloadRejected",
               f"jitterd_config_last_reload_successful{{{sel}}} == 0",
               c["reloadRejectedFor"], "warning",
               "jitterd rejected a configuration reload.",
               "The last reload on {{ $labels.instance }} was rejected; the previous configuration "
               "keeps running. Every error is in jitterd's log."),
    ]


def rule_groups(c):
    return {"groups": [
        {"name": "jitterd.rules", "rules": recording_rules(c)},
        {"name": "jitterd", "rules": alerting_rules(c)},
    ]}
