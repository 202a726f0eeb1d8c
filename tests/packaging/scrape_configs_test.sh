#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Prometheus scrape configurations of packaging/prometheus, each checked by promtool check
# config (which also checks the file_sd targets files a config matches). Debian 12's promtool is
# built without Kubernetes service discovery, so kubernetes.yml is checked by upstream promtool,
# installed here on first use into BUILD_DIR/tools (go install, built with only Kubernetes
# discovery: -tags remove_all_sd,enable_kubernetes_sd; skip with the reason when no Go
# toolchain or module proxy). Then the same files with a mistake each, to show the checks fail.
# Usage: scrape_configs_test.sh SOURCE_DIR BUILD_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
(($# == 2)) || { echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(realpath -- "$1")
build=$(realpath -- "$2")
readonly promtool_module=github.com/prometheus/prometheus/cmd/promtool promtool_version=v0.316.0
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
command -v promtool >/dev/null || { echo "SKIP: promtool not found (bash packaging/dev.sh deps)" >&2; exit 77; }
dir=$src/packaging/prometheus
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT

for config in static.yml file_sd.yml; do
    promtool check config "$dir/$config" || fail "promtool check config $config"
done
# A broken targets file must fail the file_sd check (promtool reads the files the config matches).
cp -r "$dir" "$tmp/broken"
printf -- '- targets: [rt-node-99.example.com:9978]\n  labelz: {a: b}\n' >"$tmp/broken/file_sd/jitterd-broken.yml"
if promtool check config "$tmp/broken/file_sd.yml" >/dev/null 2>&1; then
    fail "promtool check config passes a file_sd targets file with an unknown field: the targets are not checked"
fi
ok "static.yml and file_sd.yml (with its targets) pass; a bad targets file fails"

upstream=$build/tools/bin/promtool
if [[ ! -x $upstream ]]; then
    # Compiling promtool takes about 170 s of CPU (dev.sh test-fleet, a CI step of its own): on request.
    if [[ ${JITTERD_GO_TOOLS:-} != 1 ]]; then
        echo "SKIP: kubernetes.yml not checked: Debian's promtool has no Kubernetes discovery; JITTERD_GO_TOOLS=1 ctest -R scrape_configs installs upstream promtool into $build/tools/bin (go install, about 170 s of CPU, once; dev.sh test-fleet does it)" >&2
        ((status == 0)) && exit 77
        exit "$status"
    fi
    go=$(command -v go || { [[ -x /usr/local/go/bin/go ]] && echo /usr/local/go/bin/go; } || true)
    if [[ -z $go ]]; then
        echo "SKIP: kubernetes.yml not checked: Debian's promtool has no Kubernetes discovery and no Go toolchain is here to install upstream promtool" >&2
        ((status == 0)) && exit 77
        exit "$status"
    fi
    proxy=$("$go" env GOPROXY | cut -d, -f1)
    if [[ $proxy == http* ]] && ! curl -fsS --max-time 20 -o /dev/null "$proxy/github.com/prometheus/prometheus/@v/$promtool_version.info"; then
        echo "SKIP: kubernetes.yml not checked: the Go module proxy $proxy is not reachable" >&2
        ((status == 0)) && exit 77
        exit "$status"
    fi
    echo "installing upstream promtool $promtool_version into $build/tools/bin (go install; minutes, once)"
    mkdir -p "$build/tools/bin"
    GOBIN=$build/tools/bin GOFLAGS=-trimpath nice "$go" install -tags remove_all_sd,enable_kubernetes_sd "$promtool_module@$promtool_version" \
        || { echo "FAIL: go install promtool" >&2; exit 1; }
fi
"$upstream" check config "$dir/kubernetes.yml" || fail "promtool ($promtool_version) check config kubernetes.yml"
sed 's/role: pod$/role: pods/' "$dir/kubernetes.yml" >"$tmp/broken/kubernetes.yml"
"$upstream" check config "$tmp/broken/kubernetes.yml" >/dev/null 2>&1 && fail "upstream promtool passes an unknown kubernetes_sd role"
for config in static.yml file_sd.yml; do
    "$upstream" check config "$dir/$config" >/dev/null || fail "upstream promtool check config $config"
done
ok "kubernetes.yml passes upstream promtool $promtool_version (and a wrong role fails)"
exit "$status"
