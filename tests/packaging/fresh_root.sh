# SPDX-License-Identifier: Apache-2.0
# Sourced by deb_test.sh and rpm_test.sh: a fresh Debian 12 root to install a package into, and
# commands run inside it. The caller defines out (BUILD_DIR/packages), ok, fail and skip, and
# sets root (the root's path; fresh_root sets it).

mirror() {
    local uri
    uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    [[ -n $uri ]] || uri=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null)
    echo "${uri:-http://deb.debian.org/debian}"
}

# fresh_root DIR: DIR emptied and filled with a Debian 12 minbase root (debootstrap once, then
# from its tarball cached in $out/cache); root=DIR, removed when the test exits.
fresh_root() {
    ((EUID == 0)) || skip "installing into a fresh root needs root (chroot, mounts)"
    command -v debootstrap >/dev/null || skip "debootstrap not found (bash packaging/dev.sh deps-package)"
    command -v unshare >/dev/null || skip "unshare not found (util-linux)"
    local mirror_uri cache tarball
    mirror_uri=$(mirror)
    cache=$out/cache
    tarball=$cache/debian12-minbase.tar
    root=$1
    mkdir -p "$cache"
    rm -rf -- "$root"
    mkdir -p "$root"
    local t0=$SECONDS
    if [[ -f $tarball ]]; then
        tar -xpf "$tarball" -C "$root"
        ok "fresh root from the cached $tarball"
    else
        curl -fsS --max-time 20 -o /dev/null "$mirror_uri/dists/bookworm/Release" \
            || skip "the Debian mirror $mirror_uri is not reachable (debootstrap needs it)"
        if ! debootstrap --variant=minbase bookworm "$root" "$mirror_uri" >"$out/debootstrap.log" 2>&1; then
            tail -20 "$out/debootstrap.log" >&2
            fail "debootstrap failed (log: $out/debootstrap.log)"
            exit 1
        fi
        tar -cpf "$tarball.tmp" -C "$root" . && mv "$tarball.tmp" "$tarball"
        ok "debootstrap bookworm minbase from $mirror_uri in $((SECONDS - t0))s (cached as $tarball)"
    fi
    trap 'rm -rf -- "$root"' EXIT
    cp /etc/resolv.conf "$root/etc/resolv.conf"
}

in_root() {
    # A private mount namespace: /proc, /sys and /dev for the root vanish with the command.
    unshare --mount --propagation private bash -c '
        root=$1; shift
        mount -t proc proc "$root/proc"
        mount --rbind /sys "$root/sys"
        mount --rbind /dev "$root/dev"
        exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
    ' in_root "$root" "$@"
}

# Every path in the root but those the package managers and the logs change by themselves.
snapshot() {
    (cd "$root" && find . -xdev \( -path ./var/cache -o -path ./var/lib/apt -o -path ./var/lib/dpkg \
        -o -path ./var/lib/rpm -o -path ./usr/lib/sysimage/rpm \
        -o -path ./var/log -o -path ./tmp -o -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \) -prune -o -print) \
        | sort
}
