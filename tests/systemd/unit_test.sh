#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the systemd unit as the build generates it: hardening score and a clean verify, alone and
# with the opt-in tracepoints drop-in and with the opt-in bpf drop-in, and that the unit and the
# configuration agree on the attribution method (tracepoints off in both by default,
# docs/operations.md).
#
# Usage: unit_test.sh BINARY UNIT [DROPIN CONFIG [BPF_DROPIN]]
#   BINARY  the freshly built jitterd (stands in for the installed one)
#   UNIT    BUILD/systemd/jitterd.service, generated from systemd/jitterd.service.in
#   DROPIN  BUILD/systemd/jitterd-tracepoints.conf, generated from systemd/jitterd-tracepoints.conf
#   CONFIG  the shipped configuration, config/jitterd.yaml
#   BPF_DROPIN  BUILD/systemd/jitterd-bpf.conf, generated from systemd/jitterd-bpf.conf
# Exit 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
set -euo pipefail

# The bounds docs/operations.md states: the unit alone measured 1.8, with the drop-in 2.1 (systemd 252).
readonly max_exposure=2.5
readonly max_exposure_tracepoints=2.5
readonly max_exposure_bpf=2.5

if (($# != 2 && $# != 4 && $# != 5)); then
    echo "usage: $0 BINARY UNIT [DROPIN CONFIG [BPF_DROPIN]]" >&2
    exit 2
fi
if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze not found (install the systemd package)" >&2
    exit 77
fi
binary=$(realpath -- "$1")
unit=$(realpath -- "$2")
unit_name=$(basename -- "$unit")

[[ -x $binary ]] || { echo "FAIL: $binary: not an executable file" >&2; exit 1; }
[[ -f $unit ]] || { echo "FAIL: $unit: no such file" >&2; exit 1; }
dropin=
config=
bpf_dropin=
if (($# >= 4)); then
    dropin=$(realpath -- "$3")
    config=$(realpath -- "$4")
    [[ -f $dropin ]] || { echo "FAIL: $dropin: no such file" >&2; exit 1; }
    [[ -f $config ]] || { echo "FAIL: $config: no such file" >&2; exit 1; }
fi
if (($# == 5)); then
    bpf_dropin=$(realpath -- "$5")
    [[ -f $bpf_dropin ]] || { echo "FAIL: $bpf_dropin: no such file" >&2; exit 1; }
fi

status=0
fail() {
    echo "FAIL: $*" >&2
    status=1
}

# The settings the daemon's behaviour relies on (notify, watchdog, reload,
# exit 78 on bad config) must not be lost while the hardening is tuned.
# shellcheck disable=SC2016 # $MAINPID is expanded by systemd, not here
for line in 'Type=notify' 'NotifyAccess=main' 'WatchdogSec=30s' \
    'ExecReload=/bin/kill -HUP $MAINPID' 'RestartPreventExitStatus=78' \
    'ProcSubset=all' 'DynamicUser=yes'; do
    grep -qxF -- "$line" "$unit" || fail "$unit: missing line '$line'"
done
if grep -n '@[A-Za-z_]*@' "$unit" >&2; then
    fail "$unit: placeholders left unsubstituted (lines above)"
fi
if grep -q '^RestrictRealtime=' "$unit"; then
    fail "$unit: RestrictRealtime= is set, but samplers may use SCHED_FIFO"
fi

# verify checks that ExecStart= names an executable, and the installed binary (e.g.
# /usr/bin/jitterd) is not there on a build machine. So the unit is checked as a copy, under the
# same file name in a temporary directory, whose ExecStart= runs the freshly built binary with the
# same arguments (quoted, % escaped as a specifier); every other line is checked as generated.
# systemd-analyze reads drop-ins from UNIT.d/ beside the unit file, as systemd does from
# /etc/systemd/system/jitterd.service.d/.
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$tmp/plain" "$tmp/tracepoints/$unit_name.d" "$tmp/bpf/$unit_name.d"
BINARY=$binary awk '
    /^ExecStart=\/[^ ]*\/jitterd( |$)/ {
        sub(/^ExecStart=\/[^ ]*\/jitterd/, "")
        bin = ENVIRON["BINARY"]
        gsub(/%/, "%%", bin)
        print "ExecStart=\"" bin "\"" $0
        replaced = 1
        next
    }
    { print }
    END { exit !replaced }
' "$unit" >"$tmp/plain/$unit_name" || fail "$unit: no 'ExecStart=/.../jitterd' line to redirect"
cp -- "$tmp/plain/$unit_name" "$tmp/tracepoints/$unit_name"
[[ -n $dropin ]] && cp -- "$dropin" "$tmp/tracepoints/$unit_name.d/tracepoints.conf"
cp -- "$tmp/plain/$unit_name" "$tmp/bpf/$unit_name"
[[ -n $bpf_dropin ]] && cp -- "$bpf_dropin" "$tmp/bpf/$unit_name.d/bpf.conf"

# check_unit LABEL DIR MAX: the hardening score of DIR/UNIT (with DIR/UNIT.d/) at most MAX, and a
# silent verify. Leaves systemd-analyze security's output in $security_out.
check_unit() {
    local label=$1 dir=$2 max=$3 exposure verify_err verify_rc
    # LC_ALL=C keeps the summary line ASCII ("-> Overall exposure level for X: 1.6 OK :-)").
    security_out=$(cd "$dir" && LC_ALL=C systemd-analyze security --offline=true "./$unit_name" 2>&1) \
        || { echo "$security_out" >&2; fail "$label: systemd-analyze security exited non-zero"; }
    exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p' \
        <<<"$security_out")
    if [[ -z $exposure ]]; then
        echo "$security_out" >&2
        fail "$label: no 'Overall exposure level' line in systemd-analyze security output"
    elif awk -v e="$exposure" -v m="$max" 'BEGIN { exit !(e > m) }'; then
        echo "$security_out" >&2
        fail "$label: exposure $exposure, allowed at most $max"
    else
        echo "ok: $label exposure $exposure (at most $max)"
    fi
    # verify exits 0 on warnings (an unknown key in a drop-in, say), so any stderr output fails.
    if verify_err=$(cd "$dir" && systemd-analyze verify "./$unit_name" 2>&1 >/dev/null); then
        verify_rc=0
    else
        verify_rc=$?
    fi
    if [[ -n $verify_err || $verify_rc -ne 0 ]]; then
        echo "$verify_err" >&2
        fail "$label: systemd-analyze verify (ExecStart=$binary): rc $verify_rc, stderr above"
    else
        echo "ok: $label: systemd-analyze verify is silent"
    fi
}

# perf_event_open is in @debug: systemd-analyze security says whether the merged filter lets it
# through, which is what counts, however the lines are spelled.
readonly perf_allowed='@debug is included (e.g. perf_event_open is allowed)'
readonly dac_allowed='may override UNIX file/IPC permission checks'

check_unit "$unit_name" "$tmp/plain" "$max_exposure"
unit_permits=false
grep -qF -- "$perf_allowed" <<<"$security_out" && unit_permits=true
if $unit_permits; then
    fail "$unit_name lets perf_event_open through; tracepoints belong in the opt-in drop-in"
elif grep -qF -- "$dac_allowed" <<<"$security_out"; then
    fail "$unit_name may override file permissions; only the tracepoints drop-in may"
fi

if [[ -n $dropin ]]; then
    check_unit "$unit_name + $(basename -- "$dropin")" "$tmp/tracepoints" "$max_exposure_tracepoints"
    grep -qF -- "$perf_allowed" <<<"$security_out" \
        || fail "with $(basename -- "$dropin"), perf_event_open is still filtered out"
    grep -qF -- "$dac_allowed" <<<"$security_out" \
        || fail "with $(basename -- "$dropin"), tracefs (mode 0700) stays unreadable: no CAP_DAC_READ_SEARCH"
    for cap in CAP_PERFMON CAP_DAC_READ_SEARCH; do
        for key in CapabilityBoundingSet AmbientCapabilities; do
            grep -qE "^$key=.*\<$cap\>" "$dropin" || fail "$dropin: no $cap in $key="
        done
    done
    grep -n '@[A-Za-z_]*@' "$dropin" >&2 && fail "$dropin: placeholders left unsubstituted (lines above)"

    # The default configuration asks for what the default unit permits: tracepoints off in both.
    asked=$(sed -n 's/^    tracepoints: \(true\|false\)$/\1/p' "$config")
    if [[ -z $asked ]]; then
        fail "$config: no 'probes.attribution.tracepoints: true|false' line"
    elif [[ $asked != "$unit_permits" ]]; then
        fail "$config asks for tracepoints: $asked, but $unit_name permits them: $unit_permits"
    else
        echo "ok: $(basename -- "$config") (tracepoints: $asked) and $unit_name agree"
    fi
fi

if [[ -n $bpf_dropin ]]; then
    check_unit "$unit_name + $(basename -- "$bpf_dropin")" "$tmp/bpf" "$max_exposure_bpf"
    for cap in CAP_BPF CAP_PERFMON; do
        for key in CapabilityBoundingSet AmbientCapabilities; do
            grep -qE "^$key=.*\<$cap\>" "$bpf_dropin" || fail "$bpf_dropin: no $cap in $key="
        done
    done
    grep -qE '^SystemCallFilter=bpf$' "$bpf_dropin" \
        || fail "$bpf_dropin: bpf(2) (in @privileged, which the unit filters out) is not allowed"
    grep -qF -- "$perf_allowed" <<<"$security_out" \
        && fail "with $(basename -- "$bpf_dropin"), perf_event_open is let through; bpf needs only bpf(2)"
    grep -n '@[A-Za-z_]*@' "$bpf_dropin" >&2 && fail "$bpf_dropin: placeholders left unsubstituted (lines above)"
fi

exit "$status"
