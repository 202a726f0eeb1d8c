# SPDX-License-Identifier: Apache-2.0
"""Static checks of Grafana dashboards against a real /metrics scrape (standard library only).

lint(board, exposition) returns a list of problems, each one line naming the dashboard and
panel. `exposition` is what a real scrape says: the metric names it exports and which of them
are counters (counter families, and a histogram's _bucket/_count/_sum or a summary's
_count/_sum, which only grow). Also used by the end-to-end test for the panels' queries.
"""

import re

DATASOURCE_UIDS = ("${datasource}", "$datasource")
RATE_FUNCTIONS = ("rate", "increase", "irate")
PROMQL_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
                   "group_right", "offset", "bool", "inf", "nan", "atan2"}
# Series Prometheus makes itself for every target; not exported by the daemon.
PROMETHEUS_SERIES = {"up"}

_TYPE_RE = re.compile(r"^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$")
_SAMPLE_RE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]")
_IDENT_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_LIST_RE = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_NUMBER_RE = re.compile(r"(?<![a-zA-Z0-9_:.])\d+(\.\d+)?([eE][-+]?\d+)?")


class Exposition:
    """Metric names and counter names of one or more scrapes (Prometheus text format)."""

    def __init__(self):
        self.names = set()
        self.counters = set()

    def add(self, text):
        for line in text.splitlines():
            match = _TYPE_RE.match(line)
            if match:
                name, kind = match.groups()
                if kind == "counter":
                    self.counters.add(name)
                elif kind == "histogram":
                    self.counters.update({name + "_bucket", name + "_count", name + "_sum"})
                elif kind == "summary":
                    self.counters.update({name + "_count", name + "_sum"})
                continue
            match = _SAMPLE_RE.match(line)
            if match:
                self.names.add(match.group(1))
        return self


def substitute(expr, values):
    """Replaces Grafana variables ($name, ${name}, [[name]]) with values[name]."""
    def one(match):
        name = match.group(1) or match.group(2) or match.group(3)
        if name not in values:
            raise KeyError(f"no value for variable ${name} in: {expr}")
        return values[name]
    return re.sub(r"\$\{(\w+)\}|\$(\w+)|\[\[(\w+)\]\]", one, expr)


def strip_strings(expr):
    return re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)


def metric_names(expr):
    """Metric names an expression selects (expr with its variables already substituted)."""
    text = strip_strings(expr)
    text = re.sub(r"\{[^{}]*\}", " ", text)          # label matchers
    text = re.sub(r"\[[^\[\]]*\]", " ", text)        # range and subquery durations
    text = re.sub(r"\boffset\s+-?[0-9a-zA-Z]+", " ", text)
    text = _LABEL_LIST_RE.sub(" ", text)
    text = _NUMBER_RE.sub(" ", text)
    names = []
    for match in _IDENT_RE.finditer(text):
        word = match.group(0)
        following = text[match.end():].lstrip()
        if following.startswith("(") or word.lower() in PROMQL_KEYWORDS:
            continue  # a function or aggregation, or a keyword
        names.append(word)
    return names


