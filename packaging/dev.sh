#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Developer entry point: install dependencies, build, run, test (Debian 12).
#
#   bash packaging/dev.sh deps            install build and test packages (apt)
#   bash packaging/dev.sh deps-cross      install the aarch64 cross compiler and qemu-user
#   bash packaging/dev.sh build [DIR] [CMAKE_ARGS...]   configure and build (DIR: build)
#   bash packaging/dev.sh run [ARGS...]   deps, build, run jitterd in the foreground
#   bash packaging/dev.sh test            deps, build, run the whole ctest suite (the package tests
#                                         skip without the packaging tools: deps-package)
#   bash packaging/dev.sh test-packaging  deps-package, build, the package tests the last test run
#                                         skipped (all of them without a last run)
#   bash packaging/dev.sh test-fleet      deps-package, build, the Helm chart and Kubernetes scrape
#                                         configuration tests with their Go tools (helm, upstream
#                                         promtool: go install into build/tools, once)
#   bash packaging/dev.sh sanitize        ASan+UBSan suite in build-asan, TSan in build-tsan
#   bash packaging/dev.sh cross           aarch64 build in build-aarch64, tests under qemu
#   bash packaging/dev.sh bench           build, run jitterd_bench
#   bash packaging/dev.sh bench-scale [ARGS...]  build, run jitterd_scale_bench (256 and 1,024
#                                         synthetic CPUs, then start to READY=1 of build/jitterd)
#   bash packaging/dev.sh deps-package    install the packaging tools (debhelper, lintian, rpm, debootstrap)
#   bash packaging/dev.sh deb [OUTDIR]    build the Debian package into OUTDIR (build/packages)
#   bash packaging/dev.sh rpm [OUTDIR]    build the RPM into OUTDIR (build/packages)
#   bash packaging/dev.sh fuzz [SECONDS] [TARGET...]
#                                         libFuzzer targets (clang-14, ASan+UBSan) in build-fuzz,
#                                         each run SECONDS (10) over its corpus; all without TARGET
#   bash packaging/dev.sh format          rewrite src/, tests/, include/ and examples/ C and C++ files with clang-format-14
#   bash packaging/dev.sh format-check    list the files that format would change; fail if any
#
# With CI set in the environment, compiler warnings are errors (-DJITTERD_WERROR=ON).
set -euo pipefail

cd "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.."

readonly deps_packages=(
    build-essential cmake ninja-build pkg-config
    prometheus-cpp-dev libsystemd-dev libyaml-cpp-dev libspdlog-dev
    # the web server: libmicrohttpd with GnuTLS, zlib (gzip), libxcrypt (bcrypt)
    libmicrohttpd-dev libgnutls28-dev zlib1g-dev libcrypt-dev
    libcli11-dev nlohmann-json3-dev libfmt-dev
    # the watch's BPF program: clang's bpf target builds it, bpftool makes its skeleton, libbpf loads it
    clang-14 libbpf-dev bpftool
    # compare --prometheus: the HTTP client
    libcurl4-openssl-dev
    catch2
    # promtool, for the /metrics format test and the rules; the prometheus server, for the
    # end-to-end tests of grafana/ (dashboards and rules on a real Prometheus)
    prometheus
    # the fleet tests' second engine (integration_fleet_victoriametrics)
    victoria-metrics
    python3 curl
    # certificates for the TLS tests
    openssl
    # systemd-analyze, for the unit test; procps ships /bin/kill, which the
    # unit's ExecReload= names and systemd-analyze verify checks.
    systemd procps
    # the browser test of the HTML reports (tests/browser): headless chromium driven over the
    # DevTools protocol from /usr/bin/python3
    chromium python3-websocket
)
readonly cross_packages=(g++-aarch64-linux-gnu qemu-user)
# Building and checking the packages (dev.sh deb, dev.sh rpm, the package tests): git lists the
# files a package is built from, python3-venv holds kubernetes-validate for the Helm chart test.
# systemd-container: systemd-nspawn boots the installed package under a real systemd.
readonly package_packages=(debhelper dpkg-dev lintian rpm debootstrap git python3-venv systemd-container)
# libFuzzer: clang and its runtime libraries; the targets of tests/fuzz/CMakeLists.txt.
readonly fuzz_packages=(clang-14 libclang-rt-14-dev)
readonly fuzz_targets=(config duration cpu_list proc_interrupts proc_stat cpuinfo kernel_cmdline trace_format
    web_config web_request baseline_file prometheus_answer proc_schedstat loop_segment fleet_answer time_range
    status_json kubelet_state cpuset_partition pmu_event kallsyms)
