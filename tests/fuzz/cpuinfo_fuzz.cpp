// SPDX-License-Identifier: Apache-2.0
// /proc/cpuinfo: the clock fields and any named field, from any text.
#include "fuzz_input.h"
#include "host/clock_info.h"
#include "host/posture_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  const CpuinfoClock clock = parse_cpuinfo_clock(text);
  static_cast<void>(has_flag(clock, "constant_tsc"));
  for (const char* key : {"model name", "microcode", "flags", "cpu MHz", "CPU implementer"})
    static_cast<void>(cpuinfo_field(text, key));
  return 0;
}
