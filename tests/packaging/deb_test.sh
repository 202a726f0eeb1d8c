#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package, as a user gets it.
#
# Usage: deb_test.sh build SOURCE_DIR BUILD_DIR
#          builds the .deb from BUILD_DIR (bash packaging/dev.sh deb with JITTERD_PREBUILT_DIR,
#          so the suite compiles jitterd once) into BUILD_DIR/packages and checks it: files,
#          conffiles, Depends computed from the binary's shared libraries, the systemd maintainer
#          scripts, lintian (no error, and no warning but the kept ones below).
#        deb_test.sh install SOURCE_DIR BUILD_DIR
#          installs that .deb with apt-get into a fresh Debian 12 root (debootstrap, cached as a
#          tarball in BUILD_DIR/packages/cache), checks the installed files, jitterd --version,
#          check-config on the installed configuration, the installed unit (systemd-analyze
#          verify and security, tests/systemd/unit_test.sh), two upgrades that keep an edited
#          conffile, remove, and that purge leaves nothing behind; then replays
#          packaging/container/Containerfile in another fresh root (see containerfile_check).
# Exit 0 pass, 1 fail, 77 skip (with the reason).
set -euo pipefail

(($# == 3)) || { echo "usage: $0 build|install SOURCE_DIR BUILD_DIR" >&2; exit 2; }
mode=$1
src=$(realpath -- "$2")
build=$(realpath -- "$3")
out=$build/packages

skip() { echo "SKIP: $*" >&2; exit 77; }
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
# shellcheck source=fresh_root.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/fresh_root.sh"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[[ $prefix == /usr ]] \
    || skip "$build is configured with prefix '$prefix'; the package is built from a /usr build (the default prefix; a build folder made before it keeps its old one)"
version=$(dpkg-parsechangelog -l "$src/packaging/debian/changelog" -S Version 2>/dev/null) \
    || skip "dpkg-parsechangelog not found (bash packaging/dev.sh deps-package)"
arch=$(dpkg --print-architecture)
deb=$out/jitterd_${version}_${arch}.deb

# Lintian warnings kept on purpose, each with its reason (any other warning fails the test).
kept_warnings=(
    # none at present
)

# Both modes skip without the tools the package is built with: the install test has nothing to
# install when the build test skipped for want of them (dev.sh test on a machine without
# deps-package), and says so rather than failing.
need_packaging_tools() {
    for tool in dpkg-buildpackage dh lintian; do
        command -v "$tool" >/dev/null || skip "$tool not found (bash packaging/dev.sh deps-package installs the packaging tools)"
    done
}

build_and_check() {
    need_packaging_tools
    local log=$out/deb-build.log
    mkdir -p "$out"
    rm -f "$out"/jitterd_*.deb
    if ! JITTERD_PREBUILT_DIR=$build bash "$src/packaging/dev.sh" deb "$out" >"$log" 2>&1; then
        tail -40 "$log" >&2
        fail "packaging/dev.sh deb failed (log: $log)"
        exit 1
    fi
    [[ -f $deb ]] || { fail "no $deb after dev.sh deb"; exit 1; }
    ok "built $(basename "$deb") ($(du -k "$deb" | cut -f1) kB)"

    local listing
    listing=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
    for path in /usr/bin/jitterd /usr/lib/systemd/system/jitterd.service /etc/jitterd/jitterd.yaml \
        /usr/share/man/man8/jitterd.8.gz /usr/share/man/man5/jitterd.yaml.5.gz \
        /usr/share/man/man8/jitterd-run.8.gz /usr/share/man/man8/jitterd-check-config.8.gz /usr/share/man/man8/jitterd-report.8.gz /usr/share/man/man8/jitterd-baseline.8.gz /usr/share/man/man8/jitterd-compare.8.gz /usr/share/man/man8/jitterd-fleet.8.gz \
        /usr/share/doc/jitterd/copyright /usr/share/doc/jitterd/changelog.gz \
        /usr/share/jitterd/systemd/jitterd-tracepoints.conf /usr/share/jitterd/systemd/jitterd-bpf.conf \
        /usr/include/jitterd/loop_probe.h /usr/include/jitterd/loop_probe_layout.h /usr/include/jitterd/loop_probe_checks.h /usr/include/jitterd/loop_probe_open.h /usr/include/jitterd/loop_probe_record.h /usr/share/pkgconfig/jitterd-loop-probe.pc /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config.cmake /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config-version.cmake; do
        grep -qxF "$path" <<<"$listing" || fail "$(basename "$deb") lacks $path"
    done
    grep -q '^/lib/' <<<"$listing" && fail "$(basename "$deb") installs under /lib: $(grep '^/lib/' <<<"$listing" | head -3)"
    for pair in "dashboards:/usr/share/jitterd/grafana/dashboards/" "prometheus:/usr/share/jitterd/prometheus/"; do
        local dir=${pair%%:*} dest=${pair#*:} f
        for f in "$src"/grafana/"$dir"/*; do
            [[ -f $f ]] || continue
            grep -qxF "$dest$(basename "$f")" <<<"$listing" || fail "$(basename "$deb") lacks $dest$(basename "$f") (from grafana/$dir)"
        done
    done
    ok "files in the package"
    # The licence, in the machine-readable copyright file (Debian's place for it). Read whole first:
    # grep -q leaving at the first match made tar and dpkg-deb die of SIGPIPE, and pipefail failed
    # the check on a file that says it (exit 141, now and then).
    local copyright
    copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/share/doc/jitterd/copyright) || copyright=""
    if grep -qx 'License: Apache-2.0' <<<"$copyright"; then
        ok "copyright: License: Apache-2.0"
    else
        fail "$(basename "$deb"): usr/share/doc/jitterd/copyright does not say License: Apache-2.0"
    fi

    local ctrl
    ctrl=$(mktemp -d)
    trap 'rm -rf -- "$ctrl"' RETURN
    dpkg-deb -e "$deb" "$ctrl"
    grep -qxF /etc/jitterd/jitterd.yaml "$ctrl/conffiles" || fail "conffiles does not list /etc/jitterd/jitterd.yaml"
    grep -q 'deb-systemd-helper.*enable.*jitterd.service' "$ctrl/postinst" || fail "postinst does not enable jitterd.service"
    grep -q '_dh_action=start' "$ctrl/postinst" && grep -q "deb-systemd-invoke \$_dh_action 'jitterd.service'" "$ctrl/postinst" \
        || fail "postinst does not start jitterd.service"
    grep -q 'deb-systemd-invoke stop.*jitterd.service' "$ctrl/prerm" || fail "prerm does not stop jitterd.service"
    grep -q 'deb-systemd-helper purge.*jitterd.service' "$ctrl/postrm" || fail "postrm does not purge jitterd.service's state"
    ok "conffiles and systemd maintainer scripts"

    # Depends comes from the shared libraries: for each library the binary links directly
    # (NEEDED), the package its shlibs entry names (or, without one, the package that ships it)
    # must be in Depends.
    local depends lib path pkg name soversion candidate shlibs multiarch
    multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
    depends=$(dpkg-deb -f "$deb" Depends)
    echo "Depends: $depends"
    local -a names
    mapfile -t names < <(tr ',|' '\n\n' <<<"$depends" | awk 'NF {print $1}')
    local -A ldd_paths=()
    while read -r lib path; do ldd_paths[$lib]=$path; done < <(ldd "$build/jitterd" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}')
    local needed=0
    while read -r lib; do
        needed=$((needed + 1))
        path=${ldd_paths[$lib]:-}
        [[ -n $path ]] || { fail "ldd does not resolve $lib"; continue; }
        name=${lib%%.so*}
        soversion=${lib#*.so.}
        # The shlibs entry of the package that ships this library for the native architecture:
        # with multilib installed, lib32stdc++6 declares libstdc++ 6 too. An entry may name a
        # virtual package (libspdlog1.10-fmt9), so the owner is the package the file belongs to.
        pkg=
        while read -r candidate shlibs; do
            if grep -qs "/$multiarch/$lib\$" "${shlibs%.shlibs}.list"; then
                pkg=$candidate
                break
            fi
        done < <(awk -v n="$name" -v v="$soversion" '$1 == n && $2 == v && $3 !~ /:/ {print $3, FILENAME}' \
            /var/lib/dpkg/info/*.shlibs)
        [[ -n $pkg ]] || pkg=$(dpkg -S "$(realpath -- "$path")" 2>/dev/null | head -1 | cut -d: -f1) || true
        [[ -n $pkg ]] || { fail "$lib ($path): no package owns it"; continue; }
        [[ " ${names[*]} " == *" $pkg "* ]] || fail "Depends lacks $pkg, which provides $lib"
    done < <(objdump -p "$build/jitterd" | awk '$1 == "NEEDED" {print $2}')
    ((needed > 0)) || fail "objdump lists no NEEDED library for $build/jitterd"
    ok "Depends names the package of each of the $needed shared libraries the binary needs"

    local lint
    lint=$(lintian --tag-display-limit 0 --no-cfg "$deb" 2>&1 | grep -v '^running with root privileges' || true)
    [[ -n $lint ]] && echo "$lint"
    if grep -q '^E: ' <<<"$lint"; then
        fail "lintian reports errors (above)"
    fi
    local line tag
    while IFS= read -r line; do
        tag=$(awk '{print $3}' <<<"$line")
        [[ " ${kept_warnings[*]} " == *" $tag "* ]] || fail "lintian warning not in the kept list: $line"
    done < <(grep '^W: ' <<<"$lint" || true)
    ok "lintian: no errors, no warnings but the kept ones (${kept_warnings[*]:-none})"
}

# --- install into a fresh Debian 12 root ---------------------------------------------------------

# repack DEB VERSION OUT [APPEND]: the same package as a newer version; APPEND, if given, is
# added to the packaged configuration (a maintainer's change to the conffile).
repack() {
    local from=$1 newversion=$2 to=$3 append=${4:-} tmp
    tmp=$(mktemp -d)
    dpkg-deb -R "$from" "$tmp/p"
    sed -i "s/^Version: .*/Version: $newversion/" "$tmp/p/DEBIAN/control"
    if [[ -n $append ]]; then
        printf '%s\n' "$append" >>"$tmp/p/etc/jitterd/jitterd.yaml"
        (cd "$tmp/p" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' \
            | xargs -0 md5sum >DEBIAN/md5sums)
    fi
    dpkg-deb --root-owner-group -b "$tmp/p" "$to" >/dev/null
    rm -rf -- "$tmp"
}

install_and_check() {
    need_packaging_tools
    [[ -f $deb ]] || { fail "$deb not built (the package_deb test builds it)"; exit 1; }
    fresh_root "$out/root"
    in_root apt-get update -qq >/dev/null || { fail "apt-get update in the root"; exit 1; }
    # libcurl4 (compare --prometheus) recommends ca-certificates, whose purge leaves the hash
    # links update-ca-certificates made in /etc/ssl/certs: Debian's behaviour, not jitterd's.
    # Nearly every real host has it; the root gets it before the snapshot, so the check below
    # still sees everything jitterd's own install and purge leave.
    in_root apt-get install -y -qq ca-certificates >/dev/null || { fail "apt-get install ca-certificates in the root"; exit 1; }

    local before after
    before=$(snapshot)
    cp "$deb" "$root/tmp/"
    # What the README tells a user to type.
    local log=$out/install.log
    if ! in_root sh -c "cd /tmp && apt-get install -y ./$(basename "$deb")" >"$log" 2>&1; then
        tail -30 "$log" >&2
        fail "apt-get install ./$(basename "$deb") failed (log: $log)"
        exit 1
    fi
    ok "apt-get install ./$(basename "$deb") in a fresh Debian 12 root"

    for path in /usr/bin/jitterd /usr/lib/systemd/system/jitterd.service /etc/jitterd/jitterd.yaml \
        /usr/share/man/man8/jitterd.8.gz /usr/share/man/man5/jitterd.yaml.5.gz /usr/share/doc/jitterd/copyright \
        /usr/share/man/man8/jitterd-run.8.gz /usr/share/man/man8/jitterd-check-config.8.gz /usr/share/man/man8/jitterd-report.8.gz /usr/share/man/man8/jitterd-baseline.8.gz /usr/share/man/man8/jitterd-compare.8.gz /usr/share/man/man8/jitterd-fleet.8.gz; do
        [[ -e $root$path ]] || fail "installed root lacks $path"
    done
    # deb-systemd-helper names the unit by /lib/systemd/system on a merged-/usr root (/lib is
    # /usr/lib there); either spelling is the packaged unit.
    local wants=$root/etc/systemd/system/multi-user.target.wants/jitterd.service target
    target=$(readlink "$wants" || true)
    if [[ ($target == /usr/lib/systemd/system/jitterd.service || $target == /lib/systemd/system/jitterd.service) \
        && -f $root$target ]]; then
        ok "jitterd.service enabled: multi-user.target.wants/jitterd.service -> $target"
    else
        fail "jitterd.service is not enabled (multi-user.target.wants/jitterd.service -> '$target')"
    fi
    local v
    v=$(in_root jitterd --version) || fail "jitterd --version failed"
    [[ $v == "jitterd $(sed -n 's/^project(jitterd VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt") "* ]] \
        || fail "jitterd --version: '$v'"
    ok "installed: $v"
    if in_root jitterd check-config >"$out/check-config.log" 2>&1; then
        ok "jitterd check-config (the installed /etc/jitterd/jitterd.yaml, the built-in default path)"
    else
        cat "$out/check-config.log" >&2
        fail "jitterd check-config on the installed configuration"
    fi
    # Every program the unit and its drop-ins run is in the root after the install: a Depends that
    # misses one fails at the first `systemctl reload` (ExecReload=/bin/kill without procps).
    local unit_file exec_line program
    for unit_file in "$root/usr/lib/systemd/system/jitterd.service" "$root"/usr/share/jitterd/systemd/*.conf; do
        while IFS= read -r exec_line; do
            program=${exec_line#*=}
            program=${program#[-@:+!]}
            program=${program#[-@:+!]}
            program=${program%% *}
            [[ $program == /* ]] || continue
            if in_root test -x "$program"; then
                ok "$(basename "$unit_file"): ${exec_line%%=*} runs $program, installed"
            else
                fail "$(basename "$unit_file"): ${exec_line%%=*} runs $program, which the install did not bring (a Depends missing?)"
            fi
        done < <(grep -E '^Exec[A-Za-z]*=' "$unit_file" || true)
    done
    if bash "$src/tests/systemd/unit_test.sh" "$root/usr/bin/jitterd" "$root/usr/lib/systemd/system/jitterd.service" \
        "$root/usr/share/jitterd/systemd/jitterd-tracepoints.conf" "$root/etc/jitterd/jitterd.yaml" \
        "$root/usr/share/jitterd/systemd/jitterd-bpf.conf"; then
        ok "installed unit: systemd-analyze security and verify (tests/systemd/unit_test.sh)"
    else
        fail "the installed unit fails tests/systemd/unit_test.sh"
    fi

    # The user edits the configuration; upgrades keep the edit.
    sed -i 's/^  level: info$/  level: debug/' "$root/etc/jitterd/jitterd.yaml"
    grep -q '^  level: debug$' "$root/etc/jitterd/jitterd.yaml" || { fail "could not edit log.level in the installed configuration"; exit 1; }
    repack "$deb" "${version}+upgrade1" "$root/tmp/jitterd_${version}+upgrade1_${arch}.deb"
    in_root sh -c "cd /tmp && apt-get install -y ./jitterd_${version}+upgrade1_${arch}.deb" >>"$log" 2>&1 \
        || fail "upgrade to ${version}+upgrade1 failed (log: $log)"
    [[ $(in_root dpkg-query -W -f='${Version}' jitterd) == "${version}+upgrade1" ]] || fail "not upgraded to ${version}+upgrade1"
    grep -q '^  level: debug$' "$root/etc/jitterd/jitterd.yaml" || fail "the upgrade lost the edited conffile"
    ok "upgrade to ${version}+upgrade1 (same packaged configuration) kept the edited conffile"

    # A newer package whose configuration changed too: dpkg asks; unattended, --force-confold
    # keeps the user's file and puts the new one next to it as .dpkg-dist.
    repack "$deb" "${version}+upgrade2" "$root/tmp/jitterd_${version}+upgrade2_${arch}.deb" "# changed by upgrade2"
    in_root sh -c "cd /tmp && apt-get install -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold ./jitterd_${version}+upgrade2_${arch}.deb" \
        >>"$log" 2>&1 || fail "upgrade to ${version}+upgrade2 failed (log: $log)"
    grep -q '^  level: debug$' "$root/etc/jitterd/jitterd.yaml" || fail "upgrade2 replaced the edited conffile"
    grep -q '^# changed by upgrade2$' "$root/etc/jitterd/jitterd.yaml.dpkg-dist" 2>/dev/null \
        || fail "upgrade2 left no jitterd.yaml.dpkg-dist with the new packaged configuration"
    ok "upgrade to ${version}+upgrade2 (packaged configuration changed) kept the edit, new one in .dpkg-dist"

    in_root apt-get remove -y jitterd >>"$log" 2>&1 || fail "apt-get remove jitterd failed"
    [[ -e $root/usr/bin/jitterd ]] && fail "remove left /usr/bin/jitterd"
    [[ -e $root/etc/jitterd/jitterd.yaml ]] || fail "remove (not purge) removed the conffile"
    ok "apt-get remove jitterd: binary gone, configuration kept"
    in_root apt-get purge -y --autoremove jitterd >>"$log" 2>&1 || fail "apt-get purge --autoremove jitterd failed"
    after=$(snapshot)
    local left
    left=$(comm -13 <(echo "$before") <(echo "$after"))
    if [[ -n $left ]]; then
        fail "purge left these behind: $(head -20 <<<"$left" | tr '\n' ' ')"
    else
        ok "apt-get purge --autoremove jitterd: the root is as it was before the install"
    fi
    if in_root dpkg-query -W jitterd >/dev/null 2>&1; then
        fail "dpkg still knows jitterd after purge"
    fi
    rm -rf -- "$root"
}

# The image recipe, without a container runtime (none here, and no base image can be pulled):
# packaging/container/Containerfile's COPY and RUN steps replayed in another fresh Debian 12 root,
# then its ENTRYPOINT and CMD with the verb check-config instead of run, the host's /sys and
# /proc at /host/sys and /host/proc as the Helm chart mounts them.
containerfile_check() {
    local file=$src/packaging/container/Containerfile
    [[ -f $file ]] || return 0
    fresh_root "$out/root-image"
    local steps
    steps=$(python3 - "$file" <<'PY'
import json, re, shlex, sys
text = re.sub(r"\\\n", " ", open(sys.argv[1]).read())
for line in text.splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    word, _, rest = line.partition(" ")
    if word == "COPY":
        *srcs, dest = shlex.split(rest)
        print("COPY\t" + " ".join(srcs) + "\t" + dest)
    elif word == "RUN":
        print("RUN\t" + rest.strip())
    elif word in ("ENTRYPOINT", "CMD"):
        print(word + "\t" + " ".join(shlex.quote(a) for a in json.loads(rest)))
PY
)
    local kind a b entry="" cmd=""
    while IFS=$'\t' read -r kind a b; do
        case $kind in
            COPY) (cd "$out" && cp $a "$root$b") || fail "Containerfile: COPY $a $b (context $out)" ;;
            RUN) in_root sh -c "$a" >>"$out/image.log" 2>&1 || fail "Containerfile: RUN $a (log: $out/image.log)" ;;
            ENTRYPOINT) entry=$a ;;
            CMD) cmd=$a ;;
        esac
    done <<<"$steps"
    [[ $cmd == run\ * ]] || fail "Containerfile: CMD '$cmd' does not start with the verb run"
    mkdir -p "$root/host/sys" "$root/host/proc"
    if unshare --mount --propagation private bash -c '
        root=$1; shift
        mount --rbind /sys "$root/host/sys"
        mount -t proc proc "$root/host/proc"
        exec chroot "$root" "$@"' image "$root" sh -c "$entry check-config ${cmd#run }" >"$out/image-check.log" 2>&1; then
        ok "Containerfile: COPY and RUN replayed in a fresh Debian 12 root; $entry check-config ${cmd#run } passes"
    else
        cat "$out/image-check.log" >&2
        fail "Containerfile: $entry check-config ${cmd#run } failed in the image's root"
    fi
    if grep -q 'DEBIAN_IMAGE=.*debian:12' "$file"; then :; else fail "Containerfile: the base is not a Debian 12 image"; fi
    grep -q 'org.opencontainers.image.licenses="Apache-2.0"' "$file" || fail "Containerfile: no org.opencontainers.image.licenses=\"Apache-2.0\" label"
}

case $mode in
    build) build_and_check ;;
    install)
        install_and_check
        containerfile_check
        ;;
    *) echo "usage: $0 build|install SOURCE_DIR BUILD_DIR" >&2; exit 2 ;;
esac
exit "$status"
