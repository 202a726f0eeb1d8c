# SPDX-License-Identifier: Apache-2.0
# Cross-compiles for aarch64 with Debian's g++-aarch64-linux-gnu and runs the
# results (try_run, ctest, catch_discover_tests) under qemu-user.
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.toolchain.cmake -DJITTERD_MEASURE_ONLY=ON
# Packages: g++-aarch64-linux-gnu qemu-user (bash packaging/dev.sh deps-cross).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Debian's cross libc, libstdc++ and dynamic loader live here, not in a sysroot.
set(JITTERD_AARCH64_ROOT /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH ${JITTERD_AARCH64_ROOT})

# Tools run on the build machine; libraries and headers must be aarch64 ones.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# ONLY: a host package config (prometheus-cpp, yaml-cpp) would link x86-64
# libraries; build with -DJITTERD_MEASURE_ONLY=ON instead.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Keep pkg-config from reporting the host's x86-64 libraries.
set(ENV{PKG_CONFIG_LIBDIR} ${JITTERD_AARCH64_ROOT}/lib/pkgconfig)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# -L: where qemu finds ld-linux-aarch64.so.1 and the shared libraries.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;${JITTERD_AARCH64_ROOT})
