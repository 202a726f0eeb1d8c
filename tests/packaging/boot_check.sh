#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs inside the container systemd_boot_test.sh boots (a Debian 12 root with systemd and the
# jitterd package), as a oneshot unit after multi-user.target: drives jitterd.service as an
# operator does and prints "ok: ..." or "FAIL: ..." per step. PORT is where the installed
# configuration listens (127.0.0.1). Needs nothing the package does not bring but bash.
set -uo pipefail

config=/etc/jitterd/jitterd.yaml
dropins=/etc/systemd/system/jitterd.service.d
failed=0
ok() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*"
    failed=1
}
prop() { systemctl show -p "$1" --value jitterd.service; }

# GET PATH from the daemon with bash's /dev/tcp (no curl in the root): the whole answer.
http_get() {
    local answer
    exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
    answer=$(timeout 20 cat <&3)
    exec 3<&-
    printf '%s' "$answer"
}

# Waits up to $2 seconds for `http_get $1` to answer 200 with a body holding $3.
wait_for() {
    local path=$1 seconds=$2 pattern=$3 i answer
    for ((i = 0; i < seconds * 2; i++)); do
        answer=$(http_get "$path" 2>/dev/null)
        if [[ $answer == "HTTP/1."?" 200"* ]] && grep -q -- "$pattern" <<<"$answer"; then
            return 0
        fi
        sleep 0.5
    done
    return 1
}

journal() { journalctl -u jitterd.service --no-pager -o cat | tail -n "${1:-15}"; }

# --- start: notify, status text, /metrics -------------------------------------------------------
if [[ $(prop ActiveState) == active && $(prop SubState) == running ]]; then
    ok "jitterd.service active (running) at boot, Type=$(prop Type)"
else
    fail "jitterd.service is $(prop ActiveState) ($(prop SubState), result $(prop Result)) after boot"
    journal 30
fi
status_text=$(prop StatusText)
[[ -n $status_text ]] && ok "status text from sd_notify: $status_text" || fail "no status text (sd_notify STATUS=)"
if wait_for /metrics 60 '^jitterd_build_info'; then
    ok "/metrics on 127.0.0.1:$PORT serves jitterd_build_info"
else
    fail "/metrics on 127.0.0.1:$PORT: $(http_get /metrics | head -3)"
fi

# --- watchdog: WatchdogSec=30s, pinged every 15 s; a missed ping would kill the service ------------
[[ $(prop WatchdogUSec) == 30s ]] && ok "WatchdogUSec=30s" || fail "WatchdogUSec is '$(prop WatchdogUSec)'"
first=$(prop WatchdogTimestampMonotonic)
sleep 17
second=$(prop WatchdogTimestampMonotonic)
if [[ $first =~ ^[0-9]+$ && $second =~ ^[0-9]+$ ]] && ((second > first)); then
    ok "watchdog pinged: WatchdogTimestampMonotonic $first -> $second over 17 s; NRestarts=$(prop NRestarts)"
else
    fail "no watchdog ping over 17 s (WatchdogTimestampMonotonic '$first' -> '$second')"
fi

# --- reload: a changed configuration takes effect, through ExecReload= ----------------------------
sed -i 's|^  telemetry_path: /metrics$|  telemetry_path: /metrics-reloaded|' "$config"
pid_before=$(prop MainPID)
if systemctl reload jitterd.service; then
    ok "systemctl reload jitterd (ExecReload=$(prop ExecReload | sed -n 's/.*argv\[\]=\([^;]*\);.*/\1/p'))"
else
    fail "systemctl reload jitterd failed"
    journal 20
fi
if wait_for /metrics-reloaded 30 '^jitterd_build_info' && [[ $(prop MainPID) == "$pid_before" ]]; then
    ok "the reloaded telemetry_path /metrics-reloaded serves the metrics, same pid $pid_before"
else
    fail "after reload, /metrics-reloaded: $(http_get /metrics-reloaded | head -1); pid $pid_before -> $(prop MainPID)"
    journal 20
fi
grep -q 'configuration reloaded' <(journal 40) && ok "the journal says: $(journal 40 | grep 'configuration reloaded' | tail -1)" \
    || fail "no 'configuration reloaded' in the journal"
sed -i 's|^  telemetry_path: /metrics-reloaded$|  telemetry_path: /metrics|' "$config"

# --- hardening, as systemd scores the installed unit here -----------------------------------------
exposure=$(systemd-analyze security jitterd.service 2>/dev/null | sed -n 's/.*Overall exposure level for jitterd.service: \([0-9.]*\).*/\1/p')
if [[ -n $exposure ]] && awk -v e="$exposure" 'BEGIN { exit !(e <= 2.5) }'; then
    ok "systemd-analyze security: exposure $exposure (at most 2.5, docs/operations.md)"
else
    fail "systemd-analyze security: exposure '$exposure' (at most 2.5)"
fi

# --- the drop-ins: each loads what it is for -------------------------------------------------------
# Restarts with a drop-in and the configuration changed by a sed script for it; waits for the
# method's series.
with_dropin() {
    local name=$1 file=$2 script=$3 series=$4
    mkdir -p "$dropins"
    cp "/usr/share/jitterd/systemd/$file" "$dropins/$name.conf"
    cp "$config" /root/jitterd.yaml.shipped
    sed -i -e "$script" "$config"
    systemctl daemon-reload
    if ! systemctl restart jitterd.service; then
        fail "$name drop-in: systemctl restart jitterd failed"
        journal 20
    elif wait_for /metrics 60 "^$series"; then
        ok "$name drop-in: $(http_get /metrics | grep -m1 "^$series")"
        local exposure_dropin
        exposure_dropin=$(systemd-analyze security jitterd.service 2>/dev/null | sed -n 's/.*Overall exposure level for jitterd.service: \([0-9.]*\).*/\1/p')
        ok "$name drop-in: systemd-analyze security exposure $exposure_dropin"
    else
        fail "$name drop-in: no $series within 60 s; $(http_get /metrics | grep -E 'method_info' | head -3)"
        journal 20
    fi
    rm -f "$dropins/$name.conf"
    cp /root/jitterd.yaml.shipped "$config"
    systemctl daemon-reload
}
# bpf: a daemon that only watches CPU 1 (cpus: []), by the bpf method.
with_dropin bpf jitterd-bpf.conf 's/^cpus: auto$/cpus: []/; $a watch:\n  cpus: "1"\n  method: bpf' \
    'jitterd_watch_method_info{method="bpf"'
# tracepoints: the sampled CPUs' attribution by tracepoints instead of the BPF engine.
if [[ -e /sys/kernel/tracing/events ]]; then
    with_dropin tracepoints jitterd-tracepoints.conf 's/^    bpf: true$/    bpf: false/; s/^    tracepoints: false$/    tracepoints: true/' \
        'jitterd_attribution_method_info{method="tracepoints"'
else
    echo "note: tracefs is not visible in the container; the tracepoints drop-in is not checked"
fi

# --- stop ------------------------------------------------------------------------------------------
systemctl restart jitterd.service
systemctl stop jitterd.service
if [[ $(prop ActiveState) == inactive && $(prop Result) == success ]]; then
    ok "stopped: inactive, result success, ExecMainStatus=$(prop ExecMainStatus)"
else
    fail "after stop: $(prop ActiveState), result $(prop Result), ExecMainStatus=$(prop ExecMainStatus)"
    journal 10
fi
exit "$failed"
