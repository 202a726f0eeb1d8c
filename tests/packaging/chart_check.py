#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a `helm template` rendering of packaging/helm/jitterd (run by helm_test.sh).

Usage: chart_check.py RENDERED.yaml --samplers N [--perfmon] [--bpf] [--dashboards N] [--rules N]
       [--kubernetes-version V] [--promtool PATH]
Every object of a built-in kind is validated against the Kubernetes schemas (kubernetes-validate,
strict: no unknown field); ServiceMonitor and PrometheusRule, which it has no schema for, are
checked field by field, and each PrometheusRule's spec by promtool check rules. Then the
DaemonSet's settings that jitterd relies on. Exit 0 pass, 1 fail.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile

import kubernetes_validate
import yaml

failures = []


RFC1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("rendered")
    p.add_argument("--samplers", type=int, required=True)
    p.add_argument("--perfmon", action="store_true")
    p.add_argument("--bpf", action="store_true", help="the watch's bpf method: BPF and PERFMON")
    p.add_argument("--dashboards", type=int, default=0)
    p.add_argument("--rules", type=int, default=0)
    p.add_argument("--kubernetes-version", default="1.30.0")
    p.add_argument("--promtool", default="promtool")
    a = p.parse_args()
    docs = [d for d in yaml.safe_load_all(open(a.rendered)) if d]
    kinds = {}
    seen = set()
    for doc in docs:
        kinds.setdefault(doc["kind"], []).append(doc)
        name = f'{doc["kind"]}/{doc["metadata"]["name"]}'
        # The schemas do not check names: an API server refuses a name that is not an RFC 1123
        # subdomain, and the second of two objects with one kind, namespace and name replaces the first.
        if not RFC1123_SUBDOMAIN.fullmatch(doc["metadata"]["name"]) or len(doc["metadata"]["name"]) > 253:
            fail(f"{name}: the name is not an RFC 1123 subdomain")
        key = (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])
        if key in seen:
            fail(f"{name}: two objects of this kind and name in namespace {key[1]}")
        seen.add(key)
        if doc["kind"] in ("ServiceMonitor", "PrometheusRule"):
            if doc.get("apiVersion") != "monitoring.coreos.com/v1":
                fail(f"{name}: apiVersion {doc.get('apiVersion')}")
            continue
        try:
            kubernetes_validate.validate(doc, a.kubernetes_version, strict=True)
        except kubernetes_validate.ValidationError as e:
            fail(f"{name}: not valid for Kubernetes {a.kubernetes_version}: {e.message} at {list(e.path)}")
        except Exception as e:  # an unknown kind or version
            fail(f"{name}: cannot be validated: {e}")
    print(f"ok: {len(docs)} objects: " + ", ".join(f"{k} x{len(v)}" for k, v in sorted(kinds.items())))

    for kind in ("ConfigMap", "DaemonSet", "Service"):
        if kind not in kinds:
            fail(f"no {kind} rendered")
    ds = kinds.get("DaemonSet", [{}])[0]
    pod = ds.get("spec", {}).get("template", {}).get("spec", {})
    c = (pod.get("containers") or [{}])[0]
    res = c.get("resources", {})
    want_cpu = str(a.samplers + 1)
    if res.get("requests") != res.get("limits"):
        fail(f"requests {res.get('requests')} != limits {res.get('limits')}: not Guaranteed QoS, no exclusive CPUs")
    if str(res.get("requests", {}).get("cpu")) != want_cpu:
        fail(f"cpu request {res.get('requests', {}).get('cpu')}, expected {want_cpu} whole CPUs ({a.samplers} samplers + 1)")
    caps = c.get("securityContext", {}).get("capabilities", {})
    want_caps = ["SYS_NICE", "IPC_LOCK"] + (["BPF"] if a.bpf else []) + (["PERFMON"] if a.perfmon or a.bpf else [])
    if caps.get("drop") != ["ALL"] or sorted(caps.get("add", [])) != sorted(want_caps):
        fail(f"capabilities {caps}, expected drop ALL, add {want_caps}")
    sc = c.get("securityContext", {})
    if sc.get("allowPrivilegeEscalation") is not False or sc.get("readOnlyRootFilesystem") is not True:
        fail(f"securityContext {sc}: privilege escalation must be off and the root read-only")
    if sc.get("privileged"):
        fail("the container is privileged")
    args = c.get("args", [])
    for flag in ("--path.sysfs=/host/sys", "--path.procfs=/host/proc"):
        if flag not in args:
            fail(f"container args {args} lack {flag}")
    mounts = {m["name"]: m for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    for name, host, path in (("sys", "/sys", "/host/sys"), ("proc", "/proc", "/host/proc")):
        if vols.get(name, {}).get("hostPath", {}).get("path") != host or mounts.get(name, {}).get("mountPath") != path \
                or not mounts.get(name, {}).get("readOnly"):
            fail(f"the host's {host} is not mounted read-only at {path}")
    if not (pod.get("nodeSelector") or pod.get("affinity")):
        fail("no nodeSelector or affinity: jitterd would run on every node")
    if pod.get("hostNetwork") or pod.get("hostPID"):
        fail("hostNetwork/hostPID set")
    cm = [d for d in kinds.get("ConfigMap", []) if "jitterd.yaml" in d.get("data", {})]
    if not cm:
        fail("no ConfigMap with jitterd.yaml")
    else:
        config = yaml.safe_load(cm[0]["data"]["jitterd.yaml"])
        if not isinstance(config, dict):
            fail(f"jitterd.yaml in the ConfigMap is not a mapping: {config!r}")
        if vols.get("config", {}).get("configMap", {}).get("name") != cm[0]["metadata"]["name"]:
            fail("the DaemonSet does not mount the configuration ConfigMap")
        print("jitterd.yaml from the ConfigMap:\n" + cm[0]["data"]["jitterd.yaml"])
    print(f"ok: DaemonSet: {want_cpu} whole CPUs, requests = limits, capabilities {want_caps}, /sys and /proc read-only")

    dashboards = [d for d in kinds.get("ConfigMap", []) if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    if len(dashboards) != a.dashboards:
        fail(f"{len(dashboards)} dashboard ConfigMaps, expected {a.dashboards}")
    for d in dashboards:
        for key, body in d.get("data", {}).items():
            try:
                json.loads(body)
            except ValueError as e:
                fail(f"ConfigMap {d['metadata']['name']}: {key} is not JSON: {e}")
    rules = kinds.get("PrometheusRule", [])
    if len(rules) != a.rules:
        fail(f"{len(rules)} PrometheusRules, expected {a.rules}")
    for r in rules:
        with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
            yaml.safe_dump(r["spec"], f)
            f.flush()
            out = subprocess.run([a.promtool, "check", "rules", f.name], capture_output=True, text=True)
            if out.returncode != 0:
                fail(f"PrometheusRule {r['metadata']['name']}: promtool check rules: {out.stdout}{out.stderr}")
    for sm in kinds.get("ServiceMonitor", []):
        eps = sm.get("spec", {}).get("endpoints", [])
        svc = kinds.get("Service", [{}])[0]
        ports = [p.get("name") for p in svc.get("spec", {}).get("ports", [])]
        if not eps or any(e.get("port") not in ports for e in eps):
            fail(f"ServiceMonitor endpoints {eps} do not name a port of the Service ({ports})")
        if sm["spec"].get("selector", {}).get("matchLabels", {}).items() - svc["metadata"].get("labels", {}).items():
            fail("the ServiceMonitor's selector does not match the Service's labels")
    print(f"ok: {len(dashboards)} dashboard ConfigMaps (JSON), {len(rules)} PrometheusRules (promtool check rules)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
