# SPDX-License-Identifier: Apache-2.0
"""Selectors and thresholds of jitterd's dashboards and rules: the one file to edit.

The monitoring-mixin convention (`_config`), in Python: change a value here, run
`python3 grafana/mixin/generate.py`, and commit this file with the regenerated
grafana/dashboards/*.json and grafana/prometheus/jitterd.rules.yml. A single value can also be
overridden for one run without editing anything: `generate.py --set jitterSpikeFor=1m --out DIR`.

Durations are Prometheus durations (30s, 5m, 1h, 7d); ratios are 0..1; times are seconds.
"""

CONFIG = {
    # Selects jitterd's scrape job(s) in every rule, and the `job` variable's choices in the
    # dashboards. Use the job name of your scrape_config.
    "jitterdSelector": 'job="jitterd"',
    # Range of the rates in the recording rules (the dashboards use Grafana's $__rate_interval).
    # At least 4 scrape intervals.
    "rateInterval": "5m",

    # JitterdDown: the target's `up` is 0 (scraped and failing), or absent (not scraped at all).
    "downFor": "5m",
    # JitterdSamplerDown / JitterdSamplerStalled: a sampler thread stopped, or its sampled time
    # stopped advancing for a whole rate interval.
    "samplerDownFor": "2m",

    # JitterdCPUJitterSpike: the window's exact largest gap on a sampled CPU.
    "jitterSpikeMaxGapSeconds": 0.0002,
    "jitterSpikeFor": "5m",
    # JitterdCPUTailLatencyHigh: the window's p99.99 gap on a sampled CPU.
    "tailP9999Seconds": 0.00005,
    "tailFor": "15m",
    # JitterdCPUStolenShareHigh: time stolen by interruptions / time sampled, per CPU.
    "stolenShareThreshold": 0.001,
    "stolenShareFor": "15m",

    # JitterdExpectationUnmet: an `expect:` check of the configuration fails (isolation drift).
    "expectationUnmetFor": "5m",
    # JitterdFingerprintChanged (info): kernel, command line, microcode or BIOS differ from this
    # long ago, or the daemon counted a change within it.
    "fingerprintChangeWindow": "15m",

    # JitterdClocksourceUnexpected: the current clocksource does not match this regex
    # (arch_sys_counter on aarch64).
    "expectedClocksource": "tsc|arch_sys_counter",
    "clocksourceFor": "5m",
    # JitterdClocksourceChanged: the current clocksource differs from this long ago.
    "clocksourceChangeWindow": "15m",

    # JitterdClockFrequencyDisagreement: |estimate / frequency in use - 1| per method.
    "clockDisagreementRatio": 0.0001,  # 100 ppm
    # cpuinfo's "cpu MHz" is the core clock of the moment (turbo, power saving), not the
    # counter's: left out by default.
    "clockDisagreementMethodSelector": 'method!="cpuinfo_mhz"',
    "clockDisagreementFor": "15m",

    # JitterdC2CPairFailures: failed ping-pong attempts within this window.
    "c2cFailureWindow": "1h",
    # JitterdC2CClassLatencyRegression: a relation class's median latency against its own
    # baseline (average over the baseline window).
    "c2cRegressionRatio": 1.5,
    "c2cBaselineWindow": "7d",
    "c2cRegressionFor": "30m",

    # JitterdPacingBelowTarget: achieved / target rate of a pacer.
    "pacingAchievedRatioMin": 0.999,
    "pacingFor": "30m",

    # JitterdProbeFailing: a probe that ran at least twice within the window and never
    # succeeded in it. At least twice the longest probe interval (default 15m).
    "probeFailingWindow": "1h",

    # JitterdConfigReloadRejected: the last reload was rejected (the old configuration runs).
    "reloadRejectedFor": "0m",

    # Watched CPUs (the application's; the watch: section). JitterdWatchedApplicationPreempted:
    # the share of time other tasks took from the application's threads on a watched CPU
    # (run-queue wait per second).
    "watchPreemptedShare": 0.0001,  # 100 us a second
    "watchPreemptedFor": "15m",
    # JitterdWatchedCpuDeviceIrq: any device interrupt on a watched CPU within the rate interval.
    "watchDeviceIrqFor": "0m",
    # JitterdWatchedCpuTickNotStopped: timer interrupts per second on a nohz_full watched CPU.
    "watchTickRateMax": 5,
    "watchTickFor": "10m",
    # JitterdWatchedApplicationAbsent: no thread of the application on any watched CPU.
    "watchAbsentFor": "5m",
    # JitterdWatchedApplicationPreemptedByStray (bpf): a task that is neither jitterd's, nor the
    # application's, nor a kernel thread bound to the CPU preempted the application, within the
    # rate interval.
    "watchStrayFor": "0m",
    # JitterdWatchedCpuTickStopFailing (bpf): a nohz_full watched CPU cannot stop its tick, by the
    # dependency that keeps it.
    "watchTickStopFor": "10m",

    # The applications' own loops (the loops: section; docs/loops.md): the same alerts as a
    # sampled CPU's, with thresholds of their own (an application's iteration does work a
    # sampler's does not). JitterdLoopDown: a loop whose writer died or whose heartbeat stopped.
    "loopDownFor": "2m",
    # JitterdLoopJitterSpike: the window's exact largest gap of a loop.
    "loopJitterSpikeMaxGapSeconds": 0.0002,
    "loopJitterSpikeFor": "5m",
    # JitterdLoopTailLatencyHigh: the window's p99.99 gap of a loop.
    "loopTailP9999Seconds": 0.00005,
    "loopTailFor": "15m",
    # JitterdLoopStolenShareHigh: time stolen by interruptions / time the loop recorded.
    "loopStolenShareThreshold": 0.001,
    "loopStolenShareFor": "15m",
    # JitterdLoopSegmentRefused: a loop segment refused within the rate interval (the loop is not
    # measured).
    "loopRefusedFor": "0m",

    # JitterdHostDriftedFromClass (docs/fleet.md, "In Prometheus"): a host whose figure (its worst
    # sampled CPU's p99.99 gap, or interruptions per second; its worst watched CPU's preemptions or
    # hard interrupts per second; a loop's p99.99 gap, over rateInterval) lies more than
    # fleetDriftScales robust spreads from the median of its class (the hosts of one cpu_model),
    # on a log scale, for fleetDriftFor; only classes of at least fleetDriftMinClassHosts hosts
    # are judged. The spread's floor per figure is `jitterd fleet`'s allowance cv (bare metal).
    "fleetDriftScales": 5,
    "fleetDriftMinClassHosts": 5,
    "fleetDriftFor": "30m",
    "fleetDriftP9999Cv": 0.5,
    "fleetDriftInterruptionsCv": 0.2,
    # The watched CPUs' preemptions: compare's and jitterd fleet's watch.preemptions_per_s allowance.
    "fleetDriftWatchPreemptionsCv": 0.7,

    # Dashboards.
    "dashboardTags": ["jitterd"],
    "dashboardUidPrefix": "jitterd-",
    "dashboardRefresh": "30s",
    "dashboardTimeFrom": "now-6h",
    # The choices of the Posture and change dashboard's `compare` variable (any Prometheus
    # duration can be typed in as well).
    "compareOffsets": ["1d", "7d", "30d", "1h"],
    # Colour steps of the fleet tables: orange from the first value, red from the second.
    "fleetMaxGapSteps": [0.00005, 0.0002],
    "fleetP9999Steps": [0.00001, 0.00005],
    "fleetStolenShareSteps": [0.0001, 0.001],
    "fleetInterruptionsSteps": [1, 100],  # per second
    "fleetLoopMaxGapSteps": [0.00005, 0.0002],
    "fleetLoopP9999Steps": [0.00001, 0.00005],
}
