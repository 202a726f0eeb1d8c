#!/usr/bin/env bash
# Checks the systemd unit as the build generates it: hardening score and a clean verify.
#
# Usage: unit_test.sh BINARY UNIT
#   BINARY  the freshly built jitterd (stands in for the installed one)
#   UNIT    BUILD/systemd/jitterd.service, generated from systemd/jitterd.service.in
# Exit 0 pass, 1 fail, 77 skip (ctest SKIP_RETURN_CODE).
set -euo pipefail

readonly max_exposure=2.5

if (($# != 2)); then
    echo "usage: $0 BINARY UNIT" >&2
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

# --- Hardening score of the unit exactly as generated. LC_ALL=C keeps the
# summary line ASCII ("-> Overall exposure level for X: 1.6 OK :-)").
security_out=$(LC_ALL=C systemd-analyze security --offline=true "$unit" 2>&1) \
    || { echo "$security_out" >&2; fail "systemd-analyze security exited non-zero"; }
exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p' \
    <<<"$security_out")
if [[ -z $exposure ]]; then
    echo "$security_out" >&2
    fail "no 'Overall exposure level' line in systemd-analyze security output"
elif awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e > m) }'; then
    echo "$security_out" >&2
    fail "$unit_name: exposure $exposure, allowed at most $max_exposure"
else
    echo "ok: $unit_name exposure $exposure (at most $max_exposure)"
fi

# --- verify. It checks that ExecStart= names an executable, and the installed
# binary (e.g. /usr/bin/jitterd) is not there on a build machine. So verify a copy, under
# the same file name in a temporary directory, whose ExecStart= runs the freshly
# built binary with the same arguments (quoted, % escaped as a specifier);
# every other line is checked as generated.
# verify exits 0 on warnings, so any stderr output is a failure.
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
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
' "$unit" >"$tmp/$unit_name" || fail "$unit: no 'ExecStart=/.../jitterd' line to redirect"

if verify_err=$(systemd-analyze verify "$tmp/$unit_name" 2>&1 >/dev/null); then
    verify_rc=0
else
    verify_rc=$?
fi
if [[ -n $verify_err || $verify_rc -ne 0 ]]; then
    echo "$verify_err" >&2
    fail "systemd-analyze verify $unit_name (ExecStart=$binary): rc $verify_rc, stderr above"
else
    echo "ok: systemd-analyze verify $unit_name is silent"
fi

exit "$status"