# The style is .clang-format at the top; one clang-format version, so all agree on the output.
readonly clang_format=clang-format-14
jobs=$(nproc)
readonly jobs

say() {
    printf '==> %s\n' "$*"
}

die() {
    printf 'dev.sh: %s\n' "$*" >&2
    exit 1
}

# Prints each argument that dpkg does not list as installed.
missing_packages() {
    local package
    for package in "$@"; do
        [[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$package" 2>/dev/null) == ii* ]] \
            || printf '%s\n' "$package"
    done
}

# Installs the missing ones among the given packages; no apt call (so no network)
# when all are installed.
apt_install() {
    command -v dpkg-query >/dev/null || die "deps: dpkg-query not found; this script expects Debian 12"
    local missing
    mapfile -t missing < <(missing_packages "$@")
    if ((${#missing[@]} == 0)); then
        say "deps: all $# packages installed"
        return
    fi
    local -a as_root=()
    if ((EUID != 0)); then
        command -v sudo >/dev/null || die "deps: not root and sudo not found; run as root to install: ${missing[*]}"
        as_root=(sudo)
    fi
    say "deps: installing ${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
}

cmd_deps() {
    apt_install "${deps_packages[@]}"
}

cmd_deps_cross() {
    apt_install "${cross_packages[@]}"
}

cmd_deps_package() {
    apt_install "${package_packages[@]}"
}

# stage_source DIR: a copy of the source tree in DIR (the files git tracks, plus new ones it does
# not ignore: never a build folder), as a package is built from it.
stage_source() {
    local dest=$1
    rm -rf -- "$dest"
    mkdir -p -- "$dest"
    if git rev-parse --show-toplevel >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard \
            | while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done \
            | tar --null -T - -cf - | tar -xf - -C "$dest"
    else
        tar --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -xf - -C "$dest"
    fi
}

# deb [OUTDIR]: the Debian package, built by dpkg-buildpackage from packaging/debian/ on a staged
# copy of the tree. JITTERD_PREBUILT_DIR=DIR packages an existing build configured with prefix
# /usr instead of compiling again; JITTERD_CCACHE=1 compiles through ccache.
cmd_deb() {
    local out=${1:-build/packages}
    cmd_deps
    cmd_deps_package
    if [[ -n ${JITTERD_PREBUILT_DIR:-} ]]; then
        JITTERD_PREBUILT_DIR=$(realpath -- "$JITTERD_PREBUILT_DIR")
        export JITTERD_PREBUILT_DIR
    fi
    mkdir -p -- "$out"
    out=$(realpath -- "$out")
    local version
    version=$(dpkg-parsechangelog -l packaging/debian/changelog -S Version)
    local stage=$out/deb-stage/jitterd-$version
    say "deb: staging the source in $stage"
    stage_source "$stage"
    cp -a packaging/debian "$stage/debian"
    rm -f -- "$out"/deb-stage/jitterd[_-]*.{deb,ddeb,buildinfo,changes}
    say "deb: dpkg-buildpackage${JITTERD_PREBUILT_DIR:+ (packaging $JITTERD_PREBUILT_DIR)}"
    (cd "$stage" && dpkg-buildpackage -b -us -uc -j"$jobs")
    local f
    for f in "$out"/deb-stage/jitterd[_-]*.{deb,ddeb,buildinfo,changes}; do
        [[ -e $f ]] && mv -f -- "$f" "$out/"
    done
    say "deb: $(ls "$out"/jitterd_"$version"_*.deb)"
}

# rpm [OUTDIR]: the RPM, built by rpmbuild from packaging/rpm/jitterd.spec on a staged copy of
# the tree; JITTERD_PREBUILT_DIR and JITTERD_CCACHE as for deb.
cmd_rpm() {
    local out=${1:-build/packages}
    cmd_deps
    cmd_deps_package
    mkdir -p -- "$out"
    out=$(realpath -- "$out")
    local -a defines=()
    if [[ -n ${JITTERD_PREBUILT_DIR:-} ]]; then
        defines+=(--define "jitterd_prebuilt $(realpath -- "$JITTERD_PREBUILT_DIR")")
    fi
    [[ -n ${JITTERD_CCACHE:-} ]] && defines+=(--define "jitterd_ccache 1")
    local top=$out/rpm-stage
    rm -rf -- "$top"
    mkdir -p -- "$top"/{BUILD,RPMS,SOURCES,SPECS,SRPMS}
    say "rpm: staging the source in $top/BUILD/jitterd"
    stage_source "$top/BUILD/jitterd"
    # Debian's rpm has no dependency database of its own: --nodeps, the Requires are computed.
    # --build-in-place builds in the current directory: the staged tree.
    (cd "$top/BUILD/jitterd" && rpmbuild -bb --nodeps --build-in-place \
        --define "_topdir $top" --define "_smp_build_ncpus $jobs" "${defines[@]}" \
        packaging/rpm/jitterd.spec)
    find "$top/RPMS" -name 'jitterd-*.rpm' -exec mv -f -t "$out" {} +
    say "rpm: $(ls "$out"/jitterd-*.rpm)"
}

# build [DIR] [CMAKE_ARGS...]: configure (every time, so new arguments apply) and build every
# target, or only those in JITTERD_BUILD_TARGETS (space-separated) when it is set.
cmd_build() {
    local dir=build
    if (($# > 0)) && [[ $1 != -* ]]; then
        dir=$1
        shift
    fi
    local -a args=()
    [[ " $* " == *" -DCMAKE_BUILD_TYPE="* ]] || args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
    # Unity builds (CMake compiles a target's sources in batches of 8, each one file) take far less
    # CPU for a whole build, which decides the time of a first build and of CI on 2 CPUs; an edit
    # then recompiles its batch (ninja -C build after a change is incremental either way).
    [[ " $* " == *" -DCMAKE_UNITY_BUILD="* ]] || args+=(-DCMAKE_UNITY_BUILD=ON)
    if [[ -n ${CI:-} ]]; then
        args+=(-DJITTERD_WERROR=ON)
    fi
    say "configure $dir: ${args[*]} $*"
    cmake -S . -B "$dir" -G Ninja "${args[@]}" "$@"
    local -a targets=()
    read -r -a targets <<<"${JITTERD_BUILD_TARGETS:-}"
    say "build $dir with $jobs jobs${targets[*]:+ (targets: ${targets[*]})}"
    cmake --build "$dir" --parallel "$jobs" ${targets[@]:+--target "${targets[@]}"}
}

# run_ctest DIR [CTEST_ARGS...]: ctest prints its own summary line; a selection
# that matches no test is an error, not a pass.
run_ctest() {
    local dir=$1
    shift
    say "test $dir: ctest $*"
    ctest --test-dir "$dir" --output-on-failure --no-tests=error --parallel "$jobs" "$@"
}

cmd_run() {
    cmd_deps
    # Only the daemon: a first run does not wait for the test binaries.
    JITTERD_BUILD_TARGETS=jitterd cmd_build build
    say "jitterd serves http://127.0.0.1:9978/metrics (Ctrl-C stops it)"
    exec build/jitterd run --config config/jitterd.yaml "$@"
}

# The last whole-suite run's results, as JUnit XML (relative to the build folder): test-packaging
# reads which package tests it skipped.
readonly test_results=ctest-results.xml

cmd_test() {
    cmd_deps
    cmd_build build
    run_ctest build --output-junit "$test_results"
}

# The package tests (deb and RPM, built and installed into fresh roots) need the packaging tools,
# which `deps` leaves out: in `test` they skip and say so. CI installs the tools afterwards
# (deps-package) and runs here the ones that skipped, so a test that needs a tool `deps` does not
# install is seen failing rather than passing on a machine that happens to have it.
cmd_test_packaging() {
    cmd_deps
    cmd_deps_package
    cmd_build build
    local -a skipped=()
    if [[ -f build/$test_results ]]; then
        mapfile -t skipped < <(python3 - "build/$test_results" <<'PY'
import sys
import xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    name = case.get("name", "")
    if name.startswith("package_") and case.find("skipped") is not None:
        print(name)
PY
        )
        if ((${#skipped[@]} == 0)); then
            say "test-packaging: the last test run skipped no package test"
            return
        fi
    fi
    local pattern='^package_'
    ((${#skipped[@]} > 0)) && pattern="^($(IFS='|'; echo "${skipped[*]}"))\$"
    run_ctest build -R "$pattern"
}

# helm_chart, scrape_configs and integration_compare_prometheus3 skip in the whole suite unless
# JITTERD_GO_TOOLS=1: compiling helm, upstream promtool and upstream Prometheus 3 takes minutes of
# CPU each, so they get a step of their own in CI rather than running beside the integration tests
# on 2 CPUs.
cmd_test_fleet() {
    cmd_deps
    cmd_deps_package
    cmd_build build
    JITTERD_GO_TOOLS=1 run_ctest build -R '^(helm_chart|scrape_configs|integration_compare_prometheus3)$'
}

cmd_sanitize() {
    cmd_deps
    # Fail on the first report; without halt_on_error UBSan only prints and goes on.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

    # Debug: with UBSan, GCC 12 needs about 230 s at -O2 but 38 s at -O0 for the
    # Catch2 main file alone (measured), which decides the CI time on 2 CPUs. Unity builds (CMake
    # compiles the sources of a target in batches of 8, each batch one file) take 43% less CPU for
    # this build: 208 s against 363 s (measured). Names at namespace scope must then be unique
    # within a target, anonymous namespaces included: a clash is a compile error here only, and the
    # fix is a shared definition (tests/unit/fixture_tree.h, tick_helpers.h), not a rename.
    # No benchmark programs (no test runs them): their build took about a minute here.
    cmd_build build-asan -DCMAKE_BUILD_TYPE=Debug -DJITTERD_SANITIZE=address,undefined -DCMAKE_UNITY_BUILD=ON \
        -DJITTERD_BENCHMARKS=OFF
    # Left out here, each run by the test pass: the packaging tests build and install packages
    # from the tree; the fidelity tests measure timing against ground truth, which a sanitized
    # build distorts, over the code paths the integration tests run here too; the grafana and
    # browser tests check dashboards, rules and pages, whose C++ side (/metrics, the status page)
    # the integration tests run here too. Measured on the 2-vCPU guest, these took 270 of the
    # pass's 780 s. And the two that run one path many times: `load` (integration_web_attacks:
    # hundreds of clients over the requests integration_web and integration_auth make here) and
    # `repetition` (integration_fleet_null_prometheus: 50 seeds of integration_fleet_prometheus's
    # path), 92 s of this pass's test time. And the tests against a real query server
    # (`prometheus`, `victoriametrics`: about 150 s of this pass): their C++ side is the HTTP
    # client and the answers' readers, which the unit tests (prometheus_history, fleet_ends) and
    # the prometheus_answer and fleet_answer fuzz targets run under ASan here too.
    run_ctest build-asan -LE 'packaging|fidelity|grafana|browser|load|repetition|prometheus|victoriametrics'

    # The TSan pass runs the test cases tagged [concurrency]: only the two binaries that hold
    # them are built (a binary left out would drop its cases silently: ctest -N -L concurrency).
    # Debug and unity for the build time, as above (TSan at -O2 takes 2.6 times as long for the
    # Catch2 main file: 21.7 s against 8.3 s); the cases run for well under a minute either way.
    JITTERD_BUILD_TARGETS="jitterd_measure_tests jitterd_unit_tests" cmd_build build-tsan \
        -DCMAKE_BUILD_TYPE=Debug -DJITTERD_SANITIZE=thread -DCMAKE_UNITY_BUILD=ON -DJITTERD_BENCHMARKS=OFF
    # GCC 12's TSan cannot map its shadow memory with more than 28 bits of mmap
    # randomisation (newer kernels); run without address randomisation there.
    local -a no_aslr=()
    if (($(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0) > 28)); then
        say "vm.mmap_rnd_bits > 28: running TSan tests under setarch -R"
        no_aslr=(setarch "$(uname -m)" -R)
    fi
    say "test build-tsan: ctest -L concurrency"
    "${no_aslr[@]}" ctest --test-dir build-tsan --output-on-failure --no-tests=error \
        --parallel "$jobs" -L concurrency
}

# Debug (-O0) by default: the CI run is a smoke test, where build time counts more than executions
# per second; for a long run set JITTERD_FUZZ_BUILD_TYPE=RelWithDebInfo (more executions per second).
# Each target over the committed seeds (tests/fuzz/corpus/NAME) plus what earlier runs found
# (build-fuzz/corpus/NAME). A crash, a sanitizer report, a 10 s input or 2 GiB of memory fails
# the run; the input is kept in build-fuzz/artifacts/ (reproduce: build-fuzz/tests/fuzz/fuzz_NAME FILE).
cmd_fuzz() {
    cmd_deps
    apt_install "${fuzz_packages[@]}"
    local seconds=${1:-10}
    (($# > 0)) && shift
    [[ $seconds =~ ^[0-9]+$ ]] || die "fuzz: SECONDS must be a whole number, got '$seconds'"
    local -a targets=("$@")
    ((${#targets[@]} > 0)) || targets=("${fuzz_targets[@]}")
    CC=clang-14 CXX=clang++-14 JITTERD_BUILD_TARGETS=fuzz_all cmd_build build-fuzz \
        -DCMAKE_BUILD_TYPE="${JITTERD_FUZZ_BUILD_TYPE:-Debug}" -DJITTERD_FUZZ=ON -DJITTERD_SANITIZE=address,undefined \
        -DCMAKE_UNITY_BUILD=ON
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    mkdir -p build-fuzz/artifacts
    local target failed=()
    for target in "${targets[@]}"; do
        local binary=build-fuzz/tests/fuzz/fuzz_$target log=build-fuzz/fuzz_$target.log
        [[ -x $binary ]] || die "fuzz: no target '$target' (known: ${fuzz_targets[*]})"
        mkdir -p "build-fuzz/corpus/$target"
        if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="build-fuzz/artifacts/$target-" "build-fuzz/corpus/$target" \
            "tests/fuzz/corpus/$target" >"$log" 2>&1; then
            say "fuzz $target: $(awk '/stat::number_of_executed_units/ {runs = $2} /stat::peak_rss_mb/ {rss = $2}
                END {printf "%d runs in '"$seconds"' s, peak RSS %d MB, ", runs, rss}' "$log")$(grep -o 'cov: [0-9]*' "$log" | tail -1), no failure"
        else
            failed+=("$target")
            tail -n 40 "$log"
        fi
    done
    ((${#failed[@]} == 0)) || die "fuzz: ${failed[*]} failed; the inputs are in build-fuzz/artifacts/"
}

cmd_cross() {
    cmd_deps
    cmd_deps_cross
    cmd_build build-aarch64 \
        -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.toolchain.cmake \
        -DJITTERD_MEASURE_ONLY=ON
    # The toolchain's CMAKE_CROSSCOMPILING_EMULATOR runs each test under qemu-aarch64.
    run_ctest build-aarch64
}

cmd_bench() {
    cmd_build build
    say "bench: build/jitterd_bench $*"
    build/jitterd_bench "$@"
}

cmd_bench_scale() {
    cmd_build build
    say "bench-scale: build/jitterd_scale_bench --daemon build/jitterd $*"
    build/jitterd_scale_bench --daemon build/jitterd --config config/jitterd.yaml "$@"
}

# Prints, NUL-separated, the C++ files that clang-format owns: sources and tests, not fixtures.
format_files() {
    find src tests include examples -path tests/fixtures -prune -o -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) \
        -print0 \
        | sort -z
}

format_deps() {
    [[ -f .clang-format ]] || die "format: no .clang-format at the top of the tree"
    apt_install "$clang_format"
    "$clang_format" --dump-config --style=file >/dev/null || die "format: $clang_format cannot read .clang-format"
}

cmd_format() {
    format_deps
    say "format: $clang_format -i over src/, tests/, include/ and examples/"
    format_files | xargs -0 -r "$clang_format" -i --style=file
}

cmd_format_check() {
    format_deps
    local -a unformatted=()
    local file
    while IFS= read -r -d '' file; do
        "$clang_format" --dry-run --Werror --style=file "$file" 2>/dev/null || unformatted+=("$file")
    done < <(format_files)
    if ((${#unformatted[@]} > 0)); then
        printf '%s\n' "${unformatted[@]}"
        die "format-check: ${#unformatted[@]} files above differ from .clang-format ($clang_format); bash packaging/dev.sh format rewrites them"
    fi
    say "format-check: every file matches .clang-format"
}

usage() {
    sed -n '2,27s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
}

main() {
    (($# > 0)) || { usage >&2; exit 2; }
    local command=$1
    shift
    case $command in
        deps) cmd_deps "$@" ;;
        deps-cross) cmd_deps_cross "$@" ;;
        build) cmd_build "$@" ;;
        run) cmd_run "$@" ;;
        test) cmd_test "$@" ;;
        test-packaging) cmd_test_packaging "$@" ;;
        test-fleet) cmd_test_fleet "$@" ;;
        sanitize) cmd_sanitize "$@" ;;
        cross) cmd_cross "$@" ;;
        bench) cmd_bench "$@" ;;
        bench-scale) cmd_bench_scale "$@" ;;
        deps-package) cmd_deps_package "$@" ;;
        deb) cmd_deb "$@" ;;
        rpm) cmd_rpm "$@" ;;
        fuzz) cmd_fuzz "$@" ;;
        format) cmd_format "$@" ;;
        format-check) cmd_format_check "$@" ;;
        -h | --help | help) usage ;;
        *)
            printf 'dev.sh: unknown command %q\n\n' "$command" >&2
            usage >&2
            exit 2
            ;;
    esac
}

main "$@"
