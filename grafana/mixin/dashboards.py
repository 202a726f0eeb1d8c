# SPDX-License-Identifier: Apache-2.0
"""jitterd's Grafana dashboards (schema 39, Grafana 10/11), built from config.CONFIG.

Every dashboard has one `datasource` variable (Prometheus), multi-select `job` and `instance`
variables from jitterd_build_info, a `cpu` variable where per-CPU, links to the others that keep
the variables and the time range, and the fingerprint changes as annotations. Every panel has a
unit and a description; every rate/increase uses $__rate_interval.
"""

from rules import duration_seconds

DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'job=~"$job", instance=~"$instance"'
SELC = SEL + ', cpu=~"$cpu"'
RI = "$__rate_interval"


def target(expr, legend="", fmt="time_series", instant=False):
    return {"expr": expr, "legendFormat": legend, "format": fmt, "instant": instant,
            "range": not instant}


def table_target(expr):
    return target(expr, fmt="table", instant=True)


def _thresholds(steps, colors=("green", "orange", "red")):
    out = [{"color": colors[0], "value": None}]
    for color, value in zip(colors[1:], steps):
        out.append({"color": color, "value": value})
    return {"mode": "absolute", "steps": out}


def panel(kind, title, description, unit, targets, w=12, h=8, **extra):
    p = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {},
        "targets": [],
        "gridPos": {"w": w, "h": h},
    }
    for i, t in enumerate(targets):
        t = dict(t)
        t["refId"] = chr(ord("A") + i)
        t["datasource"] = DS
        p["targets"].append(t)
    if kind == "timeseries":
        p["fieldConfig"]["defaults"]["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                                                  "showPoints": "never", "spanNulls": False}
        p["options"] = {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["max", "lastNotNull"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}}
    elif kind == "stat":
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "background", "graphMode": "none", "textMode": "auto"}
    elif kind == "table":
        p["options"] = {"showHeader": True, "cellHeight": "sm"}
    elif kind == "bargauge":
        p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "displayMode": "gradient", "orientation": "horizontal", "showUnfilled": True}
    for key, value in extra.items():
        if key == "stack":
            p["fieldConfig"]["defaults"]["custom"]["stacking"] = {"mode": "normal", "group": "A"}
            p["fieldConfig"]["defaults"]["custom"]["fillOpacity"] = 60
        elif key == "log":
            p["fieldConfig"]["defaults"]["custom"]["scaleDistribution"] = {"type": "log", "log": value}
        elif key == "thresholds":
            p["fieldConfig"]["defaults"]["thresholds"] = value
            p["fieldConfig"]["defaults"]["color"] = {"mode": "thresholds"}
        elif key == "overrides":
            p["fieldConfig"]["overrides"] = value
        elif key == "options":
            p["options"].update(value)
        else:
            p[key] = value
    return p


def ts(title, description, unit, targets, **extra):
    return panel("timeseries", title, description, unit, targets, **extra)


def stat(title, description, unit, expr, steps=(1,), w=4, h=4, **extra):
    return panel("stat", title, description, unit, [target(expr, instant=True)], w=w, h=h,
                 thresholds=_thresholds(steps, ("green", "red", "red")), **extra)


def info_table(title, description, expr, w=12, h=6, exclude=("Time", "Value", "__name__")):
    return panel("table", title, description, "none", [table_target(expr)], w=w, h=h,
                 transformations=[{"id": "organize", "options": {
                     "excludeByName": {name: True for name in exclude}}}])


def row(title):
    return {"type": "row", "title": title, "collapsed": False, "panels": [], "gridPos": {"w": 24, "h": 1}}


def _layout(panels):
    """Assigns ids and x/y in reading order, wrapping at 24 columns."""
    x = y = row_height = 0
    for i, p in enumerate(panels, start=1):
        p["id"] = i
        w, h = p["gridPos"]["w"], p["gridPos"]["h"]
        if p["type"] == "row" or x + w > 24:
            y += row_height
            x, row_height = 0, 0
        p["gridPos"] = {"h": h, "w": w, "x": x, "y": y}
        x += w
        row_height = max(row_height, h)
        if p["type"] == "row":
            y += h
            x, row_height = 0, 0
    return panels


def _query_variable(name, label, query, c, include_all=True, multi=True):
    return {
        "type": "query", "name": name, "label": label, "datasource": DS,
        "query": {"query": query, "refId": f"{name}-variable"}, "definition": query,
        "refresh": 2, "sort": 3 if name == "cpu" else 1, "multi": multi, "includeAll": include_all,
        "allValue": ".+" if include_all else None, "current": {}, "options": [], "hide": 0, "regex": "",
    }


