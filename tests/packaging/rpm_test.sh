#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The RPM.
#
# Usage: rpm_test.sh build SOURCE_DIR BUILD_DIR
#          built by packaging/dev.sh rpm from this build (JITTERD_PREBUILT_DIR), then checked with
#          rpm -qlp (the same files as the .deb), rpm -qp --scripts (the systemd scriptlets), the
#          configuration's %config(noreplace) flag and Requires computed from the shared libraries.
#        rpm_test.sh install SOURCE_DIR BUILD_DIR
#          installs that RPM with rpm into a fresh Debian 12 root (fresh_root.sh; Debian's rpm and
#          systemd installed there), so that its scriptlets run: preset on install, the files,
#          jitterd --version and check-config, a reinstall over an edited configuration
#          (the upgrade path of the scriptlets), erase, and what erase leaves.
# Exit 0 pass, 1 fail, 77 skip (with the reason).
set -euo pipefail
(($# == 3)) || { echo "usage: $0 build|install SOURCE_DIR BUILD_DIR" >&2; exit 2; }
mode=$1
src=$(realpath -- "$2")
build=$(realpath -- "$3")
out=$build/packages
status=0
skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
# shellcheck source=fresh_root.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/fresh_root.sh"
command -v rpmbuild >/dev/null || skip "rpmbuild not found (bash packaging/dev.sh deps-package)"
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[[ $prefix == /usr ]] || skip "$build is configured with prefix '$prefix', the RPM needs /usr (the default)"

build_and_check() {

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
    /usr/share/man/man8/jitterd.8 /usr/share/man/man5/jitterd.yaml.5 /usr/share/jitterd/systemd/jitterd-tracepoints.conf /usr/share/jitterd/systemd/jitterd-bpf.conf
    /usr/share/man/man8/jitterd-run.8 /usr/share/man/man8/jitterd-check-config.8 /usr/share/man/man8/jitterd-report.8 /usr/share/man/man8/jitterd-baseline.8 /usr/share/man/man8/jitterd-compare.8 /usr/share/man/man8/jitterd-fleet.8
    /usr/include/jitterd/loop_probe.h /usr/include/jitterd/loop_probe_layout.h /usr/include/jitterd/loop_probe_checks.h /usr/include/jitterd/loop_probe_open.h /usr/include/jitterd/loop_probe_record.h /usr/share/pkgconfig/jitterd-loop-probe.pc /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config.cmake /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config-version.cmake)
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
license=$(rpm -qp --qf '%{LICENSE}' "$rpm" 2>/dev/null)
[[ $license == Apache-2.0 ]] || fail "$(basename "$rpm"): License is '$license', not Apache-2.0"
# Debian's rpm names the folder with the version (jitterd-0.1.0), Fedora's without.
rpm -qpL "$rpm" 2>/dev/null | grep -qE '^/usr/share/licenses/jitterd(-[0-9.]+)?/LICENSE$' \
    || fail "$(basename "$rpm"): no %license file LICENSE under /usr/share/licenses/"
ok "License: $license, with its text as %license"

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
# The programs the unit runs, by path (ExecReload=/bin/kill: util-linux or procps provides it).
grep -qx '/usr/bin/kill' <<<"$requires" && ok "Requires: /usr/bin/kill (the unit's ExecReload=)" \
    || fail "Requires lacks /usr/bin/kill, which the unit's ExecReload= runs"
}

install_and_check() {
    local rpm
    rpm=$(ls "$out"/jitterd-[0-9]*.rpm 2>/dev/null | grep -v debug | head -1 || true)
    [[ -n $rpm ]] || { fail "no RPM in $out (the package_rpm test builds it)"; exit 1; }
    fresh_root "$out/root-rpm"
    local log=$out/rpm-install.log
    # What dnf does on an RPM distribution, by hand: each shared library the RPM requires
    # (libfoo.so.N()(64bit)) is found on this machine and its Debian package installed in the root.
    local lib libpath pkg candidate
    local -a provides=()
    while read -r lib; do
        # awk reads to the end: an early exit would fail the pipeline (SIGPIPE) now and then.
        libpath=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|AArch64/ && !found {print $NF; found = 1}')
        [[ -n $libpath ]] || { fail "the RPM requires $lib, which no library on this machine provides"; continue; }
        # dpkg knows a file by the path its package ships: on a merged-/usr machine /lib/... or
        # /usr/lib/..., the soname link or the file it points to.
        pkg=
        for candidate in "$libpath" "$(realpath -- "$libpath")"; do
            for candidate in "$candidate" "${candidate#/usr}" "/usr${candidate#/usr}"; do
                pkg=$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) || true
                [[ -n $pkg ]] && break 2
            done
        done
        [[ -n $pkg ]] || { fail "no Debian package owns $libpath (for $lib)"; continue; }
        [[ " ${provides[*]} " == *" $pkg "* ]] || provides+=("$pkg")
    done < <(rpm -qp --requires "$rpm" 2>/dev/null | sed -n 's/^\(lib[^(]*\.so[^(]*\)(.*/\1/p' | sort -u)
    ((${#provides[@]} > 0)) || { fail "no library package found for the RPM's Requires"; exit 1; }
    # rpm to install with, systemd so that the scriptlets' systemctl runs (they skip without it).
    if ! { in_root apt-get update -qq && in_root apt-get install -y -qq rpm systemd "${provides[@]}"; } >"$log" 2>&1; then
        tail -20 "$log" >&2
        fail "apt-get install rpm systemd ${provides[*]} in the root (log: $log)"
        exit 1
    fi
    ok "the root has what the RPM's Requires name: ${provides[*]}"
    # A preset as a fleet's image carries one: the %post preset must then enable the unit.
    mkdir -p "$root/etc/systemd/system-preset"
    echo "enable jitterd.service" >"$root/etc/systemd/system-preset/50-jitterd.preset"
    local before after left
    before=$(snapshot)
    cp "$rpm" "$root/tmp/"
    local name rpmq
    name=$(basename "$rpm")
    # The root's libraries come from dpkg, so rpm's database knows none of them: --nodeps.
    rpmq=(rpm --dbpath /var/lib/rpm)
    if ! in_root "${rpmq[@]}" -i --nodeps "/tmp/$name" >>"$log" 2>&1; then
        tail -20 "$log" >&2
        fail "rpm -i $name in a fresh Debian 12 root (log: $log)"
        exit 1
    fi
    ok "rpm -i $name in a fresh Debian 12 root"
    local path
    for path in /usr/bin/jitterd /usr/lib/systemd/system/jitterd.service /etc/jitterd/jitterd.yaml \
        /usr/share/man/man8/jitterd.8 /usr/share/man/man5/jitterd.yaml.5 \
        /usr/share/man/man8/jitterd-run.8 /usr/share/man/man8/jitterd-check-config.8 /usr/share/man/man8/jitterd-report.8 /usr/share/man/man8/jitterd-baseline.8 /usr/share/man/man8/jitterd-compare.8 /usr/share/man/man8/jitterd-fleet.8 \
        /usr/share/jitterd/systemd/jitterd-tracepoints.conf /usr/share/jitterd/systemd/jitterd-bpf.conf; do
        # A man page may be compressed (brp-compress, where the build host's rpm has it).
        compgen -G "$root$path*" >/dev/null || fail "installed root lacks $path"
    done
    local wants=$root/etc/systemd/system/multi-user.target.wants/jitterd.service
    [[ -L $wants ]] && ok "%post preset enabled jitterd.service: $(readlink "$wants")" \
        || fail "%post did not enable jitterd.service under an 'enable jitterd.service' preset"
    local v
    v=$(in_root jitterd --version) || fail "jitterd --version failed"
    [[ $v == "jitterd $(sed -n 's/^project(jitterd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt") "* ]] \
        || fail "jitterd --version: '$v'"
    ok "installed: $v"
    in_root jitterd check-config >"$out/rpm-check-config.log" 2>&1 \
        && ok "jitterd check-config on the installed /etc/jitterd/jitterd.yaml" \
        || { cat "$out/rpm-check-config.log" >&2; fail "jitterd check-config on the installed configuration"; }

    # The user edits the configuration; reinstalling (the scriptlets' upgrade path: %post with 2,
    # the old package's %postun with 1) keeps the edit.
    sed -i 's/^  level: info$/  level: debug/' "$root/etc/jitterd/jitterd.yaml"
    grep -q '^  level: debug$' "$root/etc/jitterd/jitterd.yaml" || { fail "could not edit log.level in the installed configuration"; exit 1; }
    in_root "${rpmq[@]}" -U --replacepkgs --nodeps "/tmp/$name" >>"$log" 2>&1 || fail "rpm -U --replacepkgs $name (log: $log)"
    grep -q '^  level: debug$' "$root/etc/jitterd/jitterd.yaml" || fail "the reinstall replaced the edited configuration"
    [[ -L $wants ]] || fail "the reinstall disabled jitterd.service"
    ok "rpm -U --replacepkgs kept the edited configuration and the enabled unit"

    in_root "${rpmq[@]}" -e jitterd >>"$log" 2>&1 || fail "rpm -e jitterd (log: $log)"
    [[ -e $root/usr/bin/jitterd ]] && fail "erase left /usr/bin/jitterd"
    [[ -e $wants || -L $wants ]] && fail "%preun did not disable jitterd.service"
    [[ -f $root/etc/jitterd/jitterd.yaml.rpmsave ]] || fail "erase did not keep the edited configuration as jitterd.yaml.rpmsave"
    after=$(snapshot)
    left=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
    # rpm keeps an edited %config file as .rpmsave (and so its folder): nothing else may be left,
    # but /usr/share/licenses, the parent of the %license folder, which the filesystem package owns
    # on RPM distributions, and /usr/share/cmake, the parent of the loop probe's CMake package,
    # which cmake-filesystem owns there; rpm created both here (a Debian root has neither).
    local shared_parents=${left/.\/usr\/share\/cmake /}
    shared_parents=${shared_parents/.\/usr\/share\/licenses /}
    [[ $shared_parents == "./etc/jitterd ./etc/jitterd/jitterd.yaml.rpmsave " ]] \
        && ok "rpm -e jitterd: unit disabled, files gone but the edited configuration (jitterd.yaml.rpmsave)" \
        || fail "erase left: $left"
    rm -rf -- "$root"
}

case $mode in
    build) build_and_check ;;
    install) install_and_check ;;
    *) echo "usage: $0 build|install SOURCE_DIR BUILD_DIR" >&2; exit 2 ;;
esac
exit "$status"
