#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Helm chart and its plain rendering, offline: helm lint, helm template (defaults, the
# own helm commands of docs/install.md, and a copy of the chart holding test dashboards and rules), every
# rendered object validated against the Kubernetes schemas (kubernetes-validate, strict) and
# checked by chart_check.py, the committed packaging/kubernetes/ and the chart's Grafana copies
# not stale (packaging/helm/sync.sh --check).
#
# Tools, installed here into BUILD_DIR/tools on first use: helm (go install, needs a Go toolchain
# and the Go module proxy) and kubernetes-validate (pip in a venv, needs PyPI). A tool that cannot
# be had is a skip with the reason.
# Usage: helm_test.sh SOURCE_DIR BUILD_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
(($# == 2)) || { echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(realpath -- "$1")
build=$(realpath -- "$2")
readonly helm_version=v3.22.0 kv_version=1.37.0 k8s_version=1.30.0
tools=$build/tools
status=0
skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
command -v promtool >/dev/null || skip "promtool not found (the prometheus package: bash packaging/dev.sh deps)"

helm=$tools/bin/helm
if [[ ! -x $helm ]]; then
    # Compiling helm takes about 150 s of CPU (dev.sh test-fleet, a CI step of its own): on request.
    [[ ${JITTERD_GO_TOOLS:-} == 1 ]] \
        || skip "helm is not installed in $tools/bin; JITTERD_GO_TOOLS=1 ctest -R helm_chart installs it (go install, about 150 s of CPU, once; dev.sh test-fleet does it)"
    go=$(command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true)
    [[ -n $go ]] || skip "no Go toolchain to install helm $helm_version with (go install helm.sh/helm/v3/cmd/helm@$helm_version)"
    proxy=$("$go" env GOPROXY | cut -d, -f1)
    if [[ $proxy == http* ]]; then
        curl -fsS --max-time 20 -o /dev/null "$proxy/helm.sh/helm/v3/@v/$helm_version.info" \
            || skip "the Go module proxy $proxy is not reachable: cannot install helm"
    fi
    echo "installing helm $helm_version into $tools/bin (go install; minutes, once)"
    mkdir -p "$tools/bin"
    GOBIN=$tools/bin GOFLAGS=-trimpath nice "$go" install "helm.sh/helm/v3/cmd/helm@$helm_version" \
        || { echo "FAIL: go install helm $helm_version" >&2; exit 1; }
fi
venv=$tools/venv
if ! "$venv/bin/python" -c 'import kubernetes_validate' 2>/dev/null; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || skip "python3-venv not installed (bash packaging/dev.sh deps-package)"
    index=${PIP_INDEX_URL:-https://pypi.org/simple}
    curl -fsS --max-time 20 -o /dev/null "$index/kubernetes-validate/" || skip "PyPI ($index) is not reachable: cannot install kubernetes-validate"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "kubernetes-validate==$kv_version" || { echo "FAIL: pip install kubernetes-validate" >&2; exit 1; }
fi
ok "$("$helm" version --short), kubernetes-validate $("$venv/bin/kubernetes-validate" --version)"

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
chart=$src/packaging/helm/jitterd
check() { "$venv/bin/python" "$src/tests/packaging/chart_check.py" --kubernetes-version "$k8s_version" "$@"; }
count() { local n=0 f; for f in "$@"; do [[ -f $f ]] && n=$((n + 1)); done; echo "$n"; }

project_version=$(sed -n 's/^project(jitterd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
grep -qx "version: $project_version" "$chart/Chart.yaml" && grep -qx "appVersion: \"$project_version\"" "$chart/Chart.yaml" \
    || fail "Chart.yaml's version/appVersion are not jitterd's $project_version"
grep -qx "  artifacthub.io/license: Apache-2.0" "$chart/Chart.yaml" || fail "Chart.yaml does not name the licence (annotations: artifacthub.io/license: Apache-2.0)"

"$helm" lint --strict "$chart" || fail "helm lint --strict"

# 1. The defaults, with the dashboards and rules the chart carries now.
dashboards=$(count "$chart"/dashboards/*.json)
rules=$(count "$chart"/rules/*.yml "$chart"/rules/*.yaml)
"$helm" template jitterd "$chart" --namespace monitoring >"$tmp/default.yaml" || fail "helm template (defaults)"
check "$tmp/default.yaml" --samplers 1 --dashboards "$dashboards" --rules "$rules" || fail "the default rendering"

# 2. A copy holding a test dashboard and rules file, three samplers and tracepoints.
cp -r "$chart" "$tmp/chart"
rm -f "$tmp/chart"/dashboards/* "$tmp/chart"/rules/*
cp "$src"/tests/packaging/fixtures/grafana/dashboards/*.json "$tmp/chart/dashboards/"
cp "$src"/tests/packaging/fixtures/grafana/prometheus/*.yml "$tmp/chart/rules/"
"$helm" template jt "$tmp/chart" --namespace obs --set samplerCpus=3 --set tracepoints.enabled=true \
    --set config.log.level=debug >"$tmp/fixture.yaml" || fail "helm template (test dashboards and rules)"
check "$tmp/fixture.yaml" --samplers 3 --perfmon --dashboards 1 --rules 1 || fail "the rendering with test dashboards and rules"
"$helm" template jt "$tmp/chart" --namespace obs --set bpf.enabled=true >"$tmp/bpf.yaml" || fail "helm template (bpf)"
check "$tmp/bpf.yaml" --samplers 1 --bpf --dashboards 1 --rules 1 || fail "the rendering with bpf.enabled"

# 3. The helm install / upgrade lines of docs/install.md, as helm template (no cluster here).
n=0
while IFS= read -r line; do
    read -r -a words <<<"$line"
    args=(template)
    samplers=1
    for w in "${words[@]:2}"; do
        [[ $w == --create-namespace ]] && continue
        [[ $w == samplerCpus=* ]] && samplers=${w#samplerCpus=}
        args+=("$w")
    done
    (cd "$src" && "$helm" "${args[@]}") >"$tmp/docs$n.yaml" || { fail "docs/install.md: $line (as helm ${args[*]})"; continue; }
    check "$tmp/docs$n.yaml" --samplers "$samplers" --dashboards "$dashboards" --rules "$rules" || fail "docs/install.md: $line"
    grep -q 'image: "registry.example.com/jitterd:' "$tmp/docs$n.yaml" || fail "docs/install.md: $line: the image is not the one it sets"
    n=$((n + 1))
done < <(grep -E '^helm (install|upgrade) ' "$src/docs/install.md")
((n >= 2)) || fail "docs/install.md has $n helm install/upgrade lines, expected both"
ok "the $n helm install/upgrade commands of docs/install.md render and pass"

# 4. The committed plain manifests and the chart's Grafana copies are current, and valid.
HELM=$helm bash "$src/packaging/helm/sync.sh" --check || fail "stale copies (above): run bash packaging/helm/sync.sh"
docs_sed=$(grep -oE "^sed '[^']*' packaging/kubernetes/jitterd.yaml" "$src/docs/install.md" | head -1)
[[ -n $docs_sed ]] || fail "docs/install.md has no sed line setting the image of packaging/kubernetes/jitterd.yaml"
(cd "$src" && eval "$docs_sed") >"$tmp/plain.yaml"
grep -q 'image: "registry.example.com/jitterd:' "$tmp/plain.yaml" || fail "docs/install.md's sed does not set the image in packaging/kubernetes/jitterd.yaml"
cat "$src/packaging/kubernetes/prometheus-operator.yaml" >>"$tmp/plain.yaml"
check "$tmp/plain.yaml" --samplers 1 --dashboards "$dashboards" --rules "$rules" || fail "packaging/kubernetes/*.yaml"
exit "$status"