def variables(c, cpu=False, compare=False):
    out = [
        {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
         "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
        _query_variable("job", "Job", f"label_values(jitterd_build_info{{{c['jitterdSelector']}}}, job)", c),
        _query_variable("instance", "Instance", 'label_values(jitterd_build_info{job=~"$job"}, instance)', c),
    ]
    if cpu:
        out.append(_query_variable("cpu", "CPU", f"label_values(jitterd_sampler_up{{{SEL}}}, cpu)", c))
    if compare:
        offsets = c["compareOffsets"]
        out.append({
            "type": "custom", "name": "compare", "label": "Compare with (offset)",
            "query": ",".join(offsets), "multi": False, "includeAll": False, "allowCustomValue": True,
            "current": {"selected": True, "text": offsets[0], "value": offsets[0]},
            "options": [{"selected": i == 0, "text": o, "value": o} for i, o in enumerate(offsets)],
            "hide": 0,
        })
    return out


def dashboard(c, slug, title, description, panels, cpu=False, compare=False):
    return {
        "uid": c["dashboardUidPrefix"] + slug,
        "title": title,
        "description": description,
        "tags": list(c["dashboardTags"]),
        "editable": True,
        "graphTooltip": 1,
        "refresh": c["dashboardRefresh"],
        "schemaVersion": 39,
        "time": {"from": c["dashboardTimeFrom"], "to": "now"},
        "timezone": "utc",
        "links": [{"type": "dashboards", "title": "jitterd", "tags": list(c["dashboardTags"]),
                   "asDropdown": True, "includeVars": True, "keepTime": True, "icon": "external link",
                   "targetBlank": False, "tooltip": "", "url": ""}],
        "annotations": {"list": [
            {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
             "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts",
             "type": "dashboard"},
            {"name": "Fingerprint changes", "datasource": DS, "enable": True, "iconColor": "orange",
             "expr": f"increase(jitterd_fingerprint_changes_total{{{SEL}}}[{RI}]) > 0",
             "step": "1m", "titleFormat": "Fingerprint changed", "textFormat": "{{instance}}",
             "tagKeys": "instance"},
        ]},
        "templating": {"list": variables(c, cpu=cpu, compare=compare)},
        "panels": _layout(panels),
    }


def _fleet_table(c, title, description, by_cpu):
    level = "instance_cpu" if by_cpu else "instance"
    window_max = (f"max by (job, instance, cpu) (jitterd_sampler_window_max_gap_seconds{{{SEL}}})" if by_cpu
                  else f"instance:jitterd_sampler_window_max_gap_seconds:max{{{SEL}}}")
    ri = c["rateInterval"]
    p9999_filter = ', quantile="0.9999"'
    exprs = [
        window_max,
        f"{level}:jitterd_sampler_gap_seconds:histogram_quantile_rate{ri}{{{SEL}{p9999_filter}}}",
        f"{level}:jitterd_sampler_stolen_share:ratio_rate{ri}{{{SEL}}}",
        f"{level}:jitterd_sampler_interruptions:rate{ri}{{{SEL}}}",
    ]
    names = ["Window max", "p99.99", "Stolen share", "Interruptions/s"]
    units = ["s", "s", "percentunit", "ops"]
    steps = [c["fleetMaxGapSteps"], c["fleetP9999Steps"], c["fleetStolenShareSteps"], c["fleetInterruptionsSteps"]]
    overrides = []
    for i, (name, unit, step) in enumerate(zip(names, units, steps)):
        props = [{"id": "unit", "value": unit}, {"id": "displayName", "value": name}]
        if step:
            props += [{"id": "custom.cellOptions", "value": {"type": "color-background"}},
                      {"id": "thresholds", "value": _thresholds(step)}]
        overrides.append({"matcher": {"id": "byName", "options": f"Value #{chr(ord('A') + i)}"},
                          "properties": props})
    return panel("table", title, description, "s", [table_target(e) for e in exprs], w=24, h=8,
                 overrides=overrides,
                 options={"sortBy": [{"displayName": "Window max", "desc": True}]},
                 transformations=[{"id": "merge", "options": {}},
                                  {"id": "organize", "options": {"excludeByName": {"Time": True, "quantile": True}}}])


def _fleet_loop_table(c):
    ri = c["rateInterval"]
    exprs = [
        f"max by (job, instance, loop, cpu) (jitterd_loop_window_max_gap_seconds{{{SEL}}})",
        f'max by (job, instance, loop, cpu) (jitterd_loop_window_gap_seconds{{{SEL}, quantile="0.9999"}})',
        f"max by (job, instance, loop, cpu) (instance_loop:jitterd_loop_stolen_share:ratio_rate{ri}{{{SEL}}})",
        f"max by (job, instance, loop, cpu) (instance_loop:jitterd_loop_interruptions:rate{ri}{{{SEL}}})",
        f"max by (job, instance, loop, cpu) (jitterd_loop_up{{{SEL}}})",
    ]
    names = ["Window max", "Window p99.99", "Stolen share", "Interruptions/s", "Up"]
    units = ["s", "s", "percentunit", "ops", "none"]
    steps = [c["fleetLoopMaxGapSteps"], c["fleetLoopP9999Steps"], c["fleetStolenShareSteps"],
             c["fleetInterruptionsSteps"], None]
    overrides = []
    for i, (name, unit, step) in enumerate(zip(names, units, steps)):
        props = [{"id": "unit", "value": unit}, {"id": "displayName", "value": name}]
        if step:
            props += [{"id": "custom.cellOptions", "value": {"type": "color-background"}},
                      {"id": "thresholds", "value": _thresholds(step)}]
        else:
            props += [{"id": "custom.cellOptions", "value": {"type": "color-background"}},
                      {"id": "thresholds", "value": _thresholds([1], ("red", "green"))}]
        overrides.append({"matcher": {"id": "byName", "options": f"Value #{chr(ord('A') + i)}"},
                          "properties": props})
    return panel("table", "Application loops by worst jitter",
                 "Per application loop (the loops: section): the exact largest gap and the p99.99 of its "
                 f"rolling window, the share of its time stolen by interruptions and interruptions per second "
                 f"over {ri} (recording rules), and whether it is up. Colours follow grafana/mixin/config.py.",
                 "s", [table_target(e) for e in exprs], w=24, h=8, overrides=overrides,
                 options={"sortBy": [{"displayName": "Window max", "desc": True}]},
                 transformations=[{"id": "merge", "options": {}},
                                  {"id": "organize", "options": {"excludeByName": {"Time": True}}}])


def _drift_panels(c):
    """Drifted hosts (the drift recording rules of rules.py) and the cohorts by kernel."""
    ri = c["rateInterval"]
    p9999 = f'instance:jitterd_drift_figure:ln{{{SEL}, figure="p99_99_seconds_worst_cpu"}}'
    interruptions = f'instance:jitterd_drift_figure:ln{{{SEL}, figure="interruptions_per_second_worst_cpu"}}'
    preemptions = f'instance:jitterd_drift_figure:ln{{{SEL}, figure="watched_preemptions_per_second_worst_cpu"}}'
    loop_p9999 = f'instance:jitterd_drift_figure:ln{{{SEL}, figure="loop_p99_99_seconds"}}'
    # The interruptions figure holds one interruption over the rate interval more (so that a
    # quiet host has a log); the cohort's median is shown without it.
    one_per_window = f"1 / {duration_seconds(ri)}"
    cohort_exprs = [
        f"count by (kernel) ({p9999})",
        f"exp(quantile by (kernel) (0.25, {p9999}))",
        f"exp(quantile by (kernel) (0.5, {p9999}))",
        f"exp(quantile by (kernel) (0.75, {p9999}))",
        f"exp(quantile by (kernel) (0.5, {interruptions})) - {one_per_window}",
        f"exp(quantile by (kernel) (0.5, {preemptions})) - {one_per_window}",
    ]
    cohort_names = ["Hosts", "p99.99 (worst CPU), first quartile", "p99.99 (worst CPU), median",
                    "p99.99 (worst CPU), third quartile", "Interruptions/s (worst CPU), median",
                    "Watched preemptions/s (worst watched CPU), median"]
    cohort_units = ["none", "s", "s", "s", "ops", "ops"]
    cohort_overrides = [
        {"matcher": {"id": "byName", "options": f"Value #{chr(ord('A') + i)}"},
         "properties": [{"id": "unit", "value": unit}, {"id": "displayName", "value": name}]}
        for i, (name, unit) in enumerate(zip(cohort_names, cohort_units))]
    drifted = (f"(\n  instance:jitterd_drift_figure:ratio_to_class_median{{{SEL}}}\n"
               f"  and on (job, instance, figure, loop)\n  instance:jitterd_drift_outside_class:bool{{{SEL}}} == 1\n)\n"
               f"* on (job, instance) group_left (bios_version, microcode)\n"
               f"topk by (job, instance) (1, jitterd_fingerprint_info{{{SEL}}})")
    return [
        row("Drifted hosts and cohorts"),
        panel("table", "Drifted hosts",
              "Hosts whose figure lies more than "
              f"{c['fleetDriftScales']} robust spreads from the median of their class (the hosts of one "
              f"cpu_model, at least {c['fleetDriftMinClassHosts']}; for a loop's figure, those running a loop "
              f"of that name) on a log scale, now: the figure (the worst sampled CPU's p99.99 gap or "
              f"interruptions per second, the worst watched CPU's preemptions or hard interrupts per second, "
              f"or a loop's p99.99 gap, over {ri}), the loop, its ratio to the class's "
              "median, the host's kernel, BIOS version and microcode. JitterdHostDriftedFromClass fires "
              f"for a host here for {c['fleetDriftFor']}. `jitterd fleet` names the fingerprint fields in "
              "which a host differs from its class's majority (docs/fleet.md).",
              "none", [table_target(drifted)], w=24, h=7,
              overrides=[{"matcher": {"id": "byName", "options": "Value"},
                          "properties": [{"id": "displayName", "value": "Ratio to class median"},
                                         {"id": "decimals", "value": 1}]},
                         {"matcher": {"id": "byName", "options": "cpu_model"},
                          "properties": [{"id": "displayName", "value": "Class (cpu_model)"}]}],
              options={"sortBy": [{"displayName": "Ratio to class median", "desc": True}]},
              transformations=[{"id": "organize", "options": {
                  "excludeByName": {"Time": True, "__name__": True},
                  "indexByName": {"instance": 0, "cpu_model": 1, "figure": 2, "loop": 3, "Value": 4, "kernel": 5,
                                  "bios_version": 6, "microcode": 7, "job": 8}}}]),
        panel("table", "Cohorts by kernel",
              "Per kernel: the hosts running it, the quartiles of their worst sampled CPU's p99.99 gap "
              f"over {ri} (the spread of the cohort is between the first and third quartile), the median "
              "of their worst CPU's interruptions per second and of their worst watched CPU's preemptions "
              "per second (hosts with a watch: section). Hosts of every CPU model together: "
              "`jitterd fleet --by kernel` compares cohorts like against like, within each CPU model, "
              "with a test and an effect-size floor.",
              "s", [table_target(e) for e in cohort_exprs], w=24, h=6, overrides=cohort_overrides,
              transformations=[{"id": "merge", "options": {}},
                               {"id": "organize", "options": {"excludeByName": {"Time": True}}}]),
        ts("Loops' p99.99 by kernel",
           "Per kernel and loop name (a loop is matched across hosts by its name): the median over the "
           f"hosts running it of the loop's p99.99 gap over {ri}. `jitterd fleet --by kernel` tests each "
           "loop's rows like against like.",
           "s", [target(f"exp(quantile by (kernel, loop) (0.5, {loop_p9999}))", "{{kernel}} {{loop}}")]),
        ts("Hosts outside their class",
           "Per class (cpu_model) and figure: the hosts more than "
           f"{c['fleetDriftScales']} robust spreads from the class's median now (0 in a class of fewer "
           f"than {c['fleetDriftMinClassHosts']} hosts, which is not judged).",
           "none", [target(f"sum by (cpu_model, figure, loop) (instance:jitterd_drift_outside_class:bool{{{SEL}}})",
                           "{{cpu_model}} {{figure}} {{loop}}")]),
        ts("Distance from class median",
           "Per host and figure: its distance from its class's median in robust spreads on a log scale "
           f"(positive above); beyond {c['fleetDriftScales']} it is outside its class.",
           "none", [target(f"instance:jitterd_drift_figure_ln:class_spreads{{{SEL}}}",
                           "{{instance}} {{figure}} {{loop}}")]),
    ]


def fleet(c):
    ri = c["rateInterval"]
    panels = [
        row("Now"),
        stat("Instances up", "jitterd targets Prometheus scrapes successfully (up == 1).", "none",
             f"sum(up{{{SEL}}})", steps=(), w=4),
        stat("Unmet expectations", "Unmet `expect:` checks over the selected instances (isolation drift); "
             "details on Posture and change.", "none",
             f"sum(instance:jitterd_expectations_unmet:sum{{{SEL}}})", w=5),
        stat("Samplers down", "Samplers not running or not making progress (jitterd_sampler_up == 0).", "none",
             f"sum(instance:jitterd_samplers_down:sum{{{SEL}}})", w=5),
        stat("Probes failing", "Probes whose last run failed (jitterd_probe_success == 0).", "none",
             f"sum(instance:jitterd_probes_failing:sum{{{SEL}}})", w=5),
        stat("Reloads rejected", "Instances whose last configuration reload was rejected.", "none",
             f"sum(1 - jitterd_config_last_reload_successful{{{SEL}}})", w=5),
        _fleet_table(c, "Instances by worst jitter",
                     "Per instance: the largest gap of the last window over its sampled CPUs, the p99.99 gap "
                     f"of the cumulative histogram over {ri}, the share of sampled time stolen by "
                     "interruptions and interruptions per second (recording rules). Colours follow the "
                     "thresholds of grafana/mixin/config.py.", by_cpu=False),
        _fleet_table(c, "CPUs by worst jitter",
                     "The same per sampled CPU: which CPUs of which hosts are noisy now.", by_cpu=True),
        _fleet_loop_table(c),
    ] + _drift_panels(c) + [
        row("Over time"),
        ts("Worst window max by instance", "Largest gap of the last window over each instance's sampled CPUs.",
           "s", [target(f"instance:jitterd_sampler_window_max_gap_seconds:max{{{SEL}}}", "{{instance}}")], log=10),
        ts("p99.99 gap by instance", f"p99.99 of the gap histogram over {ri}, all sampled CPUs of an instance.",
           "s", [target(f'instance:jitterd_sampler_gap_seconds:histogram_quantile_rate{ri}{{{SEL}, quantile="0.9999"}}',
                        "{{instance}}")], log=10),
        ts("Stolen share by instance", "Time stolen by interruptions / time sampled, per instance.",
           "percentunit", [target(f"instance:jitterd_sampler_stolen_share:ratio_rate{ri}{{{SEL}}}", "{{instance}}")]),
        ts("Interruptions/s by instance", "Gaps at or above the interruption threshold per second.",
           "ops", [target(f"instance:jitterd_sampler_interruptions:rate{ri}{{{SEL}}}", "{{instance}}")]),
        ts("Unmet expectations by instance", "Unmet `expect:` checks per instance over time.", "none",
           [target(f"instance:jitterd_expectations_unmet:sum{{{SEL}}}", "{{instance}}")]),
        ts("Samplers down and probes failing", "Per instance: samplers down and probes whose last run failed.",
           "none", [target(f"instance:jitterd_samplers_down:sum{{{SEL}}}", "{{instance}} samplers down"),
                    target(f"instance:jitterd_probes_failing:sum{{{SEL}}}", "{{instance}} probes failing")]),
    ]
    return dashboard(c, "fleet", "jitterd / Fleet overview",
                     "Which hosts and CPUs are noisy now; unmet expectations, samplers down, failing probes; "
                     "hosts drifted from their class and the cohorts by kernel.",
                     panels)


def host(c):
    heat = panel("heatmap", "Gap distribution, CPU $cpu",
                 f"Rate of gaps per bucket of jitterd_sampler_gap_seconds (the cumulative histogram) over "
                 f"{RI}: where the loop's gaps fall and how often long ones happen.", "s",
                 [target(f"sum by (le) (rate(jitterd_sampler_gap_seconds_bucket{{{SELC}}}[{RI}]))", "{{le}}",
                         fmt="heatmap")], w=24, h=9, repeat="cpu", repeatDirection="h",
                 options={"calculate": False, "yAxis": {"unit": "s", "axisPlacement": "left"},
                          "cellGap": 1, "color": {"mode": "scheme", "scheme": "Oranges", "scale": "exponential",
                                                   "exponent": 0.5, "steps": 64, "fill": "dark-orange",
                                                   "reverse": False},
                          "rowsFrame": {"layout": "le"}, "tooltip": {"show": True, "yHistogram": True},
                          "legend": {"show": True}, "exemplars": {"color": "rgba(255,0,255,0.7)"}})
    panels = [
        row("Gaps"),
        heat,
        ts("Window quantiles", "p50, p99, p99.9 and p99.99 gap over the sampler's rolling window "
           "(jitterd_sampler_window_gap_seconds; bucket upper edges).", "s",
           [target(f"jitterd_sampler_window_gap_seconds{{{SELC}}}", "{{instance}} cpu {{cpu}} p{{quantile}}")], log=10),
        ts("Window max", "Exact largest gap over the rolling window, per CPU: what the spike alert watches.", "s",
           [target(f"jitterd_sampler_window_max_gap_seconds{{{SELC}}}", "{{instance}} cpu {{cpu}}")], log=10),
        ts("Interruptions/s", "Gaps at or above the interruption threshold per second.", "ops",
           [target(f"rate(jitterd_sampler_interruptions_total{{{SELC}}}[{RI}])", "{{instance}} cpu {{cpu}}")]),
        ts("Stolen share", "Time stolen by interruptions / time sampled.", "percentunit",
           [target(f"rate(jitterd_sampler_stolen_seconds_total{{{SELC}}}[{RI}])\n/\n"
                   f"rate(jitterd_sampler_sampled_seconds_total{{{SELC}}}[{RI}])", "{{instance}} cpu {{cpu}}")]),
        row("Attribution"),
        ts("Interruptions by cause", "Interruptions per second by cause (jitterd_attribution_interruptions_total), "
           "stacked; `unexplained` coincided with nothing counted.", "ops",
           [target(f"sum by (instance, cpu, cause) (rate(jitterd_attribution_interruptions_total{{{SELC}}}[{RI}]))",
                   "{{instance}} cpu {{cpu}} {{cause}}")], stack=True),
        ts("Stolen time by cause", "Share of sampled time stolen, by cause, stacked.", "percentunit",
           [target(f"sum by (instance, cpu, cause) (rate(jitterd_attribution_stolen_seconds_total{{{SELC}}}[{RI}]))",
                   "{{instance}} cpu {{cpu}} {{cause}}")], stack=True),
        ts("Interrupts and softirqs on the CPU", "Interrupts and softirqs that fired on the sampled CPU per "
           "second, by category.", "ops",
           [target(f"sum by (instance, cpu, kind, cause) (rate(jitterd_attribution_events_total{{{SELC}}}[{RI}])) > 0",
                   "{{instance}} cpu {{cpu}} {{kind}} {{cause}}")]),
        ts("Top interrupt sources", "The 10 busiest interrupt and softirq sources per second "
           "(needs probes.attribution.source_detail > 0).", "ops",
           [target(f"topk(10, sum by (instance, cpu, kind, source, name) "
                   f"(rate(jitterd_attribution_source_events_total{{{SELC}}}[{RI}])))",
                   "{{instance}} cpu {{cpu}} {{source}} {{name}}")]),
        info_table("Attribution method", "tracepoints (exact) or window_deltas (an estimate, without tracefs).",
                   f"jitterd_attribution_method_info{{{SEL}}}", w=12, h=5),
        ts("Coincident interruptions/s", "Interruptions that coincided with an interrupt, softirq or switch.", "ops",
           [target(f"rate(jitterd_attribution_coincident_interruptions_total{{{SELC}}}[{RI}])",
                   "{{instance}} cpu {{cpu}}")], h=5),
        row("Watched CPUs (the application's)"),
        ts("Time taken from the application", "Per watched CPU, the share of time taken, by cause "
           "(jitterd_watch_stolen_seconds_total): with method bpf each interruption's own time and the "
           "application's preemptions; with counts its run-queue wait while another task ran.",
           "percentunit",
           [target(f"sum by (instance, cpu, cause) (rate(jitterd_watch_stolen_seconds_total{{{SEL}}}[{RI}]))",
                   "{{instance}} cpu {{cpu}} {{cause}}")], stack=True),
        ts("Preemptions of the application/s", "Involuntary context switches of the application's threads "
           "per watched CPU: for a thread that never sleeps, each is one preemption.", "ops",
           [target(f"rate(jitterd_watch_preemptions_total{{{SEL}}}[{RI}])", "{{instance}} cpu {{cpu}}")]),
        ts("Interrupts on watched CPUs", "Hard interrupts and softirqs per second on the watched CPUs, by cause.",
           "ops",
           [target(f"sum by (instance, cpu, cause) (rate(jitterd_watch_irqs_total{{{SEL}}}[{RI}])) > 0",
                   "{{instance}} cpu {{cpu}} irq {{cause}}"),
            target(f"sum by (instance, cpu, cause) (rate(jitterd_watch_softirqs_total{{{SEL}}}[{RI}])) > 0",
                   "{{instance}} cpu {{cpu}} softirq {{cause}}")]),
        ts("Timer tick rate", "Timer interrupts per second on each watched CPU over the daemon's last window: "
           "about 0 to 1 where the tick is stopped (nohz_full), HZ where it runs.", "hertz",
           [target(f"jitterd_watch_timer_interrupt_rate_hertz{{{SEL}}}", "{{instance}} cpu {{cpu}}")]),
        panel("heatmap", "Single interruptions on watched CPUs",
              "Interruptions and preemptions per second on the watched CPUs by their length (bpf; "
              "power-of-two buckets of jitterd_watch_interruption_duration_seconds).", "s",
              [target(f"sum by (le) (rate(jitterd_watch_interruption_duration_seconds_bucket{{{SEL}}}[{RI}]))",
                      "{{le}}", fmt="heatmap")], w=12, h=8,
              options={"calculate": False, "yAxis": {"unit": "s", "axisPlacement": "left"}, "cellGap": 1}),
        ts("Preemptions by who took the CPU/s", "Preemptions of the application per second by the class of "
           "the task that took the CPU (bpf): jitterd, kernel_percpu, application, stray.", "ops",
           [target(f"sum by (instance, cpu, class) (rate(jitterd_watch_preemptions_by_class_total{{{SEL}}}[{RI}]))",
                   "{{instance}} cpu {{cpu}} {{class}}")]),
        ts("Tick-stop failures/s", "Times a watched CPU could not stop its tick, by the dependency that kept it "
           "(timer:tick_stop; bpf).", "ops",
           [target(f"sum by (instance, cpu, dependency) (rate(jitterd_watch_tick_stop_failures_total{{{SEL}}}[{RI}]))",
                   "{{instance}} cpu {{cpu}} {{dependency}}")]),
        info_table("Watch method and the application", "How the watched CPUs are read, and the application's "
                   "threads found on each.",
                   f"jitterd_watch_method_info{{{SEL}}} or jitterd_watch_application_threads{{{SEL}}}",
                   w=12, h=5, exclude=("Time", "__name__")),
        row("Loops (the applications' own)"),
        ts("Loop window quantiles", "Per application loop (the loops: section, docs/loops.md): p50, p99, p99.9 "
           "and p99.99 gap over the rolling window (jitterd_loop_window_gap_seconds; bucket upper edges), "
           "as a sampled CPU's.", "s",
           [target(f"jitterd_loop_window_gap_seconds{{{SEL}}}",
                   "{{instance}} {{loop}} cpu {{cpu}} p{{quantile}}")], log=10),
        ts("Loop window max", "Exact largest gap of each loop over the rolling window: what the loop spike "
           "alert watches.", "s",
           [target(f"jitterd_loop_window_max_gap_seconds{{{SEL}}}", "{{instance}} {{loop}} cpu {{cpu}}")], log=10),
        ts("Loop interruptions/s", "Gaps of the loop at or above its interruption threshold per second.", "ops",
           [target(f"rate(jitterd_loop_interruptions_total{{{SEL}}}[{RI}])", "{{instance}} {{loop}} cpu {{cpu}}")]),
        ts("Loop stolen share", "Time stolen by interruptions / time the loop recorded.", "percentunit",
           [target(f"rate(jitterd_loop_stolen_seconds_total{{{SEL}}}[{RI}])\n/\n"
                   f"rate(jitterd_loop_sampled_seconds_total{{{SEL}}}[{RI}])", "{{instance}} {{loop}} cpu {{cpu}}")]),
        panel("table", "Loop health", "Per loop: up (its writer lives and its heartbeat moves), seconds since "
              "its heartbeat last moved, its floor (smallest gap of its warm-up) and interruption threshold.",
              "none",
              [table_target(f"jitterd_loop_up{{{SEL}}}"),
               table_target(f"time() - jitterd_loop_last_seen_timestamp_seconds{{{SEL}}}"),
               table_target(f"jitterd_loop_floor_seconds{{{SEL}}}"),
               table_target(f"jitterd_loop_interruption_threshold_seconds{{{SEL}}}")], w=16, h=6,
              transformations=[{"id": "merge", "options": {}},
                               {"id": "organize", "options": {"excludeByName": {"Time": True, "__name__": True},
                                                              "renameByName": {
                                   "Value #A": "up", "Value #B": "last seen (s ago)", "Value #C": "floor",
                                   "Value #D": "threshold"}}}],
              overrides=[{"matcher": {"id": "byName", "options": name},
                          "properties": [{"id": "unit", "value": "s"}]}
                         for name in ("last seen (s ago)", "floor", "threshold")] +
                        [{"matcher": {"id": "byName", "options": "up"},
                          "properties": [{"id": "custom.cellOptions", "value": {"type": "color-background"}},
                                         {"id": "thresholds", "value": _thresholds([1], ("red", "green"))}]}]),
        ts("Loop segments refused/s", "Loop segments jitterd refused per second, by reason "
           "(jitterd_loop_refused_total; the log and `jitterd report loops` name the file and why).", "ops",
           [target(f"sum by (instance, reason) (rate(jitterd_loop_refused_total{{{SEL}}}[{RI}]))",
                   "{{instance}} {{reason}}")], w=8, h=6),
        row("Sampler"),
        ts("Loop floor and threshold", "The loop's smallest gap in the warm-up (its resolution) and the "
           "interruption threshold in use.", "s",
           [target(f"jitterd_sampler_loop_floor_seconds{{{SELC}}}", "{{instance}} cpu {{cpu}} floor"),
            target(f"jitterd_sampler_interruption_threshold_seconds{{{SELC}}}", "{{instance}} cpu {{cpu}} threshold")],
           log=10),
        ts("Context switches/s", "Voluntary and involuntary context switches of the sampler thread.", "ops",
           [target(f"rate(jitterd_sampler_context_switches_total{{{SELC}}}[{RI}])",
                   "{{instance}} cpu {{cpu}} {{kind}}")]),
        panel("table", "Sampler health", "Per sampler: up (running and progressing), pinned, memory locked, "
              "SCHED_FIFO priority obtained (0: none) and duty cycle.", "none",
              [table_target(f"jitterd_sampler_up{{{SELC}}}"), table_target(f"jitterd_sampler_pinned{{{SELC}}}"),
               table_target(f"jitterd_sampler_memory_locked{{{SELC}}}"),
               table_target(f"jitterd_sampler_realtime_priority{{{SELC}}}"),
               table_target(f"jitterd_sampler_duty_cycle_ratio{{{SELC}}}")], w=24, h=6,
              transformations=[{"id": "merge", "options": {}},
                               {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": {
                                   "Value #A": "up", "Value #B": "pinned", "Value #C": "memory locked",
                                   "Value #D": "FIFO priority", "Value #E": "duty cycle"}}}],
              overrides=[{"matcher": {"id": "byName", "options": "duty cycle"},
                          "properties": [{"id": "unit", "value": "percentunit"}]},
                         {"matcher": {"id": "byName", "options": "up"},
                          "properties": [{"id": "custom.cellOptions", "value": {"type": "color-background"}},
                                         {"id": "thresholds", "value": _thresholds([1], ("red", "green"))}]}]),
        row("Machine"),
        info_table("Fingerprint", "Kernel, command line, microcode, BIOS and CPU model (jitterd_fingerprint_info).",
                   f"jitterd_fingerprint_info{{{SEL}}}", w=24, h=5),
        info_table("Clocksource and counter", "The kernel's current clocksource, and the counter jitterd reads "
                   "with how its frequency was obtained.",
                   f"jitterd_clocksource_current_info{{{SEL}}} or jitterd_tick_info{{{SEL}}}", w=12, h=5),
        ts("Counter frequency in use", "The frequency jitterd converts ticks with.", "hertz",
           [target(f"jitterd_tick_frequency_hertz{{{SEL}}}", "{{instance}}")], h=5),
    ]
    return dashboard(c, "host", "jitterd / Host and CPU detail",
                     "Per sampled CPU: the gap distribution, window quantiles and max, interruptions, stolen "
                     "share, attribution; per watched CPU: what the kernel took from the application; per "
                     "application loop: its window quantiles and max, interruptions, stolen share and health; "
                     "sampler health and the machine's fingerprint.", panels, cpu=True)


