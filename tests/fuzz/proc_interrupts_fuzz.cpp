// SPDX-License-Identifier: Apache-2.0
// /proc/interrupts and /proc/softirqs: any text gives a table (short or odd rows kept as far as
// they go), whose CPU columns can be looked up.
#include "fuzz_input.h"
#include "host/interrupt_counts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string_view text = fuzz::as_text(data, size);
  for (const InterruptTable& table : {parse_proc_interrupts(text), parse_proc_softirqs(text)}) {
    for (int cpu : {0, 1, 63, 1023}) static_cast<void>(cpu_column(table, cpu));
  }
  return 0;
}
