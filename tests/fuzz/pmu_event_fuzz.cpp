// SPDX-License-Identifier: Apache-2.0
// A PMU event description from sysfs (bus/event_source/devices/<pmu>/events/<name>, "event=0x04"):
// any text parses to a config or to a reason, never both, never a crash.
#include "fuzz_input.h"
#include "host/msr_pmu.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  std::string why;
  const auto config = parse_pmu_event_config(fuzz::as_text(data, size), &why);
  fuzz::require(config.has_value() == why.empty());
  return 0;
}
