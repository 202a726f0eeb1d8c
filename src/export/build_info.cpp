// SPDX-License-Identifier: Apache-2.0
#include "export/build_info.h"

#include "jitterd_revision.h"  // JITTERD_REVISION, written at build time by cmake/jitterd_revision.cmake

#ifndef JITTERD_VERSION
#define JITTERD_VERSION "0.0.0"
#endif

namespace jitterd {

BuildInfo this_build() {
#if defined(__x86_64__)
  const char* arch = "x86_64";
#elif defined(__aarch64__)
  const char* arch = "aarch64";
#else
  const char* arch = "other";
#endif
  return {JITTERD_VERSION, JITTERD_REVISION, "gcc " __VERSION__, arch};
}

}  // namespace jitterd