def c2c(c):
    base = f"instance_relation:jitterd_c2c_class_median_latency_seconds:avg_over_time{c['c2cBaselineWindow']}"
    panels = [
        row("Latest run"),
        panel("table", "Latency matrix (median, one-way)", "Median one-way latency of each measured pair in "
              "its latest run: rows cpu_a, columns cpu_b. Pick one instance for a readable matrix.", "s",
              [table_target(f'max by (cpu_a, cpu_b) (jitterd_c2c_latency_seconds{{{SEL}, quantile="0.5"}})')],
              w=12, h=10,
              transformations=[{"id": "groupingToMatrix", "options": {
                  "rowField": "cpu_a", "columnField": "cpu_b", "valueField": "Value", "emptyValue": "null"}}],
              options={"cellHeight": "sm"},
              overrides=[{"matcher": {"id": "byType", "options": "number"}, "properties": [
                  {"id": "custom.cellOptions", "value": {"type": "color-background", "mode": "gradient"}},
                  {"id": "color", "value": {"mode": "continuous-GrYlRd"}}]}]),
        panel("bargauge", "Pair age", "Time since each pair was last measured (the probe measures a budget of "
              "pairs per run).", "s",
              [target(f"time() - jitterd_c2c_pair_last_measured_timestamp_seconds{{{SEL}}}",
                      "{{instance}} {{cpu_a}}-{{cpu_b}}", instant=True)], w=12, h=10),
        row("Over time"),
        ts("Latency by relation class", "Median over the class's pairs of each pair's median one-way latency, "
           "by relation (smt_sibling, shared_l2, shared_l3, same_node, cross_node).", "s",
           [target(f'jitterd_c2c_class_pair_median_latency_seconds{{{SEL}, quantile="0.5"}}',
                   "{{instance}} {{relation}}")]),
        ts("Class latency against its baseline", f"Class median / its {c['c2cBaselineWindow']} average "
           f"(recording rule); the regression alert fires above {c['c2cRegressionRatio']}.", "percentunit",
           [target(f'jitterd_c2c_class_pair_median_latency_seconds{{{SEL}, quantile="0.5"}}\n'
                   f"/ on (job, instance, relation)\n{base}{{{SEL}}}", "{{instance}} {{relation}}")]),
        ts("Pair latency", "Each pair's one-way latency (median, and 0.1 / 0.9 quantiles of its samples).", "s",
           [target(f'jitterd_c2c_latency_seconds{{{SEL}, quantile=~"0.1|0.5|0.9"}}',
                   "{{instance}} {{cpu_a}}-{{cpu_b}} {{relation}} q{{quantile}}")]),
        ts("Pair failures", "Failed attempts per pair within the interval (timeout, a side could not run).",
           "short", [target(f"increase(jitterd_c2c_pair_failures_total{{{SEL}}}[{RI}])",
                            "{{instance}} {{cpu_a}}-{{cpu_b}}")]),
        ts("Pairs planned, measured, attempted", "Pairs the probe plans over all its runs, those with a result, "
           "and those its last run attempted.", "short",
           [target(f"jitterd_c2c_planned_pairs{{{SEL}}}", "{{instance}} planned"),
            target(f"jitterd_c2c_measured_pairs{{{SEL}}}", "{{instance}} measured"),
            target(f"jitterd_c2c_last_run_attempted_pairs{{{SEL}}}", "{{instance}} attempted")]),
        info_table("Pairs", "Measured pairs with their relation and NUMA nodes (`unknown` where the kernel "
                   "gives none).", f"jitterd_c2c_pair_info{{{SEL}}}", w=12, h=8),
    ]
    return dashboard(c, "c2c", "jitterd / Core-to-core latency",
                     "Cache-line ping-pong latency between pinned CPU pairs, by topology relation.", panels)


