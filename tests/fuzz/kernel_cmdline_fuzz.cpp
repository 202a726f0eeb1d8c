// SPDX-License-Identifier: Apache-2.0
// The kernel command line (/proc/cmdline) and the isolation parameters read from it, from any
// text; every CPU list a parameter names parses or is refused.
#include "fuzz_input.h"
#include "host/posture_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  const std::vector<CmdlineParam> params = parse_kernel_cmdline(text);
  static_cast<void>(parse_isolation_params(params));
  for (const CmdlineParam& param : params) static_cast<void>(param_cpus(param.value));
  static_cast<void>(parse_bracketed_choice(text));
  static_cast<void>(parse_integer(text));
  return 0;
}