def _enclosing_function(text, position):
    """The name of the innermost function call whose parentheses enclose text[position]."""
    depth = 0
    for i in range(position - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            if depth == 0:
                match = re.search(r"([a-zA-Z_]\w*)\s*$", text[:i])
                if match and match.group(1) in ("by", "without", "on", "ignoring"):
                    continue
                return match.group(1) if match else ""
            depth -= 1
    return None


def counters_outside_rate(expr, counters):
    """Counter names used other than as the argument of rate/increase/irate."""
    text = strip_strings(expr)
    bad = []
    for match in _IDENT_RE.finditer(text):
        if match.group(0) in counters and _enclosing_function(text, match.start()) not in RATE_FUNCTIONS:
            bad.append(match.group(0))
    return bad


def rates_without_rate_interval(expr):
    """rate/increase/irate calls (in the raw, unsubstituted expr) whose range is not
    $__rate_interval."""
    text = strip_strings(expr)
    bad = []
    for match in re.finditer(r"\b(rate|increase|irate)\s*\(", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        call = text[match.start():i]
        ranges = re.findall(r"\[([^\[\]]*)\]", call)
        if not ranges or any(r.strip() not in ("$__rate_interval", "${__rate_interval}") for r in ranges):
            bad.append(call)
    return bad


def panels_of(board):
    """Every panel, rows' nested panels included."""
    for panel in board.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def queries(board):
    """(where, expr) for every PromQL query of the dashboard: panel targets and annotations."""
    for panel in panels_of(board):
        for t in panel.get("targets", []):
            yield f"panel {panel.get('id')} {panel.get('title')!r} target {t.get('refId')}", t.get("expr", "")
    for annotation in board.get("annotations", {}).get("list", []):
        if "expr" in annotation:
            yield f"annotation {annotation.get('name')!r}", annotation["expr"]


def variable_queries(board):
    """(variable name, metric, label) of every label_values(...) variable."""
    for var in board.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        query = var.get("query")
        query = query.get("query", "") if isinstance(query, dict) else query or ""
        match = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", query, re.S)
        yield var.get("name"), match.group(1) if match else None, match.group(2) if match else None, query


def default_values(board, overrides=None):
    """A value for every variable, for parsing: the rate interval, a compare offset, '.+'."""
    values = {"__rate_interval": "5m", "__interval": "1m", "__range": "1h", "datasource": "prometheus"}
    for var in board.get("templating", {}).get("list", []):
        if var.get("type") == "custom":
            values[var["name"]] = str(var.get("current", {}).get("value") or var["query"].split(",")[0])
        else:
            values.setdefault(var["name"], ".+")
    values.update(overrides or {})
    return values


def lint(board, exposition, recorded=()):
    """Problems with one dashboard, [] if none."""
    title = board.get("title", "?")
    problems = []

    def problem(text):
        problems.append(f"{title}: {text}")

    for key in ("uid", "title", "tags"):
        if not board.get(key):
            problem(f"no {key}")
    variables = board.get("templating", {}).get("list", [])
    datasources = [v for v in variables if v.get("type") == "datasource"]
    if len(datasources) != 1:
        problem(f"{len(datasources)} datasource variables, expected exactly 1")
    elif datasources[0].get("query") != "prometheus":
        problem("the datasource variable is not of type prometheus")
    names = {v.get("name") for v in variables}
    for required in ("job", "instance"):
        var = next((v for v in variables if v.get("name") == required), None)
        if var is None or not var.get("multi"):
            problem(f"no multi-select {required} variable")
    for name, metric, label, query in variable_queries(board):
        if metric is None:
            problem(f"variable {name}: not a label_values(...) query: {query}")
            continue
        if name in ("job", "instance") and not metric.startswith("jitterd_build_info"):
            problem(f"variable {name}: label_values of {metric}, expected jitterd_build_info")
        for metric_name in metric_names(substitute(metric, default_values(board))):
            if metric_name not in exposition.names:
                problem(f"variable {name}: metric {metric_name} is not exported by jitterd")

    ids = {}
    for panel in panels_of(board):
        pid = panel.get("id")
        where = f"panel {pid} {panel.get('title')!r}"
        if pid in ids:
            problem(f"{where}: duplicate panel id (also {ids[pid]!r})")
        ids[pid] = panel.get("title")
        if panel.get("type") == "row":
            continue
        if not (panel.get("description") or "").strip():
            problem(f"{where}: no description")
        if not panel.get("fieldConfig", {}).get("defaults", {}).get("unit"):
            problem(f"{where}: no unit")
        if (panel.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
            problem(f"{where}: datasource is not the $datasource variable")
        if not panel.get("targets"):
            problem(f"{where}: no targets")
        for t in panel.get("targets", []):
            if (t.get("datasource") or panel.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
                problem(f"{where} target {t.get('refId')}: datasource is not the $datasource variable")
        if panel.get("type") == "heatmap":
            if panel.get("options", {}).get("calculate") is not False:
                problem(f"{where}: heatmap with calculate not false")
            if any(t.get("format") != "heatmap" for t in panel.get("targets", [])):
                problem(f"{where}: heatmap target without format: heatmap")
    for annotation in board.get("annotations", {}).get("list", []):
        if "expr" in annotation and (annotation.get("datasource") or {}).get("uid") not in DATASOURCE_UIDS:
            problem(f"annotation {annotation.get('name')!r}: datasource is not the $datasource variable")

    values = default_values(board)
    for where, expr in queries(board):
        if not expr.strip():
            problem(f"{where}: empty expression")
            continue
        for call in rates_without_rate_interval(expr):
            problem(f"{where}: {call.split('(')[0]} without [$__rate_interval]: {call}")
        try:
            concrete = substitute(expr, values)
        except KeyError as error:
            problem(f"{where}: {error.args[0]}")
            continue
        for name in metric_names(concrete):
            if name not in exposition.names and name not in recorded and name not in PROMETHEUS_SERIES:
                problem(f"{where}: metric {name} is not exported by jitterd (nor recorded by the rules)")
        for name in counters_outside_rate(concrete, exposition.counters):
            problem(f"{where}: counter {name} outside rate/increase")
    return problems
