#include "export/build_info.h"

#ifndef JITTERD_VERSION
#define JITTERD_VERSION "0.0.0"
#endif
#ifndef JITTERD_REVISION
#define JITTERD_REVISION "unknown"
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
