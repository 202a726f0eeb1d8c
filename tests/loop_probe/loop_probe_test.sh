#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The loop probe library as applications build and run it (include/jitterd/loop_probe.h).
#
# Usage: loop_probe_test.sh MODE ...
#   failures OPEN_FAILURES        every argument rule, a missing directory, EEXIST and a dead
#                                 writer's segment, then a read-only directory (as root: tried as
#                                 user nobody)
#   full OPEN_FAILURES            a tmpfs of 64 KiB (smaller than a segment) mounted in a private
#                                 mount namespace: open fails with ENOSPC, no SIGBUS (root only)
#   strict SOURCE_DIR             strict ISO C11 with a system header first: the header's #error
#                                 names what to define; header first, -D_POSIX_C_SOURCE, gnu11
#                                 and C++17 compile with -Wall -Wextra -Werror -pedantic, and so
#                                 does each of its parts (loop_probe_*.h) included alone
#   docs SOURCE_DIR               the first C block of docs/loops.md ("The library") compiled as
#                                 the docs say and run with an open that fails (a missing
#                                 directory, a bad name): it runs its loop without the probe and
#                                 exits 0; then with a good directory
# Exit 0 pass, 1 fail, 77 skip (with the reason).
set -uo pipefail
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
ok() { echo "ok: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
strict=(-Wall -Wextra -Werror -pedantic)

mode_failures() {
    local bin=$1
    chmod 755 "$tmp"
    "$bin" arguments "$tmp" || fail "open_failures arguments"
    mkdir "$tmp/read-only"
    "$bin" unwritable "$tmp/read-only" || fail "open_failures unwritable"
    local left
    left=$(find "$tmp" -name '*jitterd-loop*' | head -5)
    [[ -z $left ]] || fail "files left behind: $left"
}

mode_full() {
    local bin=$1
    ((EUID == 0)) || { echo "SKIP: mounting a small tmpfs needs root" >&2; exit 77; }
    command -v unshare >/dev/null || { echo "SKIP: no unshare(1) for a private mount namespace" >&2; exit 77; }
    mkdir "$tmp/shm"
    if ! unshare -m true 2>/dev/null; then
        echo "SKIP: this machine refuses a new mount namespace (unshare -m)" >&2
        exit 77
    fi
    unshare -m bash -c 'mount -t tmpfs -o size=64k jitterd-test "$1" || exit 77; exec "$2" full "$1"' _ "$tmp/shm" "$bin"
    local rc=$?
    ((rc == 77)) && { echo "SKIP: mount -t tmpfs refused" >&2; exit 77; }
    ((rc == 0)) || fail "open in a full tmpfs: exit $rc (135 is the SIGBUS of an unreserved mapping)"
}

mode_strict() {
    local include=$1/include
    printf '#include <stdio.h>\n#include <jitterd/loop_probe.h>\nint main(void) { return 0; }\n' >"$tmp/late.c"
    printf '#include <jitterd/loop_probe.h>\nint main(void) { return jitterd_loop_open(NULL, 0, NULL, NULL) != NULL; }\n' >"$tmp/first.c"
    if cc -std=c11 "${strict[@]}" -I"$include" -c "$tmp/late.c" -o "$tmp/late.o" 2>"$tmp/late.log"; then
        fail "strict C11 with <stdio.h> first compiled: the header cannot have POSIX there"
    elif ! grep -q 'needs POSIX 2008: compile with -D_POSIX_C_SOURCE=200809L' "$tmp/late.log"; then
        fail "strict C11 with <stdio.h> first: no #error naming the define: $(head -5 "$tmp/late.log")"
    elif grep -q 'PATH_MAX' "$tmp/late.log"; then
        fail "strict C11 with <stdio.h> first: errors beyond the #error: $(head -5 "$tmp/late.log")"
    else
        ok "strict C11, <stdio.h> first: $(grep -o '#error.*' "$tmp/late.log" | head -1)"
    fi
    cc -std=c11 "${strict[@]}" -D_POSIX_C_SOURCE=200809L -I"$include" -c "$tmp/late.c" -o "$tmp/late.o" \
        || fail "-std=c11 -D_POSIX_C_SOURCE=200809L does not compile"
    cc -std=gnu11 "${strict[@]}" -I"$include" -c "$tmp/late.c" -o "$tmp/late.o" || fail "-std=gnu11 does not compile"
    cc -std=c11 "${strict[@]}" -I"$include" -c "$tmp/first.c" -o "$tmp/first.o" \
        || fail "strict C11 with the header first does not compile"
    c++ -std=c++17 "${strict[@]}" -I"$include" -x c++ -c "$tmp/late.c" -o "$tmp/late.o" || fail "C++17 does not compile"
    ((status == 0)) && ok "header first (c11), -D_POSIX_C_SOURCE (c11), gnu11 and C++17 compile"
    # Each part on its own, first in its file: it includes what it uses (the parts of one library
    # may be included in any order without breaking).
    local part
    for part in "$include"/jitterd/loop_probe_*.h; do
        printf '#include <jitterd/%s>\nint main(void) { return 0; }\n' "$(basename "$part")" >"$tmp/part.c"
        cc -std=c11 "${strict[@]}" -I"$include" -c "$tmp/part.c" -o "$tmp/part.o" \
            || fail "$(basename "$part") alone does not compile as strict C11"
        c++ -std=c++17 "${strict[@]}" -I"$include" -x c++ -c "$tmp/part.c" -o "$tmp/part.o" \
            || fail "$(basename "$part") alone does not compile as C++17"
    done
    ((status == 0)) && ok "each part alone compiles (c11, C++17): $(cd "$include/jitterd" && echo loop_probe_*.h)"
}

mode_docs() {
    local src=$1
    # The first ```c block after "## The library".
    awk '/^## The library/ { on = 1 } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code { print }' \
        "$src/docs/loops.md" >"$tmp/app.c"
    grep -q 'jitterd_loop_open' "$tmp/app.c" || { fail "no C example under 'The library' in docs/loops.md"; return; }
    if ! cc -std=c11 -O2 "${strict[@]}" -I"$src/include" "$tmp/app.c" -o "$tmp/app" 2>"$tmp/cc.log"; then
        fail "the docs' example does not compile: $(cat "$tmp/cc.log")"
        return
    fi
    local rc
    JITTERD_LOOP_DIR=$tmp/no/such/directory "$tmp/app" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if ((rc != 0)); then
        fail "the docs' example with a missing directory exited $rc: $(cat "$tmp/err")"
    elif ! grep -q 'directory: does not exist' "$tmp/err"; then
        fail "the docs' example with a missing directory did not say why: $(cat "$tmp/err")"
    else
        ok "the docs' example with a missing directory ran without the probe: $(head -1 "$tmp/err")"
    fi
    mkdir -p "$tmp/good"
    JITTERD_LOOP_DIR=$tmp/good "$tmp/app" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    ((rc == 0)) || fail "the docs' example with a good directory exited $rc: $(cat "$tmp/err")"
    [[ -s $tmp/err ]] && fail "the docs' example with a good directory complained: $(cat "$tmp/err")"
    [[ -z $(ls -A "$tmp/good") ]] || fail "the docs' example left $(ls -A "$tmp/good") behind"
    ((rc == 0)) && ok "the docs' example with a good directory recorded and closed"
}

(($# == 2)) || { echo "usage: $0 failures|full BIN | strict|docs SOURCE_DIR" >&2; exit 2; }
case $1 in
    failures) mode_failures "$2" ;;
    full) mode_full "$2" ;;
    strict) mode_strict "$2" ;;
    docs) mode_docs "$2" ;;
    *) echo "unknown mode $1" >&2; exit 2 ;;
esac
exit "$status"
