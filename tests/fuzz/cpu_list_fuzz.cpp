// SPDX-License-Identifier: Apache-2.0
// CPU lists ("0-3,8") and masks ("ff,00000001"): any text parses or is refused with a reason; a
// parsed list formats to a text that parses back to the same CPUs.
#include <algorithm>

#include "fuzz_input.h"
#include "host/cpu_list.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  std::string error;
  if (const std::optional<std::vector<int>> cpus = parse_cpu_list(text, &error)) {
    const std::vector<int> sorted = sorted_cpus(*cpus);
    const std::optional<std::vector<int>> again = parse_cpu_list(format_cpu_list(sorted), nullptr);
    fuzz::require(again.has_value() && sorted_cpus(*again) == sorted);
    static_cast<void>(repeated_cpu(text));
    static_cast<void>(describe_cpu_list(sorted));
  } else {
    fuzz::require(!error.empty());
  }
  error.clear();
  static_cast<void>(parse_cpu_mask_hex(text, &error));
  return 0;
}
