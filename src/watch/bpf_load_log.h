// SPDX-License-Identifier: Apache-2.0
// Why the BPF program did not load, in libbpf's own words: libbpf reports through one global
// callback, so the loader captures the last lines of the current load (the verifier's complaint,
// a missing BTF type) and names the cause in one line. The capture is per thread: a load runs on
// one thread from capture_libbpf_log() to load_failure().
#pragma once

#include <string>

namespace jitterd {

// Installs the capture (libbpf's print callback) and clears what this thread captured before.
void capture_libbpf_log();

// One line for a load that failed with `error` (an errno): missing privileges said as such,
// otherwise the error with libbpf's last line.
std::string load_failure(int error);

}  // namespace jitterd