def timing(c):
    panels = [
        row("Counter and clocks"),
        ts("Counter frequency estimates", "Each method's estimate of the counter frequency, and the frequency "
           "in use.", "hertz",
           [target(f"jitterd_clock_frequency_hertz{{{SEL}}}", "{{instance}} {{method}}"),
            target(f"jitterd_tick_frequency_hertz{{{SEL}}}", "{{instance}} in use")]),
        ts("Frequency disagreement", "estimate / frequency in use - 1, in parts per million; the alert "
           f"fires above {c['clockDisagreementRatio'] * 1e6:.0f} ppm.", "ppm",
           [target(f"1e6 * jitterd_clock_frequency_disagreement_ratio{{{SEL}}}", "{{instance}} {{method}}")]),
        ts("Drift against CLOCK_MONOTONIC_RAW", "Counter time / CLOCK_MONOTONIC_RAW time since the clock "
           "probe's previous run - 1, in ppm (from its second run).", "ppm",
           [target(f"1e6 * jitterd_clock_drift_ratio{{{SEL}}}", "{{instance}}")]),
        info_table("Clocksources", "Current (value column: current) and available clocksources, and whether "
                   "the CPU reports tsc_known_freq.",
                   f'label_replace(jitterd_clocksource_current_info{{{SEL}}}, "state", "current", "", "") '
                   f'or label_replace(jitterd_clocksource_available_info{{{SEL}}}, "state", "available", "", "")',
                   w=12),
        ts("Sleep overshoot", "nanosleep's actual - requested, per requested duration: median, p99 and max of "
           "the last run.", "s",
           [target(f"jitterd_clock_sleep_overshoot_seconds{{{SEL}}}",
                   "{{instance}} {{requested_seconds}}s q{{quantile}}")], log=10),
        row("Pacing"),
        ts("Pacing achieved / target", "Achieved rate / target rate per pacer (counter or clock_gettime) and "
           f"target rate; the alert fires below {c['pacingAchievedRatioMin']}.", "percentunit",
           [target(f"jitterd_pacing_achieved_ratio{{{SEL}}}", "{{instance}} {{method}} {{rate}}/s")]),
        ts("Pacing max lateness", "Largest lateness of a send against its slot in the last run.", "s",
           [target(f"jitterd_pacing_max_lateness_seconds{{{SEL}}}", "{{instance}} {{method}} {{rate}}/s")], log=10),
        ts("Pacing p99 lateness", "p99 lateness of the sends within the interval, from the lateness "
           "histogram (undefined, NaN, between runs: the probe runs every 15 min by default).", "s",
           [target(f"histogram_quantile(0.99, sum by (instance, method, rate, le) "
                   f"(rate(jitterd_pacing_lateness_seconds_bucket{{{SEL}}}[{RI}])))",
                   "{{instance}} {{method}} {{rate}}/s")], log=10),
        ts("Unthrottled send rate", "Sends per second back to back, without pacing: the ceiling.", "ops",
           [target(f"jitterd_pacing_unthrottled_sends_per_second{{{SEL}}}", "{{instance}} {{method}}")]),
        row("Kernel operations and pinning"),
        ts("Kernel operation cost (median)", "Median cost of one counter read, clock_gettime per clock, a bare "
           "syscall, thread create+join and fork+wait.", "s",
           [target(f'jitterd_kernel_cost_seconds{{{SEL}, quantile="0.5"}}', "{{instance}} {{op}}")], log=10),
        ts("Kernel operation cost (p99)", "p99 cost of each operation over the last run's samples.", "s",
           [target(f'jitterd_kernel_cost_seconds{{{SEL}, quantile="0.99"}}', "{{instance}} {{op}}")], log=10),
        ts("Pinned vs unpinned gaps", "The same loop pinned and unpinned: gap quantiles of the last window.", "s",
           [target(f"jitterd_pinning_gap_seconds{{{SEL}}}", "{{instance}} {{mode}} q{{quantile}}")], log=10),
        ts("Migrations", "CPU changes the pinning probe's loop saw in its last window, per mode.", "short",
           [target(f"jitterd_pinning_last_window_migrations{{{SEL}}}", "{{instance}} {{mode}}")]),
        row("Probes"),
        ts("Probe success", "1 if the probe's last run succeeded.", "bool",
           [target(f"jitterd_probe_success{{{SEL}}}", "{{instance}} {{probe}}")]),
        ts("Probe duration", "How long each probe's last run took.", "s",
           [target(f"jitterd_probe_duration_seconds{{{SEL}}}", "{{instance}} {{probe}}")]),
    ]
    return dashboard(c, "timing", "jitterd / Timing probes",
                     "Counter calibration, clock drift and clocksource, sleep overshoot, pacing accuracy, "
                     "kernel operation costs, pinned vs unpinned.", panels)


