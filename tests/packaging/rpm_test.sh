#!/usr/bin/env bash
# The RPM: built by packaging/dev.sh rpm from this build (JITTERD_PREBUILT_DIR), then checked with
# rpm -qlp (the same files as the .deb), rpm -qp --scripts (the systemd scriptlets), the
# configuration's %config(noreplace) flag and Requires computed from the shared libraries.
# Usage: rpm_test.sh SOURCE_DIR BUILD_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
(($# == 2)) || { echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(realpath -- "$1")
build=$(realpath -- "$2")
out=$build/packages
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
command -v rpmbuild >/dev/null || { echo "SKIP: rpmbuild not found (bash packaging/dev.sh deps-package)" >&2; exit 77; }
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[[ $prefix == /usr ]] || { echo "SKIP: $build is configured with prefix '$prefix', the RPM needs /usr (the default)" >&2; exit 77; }

mkdir -p "$out"
rm -f "$out"/jitterd-*.rpm
log=$out/rpm-build.log
if ! JITTERD_PREBUILT_DIR=$build bash "$src/packaging/dev.sh" rpm "$out" >"$log" 2>&1; then
    tail -40 "$log" >&2
    echo "FAIL: packaging/dev.sh rpm failed (log: $log)" >&2
    exit 1
fi
rpm=$(ls "$out"/jitterd-[0-9]*.rpm | grep -v debug | head -1)
ok "built $(basename "$rpm")"

files=$(rpm -qlp "$rpm" 2>/dev/null)
echo "$files"
expected=(/usr/bin/jitterd /usr/lib/systemd/system/jitterd.service /etc/jitterd /etc/jitterd/jitterd.yaml
    /usr/share/man/man8/jitterd.8 /usr/share/man/man5/jitterd.yaml.5 /usr/share/jitterd/systemd/jitterd-tracepoints.conf)
for f in "${expected[@]}"; do
    grep -qE "^$f(\.gz)?$" <<<"$files" || fail "rpm -qlp lacks $f"
done
for f in "$src"/grafana/dashboards/*.json; do
    [[ -f $f ]] && { grep -qx "/usr/share/jitterd/grafana/dashboards/$(basename "$f")" <<<"$files" || fail "rpm lacks dashboard $(basename "$f")"; }
done
for f in "$src"/grafana/prometheus/*.yml; do
    [[ -f $f ]] && { grep -qx "/usr/share/jitterd/prometheus/$(basename "$f")" <<<"$files" || fail "rpm lacks rules $(basename "$f")"; }
done
ok "rpm -qlp: the package's files"

flags=$(rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$rpm" 2>/dev/null | awk '$1 == "/etc/jitterd/jitterd.yaml" {print $2}')
[[ $flags == *c* && $flags == *n* ]] || fail "/etc/jitterd/jitterd.yaml is not %config(noreplace) (flags '$flags')"
ok "/etc/jitterd/jitterd.yaml is %config(noreplace)"

scripts=$(rpm -qp --scripts "$rpm" 2>/dev/null)
echo "$scripts"
grep -q 'postinstall scriptlet' <<<"$scripts" && grep -q 'systemctl --no-reload preset jitterd.service' <<<"$scripts" \
    || fail "no %post presetting jitterd.service"
grep -q 'preuninstall scriptlet' <<<"$scripts" && grep -q 'systemctl --no-reload disable --now jitterd.service' <<<"$scripts" \
    || fail "no %preun stopping and disabling jitterd.service"
grep -q 'postuninstall scriptlet' <<<"$scripts" && grep -q 'systemctl try-restart jitterd.service' <<<"$scripts" \
    || fail "no %postun restarting jitterd.service after an upgrade"
ok "rpm -qp --scripts: systemd scriptlets for install, erase and upgrade"

requires=$(rpm -qp --requires "$rpm" 2>/dev/null)
while read -r lib; do
    grep -qF "$lib()" <<<"$requires" || fail "Requires lacks $lib, which the binary needs"
done < <(objdump -p "$build/jitterd" | awk '$1 == "NEEDED" {print $2}')
ok "Requires names every shared library the binary needs ($(objdump -p "$build/jitterd" | grep -c NEEDED))"
exit "$status"
