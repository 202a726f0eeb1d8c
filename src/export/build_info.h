// SPDX-License-Identifier: Apache-2.0
// What build of jitterd is running: version, source revision, compiler and architecture, for
// `jitterd --version`, the status page and jitterd_build_info. Constant; safe from any thread.
#pragma once

#include <string>

namespace jitterd {

struct BuildInfo {
  std::string version;
  std::string revision;
  std::string compiler;
  std::string arch;
};

BuildInfo this_build();

}  // namespace jitterd
