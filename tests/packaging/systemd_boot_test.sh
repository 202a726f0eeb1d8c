#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package under a real systemd, as an operator meets it: the .deb that package_deb
# built, installed with apt into a fresh Debian 12 root with systemd 252, booted with
# systemd-nspawn, and the unit driven from inside by a oneshot unit (boot_check.sh, written into
# the root): start (notify, the status text, /metrics served), the watchdog pinged, reload with a
# changed configuration taking effect (and `systemctl reload` itself working on a minimal Debian:
# it runs /bin/kill, which the package must bring), the bpf and tracepoints drop-ins loading what
# they are for, the hardening score systemd computes there, and stop.
#
# Usage: systemd_boot_test.sh SOURCE_DIR BUILD_DIR
# Exit 0 pass, 1 fail, 77 skip (no root, no packaging tools, no systemd-nspawn, or a machine whose
# container runtime cannot boot systemd: the reason is printed).
set -euo pipefail

(($# == 2)) || { echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(realpath -- "$1")
build=$(realpath -- "$2")
out=$build/packages

skip() { echo "SKIP: $*" >&2; exit 77; }
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
# shellcheck source=fresh_root.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/fresh_root.sh"

((EUID == 0)) || skip "booting a container needs root"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn not found (bash packaging/dev.sh deps-package installs systemd-container)"
command -v dpkg-parsechangelog >/dev/null || skip "dpkg-parsechangelog not found (bash packaging/dev.sh deps-package)"
version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version)
deb=$out/jitterd_${version}_$(dpkg --print-architecture).deb
[[ -f $deb ]] || skip "$deb not built (the package_deb test builds it; it skips without the packaging tools)"

# A port for the daemon in the container, which shares this machine's network: free now.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

fresh_root "$out/root-systemd"
log=$out/systemd-boot.log
cp "$deb" "$root/tmp/"
if ! in_root sh -c "apt-get update -qq && apt-get install -y -qq systemd systemd-sysv ./tmp/$(basename "$deb")" \
    >"$log" 2>&1; then
    tail -30 "$log" >&2
    fail "apt-get install systemd ./$(basename "$deb") in a fresh Debian 12 root (log: $log)"
    exit 1
fi
ok "installed systemd $(in_root dpkg-query -W -f='${Version}' systemd) and $(basename "$deb") into a fresh Debian 12 root"

# The shipped configuration, on a port of its own and on 127.0.0.1 only.
sed -i "s|^  listen_address: .*|  listen_address: \"127.0.0.1:$port\"|" "$root/etc/jitterd/jitterd.yaml"
grep -q "^  listen_address: \"127.0.0.1:$port\"" "$root/etc/jitterd/jitterd.yaml" \
    || { fail "could not set web.listen_address in the installed configuration"; exit 1; }
install -m 0755 "$src/tests/packaging/boot_check.sh" "$root/usr/local/sbin/jitterd-boot-check"
cat >"$root/etc/systemd/system/jitterd-boot-check.service" <<EOF
[Unit]
Description=jitterd's unit driven as an operator does (tests/packaging/boot_check.sh)
After=multi-user.target jitterd.service
[Service]
Type=oneshot
Environment=PORT=$port
ExecStart=/bin/bash -c '/usr/local/sbin/jitterd-boot-check >/boot-check.out 2>&1; echo "exit \$?" >>/boot-check.out'
ExecStartPost=/bin/systemctl --no-block poweroff
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/jitterd-boot-check.service "$root/etc/systemd/system/multi-user.target.wants/"
# No getty or login prompt on the container's console.
ln -sf /dev/null "$root/etc/systemd/system/console-getty.service"

# tracefs on this machine, so that the container's /sys shows it (the tracepoints drop-in's check).
if [[ ! -e /sys/kernel/tracing/events ]]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

# The container runtime's defaults drop CAP_BPF and CAP_PERFMON and filter bpf and
# perf_event_open; a host where jitterd runs has them, so the container is given them.
tracefs=()
[[ -e /sys/kernel/tracing/events ]] && tracefs=(--bind-ro=/sys/kernel/tracing)
t0=$SECONDS
set +e
timeout 300 systemd-nspawn -D "$root" --boot --register=no --keep-unit --console=pipe -q "${tracefs[@]}" \
    --capability=CAP_BPF,CAP_PERFMON,CAP_SYS_NICE,CAP_IPC_LOCK --system-call-filter='bpf perf_event_open' \
    >"$out/nspawn.log" 2>&1
nspawn_rc=$?
set -e
result=$root/boot-check.out
if [[ ! -f $result ]]; then
    tail -20 "$out/nspawn.log" >&2
    ((nspawn_rc == 124)) && { fail "the container did not power off within 300 s (log: $out/nspawn.log)"; exit 1; }
    skip "systemd-nspawn could not boot the root (exit $nspawn_rc; log: $out/nspawn.log above)"
fi
echo "booted, checked and powered off in $((SECONDS - t0)) s (systemd-nspawn exit $nspawn_rc)"
cat "$result"
grep -q '^FAIL' "$result" && fail "checks inside the container failed (above)"
grep -qx 'exit 0' "$result" || fail "the check script inside the container did not exit 0 (above)"
grep -q '^ok: stopped' "$result" || fail "the check script did not get to the end (above)"
exit "$status"