def posture(c):
    def compare(title, description, unit, now_expr, then_expr, **extra):
        return ts(title, description, unit, [target(now_expr, "{{instance}} cpu {{cpu}} now"),
                                             target(then_expr, "{{instance}} cpu {{cpu}} $compare ago")], **extra)

    panels = [
        row("Checklist"),
        stat("Unmet expectations", "Unmet `expect:` checks on the selected instances.", "none",
             f"sum(jitterd_expectation_unmet{{{SEL}}})", w=6),
        stat("Posture warnings", "WARN lines of the checklist's rules of thumb.", "none",
             f"sum(jitterd_posture_warnings{{{SEL}}})", w=6),
        stat("Since last fingerprint change", "Time since the current fingerprint was first seen (or jitterd "
             "started): type it into `compare` to see before and after the change.", "s",
             f"min(time() - jitterd_fingerprint_since_timestamp_seconds{{{SEL}}})", steps=(), w=6),
        stat("Unreadable files", "sysfs/procfs files missing in the last posture reading.", "none",
             f"sum(jitterd_posture_unreadable_files{{{SEL}}})", w=6),
        panel("table", "Expectations", "Each `expect:` check: 1 unmet, 0 met (cpu empty when machine-wide).",
              "none", [table_target(f"jitterd_expectation_unmet{{{SEL}}}")], w=12, h=8,
              transformations=[{"id": "organize", "options": {"excludeByName": {"Time": True, "__name__": True}}}],
              overrides=[{"matcher": {"id": "byName", "options": "Value"}, "properties": [
                  {"id": "custom.cellOptions", "value": {"type": "color-background"}},
                  {"id": "thresholds", "value": _thresholds([1], ("green", "red"))},
                  {"id": "displayName", "value": "unmet"}]}]),
        panel("bargauge", "Warnings per check", "Checklist warnings by check (nmi_watchdog, rcu_nocbs, smt, "
              "stat_interval, thp, workqueue, ...).", "none",
              [target(f"jitterd_posture_warnings{{{SEL}}}", "{{instance}} {{check}}", instant=True)], w=12, h=8),
        row("CPUs and interrupts"),
        panel("table", "CPU sets", "Per CPU: online, isolated, nohz_full, workqueue membership and the number "
              "of device IRQs whose affinity includes it.", "none",
              [table_target(f"jitterd_posture_cpu_online{{{SEL}}}"), table_target(f"jitterd_posture_cpu_isolated{{{SEL}}}"),
               table_target(f"jitterd_posture_cpu_nohz_full{{{SEL}}}"),
               table_target(f"jitterd_posture_cpu_workqueue{{{SEL}}}"),
               table_target(f"jitterd_posture_cpu_device_irqs{{{SEL}}}")], w=12, h=8,
              transformations=[{"id": "merge", "options": {}},
                               {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": {
                                   "Value #A": "online", "Value #B": "isolated", "Value #C": "nohz_full",
                                   "Value #D": "workqueue", "Value #E": "device IRQs"}}}]),
        ts("Device IRQs per CPU", "Device IRQs (with a handler) whose affinity includes the CPU.", "short",
           [target(f"jitterd_posture_cpu_device_irqs{{{SEL}}}", "{{instance}} cpu {{cpu}}")]),
        info_table("Device IRQs on sampled and isolated CPUs", "Needs probes.posture.irq_detail > 0.",
                   f"jitterd_posture_cpu_device_irq_info{{{SEL}}}", w=12, h=8),
        ts("Device interrupts on sampled CPUs", "Device interrupts that fired on a sampled CPU per second.", "ops",
           [target(f'sum by (instance, cpu) (rate(jitterd_attribution_events_total{{{SELC}, cause="device_irq"}}[{RI}]))',
                   "{{instance}} cpu {{cpu}}")]),
        row("Frequency, idle states, kernel"),
        info_table("Governors", "cpufreq governor of sampled and isolated CPUs (absent without cpufreq, as in "
                   "most VMs).", f"jitterd_posture_cpufreq_governor_info{{{SEL}}}", w=8, h=8),
        ts("CPU frequency", "cpufreq current, minimum and maximum of sampled and isolated CPUs.", "hertz",
           [target(f"jitterd_posture_cpufreq_current_hertz{{{SEL}}}", "{{instance}} cpu {{cpu}} current"),
            target(f"jitterd_posture_cpufreq_min_hertz{{{SEL}}}", "{{instance}} cpu {{cpu}} min"),
            target(f"jitterd_posture_cpufreq_max_hertz{{{SEL}}}", "{{instance}} cpu {{cpu}} max")], w=8),
        ts("Idle state exit latency", "Exit latency of each enabled idle state (C-state) of sampled and "
           "isolated CPUs.", "s",
           [target(f"jitterd_posture_cpuidle_exit_latency_seconds{{{SEL}}}", "{{instance}} cpu {{cpu}} {{state}}")],
           w=8),
        info_table("Kernel isolation parameters", "Isolation parameters on the kernel command line.",
                   f"jitterd_posture_kernel_param_info{{{SEL}}}", w=12, h=6),
        info_table("SMT, THP, watchdog CPUs", "SMT control, transparent hugepages and kernel.watchdog_cpumask.",
                   f"jitterd_posture_smt_control_info{{{SEL}}} or jitterd_posture_thp_info{{{SEL}}} "
                   f"or jitterd_posture_watchdog_cpus_info{{{SEL}}}", w=12, h=6),
        panel("table", "Sysctls and SMT", "nmi_watchdog, timer_migration, vm.stat_interval, sched_rt_runtime "
              "(-1: no limit) and whether SMT is active.", "none",
              [table_target(f"jitterd_posture_sysctl_kernel_nmi_watchdog{{{SEL}}}"),
               table_target(f"jitterd_posture_sysctl_kernel_timer_migration{{{SEL}}}"),
               table_target(f"jitterd_posture_sysctl_vm_stat_interval_seconds{{{SEL}}}"),
               table_target(f"jitterd_posture_sysctl_kernel_sched_rt_runtime_seconds{{{SEL}}}"),
               table_target(f"jitterd_posture_smt_active{{{SEL}}}")], w=24, h=5,
              transformations=[{"id": "merge", "options": {}},
                               {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": {
                                   "Value #A": "nmi_watchdog", "Value #B": "timer_migration",
                                   "Value #C": "stat_interval (s)", "Value #D": "sched_rt_runtime (s)",
                                   "Value #E": "SMT active"}}}]),
        info_table("Fingerprint", "Kernel, command line, microcode, BIOS and CPU model.",
                   f"jitterd_fingerprint_info{{{SEL}}}", w=24, h=5),
        row("Before and after ($compare ago)"),
        compare("Window max: now and $compare ago", "The same jitter panel now and at the `compare` offset: "
                "what did the change do.", "s",
                f"jitterd_sampler_window_max_gap_seconds{{{SELC}}}",
                f"jitterd_sampler_window_max_gap_seconds{{{SELC}}} offset $compare", log=10),
        compare("p99.99 gap: now and $compare ago", "p99.99 of the gap histogram over the interval, now and at "
                "the offset.", "s",
                f"histogram_quantile(0.9999, sum by (instance, cpu, le) "
                f"(rate(jitterd_sampler_gap_seconds_bucket{{{SELC}}}[{RI}])))",
                f"histogram_quantile(0.9999, sum by (instance, cpu, le) "
                f"(rate(jitterd_sampler_gap_seconds_bucket{{{SELC}}}[{RI}] offset $compare)))", log=10),
        compare("Stolen share: now and $compare ago", "Time stolen by interruptions / time sampled, now and at "
                "the offset.", "percentunit",
                f"rate(jitterd_sampler_stolen_seconds_total{{{SELC}}}[{RI}])\n/\n"
                f"rate(jitterd_sampler_sampled_seconds_total{{{SELC}}}[{RI}])",
                f"rate(jitterd_sampler_stolen_seconds_total{{{SELC}}}[{RI}] offset $compare)\n/\n"
                f"rate(jitterd_sampler_sampled_seconds_total{{{SELC}}}[{RI}] offset $compare)"),
        compare("Interruptions/s: now and $compare ago", "Interruptions per second, now and at the offset.", "ops",
                f"rate(jitterd_sampler_interruptions_total{{{SELC}}}[{RI}])",
                f"rate(jitterd_sampler_interruptions_total{{{SELC}}}[{RI}] offset $compare)"),
    ]
    return dashboard(c, "posture", "jitterd / Posture and change",
                     "The isolation checklist, IRQs, frequency and idle facts, and jitter now against a chosen "
                     "offset (before and after a kernel, BIOS or tuning change).", panels, cpu=True, compare=True)


def all_dashboards(c):
    return {"jitterd-fleet": fleet(c), "jitterd-host": host(c), "jitterd-c2c": c2c(c),
            "jitterd-timing": timing(c), "jitterd-posture": posture(c)}
