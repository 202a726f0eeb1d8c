// SPDX-License-Identifier: Apache-2.0
// /proc/kallsyms (read through --path.procfs): any text gives a symbol table that names any
// address without a crash, and an empty table says why.
#include "fuzz_input.h"
#include "host/kernel_symbols.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const KernelSymbols symbols = KernelSymbols::parse(fuzz::as_text(data, size));
  fuzz::require(symbols.size() > 0 || !symbols.why_not().empty());
  std::uint64_t address = 0;
  for (std::size_t i = 0; i < size && i < 8; ++i) address = address << 8 | data[i];
  fuzz::require(!symbols.name_of(address).empty());
  return 0;
}
