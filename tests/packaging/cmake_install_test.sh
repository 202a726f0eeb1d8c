#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` with the default prefix puts every file where systemd and docs/install.md say.
#
# Usage: cmake_install_test.sh SOURCE_DIR BUILD_DIR
#   1. a fresh configure of SOURCE_DIR with no prefix given picks /usr, and the unit it generates
#      names /usr/bin/jitterd and /etc/jitterd/jitterd.yaml;
#   2. DESTDIR=TMP cmake --install BUILD_DIR (when BUILD_DIR has the default prefix) installs
#      exactly the files of docs/install.md, the unit in a directory systemd reads, and a binary whose
#      default --config is the installed configuration;
#   3. the loop probe library builds its C example from the staged install alone, through pkg-config
#      and through find_package(jitterd-loop-probe);
#   4. (before 2, whatever BUILD_DIR's prefix) installed under another prefix and moved elsewhere
#      (DESTDIR), pkg-config --cflags jitterd-loop-probe names the include directory where the
#      files are, and the docs' compile line builds the docs' example with it.
# Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail
(($# == 2)) || { echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2; exit 2; }
src=$(realpath -- "$1")
build=$(realpath -- "$2")
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT

# 1. A fresh configure (no build): the default prefix and the unit generated for it.
if ! cmake -S "$src" -B "$tmp/fresh" -G Ninja >"$tmp/configure.log" 2>&1; then
    cat "$tmp/configure.log" >&2
    fail "configuring $src afresh failed"
else
    prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$tmp/fresh/CMakeCache.txt")
    [[ $prefix == /usr ]] || fail "a fresh configure's CMAKE_INSTALL_PREFIX is '$prefix', not /usr"
    grep -qx 'ExecStart=/usr/bin/jitterd run --config /etc/jitterd/jitterd.yaml' "$tmp/fresh/systemd/jitterd.service" \
        || fail "the generated unit's ExecStart is '$(grep '^ExecStart=' "$tmp/fresh/systemd/jitterd.service")'"
    grep -q 'systemd does not read units' "$tmp/configure.log" && fail "configure warns: $(grep -A2 'systemd does not read' "$tmp/configure.log")"
    ok "a fresh configure picks prefix /usr; the unit names /usr/bin/jitterd and /etc/jitterd/jitterd.yaml"
fi

# 4. Relocatable: installed with --prefix /opt/jitterd-relocated, the tree then lying under
# $tmp/moved (DESTDIR), the .pc file finds its prefix from where it lies.
moved=$tmp/moved
if ! DESTDIR=$moved cmake --install "$build" --prefix /opt/jitterd-relocated >"$tmp/install-moved.log" 2>&1; then
    fail "cmake --install --prefix /opt/jitterd-relocated: $(tail -5 "$tmp/install-moved.log")"
else
    pcdir=$moved/opt/jitterd-relocated/share/pkgconfig
    cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags jitterd-loop-probe 2>&1) || fail "pkg-config: $cflags"
    cflags=${cflags%% }
    included=${cflags#-I}
    if [[ $cflags != -I* || $(realpath -- "$included" 2>/dev/null) != "$moved/opt/jitterd-relocated/include" ]]; then
        fail "relocated: pkg-config --cflags jitterd-loop-probe gives '$cflags', not the moved tree's include directory"
    else
        awk '/^## The library/ { on = 1 } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code { print }' \
            "$src/docs/loops.md" >"$tmp/app.c"
        # The docs' compile line, word for word but for the paths.
        line=$(grep -m1 'pkg-config --cflags jitterd-loop-probe' "$src/docs/loops.md")
        [[ $line == 'cc -std=c11 -O2 $(pkg-config --cflags jitterd-loop-probe) app.c -o app' ]] \
            || fail "docs/loops.md's compile line changed: '$line' (update this test)"
        if (cd "$tmp" && PKG_CONFIG_PATH=$pcdir bash -c "$line") 2>"$tmp/cc-moved.log" && [[ -x $tmp/app ]]; then
            ok "relocated: pkg-config --cflags gives $cflags; the docs' line builds the docs' example"
        else
            fail "relocated: the docs' compile line failed: $(cat "$tmp/cc-moved.log")"
        fi
    fi
    grep -rl "jitterd-relocated" "$moved/opt/jitterd-relocated/share/pkgconfig" >/dev/null \
        && fail "the .pc file names the install prefix: it would not follow a moved tree"
fi

# 2. The real build's install, file by file.
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
if [[ $prefix != /usr ]]; then
    echo "SKIP: $build is configured with prefix '$prefix' (made before /usr became the default?); step 2 needs the default" >&2
    ((status == 0)) && exit 77
    exit "$status"
fi
DESTDIR=$tmp/stage cmake --install "$build" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
grep -q 'CMake Warning' "$tmp/install.log" && fail "cmake --install warns: $(cat "$tmp/install.log")"
expected=(/usr/bin/jitterd /etc/jitterd/jitterd.yaml /usr/lib/systemd/system/jitterd.service
    /usr/share/man/man8/jitterd.8 /usr/share/man/man5/jitterd.yaml.5 /usr/share/jitterd/systemd/jitterd-tracepoints.conf /usr/share/jitterd/systemd/jitterd-bpf.conf
    /usr/share/man/man8/jitterd-run.8 /usr/share/man/man8/jitterd-check-config.8 /usr/share/man/man8/jitterd-report.8 /usr/share/man/man8/jitterd-baseline.8 /usr/share/man/man8/jitterd-compare.8 /usr/share/man/man8/jitterd-fleet.8
    /usr/include/jitterd/loop_probe.h /usr/include/jitterd/loop_probe_layout.h /usr/include/jitterd/loop_probe_checks.h /usr/include/jitterd/loop_probe_open.h /usr/include/jitterd/loop_probe_record.h /usr/share/pkgconfig/jitterd-loop-probe.pc /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config.cmake /usr/share/cmake/jitterd-loop-probe/jitterd-loop-probe-config-version.cmake)
for f in "$src"/grafana/dashboards/*.json; do [[ -f $f ]] && expected+=("/usr/share/jitterd/grafana/dashboards/$(basename "$f")"); done
for f in "$src"/grafana/prometheus/*.yml "$src"/grafana/prometheus/*.yaml; do [[ -f $f ]] && expected+=("/usr/share/jitterd/prometheus/$(basename "$f")"); done
if [[ -d $src/grafana/provisioning ]]; then
    while IFS= read -r f; do expected+=("/usr/share/jitterd/grafana/provisioning/$f"); done \
        < <(cd "$src/grafana/provisioning" && find . -type f -printf '%P\n')
fi
actual=$(cd "$tmp/stage" && find . -type f -printf '/%P\n' | sort)
want=$(printf '%s\n' "${expected[@]}" | sort)
if [[ $actual != "$want" ]]; then
    diff <(echo "$want") <(echo "$actual") >&2 || true
    fail "installed files (+) differ from the expected ones (-)"
else
    ok "cmake --install: $(wc -l <<<"$actual") files, exactly $(tr '\n' ' ' <<<"$want")"
fi
unitpath=$(pkg-config --variable=systemdsystemunitpath systemd 2>/dev/null || true)
if [[ -n $unitpath ]]; then
    [[ ":$unitpath:" == *":/usr/lib/systemd/system:"* ]] || fail "systemd ($unitpath) does not read /usr/lib/systemd/system"
fi
default=$("$tmp/stage/usr/bin/jitterd" run --help | sed -n 's/.*--config FILE=\([^ ]*\).*/\1/p')
[[ $default == /etc/jitterd/jitterd.yaml ]] || fail "the installed binary's default --config is '$default'"
ok "the unit is where systemd reads units; the binary's default --config is the installed file"

# 3. The loop probe library as an application uses it, from the staged install only: pkg-config's
# Cflags, and find_package(jitterd-loop-probe) with its INTERFACE target, each building the C example.
example=$src/examples/loop_probe/poll_loop.c
cflags=$(PKG_CONFIG_PATH=$tmp/stage/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/stage \
    pkg-config --cflags jitterd-loop-probe 2>&1) || fail "pkg-config jitterd-loop-probe: $cflags"
cflags=${cflags%% }  # pkg-config ends the line with a blank
[[ $cflags == -I* && $(realpath -- "${cflags#-I}") == "$tmp/stage/usr/include" ]] \
    || fail "pkg-config --cflags jitterd-loop-probe gives '$cflags'"
# shellcheck disable=SC2086 # the flags are words
cc -std=c11 -Wall -Wextra -Werror -pedantic $cflags "$example" -o "$tmp/poll_loop_pc" 2>"$tmp/cc.log" \
    || fail "the example does not build with pkg-config's flags: $(cat "$tmp/cc.log")"
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES C)
find_package(jitterd-loop-probe 0.1 REQUIRED)
add_executable(poll_loop ${EXAMPLE})
set_target_properties(poll_loop PROPERTIES C_STANDARD 11 C_EXTENSIONS OFF)
target_link_libraries(poll_loop PRIVATE jitterd::loop_probe)
CMAKE
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$tmp/stage/usr" -DEXAMPLE="$example" \
    >"$tmp/consumer.log" 2>&1 && cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1; then
    ok "the loop probe library builds its example through pkg-config and find_package(jitterd-loop-probe)"
else
    fail "find_package(jitterd-loop-probe) from the staged install: $(tail -20 "$tmp/consumer.log")"
fi
exit "$status"
